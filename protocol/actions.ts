/**
 * Actions: authorize, notarize, approvals (code, legacy token, dashboard),
 * cosignatures, legal holds and chains (spec 000 "Actions", CONTRACT.md
 * "Actions and receipts").
 */

import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { Authenticated, PublicRoute } from "./auth.js"
import { NullableTimestamp, PageQuery, Pagination, Timestamp } from "./common.js"
import { BadRequest, Conflict, Forbidden, Gone, NotFound } from "./errors.js"

export const ActionStatuses = [
  "authorized",
  "pending_approval",
  "denied_by_policy",
  "approved",
  "denied_by_human",
  "notarized",
  "failed"
] as const
export type ActionStatus = (typeof ActionStatuses)[number]

const Text = (max: number) => Schema.String.check(Schema.isMaxLength(max))
const Name = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200))

const IdempotencyKey = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(255))

export const AuthorizeRequest = Schema.Struct({
  action_type: Name,
  details: Schema.String.check(Schema.isMaxLength(1_000_000)),
  agent_id: Schema.optionalKey(Schema.NullOr(Name)),
  agent_version: Schema.optionalKey(Schema.NullOr(Text(200))),
  model_id: Schema.optionalKey(Schema.NullOr(Text(200))),
  model_version: Schema.optionalKey(Schema.NullOr(Text(200))),
  instruction_hash: Schema.optionalKey(Schema.NullOr(Text(200))),
  parent_action_uuid: Schema.optionalKey(Schema.NullOr(Text(200))),
  endpoint_url: Schema.optionalKey(Schema.NullOr(Text(4096))),
  store_details: Schema.optionalKey(Schema.NullOr(Schema.Boolean)),
  idempotency_key: Schema.optionalKey(Schema.NullOr(IdempotencyKey)),
  require_approval: Schema.optionalKey(Schema.NullOr(Schema.Boolean)),
  approvers: Schema.optionalKey(Schema.NullOr(Schema.Array(Text(320)).check(Schema.isMaxLength(100)))),
  context: Schema.optionalKey(Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown))),
  system_prompt_hash: Schema.optionalKey(Schema.NullOr(Text(200))),
  tool_inputs_hash: Schema.optionalKey(Schema.NullOr(Text(200))),
  model_params: Schema.optionalKey(Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown))),
  execution_env: Schema.optionalKey(Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)))
})
export type AuthorizeRequest = typeof AuthorizeRequest.Type

export const AuthorizeResponse = Schema.Struct({
  action_uuid: Schema.String,
  status: Schema.Literals(["authorized", "pending_approval"]),
  created_at: Timestamp,
  warnings: Schema.NullOr(Schema.Array(Schema.String))
})

export const NotarizeRequest = Schema.Struct({
  // A plain string so an unknown outcome answers 400 INVALID_OUTCOME, not a validation error.
  outcome: Schema.optionalKey(Schema.NullOr(Schema.String)),
  outcome_details: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMaxLength(1_000_000))))
})

export const NotarizeResponse = Schema.Struct({
  action_uuid: Schema.String,
  status: Schema.Literals(["notarized", "failed"]),
  receipt_uuid: Schema.String,
  payload_hash: Schema.String,
  signature: Schema.String,
  public_key_id: Schema.String,
  timestamp_token: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  warnings: Schema.NullOr(Schema.Array(Schema.String))
})

export const ActionListItem = Schema.Struct({
  action_uuid: Schema.String,
  action_type: Schema.String,
  agent_id: Schema.NullOr(Schema.String),
  status: Schema.String,
  legal_hold: Schema.Boolean,
  created_at: Timestamp
})

export const ReceiptSummary = Schema.Struct({
  receipt_uuid: Schema.String,
  payload_hash: Schema.String,
  signature: Schema.String,
  public_key_id: Schema.String,
  timestamp_token: Schema.NullOr(Schema.String),
  receipt_version: Schema.String,
  verify_url: Schema.String,
  created_at: Timestamp
})

