/**
 * Handlers of `/api/v1/estate/*` (scopes estate:read / estate:write). Wills and death
 * certificates decide what happens to an agent's identity and data: owner or admin only.
 * Compliance snapshots may be recorded by any member.
 */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { BadRequest, Conflict, NotFound, Unprocessable } from "../../protocol/errors.js"
import { requireRole, requireScope } from "../access/guards.js"
import { requestIdOf } from "../gateway/request.js"
import { answer } from "../platform/wire-errors.js"
import { Estate } from "./service.js"

const willErrors = answer({
  AgentNotFound: NotFound,
  InvalidPolicy: BadRequest,
  SuccessorNotFound: NotFound,
  AlreadyDeceased: Conflict,
  InvalidInput: Unprocessable
})
const getWillErrors = answer({ AgentNotFound: NotFound, WillNotFound: NotFound })
const certificateErrors = answer({
  AgentNotFound: NotFound,
  AlreadyDeceased: Conflict,
  NotDecommissioned: Unprocessable,
  SuccessorNotFound: NotFound,
  InvalidInput: Unprocessable
})
const getCertificateErrors = answer({ AgentNotFound: NotFound, CertificateNotFound: NotFound })
const snapshotErrors = answer({ AgentNotFound: NotFound, EmptyFindings: BadRequest })
const listErrors = answer({ AgentNotFound: NotFound })

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
        Effect.flatMap(executor, ([principal, context]) => willErrors(estate.putWill(principal, params.agent_slug, payload, context)))
      )
      .handle("getWill", ({ params }) => Effect.flatMap(read, (principal) => getWillErrors(estate.getWill(principal, params.agent_slug))))
      .handle("issueDeathCertificate", ({ params, payload }) =>
        Effect.flatMap(executor, ([principal, context]) => certificateErrors(estate.issueDeathCertificate(principal, params.agent_slug, payload, context)))
      )
      .handle("getDeathCertificate", ({ params }) =>
        Effect.flatMap(read, (principal) => getCertificateErrors(estate.getDeathCertificate(principal, params.agent_slug)))
      )
      .handle("createSnapshot", ({ payload }) => Effect.flatMap(writer, ([principal, context]) => snapshotErrors(estate.createSnapshot(principal, payload, context))))
      .handle("listSnapshots", ({ query }) => Effect.flatMap(read, (principal) => listErrors(estate.listSnapshots(principal, query))))
  })
)
