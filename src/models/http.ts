/**
 * Handlers of `/api/v1/models` (public catalogue, better with a key) and the preference routes
 * under it (reading: models:read; changing: models:write, code review also admin).
 */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { CurrentClient } from "../../protocol/auth.js"
import { pagination } from "../../protocol/common.js"
import { unauthorized } from "../../protocol/errors.js"
import { requireRole, requireScope } from "../access/guards.js"
import { throttledCredentialResponse } from "../access/middleware.js"
import { Access } from "../access/service.js"
import { requestIdOf } from "../gateway/request.js"
import { refusals } from "../platform/wire-errors.js"
import { CustomModels } from "./custom.js"
import { Models } from "./service.js"

const refused = refusals("ModelsError", "InvalidInput")
const refusedDefault = refusals("ModelsError", "InvalidInput", "InvalidChatDefault")
const notFound = refusals("ModelsError", "CustomModelNotFound")

const bearerOf = (request: HttpServerRequest) => {
  const header = request.headers.authorization
  if (header === undefined) return undefined
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header)
  return match === null ? "" : match[1]
}

export const ModelsHttp = HttpApiBuilder.group(GatewayApi, "models", (handlers) =>
  Effect.gen(function* () {
    const models = yield* Models
    const access = yield* Access
    return handlers.handle("catalogue", ({ query }) =>
      Effect.gen(function* () {
        // Public route: a credential, when sent, must be valid (a typo should not silently downgrade the view),
        // and a refused one counts against the caller's failed-authentication budget like anywhere else.
        const request = yield* HttpServerRequest
        const bearer = bearerOf(request)
        const checked = bearer === undefined ? undefined : yield* Effect.result(access.authenticateClient(bearer, (yield* CurrentClient).ip))
        if (checked?._tag === "Failure" && checked.failure.reason._tag === "CredentialsThrottled") {
          return throttledCredentialResponse(checked.failure.reason, requestIdOf(request))
        }
        // Any other refusal of the credential is the route's 401 (the body the access middleware answers).
        if (checked?._tag === "Failure") return yield* Effect.fail(unauthorized())
        const principal = checked?.success.principal
        const includeDisabled = query.include_disabled === "true" || query.include_disabled === "1"
        return yield* models.catalogue(principal, includeDisabled)
      })
    )
  })
)

export const ModelPreferencesHttp = HttpApiBuilder.group(GatewayApi, "modelPreferences", (handlers) =>
  Effect.gen(function* () {
    const models = yield* Models
    const reader = requireScope("models:read")
    const writer = requireScope("models:write")
    return handlers
      .handle("getCases", () => Effect.flatMap(reader, (principal) => models.disabled(principal, "cases")))
      .handle("putCases", ({ payload }) => Effect.flatMap(writer, (principal) => models.setDisabled(principal, "cases", payload.disabled_models).pipe(refused)))
      .handle("getPolicy", () => Effect.flatMap(reader, (principal) => models.disabled(principal, "policy")))
      .handle("putPolicy", ({ payload }) => Effect.flatMap(writer, (principal) => models.setDisabled(principal, "policy", payload.disabled_models).pipe(refused)))
      .handle("getSanitize", () => Effect.flatMap(reader, (principal) => models.disabled(principal, "sanitize")))
      .handle("putSanitize", ({ payload }) => Effect.flatMap(writer, (principal) => models.setDisabled(principal, "sanitize", payload.disabled_models).pipe(refused)))
      .handle("getChatDefault", () => Effect.flatMap(reader, models.chatDefault))
      .handle("putChatDefault", ({ payload }) => Effect.flatMap(writer, (principal) => models.setChatDefault(principal, payload.chat_default_model).pipe(refusedDefault)))
      .handle("getChatAllowed", () => Effect.flatMap(reader, models.chatAllowed))
      .handle("putChatAllowed", ({ payload }) => Effect.flatMap(writer, (principal) => models.setChatAllowed(principal, payload.chat_allowed_models).pipe(refused)))
      .handle("getCodeReview", () => Effect.flatMap(reader, models.codeReview))
      .handle("putCodeReview", ({ payload }) =>
        Effect.flatMap(Effect.flatMap(writer, requireRole(["owner", "admin"], "changing code review preferences")), (principal) =>
          models.setCodeReview(principal, payload).pipe(refused)
        )
      )
  })
)

export const CustomModelsHttp = HttpApiBuilder.group(GatewayApi, "customModels", (handlers) =>
  Effect.gen(function* () {
    const customs = yield* CustomModels
    const writer = Effect.gen(function* () {
      const principal = yield* requireScope("models:write")
      return { principal, context: { requestId: requestIdOf(yield* HttpServerRequest) } }
    })
    const reader = requireScope("models:read")
    return handlers
      .handle("create", ({ payload }) =>
        Effect.flatMap(writer, ({ principal, context }) =>
          customs.create(principal, payload, context).pipe(refusals("ModelsError", "InvalidInput", "ModelIdExists"))
        )
      )
      .handle("list", () =>
        Effect.flatMap(reader, (principal) =>
          Effect.map(customs.list(principal), (models) => ({ models, data: models, pagination: pagination(1, Math.max(models.length, 1), models.length) }))
        )
      )
      .handle("get", ({ params }) => Effect.flatMap(reader, (principal) => customs.get(principal, params.id).pipe(notFound)))
      .handle("update", ({ params, payload }) =>
        Effect.flatMap(writer, ({ principal, context }) =>
          customs.update(principal, params.id, payload, context).pipe(refusals("ModelsError", "CustomModelNotFound", "InvalidInput"))
        )
      )
      .handle("remove", ({ params }) => Effect.flatMap(writer, ({ principal, context }) => customs.remove(principal, params.id, context).pipe(notFound)))
      .handle("test", ({ params }) => Effect.flatMap(writer, ({ principal }) => customs.test(principal, params.id).pipe(notFound)))
  })
)
