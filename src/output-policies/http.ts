/** Handlers of `/api/v1/output-policies*` (admin or owner). */
import * as Effect from "effect/Effect"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { requireAdmin } from "../access/guards.js"
import { refusals } from "../platform/wire-errors.js"
import { OutputPolicies } from "./service.js"

export const OutputPoliciesHttp = HttpApiBuilder.group(GatewayApi, "outputPolicies", (handlers) =>
  Effect.gen(function* () {
    const policies = yield* OutputPolicies
    const admin = requireAdmin("output policies")
    return handlers
      .handle("get", () => Effect.flatMap(admin, policies.get))
      .handle("update", ({ payload }) =>
        Effect.flatMap(admin, (principal) => policies.update(principal, payload).pipe(refusals("OutputPoliciesError", "InvalidInput")))
      )
      .handle("test", ({ payload }) => Effect.flatMap(admin, (principal) => policies.test(principal, payload.text)))
  })
)
