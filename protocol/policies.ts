/**
 * Policies (spec 000 "Policies", CONTRACT.md "Policies"). Inputs are loose on
 * purpose: mode, conditions, models and scan_config are validated by the
 * service so the spec's 400 codes (INVALID_MODE, CONDITIONS_REQUIRED, ...) win
 * over a generic 422.
 */

import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { Authenticated } from "./auth.js"
import { NullableTimestamp, PageQuery, Pagination, Timestamp } from "./common.js"
import { Forbidden, InvalidInput, type Issue, refusal } from "./errors.js"
import { PolicyDecisions, PolicyModes, PolicyStatuses } from "./lists.js"

const Decision = Schema.Literals(PolicyDecisions)

export const PolicyScopeInput = Schema.Struct({
  agent_ids: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String).check(Schema.isMaxLength(1000)))),
  action_types: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String).check(Schema.isMaxLength(1000))))
})

const policyFields = {
  name: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200)),
  description: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMaxLength(5000)))),
  mode: Schema.String,
  decision: Decision,
  priority: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: -1_000_000, maximum: 1_000_000 }))),
  conditions: Schema.optionalKey(Schema.Unknown),
  ai_prompt: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMaxLength(20_000)))),
  policy_text: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMaxLength(20_000)))),
  ai_models: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String))),
  models: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String))),
  scan_config: Schema.optionalKey(Schema.Unknown),
  scope: Schema.optionalKey(Schema.NullOr(PolicyScopeInput))
}

export const CreatePolicyRequest = Schema.Struct({ ...policyFields, activate: Schema.optionalKey(Schema.Boolean) })
export type CreatePolicyRequest = typeof CreatePolicyRequest.Type

export const UpdatePolicyRequest = Schema.Struct({
  name: Schema.optionalKey(policyFields.name),
  description: policyFields.description,
  mode: Schema.optionalKey(Schema.String),
  decision: Schema.optionalKey(Decision),
  priority: policyFields.priority,
  conditions: policyFields.conditions,
  ai_prompt: policyFields.ai_prompt,
  policy_text: policyFields.policy_text,
  ai_models: policyFields.ai_models,
  models: policyFields.models,
  scan_config: policyFields.scan_config,
  scope: policyFields.scope
})
export type UpdatePolicyRequest = typeof UpdatePolicyRequest.Type

export const PolicyView = Schema.Struct({
  id: Schema.String,
  policy_uuid: Schema.String,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  mode: Schema.String,
  decision: Schema.String,
  priority: Schema.Int,
  conditions: Schema.Unknown,
  ai_prompt: Schema.NullOr(Schema.String),
  policy_text: Schema.NullOr(Schema.String),
  ai_models: Schema.NullOr(Schema.Array(Schema.String)),
  models: Schema.NullOr(Schema.Array(Schema.String)),
  scan_config: Schema.Unknown,
  scope: Schema.Struct({ agent_ids: Schema.Array(Schema.String), action_types: Schema.Array(Schema.String) }),
  status: Schema.String,
  active: Schema.Boolean,
  evaluation_count: Schema.Number,
  last_evaluated_at: NullableTimestamp,
  activated_at: NullableTimestamp,
  deactivated_at: NullableTimestamp,
  created_at: Timestamp,
  updated_at: Timestamp
})
export type PolicyView = typeof PolicyView.Type

export const PolicySummary = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  mode: Schema.String,
  decision: Schema.String,
  priority: Schema.Int,
  status: Schema.String,
  active: Schema.Boolean,
  created_at: Timestamp
})
export type PolicySummary = typeof PolicySummary.Type

export const PolicyListQuery = {
  ...PageQuery,
  mode: Schema.optionalKey(Schema.Literals(PolicyModes)),
  status: Schema.optionalKey(Schema.Literals(PolicyStatuses))
}

export const DryRunRequest = Schema.Struct({
  action_type: Schema.String.check(Schema.isMaxLength(200)),
  details: Schema.String.check(Schema.isMaxLength(100_000)),
  agent_id: Schema.optionalKey(Schema.NullOr(Schema.String)),
  model_id: Schema.optionalKey(Schema.NullOr(Schema.String)),
  agent_version: Schema.optionalKey(Schema.NullOr(Schema.String)),
  model_version: Schema.optionalKey(Schema.NullOr(Schema.String)),
  endpoint_url: Schema.optionalKey(Schema.NullOr(Schema.String)),
  instruction_hash: Schema.optionalKey(Schema.NullOr(Schema.String)),
  context: Schema.optionalKey(Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)))
})
export type DryRunRequest = typeof DryRunRequest.Type

