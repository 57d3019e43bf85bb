/** Handlers of `/api/v1/policies*` (scopes policies:read / policies:write; writes need owner or admin). */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { BadRequest, Conflict, NotFound, Unprocessable } from "../../protocol/errors.js"
import type { UpdatePolicyRequest } from "../../protocol/policies.js"
import { requireRole, requireScope } from "../access/guards.js"
import { requestIdOf } from "../gateway/request.js"
import { answer } from "../platform/wire-errors.js"
import { Policies } from "./service.js"

const invalid = {
  UnknownMode: BadRequest,
  ModeLocked: BadRequest,
  ConditionsRequired: BadRequest,
  InvalidRegex: BadRequest,
  PolicyTextRequired: BadRequest,
  ModelsRequired: BadRequest,
  UnknownModel: BadRequest,
  InvalidInput: Unprocessable
} as const
const createErrors = answer(invalid)
const updateErrors = answer({ ...invalid, PolicyNotFound: NotFound })
const findErrors = answer({ PolicyNotFound: NotFound })
const removeErrors = answer({ PolicyNotFound: NotFound, PolicyActive: Conflict })
const activateErrors = answer({ PolicyNotFound: NotFound, AlreadyActive: Conflict })
const deactivateErrors = answer({ PolicyNotFound: NotFound, NotActive: Conflict })

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
      Effect.flatMap(writer, ([principal, context]) => updateErrors(policies.update(principal, params.policy_uuid, payload, context)))
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(writer, ([principal, context]) => createErrors(policies.create(principal, payload, context))))
      .handle("list", ({ query }) => Effect.flatMap(read, (principal) => policies.list(principal, query)))
      .handle("get", ({ params }) => Effect.flatMap(read, (principal) => findErrors(policies.get(principal, params.policy_uuid))))
      .handle("update", update)
      .handle("replace", update)
      .handle("remove", ({ params }) =>
        Effect.flatMap(writer, ([principal, context]) => removeErrors(policies.remove(principal, params.policy_uuid, context)))
      )
      .handle("activate", ({ params }) =>
        Effect.flatMap(writer, ([principal, context]) => activateErrors(policies.activate(principal, params.policy_uuid, context)))
      )
      .handle("deactivate", ({ params }) =>
        Effect.flatMap(writer, ([principal, context]) => deactivateErrors(policies.deactivate(principal, params.policy_uuid, context)))
      )
      .handle("dryRun", ({ params, payload }) =>
        Effect.flatMap(read, (principal) => findErrors(policies.dryRun(principal, params.policy_uuid, payload)))
      )
  })
)