export const Cosignature = Schema.Struct({
  cosignature_uuid: Schema.String,
  action_uuid: Schema.String,
  cosigner_email: Schema.String,
  cosigned_at: Timestamp
})

export const ActionDetail = Schema.Struct({
  action_uuid: Schema.String,
  org_uuid: Schema.String,
  agent_id: Schema.NullOr(Schema.String),
  agent_version: Schema.NullOr(Schema.String),
  action_type: Schema.String,
  instruction_hash: Schema.NullOr(Schema.String),
  action_details_hash: Schema.String,
  details_storage_key: Schema.NullOr(Schema.String),
  model_id: Schema.NullOr(Schema.String),
  model_version: Schema.NullOr(Schema.String),
  parent_action_uuid: Schema.NullOr(Schema.String),
  endpoint_url: Schema.NullOr(Schema.String),
  status: Schema.String,
  legal_hold: Schema.Boolean,
  policy_uuid: Schema.NullOr(Schema.String),
  require_approval: Schema.Boolean,
  approvers: Schema.NullOr(Schema.Array(Schema.String)),
  approved_by: Schema.NullOr(Schema.String),
  approved_at: NullableTimestamp,
  denial_reason: Schema.NullOr(Schema.String),
  outcome: Schema.NullOr(Schema.String),
  outcome_hash: Schema.NullOr(Schema.String),
  approval_expires_at: NullableTimestamp,
  agent_sequence: Schema.NullOr(Schema.Int),
  created_at: Timestamp,
  updated_at: Timestamp,
  receipt: Schema.NullOr(ReceiptSummary),
  authorizations: Schema.Array(Cosignature)
})

export const ApprovalReview = Schema.Struct({
  action_uuid: Schema.String,
  action_type: Schema.String,
  agent_id: Schema.NullOr(Schema.String),
  status: Schema.String,
  details: Schema.NullOr(Schema.String),
  action_details_hash: Schema.String,
  instruction_hash: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  expires_at: Timestamp
})

export const ApprovalResult = Schema.Struct({
  status: Schema.Literals(["approved", "denied_by_human"]),
  action_uuid: Schema.String,
  approver_email: Schema.NullOr(Schema.String)
})

export const ChainLink = Schema.Struct({
  action_uuid: Schema.String,
  action_type: Schema.String,
  agent_id: Schema.NullOr(Schema.String),
  action_details_hash: Schema.String,
  status: Schema.String,
  parent_action_uuid: Schema.NullOr(Schema.String),
  created_at: Timestamp
})

const ActionParam = { action_uuid: Schema.String }
const HoldResult = Schema.Struct({ action_uuid: Schema.String, legal_hold: Schema.Boolean })

