/**
 * Actions: authorize, notarize, approvals (code, legacy token, dashboard),
 * cosignatures, legal holds and chains (spec 000 "Actions", CONTRACT.md
 * "Actions and receipts").
 */

import * as Effect from "effect/Effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { Authenticated, PublicRoute } from "./auth.js"
import { NullableTimestamp, PageQuery, Pagination, Timestamp } from "./common.js"
import { accessRefusal, Forbidden, InvalidInput, refusal } from "./errors.js"
import { ActionStatuses } from "./lists.js"
import { canonicalJson } from "./verifier/canonical.js"
import { utf8Bytes } from "./verifier/encoding.js"

export { ActionStatuses }
export type ActionStatus = (typeof ActionStatuses)[number]

const Text = (max: number) => Schema.String.check(Schema.isMaxLength(max))
const Name = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200))

const IdempotencyKey = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(255))

/*
 * Replay context (CONTRACT-sdk-beyond §1): reproducibility metadata the SDKs send on authorize.
 * Stored on the action and committed to by its receipts (`replay_context_hash`, receipt 1.3).
 */

/** The SDKs document `sha256:…`; the form is not enforced. */
const ReplayHash = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200)).annotate({ description: "1-200 characters (the SDKs send `sha256:…`)" })

export const REPLAY_OBJECT_MAX_BYTES = 16 * 1024
const MAX_EXACT_INTEGER = 2 ** 53

/** Numbers a JSON reader elsewhere reads back unchanged: finite, and integers no larger than 2^53. */
const numberProblems = (value: unknown, path: Array<PropertyKey>, found: Array<{ path: ReadonlyArray<PropertyKey>; issue: string }>): void => {
  if (typeof value === "number") {
    if (!Number.isFinite(value)) found.push({ path, issue: "must be a finite number" })
    else if (Number.isInteger(value) && Math.abs(value) > MAX_EXACT_INTEGER) found.push({ path, issue: "an integer must be within ±2^53" })
  } else if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) numberProblems(item, [...path, index], found)
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) numberProblems(item, [...path, key], found)
  }
}

/** A JSON object of at most 16 KiB as RFC 8785 canonical UTF-8, with exact numbers. */
const ReplayObject = Schema.Record(Schema.String, Schema.Unknown).check(
  Schema.makeFilter((value: Record<string, unknown>) => {
    const found: Array<{ path: ReadonlyArray<PropertyKey>; issue: string }> = []
    numberProblems(value, [], found)
    if (found.length > 0) return found
    const bytes = utf8Bytes(canonicalJson(value)).length
    return bytes <= REPLAY_OBJECT_MAX_BYTES ? undefined : `must be at most ${REPLAY_OBJECT_MAX_BYTES} bytes as canonical JSON (RFC 8785), not ${bytes}`
  })
).annotate({ description: "a JSON object of at most 16 KiB as RFC 8785 UTF-8; numbers finite, integers within ±2^53" })

/** The four fields as stored; each null when it was not sent. */
export const ReplayFields = {
  system_prompt_hash: Schema.NullOr(Schema.String),
  tool_inputs_hash: Schema.NullOr(Schema.String),
  model_params: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)),
  execution_env: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown))
}

const ReplayContextHash = Schema.NullOr(Schema.String).annotate({
  description:
    "`sha256:` + hex SHA-256 of the RFC 8785 canonical form of {system_prompt_hash, tool_inputs_hash, model_params, execution_env} (absent ones null); null when none was sent"
})

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
  system_prompt_hash: Schema.optionalKey(Schema.NullOr(ReplayHash)),
  tool_inputs_hash: Schema.optionalKey(Schema.NullOr(ReplayHash)),
  model_params: Schema.optionalKey(Schema.NullOr(ReplayObject)),
  execution_env: Schema.optionalKey(Schema.NullOr(ReplayObject))
})
export type AuthorizeRequest = typeof AuthorizeRequest.Type

export const AuthorizeResponse = Schema.Struct({
  action_uuid: Schema.String,
  status: Schema.Literals(["authorized", "pending_approval"]),
  created_at: Timestamp,
  warnings: Schema.NullOr(Schema.Array(Schema.String))
})
export type AuthorizeResponse = typeof AuthorizeResponse.Type

export const NotarizeRequest = Schema.Struct({
  // A plain string so an unknown outcome answers 400 INVALID_OUTCOME, not a validation error.
  outcome: Schema.optionalKey(Schema.NullOr(Schema.String)),
  outcome_details: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMaxLength(1_000_000))))
})
export type NotarizeRequest = typeof NotarizeRequest.Type

