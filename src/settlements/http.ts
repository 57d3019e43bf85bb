/** Handlers of `/api/v1/settlements…`. Creating one is for admins, 5 per minute per organization. */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { SettlementRateLimited } from "../../protocol/settlements.js"
import { requireRole, requireScope } from "../access/guards.js"
import { addResponseHeaders } from "../gateway/request.js"
import { RateLimits, rateLimitHeaders } from "../platform/redis/index.js"
import { refusals } from "../platform/wire-errors.js"
import { Settlements } from "./service.js"

const SETTLEMENTS_PER_MINUTE = 5
const MINUTE_MS = 60_000


export const SettlementsHttp = HttpApiBuilder.group(GatewayApi, "settlements", (handlers) =>
  Effect.gen(function* () {
    const settlements = yield* Settlements
    const limits = yield* RateLimits
    const reader = requireScope("settlements:read")

    const withinRate = (org: string) =>
      Effect.gen(function* () {
        const limit = yield* limits.consume(`settlements:${org}`, SETTLEMENTS_PER_MINUTE, MINUTE_MS)
        addResponseHeaders(yield* HttpServerRequest, rateLimitHeaders(limit, "settlements-per-org"))
        if (!limit.allowed) {
          return yield* Effect.fail(SettlementRateLimited.of(SETTLEMENTS_PER_MINUTE, limit.retryAfterSeconds))
        }
      })

    return handlers
      .handle("create", () =>
        Effect.gen(function* () {
          const principal = yield* Effect.flatMap(requireScope("settlements:write"), requireRole(["owner", "admin"], "creating settlements"))
          yield* withinRate(principal.orgUuid)
          return yield* settlements.create(principal)
        })
      )
      .handle("list", ({ query }) => Effect.flatMap(reader, (principal) => settlements.list(principal, query.page ?? 1, query.per_page ?? 20)))
      .handle("get", ({ params }) => Effect.flatMap(reader, (principal) => settlements.get(principal, params.settlement_uuid).pipe(refusals("SettlementError", "SettlementNotFound"))))
      .handle("receipts", ({ params, query }) =>
        Effect.flatMap(reader, (principal) => settlements
            .receipts(principal, params.settlement_uuid, query.page ?? 1, query.per_page ?? 1000)
            .pipe(refusals("SettlementError", "SettlementNotFound")))
      )
      .handle("checkpoint", ({ params }) => Effect.flatMap(reader, (principal) => settlements.checkpoint(principal, params.settlement_uuid).pipe(refusals("SettlementError", "SettlementNotFound"))))
      .handle("inclusionProof", ({ params }) => Effect.flatMap(reader, (principal) => settlements.inclusionProof(principal, params.receipt_uuid).pipe(refusals("SettlementError", "ReceiptNotSettled"))))
      .handle("consistency", ({ query }) => Effect.flatMap(reader, (principal) => settlements.consistency(principal, query.from, query.to).pipe(refusals("SettlementError", "SettlementNotFound", "InvalidInput"))))
  })
)