export class ActionsGroup extends HttpApiGroup.make("actions")
  .add(
    HttpApiEndpoint.post("authorize", "/api/v1/actions", { error: [Forbidden, NotFound, Conflict, Gone],
      headers: {
        "idempotency-key": Schema.optionalKey(IdempotencyKey).annotate({
          description: "Same as the body's idempotency_key (the published SDK sends it here); both given and different → 422"
        })
      },
      payload: AuthorizeRequest,
      success: AuthorizeResponse.pipe(HttpApiSchema.status(201))
    }),
    HttpApiEndpoint.get("list", "/api/v1/actions", { error: Forbidden,
      query: {
        ...PageQuery,
        action_type: Schema.optionalKey(Schema.String),
        agent_id: Schema.optionalKey(Schema.String),
        status: Schema.optionalKey(Schema.Literals(ActionStatuses))
      },
      success: Schema.Struct({ data: Schema.Array(ActionListItem), actions: Schema.Array(ActionListItem), pagination: Pagination })
    }),
    HttpApiEndpoint.get("get", "/api/v1/actions/:action_uuid", { error: [Forbidden, NotFound], params: ActionParam, success: ActionDetail }),
    HttpApiEndpoint.post("notarize", "/api/v1/actions/:action_uuid/notarize", { error: [BadRequest, Forbidden, NotFound, Conflict, Gone],
      params: ActionParam,
      payload: NotarizeRequest,
      success: NotarizeResponse
    }),
    // What an approver reads on the dashboard, stored details included (JWT, approvers of the action only).
    HttpApiEndpoint.get("dashboardReview", "/api/v1/actions/:action_uuid/dashboard-review", { error: [Forbidden, NotFound],
      params: ActionParam,
      success: ApprovalReview
    }),
    HttpApiEndpoint.post("dashboardApprove", "/api/v1/actions/:action_uuid/dashboard-approve", { error: [Forbidden, NotFound, Conflict, Gone],
      params: ActionParam,
      success: ApprovalResult
    }),
    HttpApiEndpoint.post("dashboardDeny", "/api/v1/actions/:action_uuid/dashboard-deny", { error: [Forbidden, NotFound, Conflict, Gone],
      params: ActionParam,
      // In the query like tokenDeny's: the spec gives this route no body.
      query: { reason: Schema.optionalKey(Text(2000)) },
      success: ApprovalResult
    }),
    HttpApiEndpoint.post("cosign", "/api/v1/actions/:action_uuid/cosign", { error: [NotFound, Conflict, Forbidden], params: ActionParam, success: Cosignature }),
    HttpApiEndpoint.post("hold", "/api/v1/actions/:action_uuid/hold", { error: [Forbidden, NotFound], params: ActionParam, success: HoldResult }),
    HttpApiEndpoint.delete("release", "/api/v1/actions/:action_uuid/hold", { error: [Forbidden, NotFound], params: ActionParam, success: HoldResult }),
    HttpApiEndpoint.get("chain", "/api/v1/actions/:action_uuid/chain", { error: [Forbidden, NotFound],
      params: ActionParam,
      success: Schema.Struct({ action_uuid: Schema.String, chain: Schema.Array(ChainLink) })
    })
  )
  .middleware(Authenticated)
  .annotateMerge(
    OpenApi.annotations({
      title: "Actions",
      description:
        "Authorize an intent, notarize its outcome, approve or deny pending actions, cosign, hold and walk chains. Every terminal state mints a signed receipt chained per (organization, agent)."
    })
  )
{}

export class ActionApprovalsGroup extends HttpApiGroup.make("actionApprovals")
  .add(
    HttpApiEndpoint.get("review", "/api/v1/actions/approval/:code", { error: [NotFound, Gone],
      params: { code: Schema.String },
      success: ApprovalReview
    }),
    HttpApiEndpoint.post("confirm", "/api/v1/actions/approval/:code/confirm", { error: [Forbidden, NotFound, Conflict, Gone],
      params: { code: Schema.String },
      payload: Schema.Struct({ decision: Schema.Literals(["approve", "deny"]), reason: Schema.optionalKey(Schema.NullOr(Text(2000))) }),
      success: ApprovalResult
    }),
    HttpApiEndpoint.post("tokenApprove", "/api/v1/actions/:action_uuid/approve", { error: [Forbidden, NotFound, Conflict, Gone],
      params: ActionParam,
      query: { token: Schema.optionalKey(Schema.String) },
      success: ApprovalResult
    }),
    HttpApiEndpoint.post("tokenDeny", "/api/v1/actions/:action_uuid/deny", { error: [Forbidden, NotFound, Conflict, Gone],
      params: ActionParam,
      query: { token: Schema.optionalKey(Schema.String), reason: Schema.optionalKey(Text(2000)) },
      success: ApprovalResult
    })
  )
  .middleware(PublicRoute)
  .annotateMerge(
    OpenApi.annotations({
      title: "Action approvals (public)",
      description: "Single-use 10-character approval codes (72 h) and the legacy HMAC-signed approve/deny tokens."
    })
  )
{}