const Severity = Schema.Literals(["info", "warning", "critical"])

/** One entity type the output scan found, in the SDKs' form; the matched text never travels. */
export const OutputScanHit = Schema.Struct({
  name: Schema.String.annotate({ description: "the entity type" }),
  library: Schema.String,
  severity: Severity,
  description: Schema.String,
  matches: Schema.Int,
  sample: Schema.Literal("[REDACTED]")
})

/** The output scan of `outcome_details` as the SDKs type it (the receipt keeps its own form). */
export const OutputScanReport = Schema.Struct({
  scanned_at: Timestamp,
  libraries: Schema.Array(Schema.String),
  mode: Schema.Literals(["flag", "deny", "redact"]),
  decision: Schema.Literal("allow"),
  worst_severity: Schema.NullOr(Severity),
  hits: Schema.Array(OutputScanHit)
})
export type OutputScanReport = typeof OutputScanReport.Type

export const NotarizeResponse = Schema.Struct({
  action_uuid: Schema.String,
  status: Schema.Literals(["notarized", "failed"]),
  receipt_uuid: Schema.String,
  payload_hash: Schema.String,
  signature: Schema.String,
  public_key_id: Schema.String,
  timestamp_token: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  warnings: Schema.NullOr(Schema.Array(Schema.String)),
  output_scan_flags: Schema.NullOr(OutputScanReport).annotate({ description: "null when no output scan ran (no outcome_details, or output filtering off)" })
})
export type NotarizeResponse = typeof NotarizeResponse.Type

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
export type Cosignature = typeof Cosignature.Type

/** A cosignature as an action lists it, with the names the SDKs read. */
export const ActionAuthorization = Schema.Struct({
  ...Cosignature.fields,
  id: Schema.String.annotate({ description: "= cosignature_uuid" }),
  authorizer_email: Schema.String.annotate({ description: "= cosigner_email" }),
  authorized_at: Timestamp.annotate({ description: "= cosigned_at" })
})
export type ActionAuthorization = typeof ActionAuthorization.Type

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
  authorizations: Schema.Array(ActionAuthorization),
  ...ReplayFields,
  replay_context_hash: ReplayContextHash
})
export type ActionDetail = typeof ActionDetail.Type

/** A list item: the detail's keys the SDKs type, read with the page's one query. */
export const ActionListItem = Schema.Struct({
  action_uuid: Schema.String,
  action_type: Schema.String,
  agent_id: Schema.NullOr(Schema.String),
  status: Schema.String,
  legal_hold: Schema.Boolean,
  created_at: Timestamp,
  org_uuid: Schema.String,
  action_details_hash: Schema.String,
  instruction_hash: Schema.NullOr(Schema.String),
  parent_action_uuid: Schema.NullOr(Schema.String),
  model_id: Schema.NullOr(Schema.String),
  receipt: Schema.NullOr(ReceiptSummary),
  authorizations: Schema.Array(ActionAuthorization),
  ...ReplayFields,
  replay_context_hash: ReplayContextHash
})
export type ActionListItem = typeof ActionListItem.Type

export const ReplayContext = Schema.Struct({
  action_uuid: Schema.String,
  ...ReplayFields,
  model_id: Schema.NullOr(Schema.String),
  model_version: Schema.NullOr(Schema.String),
  agent_id: Schema.NullOr(Schema.String),
  agent_version: Schema.NullOr(Schema.String),
  instruction_hash: Schema.NullOr(Schema.String),
  replay_context_hash: ReplayContextHash,
  receipt_uuid: Schema.NullOr(Schema.String).annotate({ description: "the action's latest receipt; null before its receipt" }),
  receipt_version: Schema.NullOr(Schema.String).annotate({ description: "`1.3` when the receipt commits to the replay context, else `1.1`; null before the receipt" })
})
export type ReplayContext = typeof ReplayContext.Type

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
export type ApprovalReview = typeof ApprovalReview.Type

export const ApprovalResult = Schema.Struct({
  status: Schema.Literals(["approved", "denied_by_human"]),
  action_uuid: Schema.String,
  approver_email: Schema.NullOr(Schema.String)
})
export type ApprovalResult = typeof ApprovalResult.Type

export const ChainLink = Schema.Struct({
  action_uuid: Schema.String,
  action_type: Schema.String,
  agent_id: Schema.NullOr(Schema.String),
  action_details_hash: Schema.String,
  status: Schema.String,
  parent_action_uuid: Schema.NullOr(Schema.String),
  created_at: Timestamp
})
export type ChainLink = typeof ChainLink.Type

