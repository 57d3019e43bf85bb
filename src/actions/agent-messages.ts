/**
 * What actions send to an agent's chain (the AgentActor, actors/agent.ts) and what it answers.
 * Messages are schemas: in CLUSTER_MODE=sql they cross processes, so they are plain data.
 */
import * as Schema from "effect/Schema"
import { ReceiptSummary } from "../../protocol/actions.js"

const Text = Schema.String
const OptionalText = Schema.NullOr(Schema.String)

/** What an action carries from the moment it is authorized. */
export const ActionFields = Schema.Struct({
  action_uuid: Text,
  org_uuid: Text,
  agent_id: OptionalText,
  agent_version: OptionalText,
  action_type: Text,
  action_details_hash: Text,
  instruction_hash: OptionalText,
  details_sealed: OptionalText,
  details_storage_key: OptionalText,
  model_id: OptionalText,
  model_version: OptionalText,
  parent_action_uuid: OptionalText,
  endpoint_url: OptionalText,
  /**
   * Set when the SDK sent a replay context (replay-context.ts): every receipt of the action commits to
   * it. Optional in messages, so one from a process that predates it still decodes (as none).
   */
  replay_context_hash: Schema.optionalKey(OptionalText)
})
export type ActionFields = typeof ActionFields.Type

const Json = Schema.Record(Schema.String, Schema.Unknown)

/** A new action row, as authorize inserts it. */
export const NewAction = Schema.Struct({
  ...ActionFields.fields,
  status: Schema.Literals(["authorized", "pending_approval", "denied_by_policy"]),
  policy_uuid: OptionalText,
  require_approval: Schema.Boolean,
  approvers: Schema.NullOr(Schema.Array(Text)),
  /** The user whose API key or JWT authorized it (four eyes). */
  authorized_by: OptionalText,
  /** A policy demanded the approval: named approvers join the organization's instead of replacing them. */
  approval_by_policy: Schema.Boolean,
  context: Schema.NullOr(Json),
  sdk: Schema.NullOr(Json),
  warnings: Schema.Array(Text),
  approval_expires_at: OptionalText,
  /** The policy evaluations of the authorization as JSON text (src/policies/recorded.ts); null before they were recorded. */
  policy_evaluations: OptionalText,
  created_at: Text
})
export type NewAction = typeof NewAction.Type

/**
 * An action as the service that sends a notarization read it (without a lock): the actor checks
 * the request against it and signs the receipt from it; the commit's guards catch a read that
 * went stale (the action or its agent changed meanwhile), and the request then runs on the locked path.
 */
export const ActionRead = Schema.Struct({
  ...ActionFields.fields,
  status: Text,
  policy_uuid: OptionalText,
  approved_by: OptionalText,
  approved_at: OptionalText,
  approval_via: OptionalText,
  created_at: Text,
  /** The payload hash of the parent action's receipt, when it has a parent with a receipt. */
  parent_payload_hash: OptionalText,
  agent_decommissioned: Schema.Boolean
})
export type ActionRead = typeof ActionRead.Type

/** What a transition should do. */
export const TransitionRequest = Schema.Union([
  Schema.TaggedStruct("Notarize", {
    action_uuid: Text,
    outcome: Schema.Literals(["completed", "failed"]),
    outcome_hash: OptionalText,
    output_scan_flags: Schema.NullOr(Schema.Array(Json)),
    read: ActionRead,
    /** Set when the receipt's id was promised before it was minted (LLM gateway). */
    receipt_uuid: Schema.optionalKey(Text)
  }),
  Schema.TaggedStruct("Expire", { action_uuid: Text, at: Text }),
  Schema.TaggedStruct("Deny", {
    action_uuid: Text,
    by: OptionalText,
    at: Text,
    via: Schema.Literals(["code", "token", "dashboard"]),
    reason: OptionalText,
    /** The approver's grant (code or token), spent in the same transaction; null from the dashboard. */
    grant_id: OptionalText
  }),
  Schema.TaggedStruct("DenyByPolicy", {
    /** Inserted and denied in the same transaction. */
    row: NewAction,
    reasoning: Text,
    policy_uuid: OptionalText,
    idempotency_key: OptionalText,
    /** The payload hash of the parent's receipt as authorize read it. */
    parent_payload_hash: OptionalText
  })
])
export type TransitionRequest = typeof TransitionRequest.Type

export const ChainHead = Schema.Struct({ agent_sequence: Schema.Number, previous_payload_hash: OptionalText })
export type ChainHead = typeof ChainHead.Type

/** Skipped (the state had moved on), or the action and its minted receipt. */
export const TransitionResult = Schema.Union([
  Schema.TaggedStruct("Skipped", {}),
  Schema.TaggedStruct("Done", {
    action: Schema.Struct({ org_uuid: Text, action_uuid: Text, action_type: Text, agent_id: OptionalText, created_at: Text }),
    receipt: Schema.Struct({ ...ReceiptSummary.fields, signed_payload: Text }),
    agent_sequence: Schema.Number
  })
])
export type TransitionResult = typeof TransitionResult.Type
export type TransitionDone = Extract<TransitionResult, { _tag: "Done" }>
