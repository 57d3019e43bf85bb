/** Handlers of `/api/v1/provider-credentials` (reading: models:read; saving and deleting: owner or admin with models:write). */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { requireRole, requireScope } from "../access/guards.js"
import { requestIdOf } from "../gateway/request.js"
import { refusals } from "../platform/wire-errors.js"
import { ProviderCredentials } from "./service.js"

const invalid = refusals("ProviderCredentialsError", "InvalidInput")

export const ProviderCredentialsHttp = HttpApiBuilder.group(GatewayApi, "providerCredentials", (handlers) =>
  Effect.gen(function* () {
    const credentials = yield* ProviderCredentials
    // Secrets of the whole organization: only its owner and admins change them.
    const writer = Effect.gen(function* () {
      const principal = yield* Effect.flatMap(requireScope("models:write"), requireRole(["owner", "admin"], "changing provider credentials"))
      return { principal, context: { requestId: requestIdOf(yield* HttpServerRequest) } }
    })
    return handlers
      .handle("save", ({ payload }) =>
        Effect.flatMap(writer, ({ principal, context }) => credentials.save(principal, payload.provider, payload.credentials, context).pipe(invalid))
      )
      .handle("list", () => Effect.flatMap(requireScope("models:read"), credentials.list))
      .handle("remove", ({ query }) => Effect.flatMap(writer, ({ principal, context }) => credentials.remove(principal, query.provider, context).pipe(invalid)))
  })
)
