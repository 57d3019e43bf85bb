/**
 * Why an actions operation was refused. Reasons cross the AgentActor (they are schemas), so the
 * transition that refused in another process answers the same reason here.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidInput } from "../platform/domain-error.js"

export class ActionNotFound extends Schema.TaggedError<ActionNotFound>()("ActionNotFound", { action_uuid: Schema.String }) {
  readonly code = "NOT_FOUND"
  override readonly message = "Action not found"
}

export class ParentNotFound extends Schema.TaggedError<ParentNotFound>()("ParentNotFound", { parent_action_uuid: Schema.String }) {
  readonly code = "NOT_FOUND"
  override readonly message = "Parent action not found"
  readonly details = { parent_action_uuid: this.parent_action_uuid }
}

const duplicateMessages = {
  different_body: "This idempotency_key was already used with a different request body",
  in_flight: "A request with this idempotency_key is still in flight",
  busy: "This idempotency_key is busy; retry"
} as const

export class DuplicateRequest extends Schema.TaggedError<DuplicateRequest>()("DuplicateRequest", {
  idempotency_key: Schema.String,
  why: Schema.Literals(["different_body", "in_flight", "busy"])
}) {
  readonly code = "DUPLICATE_REQUEST"
  override readonly message = duplicateMessages[this.why]
  readonly details = { idempotency_key: this.idempotency_key }
}

/** The refusal stored for an idempotency key, answered again as it was. */
export class StoredRefusal extends Schema.TaggedError<StoredRefusal>()("StoredRefusal", {
  code: Schema.String,
  message: Schema.String,
  details: Schema.Record(Schema.String, Schema.Unknown)
}) {}

export class EndpointNotWhitelisted extends Schema.TaggedError<EndpointNotWhitelisted>()("EndpointNotWhitelisted", {
  approval_id: Schema.String,
  url_pattern_suggested: Schema.String
}) {
  readonly code = "ENDPOINT_NOT_WHITELISTED"
  override readonly message = "The endpoint is not on the organization's whitelist; an approval request was created"
  readonly details = { approval_id: this.approval_id, url_pattern_suggested: this.url_pattern_suggested }
}

export class EndpointTlsMismatch extends Schema.TaggedError<EndpointTlsMismatch>()("EndpointTlsMismatch", {
  /** The whitelist's own sentence (it names the host). */
  explanation: Schema.String,
  endpoint_url: Schema.String,
  expected: Schema.String,
  actual: Schema.NullOr(Schema.String)
}) {
  readonly code = "ENDPOINT_TLS_MISMATCH"
  override readonly message = this.explanation
  readonly details = { endpoint_url: this.endpoint_url, expected: this.expected, actual: this.actual }
}

export class PolicyDenied extends Schema.TaggedError<PolicyDenied>()("PolicyDenied", {
  action_uuid: Schema.String,
  policy_uuid: Schema.NullOr(Schema.String),
  reasoning: Schema.String,
  receipt_uuid: Schema.String
}) {
  readonly code = "POLICY_DENIED"
  override readonly message = `Denied by policy: ${this.reasoning}`
  readonly details = { action_uuid: this.action_uuid, policy_uuid: this.policy_uuid, receipt_uuid: this.receipt_uuid }
}

export class InvalidOutcome extends Schema.TaggedError<InvalidOutcome>()("InvalidOutcome", { outcome: Schema.String }) {
  readonly code = "INVALID_OUTCOME"
  override readonly message = "outcome must be completed or failed"
  readonly details = { outcome: this.outcome }
}

export class InvalidActionState extends Schema.TaggedError<InvalidActionState>()("InvalidActionState", { status: Schema.String }) {
  readonly code = "INVALID_ACTION_STATE"
  override readonly message = `Action is ${this.status}; only authorized or approved actions can be notarized`
  readonly details = { status: this.status }
}