/* Refusals. Validation answers the spec's 400 codes (InvalidInput, 422, for any other issue). */

export class UnknownMode extends Schema.Error<UnknownMode>("UnknownMode")(refusal("INVALID_MODE"), {
  httpApiStatus: 400,
  description: "`mode` is not one of the policy modes"
}) {
  readonly _tag = "UnknownMode"
  static of(mode: string, modes: ReadonlyArray<string>) {
    return new UnknownMode({ message: `mode must be one of ${modes.join(", ")}`, details: { mode } })
  }
}

export class ModeLocked extends Schema.Error<ModeLocked>("ModeLocked")(refusal("INVALID_MODE", "a policy's mode cannot be changed; create a new policy"), {
  httpApiStatus: 400,
  description: "An update tried to change the policy's mode"
}) {
  readonly _tag = "ModeLocked"
  static of(mode: string) {
    return new ModeLocked({ details: { mode } })
  }
}

/** The compiler says which: no conditions at all, or an empty list. */
export class ConditionsRequired extends Schema.Error<ConditionsRequired>("ConditionsRequired")(refusal("CONDITIONS_REQUIRED"), {
  httpApiStatus: 400,
  description: "A rules policy without conditions"
}) {
  readonly _tag = "ConditionsRequired"
}

/** Only regexes were wrong (any other issue makes it an InvalidInput). */
export class InvalidRegex extends Schema.Error<InvalidRegex>("InvalidRegex")(refusal("INVALID_REGEX"), {
  httpApiStatus: 400,
  description: "A condition or custom pattern regex that does not compile (`details.issues`)"
}) {
  readonly _tag = "InvalidRegex"
  static of(issues: ReadonlyArray<Issue>) {
    return new InvalidRegex({ message: issues[0]?.message ?? "invalid regex", details: { issues } })
  }
}

export class PolicyTextRequired extends Schema.Error<PolicyTextRequired>("PolicyTextRequired")(refusal("POLICY_TEXT_REQUIRED"), {
  httpApiStatus: 400,
  description: "An ai or consensus policy without policy text"
}) {
  readonly _tag = "PolicyTextRequired"
  static of(mode: string) {
    return new PolicyTextRequired({ message: `${mode} policies need ai_prompt (policy text)` })
  }
}

export class ModelsRequired extends Schema.Error<ModelsRequired>("ModelsRequired")(refusal("MODELS_REQUIRED"), {
  httpApiStatus: 400,
  description: "One model for an ai policy, two or more for a consensus policy"
}) {
  readonly _tag = "ModelsRequired"
  static of(mode: "ai" | "consensus") {
    return new ModelsRequired({ message: mode === "ai" ? "ai policies need one model in ai_models" : "consensus policies need at least 2 models in ai_models" })
  }
}

export class UnknownModel extends Schema.Error<UnknownModel>("UnknownModel")(refusal("INVALID_MODEL"), {
  httpApiStatus: 400,
  description: "A model id that is neither built in nor one of the organization's custom models"
}) {
  readonly _tag = "UnknownModel"
  static of(models: ReadonlyArray<string>) {
    return new UnknownModel({ message: `unsupported model id: ${models.join(", ")}`, details: { models } })
  }
}

export class PolicyNotFound extends Schema.Error<PolicyNotFound>("PolicyNotFound")(refusal("POLICY_NOT_FOUND"), {
  httpApiStatus: 404,
  description: "No such policy in the caller's organization"
}) {
  readonly _tag = "PolicyNotFound"
  static of(id: string) {
    return new PolicyNotFound({ message: `Policy ${id} not found`, details: { policy_uuid: id } })
  }
}

export class PolicyActive extends Schema.Error<PolicyActive>("PolicyActive")(refusal("POLICY_ACTIVE", "Deactivate the policy before deleting it"), {
  httpApiStatus: 409,
  description: "An active policy cannot be deleted"
}) {
  readonly _tag = "PolicyActive"
  static of(id: string) {
    return new PolicyActive({ details: { policy_uuid: id } })
  }
}