/*
 * The refusals of actions. A union of refusal classes (the `reason` of `ActionsError`, which also
 * crosses the AgentActor) takes a refusal as the first member its literal fields match, and
 * would turn one refusal into another of the same code: refusals sharing a code differ by a
 * literal message (`fixed`), and a class with a free message comes after those of its code.
 */

/** A refusal whose message never varies: the message is a literal, so it tells refusals of one code apart. */
const fixed = <const Code extends string, const Message extends string>(code: Code, message: Message) => ({
  ...refusal(code),
  message: Schema.Literal(message).pipe(Schema.withConstructorDefault(Effect.succeed(message)))
})

export class ActionNotFound extends Schema.Error<ActionNotFound>("ActionNotFound")(fixed("NOT_FOUND", "Action not found"), {
  httpApiStatus: 404,
  description: "No such action in the caller's organization"
}) {
  readonly _tag = "ActionNotFound"
}

export class ParentNotFound extends Schema.Error<ParentNotFound>("ParentNotFound")(fixed("NOT_FOUND", "Parent action not found"), {
  httpApiStatus: 404,
  description: "parent_action_uuid names no action of the caller's organization"
}) {
  readonly _tag = "ParentNotFound"
  static of(parentActionUuid: string) {
    return new ParentNotFound({ details: { parent_action_uuid: parentActionUuid } })
  }
}

const duplicateMessages = {
  different_body: "This idempotency_key was already used with a different request body",
  in_flight: "A request with this idempotency_key is still in flight",
  busy: "This idempotency_key is busy; retry"
} as const

export class DuplicateRequest extends Schema.Error<DuplicateRequest>("DuplicateRequest")(refusal("DUPLICATE_REQUEST"), {
  httpApiStatus: 409,
  description: "The idempotency_key was used with another body, or its first request is still running"
}) {
  readonly _tag = "DuplicateRequest"
  static of(idempotencyKey: string, why: keyof typeof duplicateMessages) {
    return new DuplicateRequest({ message: duplicateMessages[why], details: { idempotency_key: idempotencyKey } })
  }
}

const accessProps = (message: string, details: Record<string, unknown>) => ({ message, error: message, details })

export class EndpointNotWhitelisted extends Schema.Error<EndpointNotWhitelisted>("EndpointNotWhitelisted")(
  accessRefusal("ENDPOINT_NOT_WHITELISTED", "The endpoint is not on the organization's whitelist; an approval request was created"),
  { httpApiStatus: 403, description: "endpoint_url is not whitelisted; details name the whitelist approval request created" }
) {
  readonly _tag = "EndpointNotWhitelisted"
  static of(approvalId: string, urlPatternSuggested: string) {
    return new EndpointNotWhitelisted({ details: { approval_id: approvalId, url_pattern_suggested: urlPatternSuggested } })
  }
}

export class EndpointTlsMismatch extends Schema.Error<EndpointTlsMismatch>("EndpointTlsMismatch")(
  accessRefusal("ENDPOINT_TLS_MISMATCH", "The endpoint's TLS certificate does not match the whitelist"),
  { httpApiStatus: 403, description: "endpoint_url's certificate is not the one its whitelist entry pins" }
) {
  readonly _tag = "EndpointTlsMismatch"
  /** `explanation` is the whitelist's own sentence (it names the host). */
  static of(explanation: string, endpointUrl: string, expected: string, actual: string | null) {
    return new EndpointTlsMismatch(accessProps(explanation, { endpoint_url: endpointUrl, expected, actual }))
  }
}

export class PolicyDenied extends Schema.Error<PolicyDenied>("PolicyDenied")(accessRefusal("POLICY_DENIED", "A policy denied this action"), {
  httpApiStatus: 403,
  description: "A policy denied the action (its receipt is minted); a retry with the same idempotency_key answers the same"
}) {
  readonly _tag = "PolicyDenied"
  static of(denial: { readonly action_uuid: string; readonly policy_uuid: string | null; readonly reasoning: string; readonly receipt_uuid: string }) {
    return new PolicyDenied(
      accessProps(`Denied by policy: ${denial.reasoning}`, { action_uuid: denial.action_uuid, policy_uuid: denial.policy_uuid, receipt_uuid: denial.receipt_uuid })
    )
  }
}

export class InvalidOutcome extends Schema.Error<InvalidOutcome>("InvalidOutcome")(refusal("INVALID_OUTCOME", "outcome must be completed or failed"), {
  httpApiStatus: 400,
  description: "outcome is neither completed nor failed"
}) {
  readonly _tag = "InvalidOutcome"
  static of(outcome: string) {
    return new InvalidOutcome({ details: { outcome } })
  }
}

