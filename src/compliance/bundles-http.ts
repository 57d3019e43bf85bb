/**
 * Handlers of `/api/v1/compliance/bundles…`: creating needs `compliance:write` and the owner or
 * admin role, 5 per minute per organization (a validation refusal or an idempotent replay is not
 * counted); reads need `compliance:read`, any role. A replay answers 200, a new bundle 201.
 */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { HttpApiBuilder } from "effect/http-api"
import * as Schema from "effect/Schema"
import { GatewayApi } from "../../protocol/api.js"
import { BundleRateLimited, type ComplianceBundle, ComplianceBundle as ComplianceBundleSchema } from "../../protocol/compliance-bundles.js"
import { requireRole, requireScope } from "../access/guards.js"
import { addResponseHeaders, requestIdOf } from "../gateway/request.js"
import { RateLimits, rateLimitHeaders } from "../platform/redis/index.js"
import { refusals } from "../platform/wire-errors.js"
import { ComplianceBundles } from "./bundles-service.js"

const BUNDLES_PER_MINUTE = 5
const MINUTE_MS = 60_000

const encodeBundle = Schema.encodeSync(ComplianceBundleSchema)
/** The stored bundle with 200: the endpoint's success schemas differ only by status, so the replay is answered here. */
const replayed = (bundle: ComplianceBundle) => HttpServerResponse.jsonUnsafe(encodeBundle(bundle), { status: 200 })

export const ComplianceBundlesHttp = HttpApiBuilder.group(GatewayApi, "complianceBundles", (handlers) =>
  Effect.gen(function* () {
    const bundles = yield* ComplianceBundles
    const limits = yield* RateLimits
    const read = requireScope("compliance:read")

    const withinRate = (org: string) =>
      Effect.gen(function* () {
        const limit = yield* limits.consume(`compliance-bundles:${org}`, BUNDLES_PER_MINUTE, MINUTE_MS)
        addResponseHeaders(yield* HttpServerRequest, rateLimitHeaders(limit, "compliance-bundles-per-org"))
        if (!limit.allowed) return yield* Effect.fail(BundleRateLimited.of(BUNDLES_PER_MINUTE, limit.retryAfterSeconds))
      })

    return handlers
      .handle("create", ({ payload, headers }) =>
        Effect.gen(function* () {
          const principal = yield* Effect.flatMap(requireScope("compliance:write"), requireRole(["owner", "admin"], "creating compliance bundles"))
          const prepared = yield* bundles.prepare(principal, payload, headers["idempotency-key"]).pipe(refusals("BundlesError", "InvalidInput", "DuplicateBundleRequest"))
          if (prepared.kind === "replay") return replayed(prepared.bundle)
          yield* withinRate(principal.orgUuid)
          const sealed = yield* bundles.seal(prepared.plan).pipe(refusals("BundlesError", "BundleTooLarge", "DuplicateBundleRequest"))
          return sealed.replayed ? replayed(sealed.bundle) : sealed.bundle
        })
      )
      .handle("list", ({ query }) => Effect.flatMap(read, (principal) => bundles.list(principal, query.framework ?? null, query.page ?? 1, query.per_page ?? 20)))
      .handle("get", ({ params }) => Effect.flatMap(read, (principal) => bundles.get(principal, params.bundle_uuid).pipe(refusals("BundlesError", "BundleNotFound"))))
      .handle("export", ({ params }) =>
        Effect.gen(function* () {
          const principal = yield* read
          const requestId = requestIdOf(yield* HttpServerRequest)
          return yield* bundles.exportDocument(principal, params.bundle_uuid, requestId).pipe(refusals("BundlesError", "BundleNotFound"))
        })
      )
      .handle("inclusionProof", ({ params }) =>
        Effect.flatMap(read, (principal) =>
          bundles.inclusionProof(principal, params.bundle_uuid, params.receipt_uuid).pipe(refusals("BundlesError", "BundleNotFound", "BundleReceiptNotFound"))
        )
      )
  })
)
