/**
 * Handlers of `/api/v1/agents/{slug}/reputation…`: public (PublicRoute: per-IP limited, a
 * credential sent is ignored) and about any organization's agent. Attestations are also limited
 * to 10 per minute per client IP.
 */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { CurrentClient } from "../../protocol/auth.js"
import { AttestRateLimited } from "../../protocol/reputation.js"
import { addResponseHeaders } from "../gateway/request.js"
import { RateLimits, rateLimitHeaders } from "../platform/redis/index.js"
import { refusals } from "../platform/wire-errors.js"
import { Reputation } from "./service.js"

const ATTESTATIONS_PER_MINUTE = 10
const MINUTE_MS = 60_000

export const ReputationHttp = HttpApiBuilder.group(GatewayApi, "reputation", (handlers) =>
  Effect.gen(function* () {
    const reputation = yield* Reputation
    const limits = yield* RateLimits
    const found = refusals("ReputationError", "AgentNotFound")

    const withinAttestRate = Effect.gen(function* () {
      const { ip } = yield* CurrentClient
      const limit = yield* limits.consume(`reputation-attest:${ip}`, ATTESTATIONS_PER_MINUTE, MINUTE_MS)
      addResponseHeaders(yield* HttpServerRequest, rateLimitHeaders(limit, "reputation-attest-per-ip"))
      if (!limit.allowed) return yield* Effect.fail(AttestRateLimited.of(ATTESTATIONS_PER_MINUTE, limit.retryAfterSeconds))
    })

    return handlers
      .handle("current", ({ params }) => reputation.current(params.agent_slug).pipe(found))
      .handle("history", ({ params, query }) => reputation.history(params.agent_slug, query.page ?? 1, query.per_page ?? 20).pipe(found))
      .handle("verify", ({ params }) => reputation.verify(params.agent_slug).pipe(found))
      .handle("attest", ({ params, payload }) =>
        Effect.andThen(
          withinAttestRate,
          reputation
            .attest(params.agent_slug, payload)
            .pipe(
              refusals(
                "ReputationError",
                "AgentNotFound",
                "InvalidInput",
                "AttestedActionNotFound",
                "AttestedActionState",
                "SelfAttestation",
                "DidNoVerificationMethod",
                "DidUnsupportedKeyFormat",
                "AttestationInvalidSignature",
                "DuplicateAttestation"
              )
            )
        )
      )
  })
)
