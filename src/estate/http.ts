/**
 * Handlers of `/api/v1/estate/*` (scopes estate:read / estate:write). Wills and death
 * certificates decide what happens to an agent's identity and data: owner or admin only.
 * Compliance snapshots may be recorded by any member.
 */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { requireRole, requireScope } from "../access/guards.js"
import { requestIdOf } from "../gateway/request.js"
import { refusals } from "../platform/wire-errors.js"
import { findingKeysAsSent } from "./findings.js"
import { Estate } from "./service.js"

/** The request's body as sent (already read and decoded once; the transport keeps the text). */
const bodyText = Effect.flatMap(HttpServerRequest, (request) => Effect.orElseSucceed(request.text, () => ""))

const auditContext = Effect.gen(function* () {
  return { requestId: requestIdOf(yield* HttpServerRequest) }
})

export const EstateHttp = HttpApiBuilder.group(GatewayApi, "estate", (handlers) =>
  Effect.gen(function* () {
    const estate = yield* Estate
    const read = requireScope("estate:read")
    const executor = Effect.all([Effect.flatMap(requireScope("estate:write"), requireRole(["owner", "admin"], "wills and death certificates")), auditContext])
    const writer = Effect.all([requireScope("estate:write"), auditContext])
    return handlers
      .handle("putWill", ({ params, payload }) =>
        Effect.flatMap(executor, ([principal, context]) => estate
          .putWill(principal, params.agent_slug, payload, context)
          .pipe(refusals("EstateError", "EstateAgentNotFound", "InvalidSuccessionPolicy", "SuccessorNotFound", "AlreadyDeceased", "InvalidInput")))
      )
      .handle("getWill", ({ params }) => Effect.flatMap(read, (principal) => estate.getWill(principal, params.agent_slug).pipe(refusals("EstateError", "EstateAgentNotFound", "WillNotFound"))))
      .handle("issueDeathCertificate", ({ params, payload }) =>
        Effect.flatMap(executor, ([principal, context]) => estate
          .issueDeathCertificate(principal, params.agent_slug, payload, context)
          .pipe(refusals("EstateError", "EstateAgentNotFound", "AlreadyDeceased", "NotDecommissioned", "SuccessorNotFound", "InvalidInput")))
      )
      .handle("getDeathCertificate", ({ params }) =>
        Effect.flatMap(read, (principal) => estate.getDeathCertificate(principal, params.agent_slug).pipe(refusals("EstateError", "EstateAgentNotFound", "DeathCertificateNotFound")))
      )
      .handle("createSnapshot", ({ payload }) =>
        Effect.gen(function* () {
          const [principal, context] = yield* writer
          // A findings map keeps the order it was sent in, which JSON.parse does not for integer-like keys.
          const keysAsSent = Array.isArray(payload.findings) ? undefined : findingKeysAsSent(yield* bodyText)
          return yield* estate
            .createSnapshot(principal, { ...payload, findingKeysAsSent: keysAsSent }, context)
            .pipe(refusals("EstateError", "EstateAgentNotFound", "EmptyFindings", "InvalidInput"))
        })
      )
      .handle("listSnapshots", ({ query }) => Effect.flatMap(read, (principal) => estate.listSnapshots(principal, query).pipe(refusals("EstateError", "EstateAgentNotFound"))))
  })
)
