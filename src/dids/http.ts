/** Handlers of `/agents/{slug}/did.json`, agent cards, `/api/v1/agents/{slug}/did…` and `/api/v1/dids/resolve`. */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { requireRole, requireScope } from "../access/guards.js"
import { requestIdOf } from "../gateway/request.js"
import { refusals } from "../platform/wire-errors.js"
import { Dids } from "./service.js"

const findErrors = refusals("DidsError", "AgentNotFound")

export const DidsPublicHttp = HttpApiBuilder.group(GatewayApi, "didsPublic", (handlers) =>
  Effect.gen(function* () {
    const dids = yield* Dids
    return handlers
      .handle("agentDidDocument", ({ params }) => dids.publicDocument(params.agent_slug).pipe(findErrors))
      .handle("agentCard", ({ params }) => dids.card(params.agent_slug).pipe(findErrors))
  })
)

export const DidsHttp = HttpApiBuilder.group(GatewayApi, "dids", (handlers) =>
  Effect.gen(function* () {
    const dids = yield* Dids
    const rotator = Effect.flatMap(requireScope("agents:write"), requireRole(["owner", "admin"], "rotating DID keys"))
    return handlers
      .handle("agentDid", ({ params }) => Effect.flatMap(requireScope("agents:read"), (principal) => dids.agentDid(principal, params.agent_slug).pipe(findErrors)))
      .handle("rotate", ({ params }) =>
        Effect.gen(function* () {
          const principal = yield* rotator
          const requestId = requestIdOf(yield* HttpServerRequest)
          return yield* dids.rotate(principal, params.agent_slug, { requestId }).pipe(findErrors)
        })
      )
      .handle("resolve", ({ payload }) => Effect.flatMap(requireScope("agents:read"), () => dids.resolve(payload.did).pipe(refusals("DidsError", "DidNotResolved"))))
  })
)
