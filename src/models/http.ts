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
import { BadRequest, Conflict, NotFound, Unauthorized, Unprocessable } from "../../protocol/errors.js"
import { requireRole, requireScope } from "../access/guards.js"
import { throttledCredentialResponse } from "../access/middleware.js"
import { Access } from "../access/service.js"
import { requestIdOf } from "../gateway/request.js"
import { answer } from "../platform/wire-errors.js"
import { CustomModels } from "./custom.js"
import { Models } from "./service.js"

const refused = answer({ InvalidInput: Unprocessable })
const refusedDefault = answer({ InvalidInput: Unprocessable, InvalidChatDefault: BadRequest })
const customRefused = answer({ InvalidInput: Unprocessable, CustomModelNotFound: NotFound, ModelIdExists: Conflict })
const invalidCredential = answer({ InvalidCredential: Unauthorized })

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
        const principal = checked === undefined ? undefined : (yield* invalidCredential(Effect.fromResult(checked))).principal
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
      .handle("putCases", ({ payload }) => Effect.flatMap(writer, (principal) => refused(models.setDisabled(principal, "cases", payload.disabled_models))))
      .handle("getPolicy", () => Effect.flatMap(reader, (principal) => models.disabled(principal, "policy")))
      .handle("putPolicy", ({ payload }) => Effect.flatMap(writer, (principal) => refused(models.setDisabled(principal, "policy", payload.disabled_models))))
      .handle("getSanitize", () => Effect.flatMap(reader, (principal) => models.disabled(principal, "sanitize")))
      .handle("putSanitize", ({ payload }) => Effect.flatMap(writer, (principal) => refused(models.setDisabled(principal, "sanitize", payload.disabled_models))))
      .handle("getChatDefault", () => Effect.flatMap(reader, models.chatDefault))
      .handle("putChatDefault", ({ payload }) => Effect.flatMap(writer, (principal) => refusedDefault(models.setChatDefault(principal, payload.chat_default_model))))
      .handle("getChatAllowed", () => Effect.flatMap(reader, models.chatAllowed))
      .handle("putChatAllowed", ({ payload }) => Effect.flatMap(writer, (principal) => refused(models.setChatAllowed(principal, payload.chat_allowed_models))))
      .handle("getCodeReview", () => Effect.flatMap(reader, models.codeReview))
      .handle("putCodeReview", ({ payload }) =>
        Effect.flatMap(Effect.flatMap(writer, requireRole(["owner", "admin"], "changing code review preferences")), (principal) =>
          refused(models.setCodeReview(principal, payload))
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
      .handle("create", ({ payload }) => Effect.flatMap(writer, ({ principal, context }) => customRefused(customs.create(principal, payload, context))))
      .handle("list", () =>
        Effect.flatMap(reader, (principal) => Effect.map(customs.list(principal), (models) => ({ models, data: models, pagination: pagination(1, Math.max(models.length, 1), models.length) })))
      )
      .handle("get", ({ params }) => Effect.flatMap(reader, (principal) => customRefused(customs.get(principal, params.id))))
      .handle("update", ({ params, payload }) => Effect.flatMap(writer, ({ principal, context }) => customRefused(customs.update(principal, params.id, payload, context))))
      .handle("remove", ({ params }) => Effect.flatMap(writer, ({ principal, context }) => customRefused(customs.remove(principal, params.id, context))))
      .handle("test", ({ params }) => Effect.flatMap(writer, ({ principal }) => customRefused(customs.test(principal, params.id))))
  })
)
