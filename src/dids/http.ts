/** Handlers of `/agents/{slug}/did.json`, agent cards, `/api/v1/agents/{slug}/did…` and `/api/v1/dids/resolve`. */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { NotFound, Unprocessable } from "../../protocol/errors.js"
import { requireRole, requireScope } from "../access/guards.js"
import { requestIdOf } from "../gateway/request.js"
import { answer } from "../platform/wire-errors.js"
import { Dids } from "./service.js"

const findErrors = answer({ AgentNotFound: NotFound })
const resolveErrors = answer({ DidNotResolved: NotFound, InvalidInput: Unprocessable })

export const DidsPublicHttp = HttpApiBuilder.group(GatewayApi, "didsPublic", (handlers) =>
  Effect.gen(function* () {
    const dids = yield* Dids
    return handlers
      .handle("agentDidDocument", ({ params }) => findErrors(dids.publicDocument(params.agent_slug)))
      .handle("agentCard", ({ params }) => findErrors(dids.card(params.agent_slug)))
  })
)

export const DidsHttp = HttpApiBuilder.group(GatewayApi, "dids", (handlers) =>
  Effect.gen(function* () {
    const dids = yield* Dids
    const rotator = Effect.flatMap(requireScope("agents:write"), requireRole(["owner", "admin"], "rotating DID keys"))
    return handlers
      .handle("agentDid", ({ params }) => Effect.flatMap(requireScope("agents:read"), (principal) => findErrors(dids.agentDid(principal, params.agent_slug))))
      .handle("rotate", ({ params }) =>
        Effect.gen(function* () {
          const principal = yield* rotator
          const requestId = requestIdOf(yield* HttpServerRequest)
          return yield* findErrors(dids.rotate(principal, params.agent_slug, { requestId }))
        })
      )
      .handle("resolve", ({ payload }) => Effect.flatMap(requireScope("agents:read"), () => resolveErrors(dids.resolve(payload.did))))
  })
)
