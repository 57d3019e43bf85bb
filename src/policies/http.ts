/** Handlers of `/api/v1/policies*` (scopes policies:read / policies:write; writes need owner or admin). */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import type { UpdatePolicyRequest } from "../../protocol/policies.js"
import { requireRole, requireScope } from "../access/guards.js"
import { requestIdOf } from "../gateway/request.js"
import { refusals } from "../platform/wire-errors.js"
import { Policies } from "./service.js"

type PolicyParams = { readonly policy_uuid: string }

const auditContext = Effect.gen(function* () {
  return { requestId: requestIdOf(yield* HttpServerRequest) }
})

export const PoliciesHttp = HttpApiBuilder.group(GatewayApi, "policies", (handlers) =>
  Effect.gen(function* () {
    const policies = yield* Policies
    // Policies guard the whole organization: a member must not be able to switch them off (nor add one that blocks everyone).
    const write = Effect.flatMap(requireScope("policies:write"), requireRole(["owner", "admin"], "changing policies"))
    /** The writer first (a refused caller learns nothing), then the request id for the audit entry. */
    const writer = Effect.all([write, auditContext])
    const read = requireScope("policies:read")
    const update = ({ params, payload }: { readonly params: PolicyParams; readonly payload: UpdatePolicyRequest }) =>
      Effect.flatMap(writer, ([principal, context]) =>
        policies
          .update(principal, params.policy_uuid, payload, context)
          .pipe(
            refusals(
              "PoliciesError",
              "UnknownMode",
              "ModeLocked",
              "ConditionsRequired",
              "InvalidRegex",
              "PolicyTextRequired",
              "ModelsRequired",
              "UnknownModel",
              "InvalidInput",
              "PolicyNotFound"
            )
          )
      )
    return handlers
      .handle("create", ({ payload }) =>
        Effect.flatMap(writer, ([principal, context]) =>
          policies
            .create(principal, payload, context)
            .pipe(
              refusals("PoliciesError", "UnknownMode", "ConditionsRequired", "InvalidRegex", "PolicyTextRequired", "ModelsRequired", "UnknownModel", "InvalidInput")
            )
        )
      )
      .handle("list", ({ query }) => Effect.flatMap(read, (principal) => policies.list(principal, query)))
      .handle("get", ({ params }) =>
        Effect.flatMap(read, (principal) => policies.get(principal, params.policy_uuid).pipe(refusals("PoliciesError", "PolicyNotFound")))
      )
      .handle("update", update)
      .handle("replace", update)
      .handle("remove", ({ params }) =>
        Effect.flatMap(writer, ([principal, context]) =>
          policies.remove(principal, params.policy_uuid, context).pipe(refusals("PoliciesError", "PolicyNotFound", "PolicyActive"))
        )
      )
      .handle("activate", ({ params }) =>
        Effect.flatMap(writer, ([principal, context]) =>
          policies.activate(principal, params.policy_uuid, context).pipe(refusals("PoliciesError", "PolicyNotFound", "AlreadyActive"))
        )
      )
      .handle("deactivate", ({ params }) =>
        Effect.flatMap(writer, ([principal, context]) =>
          policies.deactivate(principal, params.policy_uuid, context).pipe(refusals("PoliciesError", "PolicyNotFound", "NotActive"))
        )
      )
      .handle("dryRun", ({ params, payload }) =>
        Effect.flatMap(read, (principal) => policies.dryRun(principal, params.policy_uuid, payload).pipe(refusals("PoliciesError", "PolicyNotFound")))
      )
  })
)
