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
import { BadRequest, Conflict, Forbidden, NotFound } from "./errors.js"

const Decision = Schema.Literals(["allow", "require_approval", "deny"])

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

export const PolicyListQuery = {
  ...PageQuery,
  mode: Schema.optionalKey(Schema.Literals(["rules", "ai", "consensus", "content_scan"])),
  status: Schema.optionalKey(Schema.Literals(["draft", "active", "inactive"]))
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

const PolicyId = { policy_uuid: Schema.String }

export class PoliciesGroup extends HttpApiGroup.make("policies")
  .add(
    HttpApiEndpoint.post("create", "/api/v1/policies", { error: [BadRequest, Forbidden],
      payload: CreatePolicyRequest,
      success: PolicyView.pipe(HttpApiSchema.status(201))
    }),
    HttpApiEndpoint.get("list", "/api/v1/policies", { error: Forbidden,
      query: PolicyListQuery,
      success: Schema.Struct({ policies: Schema.Array(PolicySummary), data: Schema.Array(PolicySummary), pagination: Pagination })
    }),
    HttpApiEndpoint.get("get", "/api/v1/policies/:policy_uuid", { error: [Forbidden, NotFound], params: PolicyId, success: PolicyView }),
    HttpApiEndpoint.patch("update", "/api/v1/policies/:policy_uuid", { error: [BadRequest, Forbidden, NotFound],
      params: PolicyId,
      payload: UpdatePolicyRequest,
      success: PolicyView
    }),
    HttpApiEndpoint.put("replace", "/api/v1/policies/:policy_uuid", { error: [BadRequest, Forbidden, NotFound],
      params: PolicyId,
      payload: UpdatePolicyRequest,
      success: PolicyView
    }),
    HttpApiEndpoint.delete("remove", "/api/v1/policies/:policy_uuid", { error: [Forbidden, NotFound, Conflict],
      params: PolicyId,
      success: Schema.Struct({ id: Schema.String, deleted: Schema.Boolean })
    }),
    HttpApiEndpoint.post("activate", "/api/v1/policies/:policy_uuid/activate", { error: [Forbidden, NotFound, Conflict],
      params: PolicyId,
      success: Schema.Struct({ id: Schema.String, status: Schema.String, activated_at: Timestamp })
    }),
    HttpApiEndpoint.post("deactivate", "/api/v1/policies/:policy_uuid/deactivate", { error: [Forbidden, NotFound, Conflict],
      params: PolicyId,
      success: Schema.Struct({ id: Schema.String, status: Schema.String, deactivated_at: Timestamp })
    }),
    HttpApiEndpoint.post("dryRun", "/api/v1/policies/:policy_uuid/dry-run", { error: [Forbidden, NotFound],
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