/** The action's agent is registered and decommissioned (spec 001): it notarizes nothing more. */
export class AgentDecommissioned extends Schema.TaggedError<AgentDecommissioned>()("AgentDecommissioned", { agent_id: Schema.String }) {
  readonly code = "AGENT_DECOMMISSIONED"
  override readonly message = `Agent ${this.agent_id} is decommissioned`
  readonly details = { agent_id: this.agent_id }
}

export class OutputScanViolation extends Schema.TaggedError<OutputScanViolation>()("OutputScanViolation", {
  action_uuid: Schema.String,
  flags: Schema.Array(Schema.Unknown)
}) {
  readonly code = "OUTPUT_SCAN_VIOLATION"
  override readonly message = "outcome_details contains content the output policy refuses"
  readonly details = { action_uuid: this.action_uuid, flags: this.flags }
}

export class AlreadyResolved extends Schema.TaggedError<AlreadyResolved>()("AlreadyResolved", { status: Schema.String }) {
  readonly code = "ALREADY_RESOLVED"
  override readonly message = `Action is ${this.status}, no longer pending approval`
  readonly details = { status: this.status }
}

/** A dashboard decision that came after the deadline (the action is now expired). */
export class ApprovalExpired extends Schema.TaggedError<ApprovalExpired>()("ApprovalExpired", {}) {
  readonly code = "ALREADY_RESOLVED"
  override readonly message = "The approval expired"
  readonly details = { status: "denied_by_human", reason: "expired" }
}

export class AlreadyCosigned extends Schema.TaggedError<AlreadyCosigned>()("AlreadyCosigned", { action_uuid: Schema.String }) {
  readonly code = "ALREADY_AUTHORIZED"
  override readonly message = "You already cosigned this action"
  readonly details = { action_uuid: this.action_uuid }
}

export class CodeNotFound extends Schema.TaggedError<CodeNotFound>()("CodeNotFound", {}) {
  readonly code = "NOT_FOUND"
  override readonly message = "Approval code not found"
}

const expiredMessages = {
  code: "This approval code was already used or has expired",
  token: "The approval token has expired",
  decision: "This approval is no longer valid",
  credential: "This approval credential was already used"
} as const

/** A code, token or grant that can no longer decide: used, expired, or its action moved on. */
export class CredentialExpired extends Schema.TaggedError<CredentialExpired>()("CredentialExpired", {
  what: Schema.Literals(["code", "token", "decision", "credential"])
}) {
  readonly code = "CODE_EXPIRED"
  override readonly message = expiredMessages[this.what]
}

const refusedMessages = {
  token_mismatch: "The approval token does not match this action",
  not_an_approver: "You are not an approver of this action",
  no_longer_approver: "This approver is no longer an approver of the organization",
  own_action: "Four eyes: a member never approves, denies or cosigns an action authorized with their own credentials"
} as const

/** The caller may not decide on this action. */
export class NotAllowedToDecide extends Schema.TaggedError<NotAllowedToDecide>()("NotAllowedToDecide", {
  why: Schema.Literals(["token_mismatch", "not_an_approver", "no_longer_approver", "own_action"])
}) {
  readonly code = "FORBIDDEN"
  override readonly message = refusedMessages[this.why]
}

export class ActionsError extends Schema.TaggedError<ActionsError>()("ActionsError", {
  reason: Schema.Union([
    ActionNotFound,
    ParentNotFound,
    DuplicateRequest,
    StoredRefusal,
    EndpointNotWhitelisted,
    EndpointTlsMismatch,
    PolicyDenied,
    InvalidOutcome,
    AgentDecommissioned,
    InvalidActionState,
    OutputScanViolation,
    AlreadyResolved,
    ApprovalExpired,
    AlreadyCosigned,
    CodeNotFound,
    CredentialExpired,
    NotAllowedToDecide,
    InvalidInput
  ])
}) {}

export const refuse = (reason: ActionsError["reason"]) => Effect.fail(new ActionsError({ reason }))