export class AlreadyActive extends Schema.Error<AlreadyActive>("AlreadyActive")(refusal("ALREADY_ACTIVE", "The policy is already active"), {
  httpApiStatus: 409,
  description: "The policy is already active"
}) {
  readonly _tag = "AlreadyActive"
  static of(id: string) {
    return new AlreadyActive({ details: { policy_uuid: id } })
  }
}

export class NotActive extends Schema.Error<NotActive>("NotActive")(refusal("NOT_ACTIVE", "The policy is not active"), {
  httpApiStatus: 409,
  description: "The policy is not active"
}) {
  readonly _tag = "NotActive"
  static of(id: string) {
    return new NotActive({ details: { policy_uuid: id } })
  }
}

/** What a create can be refused for (an update may also be refused for changing the mode). */
const CreateRefusals = [UnknownMode, ConditionsRequired, InvalidRegex, PolicyTextRequired, ModelsRequired, UnknownModel, InvalidInput] as const
const UpdateRefusals = [...CreateRefusals, ModeLocked, PolicyNotFound] as const

const PolicyId = { policy_uuid: Schema.String }

export class PoliciesGroup extends HttpApiGroup.make("policies")
  .add(
    HttpApiEndpoint.post("create", "/api/v1/policies", { error: [Forbidden, ...CreateRefusals],
      payload: CreatePolicyRequest,
      success: PolicyView.pipe(HttpApiSchema.status(201))
    }),
    HttpApiEndpoint.get("list", "/api/v1/policies", { error: Forbidden,
      query: PolicyListQuery,
      success: Schema.Struct({ policies: Schema.Array(PolicySummary), data: Schema.Array(PolicySummary), pagination: Pagination })
    }),
    HttpApiEndpoint.get("get", "/api/v1/policies/:policy_uuid", { error: [Forbidden, PolicyNotFound], params: PolicyId, success: PolicyView }),
    HttpApiEndpoint.patch("update", "/api/v1/policies/:policy_uuid", { error: [Forbidden, ...UpdateRefusals],
      params: PolicyId,
      payload: UpdatePolicyRequest,
      success: PolicyView
    }),
    HttpApiEndpoint.put("replace", "/api/v1/policies/:policy_uuid", { error: [Forbidden, ...UpdateRefusals],
      params: PolicyId,
      payload: UpdatePolicyRequest,
      success: PolicyView
    }),
    HttpApiEndpoint.delete("remove", "/api/v1/policies/:policy_uuid", { error: [Forbidden, PolicyNotFound, PolicyActive],
      params: PolicyId,
      success: Schema.Struct({ id: Schema.String, deleted: Schema.Boolean })
    }),
    HttpApiEndpoint.post("activate", "/api/v1/policies/:policy_uuid/activate", { error: [Forbidden, PolicyNotFound, AlreadyActive],
      params: PolicyId,
      success: Schema.Struct({ id: Schema.String, status: Schema.String, activated_at: Timestamp })
    }),
    HttpApiEndpoint.post("deactivate", "/api/v1/policies/:policy_uuid/deactivate", { error: [Forbidden, PolicyNotFound, NotActive],
      params: PolicyId,
      success: Schema.Struct({ id: Schema.String, status: Schema.String, deactivated_at: Timestamp })
    }),
    HttpApiEndpoint.post("dryRun", "/api/v1/policies/:policy_uuid/dry-run", { error: [Forbidden, PolicyNotFound],
      params: PolicyId,
      payload: DryRunRequest,
      success: Schema.Struct({
        policy_uuid: Schema.String,
        policy_name: Schema.String,
        decision: Schema.String,
        reasoning: Schema.String,
        confidence: Schema.Number,
        /** Consensus policies: each model's vote. */
        model_votes: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.Struct({ model: Schema.String, decision: Schema.String, confidence: Schema.Number })))),
        dry_run: Schema.Boolean
      })
    })
  )
  .middleware(Authenticated)
  .annotateMerge(
    OpenApi.annotations({
      title: "Policies",
      description: "Rules, AI, consensus and content-scan policies. New policies are drafts; deny > require_approval > allow."
    })
  )
{}
