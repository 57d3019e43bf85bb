/** Handlers of `/api/v1/policies*` (scopes policies:read / policies:write; writes need owner or admin). */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { requireRole, requireScope } from "../access/guards.js"
import { requestIdOf } from "../gateway/request.js"
import { Policies } from "./service.js"

const auditContext = Effect.gen(function* () {
  return { requestId: requestIdOf(yield* HttpServerRequest) }
})

export const PoliciesHttp = HttpApiBuilder.group(GatewayApi, "policies", (handlers) =>
  Effect.gen(function* () {
    const policies = yield* Policies
    // Policies guard the whole organization: a member must not be able to switch them off (nor add one that blocks everyone).
    const write = Effect.flatMap(requireScope("policies:write"), requireRole(["owner", "admin"], "changing policies"))
    const read = requireScope("policies:read")
    return handlers
      .handle("create", ({ payload }) =>
        Effect.gen(function* () {
          return yield* policies.create(yield* write, payload, yield* auditContext)
        })
      )
      .handle("list", ({ query }) => Effect.flatMap(read, (principal) => policies.list(principal, query)))
      .handle("get", ({ params }) => Effect.flatMap(read, (principal) => policies.get(principal, params.policy_uuid)))
      .handle("update", ({ params, payload }) =>
        Effect.gen(function* () {
          return yield* policies.update(yield* write, params.policy_uuid, payload, yield* auditContext)
        })
      )
      .handle("replace", ({ params, payload }) =>
        Effect.gen(function* () {
          return yield* policies.update(yield* write, params.policy_uuid, payload, yield* auditContext)
        })
      )
      .handle("remove", ({ params }) =>
        Effect.gen(function* () {
          return yield* policies.remove(yield* write, params.policy_uuid, yield* auditContext)
        })
      )
      .handle("activate", ({ params }) =>
        Effect.gen(function* () {
          return yield* policies.activate(yield* write, params.policy_uuid, yield* auditContext)
        })
      )
      .handle("deactivate", ({ params }) =>
        Effect.gen(function* () {
          return yield* policies.deactivate(yield* write, params.policy_uuid, yield* auditContext)
        })
      )
      .handle("dryRun", ({ params, payload }) =>
        Effect.flatMap(read, (principal) => policies.dryRun(principal, params.policy_uuid, payload))
      )
  })
)