export class InvalidActionState extends Schema.Error<InvalidActionState>("InvalidActionState")(refusal("INVALID_ACTION_STATE"), {
  httpApiStatus: 409,
  description: "Only authorized or approved actions can be notarized"
}) {
  readonly _tag = "InvalidActionState"
  static of(status: string) {
    return new InvalidActionState({ message: `Action is ${status}; only authorized or approved actions can be notarized`, details: { status } })
  }
}

/** The action's agent is registered and decommissioned (spec 001): it notarizes nothing more. */
export class AgentDecommissioned extends Schema.Error<AgentDecommissioned>("AgentDecommissioned")(refusal("AGENT_DECOMMISSIONED"), {
  httpApiStatus: 422,
  description: "The action's agent is decommissioned"
}) {
  readonly _tag = "AgentDecommissioned"
  static of(agentId: string) {
    return new AgentDecommissioned({ message: `Agent ${agentId} is decommissioned`, details: { agent_id: agentId } })
  }
}

export class OutputScanViolation extends Schema.Error<OutputScanViolation>("OutputScanViolation")(
  refusal("OUTPUT_SCAN_VIOLATION", "outcome_details contains content the output policy refuses"),
  { httpApiStatus: 422, description: "The organization's output policy refuses outcome_details" }
) {
  readonly _tag = "OutputScanViolation"
  static of(actionUuid: string, flags: ReadonlyArray<unknown>) {
    return new OutputScanViolation({ details: { action_uuid: actionUuid, flags } })
  }
}

export class AlreadyResolved extends Schema.Error<AlreadyResolved>("AlreadyResolved")(refusal("ALREADY_RESOLVED"), {
  httpApiStatus: 409,
  description: "The action is no longer pending approval"
}) {
  readonly _tag = "AlreadyResolved"
  static of(status: string) {
    return new AlreadyResolved({ message: `Action is ${status}, no longer pending approval`, details: { status } })
  }
}

/** A dashboard decision that came after the deadline (the action is now expired). */
export class ApprovalExpired extends Schema.Error<ApprovalExpired>("ApprovalExpired")(fixed("ALREADY_RESOLVED", "The approval expired"), {
  httpApiStatus: 409,
  description: "The approval's deadline passed (the action is now denied as expired)"
}) {
  readonly _tag = "ApprovalExpired"
  static of() {
    return new ApprovalExpired({ details: { status: "denied_by_human", reason: "expired" } })
  }
}

export class AlreadyCosigned extends Schema.Error<AlreadyCosigned>("AlreadyCosigned")(refusal("ALREADY_AUTHORIZED", "You already cosigned this action"), {
  httpApiStatus: 409,
  description: "The caller already cosigned this action"
}) {
  readonly _tag = "AlreadyCosigned"
  static of(actionUuid: string) {
    return new AlreadyCosigned({ details: { action_uuid: actionUuid } })
  }
}

export class CodeNotFound extends Schema.Error<CodeNotFound>("CodeNotFound")(fixed("NOT_FOUND", "Approval code not found"), {
  httpApiStatus: 404,
  description: "No approval code like this one"
}) {
  readonly _tag = "CodeNotFound"
}

const expiredMessages = {
  code: "This approval code was already used or has expired",
  token: "The approval token has expired",
  decision: "This approval is no longer valid",
  credential: "This approval credential was already used"
} as const

/** A code, token or grant that can no longer decide: used, expired, or its action moved on. */
export class CredentialExpired extends Schema.Error<CredentialExpired>("CredentialExpired")(refusal("CODE_EXPIRED"), {
  httpApiStatus: 410,
  description: "The approval code or token was already used or has expired"
}) {
  readonly _tag = "CredentialExpired"
  static of(what: keyof typeof expiredMessages) {
    return new CredentialExpired({ message: expiredMessages[what] })
  }
}

const refusedMessages = {
  token_mismatch: "The approval token does not match this action",
  not_an_approver: "You are not an approver of this action",
  no_longer_approver: "This approver is no longer an approver of the organization",
  own_action: "Four eyes: a member never approves, denies or cosigns an action authorized with their own credentials"
} as const

/** The caller may not decide on this action. */
export class NotAllowedToDecide extends Schema.Error<NotAllowedToDecide>("NotAllowedToDecide")(
  accessRefusal("FORBIDDEN", refusedMessages.not_an_approver),
  { httpApiStatus: 403, description: "Not an approver of the action, the member who authorized it, or a token of another action" }
) {
  readonly _tag = "NotAllowedToDecide"
  static of(why: keyof typeof refusedMessages) {
    return new NotAllowedToDecide({ message: refusedMessages[why], error: refusedMessages[why] })
  }
}

