/** Handlers of `/api/v1/agents/{slug}/credential(s)…`, `/api/v1/credentials/verify`, `/credentials/status/…` and `/contexts/…`. */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { NotFound } from "../../protocol/errors.js"
import { requireRole, requireScope } from "../access/guards.js"
import { requestIdOf } from "../gateway/request.js"
import { answer } from "../platform/wire-errors.js"
import { Credentials } from "./service.js"

const findErrors = answer({ AgentNotFound: NotFound, StatusListNotFound: NotFound })
const revokeErrors = answer({ AgentNotFound: NotFound, NoActiveCredential: NotFound })

export const CredentialsPublicHttp = HttpApiBuilder.group(GatewayApi, "credentialsPublic", (handlers) =>
  Effect.gen(function* () {
    const credentials = yield* Credentials
    return handlers
      .handle("current", ({ params }) => findErrors(credentials.current(params.agent_slug)))
      .handle("verify", ({ payload }) => credentials.verify(payload.credential))
      .handle("statusList", ({ params }) => findErrors(credentials.statusList(params.list_id)))
      .handle("context", () => Effect.succeed(credentials.context))
  })
)

export const CredentialsHttp = HttpApiBuilder.group(GatewayApi, "credentials", (handlers) =>
  Effect.gen(function* () {
    const credentials = yield* Credentials
    const revoker = Effect.flatMap(requireScope("agents:write"), requireRole(["owner", "admin"], "revoking credentials"))
    return handlers
      .handle("list", ({ params }) => Effect.flatMap(requireScope("agents:read"), (principal) => findErrors(credentials.list(principal, params.agent_slug))))
      .handle("revoke", ({ params, payload }) =>
        Effect.gen(function* () {
          const principal = yield* revoker
          const requestId = requestIdOf(yield* HttpServerRequest)
          return yield* revokeErrors(credentials.revoke(principal, params.agent_slug, payload.reason, { requestId }))
        })
      )
  })
)
