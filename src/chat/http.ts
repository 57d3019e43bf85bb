/**
 * `POST /api/v1/chat`: scope `chat:write`, any role. The model is chosen first (a refused model is
 * not counted), then the organization's 20 per minute are counted, then the model answers with
 * tools run as the caller: the caller's own bearer credential goes with each tool's call to our
 * routes, and nowhere else.
 */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import { HttpApiBuilder } from "effect/http-api"
import * as Option from "effect/Option"
import { GatewayApi } from "../../protocol/api.js"
import { CHAT_PER_MINUTE, ChatRateLimited } from "../../protocol/chat.js"
import { unauthorized } from "../../protocol/errors.js"
import { requireScope } from "../access/guards.js"
import { addResponseHeaders } from "../gateway/request.js"
import { RateLimits, rateLimitHeaders } from "../platform/redis/index.js"
import { refusals } from "../platform/wire-errors.js"
import { Chat } from "./service.js"

const MINUTE_MS = 60_000

/** The bearer credential the caller authenticated with (the middleware already checked it). */
const bearerOf = (request: HttpServerRequest) => {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? "")
  return match === null ? Effect.fail(unauthorized()) : Effect.succeed(match[1]!)
}

export const ChatHttp = HttpApiBuilder.group(GatewayApi, "chat", (handlers) =>
  Effect.gen(function* () {
    const chat = yield* Chat
    const limits = yield* RateLimits

    const withinRate = (request: HttpServerRequest, org: string) =>
      Effect.gen(function* () {
        const limit = yield* limits.consume(`chat:${org}`, CHAT_PER_MINUTE, MINUTE_MS)
        addResponseHeaders(request, rateLimitHeaders(limit, "chat-per-org"))
        if (!limit.allowed) return yield* Effect.fail(ChatRateLimited.of(limit.retryAfterSeconds))
      })

    return handlers.handle("send", ({ payload }) =>
      Effect.gen(function* () {
        const principal = yield* requireScope("chat:write")
        const request = yield* HttpServerRequest
        const credential = yield* bearerOf(request)
        const modelId = yield* chat.chooseModel(principal, payload.model_id).pipe(refusals("ChatError", "InvalidInput", "ModelNotAllowed", "ChatModelUnavailable"))
        yield* withinRate(request, principal.orgUuid)
        const caller = { credential, clientIp: Option.getOrElse(request.remoteAddress, () => "unknown") }
        return yield* chat.reply(principal, caller, modelId, payload).pipe(refusals("ChatError", "ChatModelUnavailable"))
      })
    )
  })
)
