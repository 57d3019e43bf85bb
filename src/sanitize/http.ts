/** Handlers of `/api/v1/sanitize*` (scope sanitize:write; API key or dashboard JWT). */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { Unprocessable } from "../../protocol/errors.js"
import { requireScope } from "../access/guards.js"
import { requestIdOf } from "../gateway/request.js"
import { answer } from "../platform/wire-errors.js"
import { Sanitize } from "./service.js"

const refused = answer({ InvalidInput: Unprocessable })

export const SanitizeHttp = HttpApiBuilder.group(GatewayApi, "sanitize", (handlers) =>
  Effect.gen(function* () {
    const sanitize = yield* Sanitize
    const caller = requireScope("sanitize:write")
    return handlers
      .handle("sanitize", ({ payload }) =>
        Effect.gen(function* () {
          const principal = yield* caller
          const requestId = requestIdOf(yield* HttpServerRequest)
          return yield* refused(sanitize.sanitize(principal, payload, { requestId }))
        })
      )
      .handle("test", ({ payload }) => Effect.flatMap(caller, () => refused(sanitize.dryRun(payload))))
      .handle("detokenize", ({ payload }) => Effect.flatMap(caller, () => refused(sanitize.detokenize(payload.content, payload.token_mapping))))
  })
)
