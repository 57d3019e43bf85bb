/**
 * What an explanation reads: the action row (with its recorded policy evaluations), its status
 * history, cosignatures and latest receipt, and the name and mode of the policy it names. Every
 * query is scoped by organization.
 */
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql"
import { iso, isoRequired, jsonValue } from "../platform/sql.js"

export interface ExplainedRow {
  readonly action_uuid: string
  readonly org_uuid: string
  readonly agent_id: string | null
  readonly agent_version: string | null
  readonly action_type: string
  readonly model_id: string | null
  readonly model_version: string | null
  readonly instruction_hash: string | null
  readonly action_details_hash: string
  readonly outcome_hash: string | null
  readonly parent_action_uuid: string | null
  readonly status: string
  readonly require_approval: boolean
  readonly policy_uuid: string | null
  readonly policy_name: string | null
  readonly policy_mode: string | null
  readonly approved_by: string | null
  readonly approved_at: string | null
  readonly approval_via: string | null
  readonly denial_reason: string | null
  readonly output_scan_flags: ReadonlyArray<Record<string, unknown>> | null
  /** As stored (src/policies/recorded.ts); null for actions authorized before evaluations were recorded. */
  readonly policy_evaluations: unknown
  readonly created_at: string
}

export interface StatusChange {
  readonly status: string
  readonly changed_at: string
}

export interface CosignatureRow {
  readonly email: string
  readonly at: string
}

export interface ReceiptRow {
  readonly receipt_uuid: string
  readonly receipt_status: string
  readonly receipt_version: string
  readonly payload_hash: string
  readonly signature: string
  readonly public_key_id: string
  readonly timestamp_token_present: boolean
  readonly created_at: string
}

const text = (value: unknown): string | null => (typeof value === "string" ? value : null)

export const makeExplanationsStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  return {
    action: (orgUuid: string, actionUuid: string) =>
      sql`SELECT a.*, p.name AS policy_name, p.mode AS policy_mode
          FROM actions a LEFT JOIN policies p ON p.id = a.policy_uuid AND p.org_uuid = a.org_uuid
          WHERE a.org_uuid = ${orgUuid} AND a.action_uuid = ${actionUuid}`.pipe(
        Effect.map((rows: ReadonlyArray<any>): ExplainedRow | undefined => {
          const row = rows[0]
          if (row === undefined) return undefined
          return {
            action_uuid: row.action_uuid,
            org_uuid: row.org_uuid,
            agent_id: text(row.agent_id),
            agent_version: text(row.agent_version),
            action_type: row.action_type,
            model_id: text(row.model_id),
            model_version: text(row.model_version),
            instruction_hash: text(row.instruction_hash),
            action_details_hash: row.action_details_hash,
            outcome_hash: text(row.outcome_hash),
            parent_action_uuid: text(row.parent_action_uuid),
            status: row.status,
            require_approval: Boolean(row.require_approval),
            policy_uuid: text(row.policy_uuid),
            policy_name: text(row.policy_name),
            policy_mode: text(row.policy_mode),
            approved_by: text(row.approved_by),
            approved_at: iso(row.approved_at),
            approval_via: text(row.approval_via),
            denial_reason: text(row.denial_reason),
            output_scan_flags: jsonValue(row.output_scan_flags, null),
            policy_evaluations: jsonValue<unknown>(row.policy_evaluations, null),
            created_at: isoRequired(row.created_at)
          }
        })
      ),

    history: (orgUuid: string, actionUuid: string) =>
      sql`SELECT status, changed_at FROM action_status_history
          WHERE org_uuid = ${orgUuid} AND action_uuid = ${actionUuid} ORDER BY changed_at, status`.pipe(
        Effect.map((rows: ReadonlyArray<any>): Array<StatusChange> => rows.map((row) => ({ status: row.status, changed_at: isoRequired(row.changed_at) })))
      ),

    cosignatures: (orgUuid: string, actionUuid: string) =>
      sql`SELECT cosigner_email, cosigned_at FROM action_cosignatures
          WHERE org_uuid = ${orgUuid} AND action_uuid = ${actionUuid} ORDER BY cosigned_at, cosignature_uuid`.pipe(
        Effect.map((rows: ReadonlyArray<any>): Array<CosignatureRow> => rows.map((row) => ({ email: row.cosigner_email, at: isoRequired(row.cosigned_at) })))
      ),

    /** The action's latest receipt (an action mints one, at its terminal state). */
    receipt: (orgUuid: string, actionUuid: string) =>
      sql`SELECT receipt_uuid, receipt_status, receipt_version, payload_hash, signature, public_key_id,
            timestamp_token IS NOT NULL AS timestamp_token_present, created_at
          FROM receipts WHERE org_uuid = ${orgUuid} AND action_uuid = ${actionUuid}
          ORDER BY created_at DESC, receipt_uuid DESC LIMIT 1`.pipe(
        Effect.map((rows: ReadonlyArray<any>): ReceiptRow | undefined => {
          const row = rows[0]
          if (row === undefined) return undefined
          return {
            receipt_uuid: row.receipt_uuid,
            receipt_status: row.receipt_status,
            receipt_version: row.receipt_version,
            payload_hash: row.payload_hash,
            signature: row.signature,
            public_key_id: row.public_key_id,
            timestamp_token_present: row.timestamp_token_present === true,
            created_at: isoRequired(row.created_at)
          }
        })
      )
  }
})

export type ExplanationsStore = Effect.Success<typeof makeExplanationsStore>
