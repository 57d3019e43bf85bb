/**
 * What an explanation reads: the action row (with its recorded policy evaluations), its status
 * history, cosignatures and latest receipt, and the name and mode of the policy it names. Every
 * query is scoped by organization.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient } from "effect/sql"
import { ExplainedAction } from "../../protocol/explanations.js"
import { NullableJson, NullableTimestamp, Timestamp } from "../platform/columns.js"
import * as Rows from "../platform/db/rows.js"
import { sqlDefects } from "../platform/db/store.js"

const Text = Schema.String
const OptionalText = Schema.NullOr(Schema.String)

export const ExplainedRow = Schema.Struct({
  ...ExplainedAction.fields,
  require_approval: Schema.Boolean,
  policy_uuid: OptionalText,
  policy_name: OptionalText,
  policy_mode: OptionalText,
  approved_by: OptionalText,
  approved_at: NullableTimestamp,
  approval_via: OptionalText,
  denial_reason: OptionalText,
  output_scan_flags: NullableJson(Schema.Array(Schema.Record(Schema.String, Schema.Unknown))),
  /** As stored (src/policies/recorded.ts); null for actions authorized before evaluations were recorded. */
  policy_evaluations: NullableJson(Schema.Unknown),
  created_at: Timestamp
})
export type ExplainedRow = typeof ExplainedRow.Type

const StatusChange = Schema.Struct({ status: Text, changed_at: Timestamp })
export type StatusChange = typeof StatusChange.Type

const CosignatureRow = Schema.Struct({ email: Text, at: Timestamp })
export type CosignatureRow = typeof CosignatureRow.Type

const ReceiptRow = Schema.Struct({
  receipt_uuid: Text,
  receipt_status: Text,
  receipt_version: Text,
  payload_hash: Text,
  signature: Text,
  public_key_id: Text,
  timestamp_token_present: Schema.Boolean,
  created_at: Timestamp
})
export type ReceiptRow = typeof ReceiptRow.Type

const ActionRef = Schema.Struct({ orgUuid: Schema.String, actionUuid: Schema.String })

export const makeExplanationsStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const action = Rows.findOneOption({
    Request: ActionRef,
    Result: ExplainedRow,
    execute: ({ orgUuid, actionUuid }) =>
      sql`SELECT a.action_uuid, a.org_uuid, a.agent_id, a.agent_version, a.action_type, a.model_id, a.model_version,
            a.instruction_hash, a.action_details_hash, a.outcome_hash, a.parent_action_uuid, a.status, a.require_approval,
            a.policy_uuid, p.name AS policy_name, p.mode AS policy_mode, a.approved_by, a.approved_at, a.approval_via,
            a.denial_reason, a.output_scan_flags, a.policy_evaluations, a.created_at
          FROM actions a LEFT JOIN policies p ON p.id = a.policy_uuid AND p.org_uuid = a.org_uuid
          WHERE a.org_uuid = ${orgUuid} AND a.action_uuid = ${actionUuid}`
  })

  const history = Rows.findAll({
    Request: ActionRef,
    Result: StatusChange,
    execute: ({ orgUuid, actionUuid }) =>
      sql`SELECT status, changed_at FROM action_status_history
          WHERE org_uuid = ${orgUuid} AND action_uuid = ${actionUuid} ORDER BY changed_at, status`
  })

  const cosignatures = Rows.findAll({
    Request: ActionRef,
    Result: CosignatureRow,
    execute: ({ orgUuid, actionUuid }) =>
      sql`SELECT cosigner_email AS email, cosigned_at AS at FROM action_cosignatures
          WHERE org_uuid = ${orgUuid} AND action_uuid = ${actionUuid} ORDER BY cosigned_at, cosignature_uuid`
  })

  const receipt = Rows.findOneOption({
    Request: ActionRef,
    Result: ReceiptRow,
    execute: ({ orgUuid, actionUuid }) =>
      sql`SELECT receipt_uuid, receipt_status, receipt_version, payload_hash, signature, public_key_id,
            timestamp_token IS NOT NULL AS timestamp_token_present, created_at
          FROM receipts WHERE org_uuid = ${orgUuid} AND action_uuid = ${actionUuid}
          ORDER BY created_at DESC, receipt_uuid DESC LIMIT 1`
  })

  return sqlDefects({
    action: (orgUuid: string, actionUuid: string) => Effect.map(action({ orgUuid, actionUuid }), Option.getOrUndefined),
    history: (orgUuid: string, actionUuid: string) => history({ orgUuid, actionUuid }),
    cosignatures: (orgUuid: string, actionUuid: string) => cosignatures({ orgUuid, actionUuid }),
    /** The action's latest receipt (an action mints one, at its terminal state). */
    receipt: (orgUuid: string, actionUuid: string) => Effect.map(receipt({ orgUuid, actionUuid }), Option.getOrUndefined)
  })
})

export type ExplanationsStore = Effect.Success<typeof makeExplanationsStore>