const ActionParam = { action_uuid: Schema.String }
const HoldResult = Schema.Struct({ action_uuid: Schema.String, legal_hold: Schema.Boolean })

export class ActionsGroup extends HttpApiGroup.make("actions")
  .add(
    HttpApiEndpoint.post("authorize", "/api/v1/actions", {
      error: [Forbidden, InvalidInput, ParentNotFound, DuplicateRequest, EndpointNotWhitelisted, EndpointTlsMismatch, PolicyDenied],
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
    HttpApiEndpoint.get("get", "/api/v1/actions/:action_uuid", { error: [Forbidden, ActionNotFound], params: ActionParam, success: ActionDetail }),
    HttpApiEndpoint.post("notarize", "/api/v1/actions/:action_uuid/notarize", {
      error: [Forbidden, InvalidOutcome, ActionNotFound, InvalidActionState, OutputScanViolation, AgentDecommissioned],
      params: ActionParam,
      payload: NotarizeRequest,
      success: NotarizeResponse
    }),
    // What an approver reads on the dashboard, stored details included (JWT, approvers of the action only).
    HttpApiEndpoint.get("dashboardReview", "/api/v1/actions/:action_uuid/dashboard-review", { error: [Forbidden, ActionNotFound, NotAllowedToDecide],
      params: ActionParam,
      success: ApprovalReview
    }),
    HttpApiEndpoint.post("dashboardApprove", "/api/v1/actions/:action_uuid/dashboard-approve", {
      error: [Forbidden, ActionNotFound, NotAllowedToDecide, AlreadyResolved, ApprovalExpired],
      params: ActionParam,
      success: ApprovalResult
    }),
    HttpApiEndpoint.post("dashboardDeny", "/api/v1/actions/:action_uuid/dashboard-deny", {
      error: [Forbidden, ActionNotFound, NotAllowedToDecide, AlreadyResolved, ApprovalExpired],
      params: ActionParam,
      // In the query like tokenDeny's: the spec gives this route no body.
      query: { reason: Schema.optionalKey(Text(2000)) },
      success: ApprovalResult
    }),
    HttpApiEndpoint.post("cosign", "/api/v1/actions/:action_uuid/cosign", {
      error: [Forbidden, ActionNotFound, AlreadyCosigned, NotAllowedToDecide],
      params: ActionParam,
      success: Cosignature
    }),
    HttpApiEndpoint.post("hold", "/api/v1/actions/:action_uuid/hold", { error: [Forbidden, ActionNotFound], params: ActionParam, success: HoldResult }),
    HttpApiEndpoint.delete("release", "/api/v1/actions/:action_uuid/hold", { error: [Forbidden, ActionNotFound], params: ActionParam, success: HoldResult }),
    HttpApiEndpoint.get("chain", "/api/v1/actions/:action_uuid/chain", { error: [Forbidden, ActionNotFound],
      params: ActionParam,
      success: Schema.Struct({ action_uuid: Schema.String, chain: Schema.Array(ChainLink) })
    }),
    HttpApiEndpoint.get("replayContext", "/api/v1/actions/:action_uuid/replay-context", { error: [Forbidden, ActionNotFound],
      params: ActionParam,
      success: ReplayContext
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
    HttpApiEndpoint.get("review", "/api/v1/actions/approval/:code", { error: [CodeNotFound, CredentialExpired],
      params: { code: Schema.String },
      success: ApprovalReview
    }),
    HttpApiEndpoint.post("confirm", "/api/v1/actions/approval/:code/confirm", {
      error: [CodeNotFound, ActionNotFound, CredentialExpired, NotAllowedToDecide],
      params: { code: Schema.String },
      payload: Schema.Struct({ decision: Schema.Literals(["approve", "deny"]), reason: Schema.optionalKey(Schema.NullOr(Text(2000))) }),
      success: ApprovalResult
    }),
    HttpApiEndpoint.post("tokenApprove", "/api/v1/actions/:action_uuid/approve", {
      error: [ActionNotFound, AlreadyResolved, CredentialExpired, NotAllowedToDecide],
      params: ActionParam,
      query: { token: Schema.optionalKey(Schema.String) },
      success: ApprovalResult
    }),
    HttpApiEndpoint.post("tokenDeny", "/api/v1/actions/:action_uuid/deny", {
      error: [ActionNotFound, AlreadyResolved, CredentialExpired, NotAllowedToDecide],
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
