/** Handlers of `/api/v1/sanitize*` (scope sanitize:write; API key or dashboard JWT). */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { requireScope } from "../access/guards.js"
import { requestIdOf } from "../gateway/request.js"
import { refusals } from "../platform/wire-errors.js"
import { Sanitize } from "./service.js"

const refused = refusals("SanitizeError", "InvalidInput")

export const SanitizeHttp = HttpApiBuilder.group(GatewayApi, "sanitize", (handlers) =>
  Effect.gen(function* () {
    const sanitize = yield* Sanitize
    const caller = requireScope("sanitize:write")
    return handlers
      .handle("sanitize", ({ payload }) =>
        Effect.gen(function* () {
          const principal = yield* caller
          const requestId = requestIdOf(yield* HttpServerRequest)
          return yield* sanitize.sanitize(principal, payload, { requestId }).pipe(refused)
        })
      )
      .handle("test", ({ payload }) => Effect.flatMap(caller, () => sanitize.dryRun(payload).pipe(refused)))
      .handle("detokenize", ({ payload }) => Effect.flatMap(caller, () => sanitize.detokenize(payload.content, payload.token_mapping).pipe(refused)))
  })
)
