/** Handlers of `/api/v1/agents/{slug}/credential(s)…`, `/api/v1/credentials/verify`, `/credentials/status/…` and `/contexts/…`. */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { requireRole, requireScope } from "../access/guards.js"
import { requestIdOf } from "../gateway/request.js"
import { refusals } from "../platform/wire-errors.js"
import { Credentials } from "./service.js"

const findErrors = refusals("CredentialsError", "AgentNotFound")

export const CredentialsPublicHttp = HttpApiBuilder.group(GatewayApi, "credentialsPublic", (handlers) =>
  Effect.gen(function* () {
    const credentials = yield* Credentials
    return handlers
      .handle("current", ({ params }) => credentials.current(params.agent_slug).pipe(findErrors))
      .handle("verify", ({ payload }) => credentials.verify(payload.credential))
      .handle("statusList", ({ params }) => credentials.statusList(params.list_id).pipe(refusals("CredentialsError", "StatusListNotFound")))
      .handle("context", () => Effect.succeed(credentials.context))
  })
)

export const CredentialsHttp = HttpApiBuilder.group(GatewayApi, "credentials", (handlers) =>
  Effect.gen(function* () {
    const credentials = yield* Credentials
    const revoker = Effect.flatMap(requireScope("agents:write"), requireRole(["owner", "admin"], "revoking credentials"))
    return handlers
      .handle("list", ({ params }) => Effect.flatMap(requireScope("agents:read"), (principal) => credentials.list(principal, params.agent_slug).pipe(findErrors)))
      .handle("revoke", ({ params, payload }) =>
        Effect.gen(function* () {
          const principal = yield* revoker
          const requestId = requestIdOf(yield* HttpServerRequest)
          return yield* credentials.revoke(principal, params.agent_slug, payload.reason || null, { requestId }).pipe(refusals("CredentialsError", "AgentNotFound", "NoActiveCredential"))
        })
      )
  })
)
