/**
 * SQL for actions, cosignatures, idempotency records and agent chain heads.
 * Every query is scoped by organization; callers decide the transaction.
 */
import * as Effect from "effect/Effect"
import { SqlClient, type Statement } from "effect/sql"
import { eventRowsJson, type RecordedEvent } from "../events/service.js"
import { type AuditEntry, insertAudit } from "../platform/audit.js"
import { jsonb } from "../platform/db/index.js"
import { count, iso, isoRequired, jsonValue, offset } from "../platform/sql.js"
import type { MintedReceipt } from "../receipts/ports.js"
import type { ActionFields, ActionRead, NewAction } from "./agent-messages.js"
import type { Member } from "./approvals.js"
import { DEFAULT_AGENT_ID } from "./chain.js"

export interface ActionRow extends ActionFields {
  readonly status: string
  readonly legal_hold: boolean
  readonly policy_uuid: string | null
  readonly require_approval: boolean
  readonly approvers: ReadonlyArray<string> | null
  readonly authorized_by: string | null
  readonly approval_by_policy: boolean
  readonly approval_expires_at: string | null
  readonly approved_by: string | null
  readonly approved_at: string | null
  readonly approval_via: string | null
  readonly denial_reason: string | null
  readonly outcome: string | null
  readonly outcome_hash: string | null
  readonly receipt_uuid: string | null
  readonly receipt_payload_hash: string | null
  readonly receipt: Omit<MintedReceipt, "signed_payload"> | null
  readonly agent_sequence: number | null
  readonly created_at: string
  readonly updated_at: string
}

const toCosignature = (row: any) => ({
  cosignature_uuid: row.cosignature_uuid as string,
  action_uuid: row.action_uuid as string,
  cosigner_email: row.cosigner_email as string,
  cosigned_at: isoRequired(row.cosigned_at)
})

/** The columns every action carries from its authorization (agent-messages.ts `ActionFields`). */
const toActionFields = (row: any): ActionFields => ({
  action_uuid: row.action_uuid,
  org_uuid: row.org_uuid,
  agent_id: row.agent_id ?? null,
  agent_version: row.agent_version ?? null,
  action_type: row.action_type,
  action_details_hash: row.action_details_hash,
  instruction_hash: row.instruction_hash ?? null,
  details_sealed: row.details_sealed ?? null,
  details_storage_key: row.details_storage_key ?? null,
  model_id: row.model_id ?? null,
  model_version: row.model_version ?? null,
  parent_action_uuid: row.parent_action_uuid ?? null,
  endpoint_url: row.endpoint_url ?? null,
})

const toAction = (row: any): ActionRow => ({
  ...toActionFields(row),
  status: row.status,
  legal_hold: Boolean(row.legal_hold),
  policy_uuid: row.policy_uuid ?? null,
  require_approval: Boolean(row.require_approval),
  approvers: jsonValue<ReadonlyArray<string> | null>(row.approvers, null),
  authorized_by: row.authorized_by ?? null,
  approval_by_policy: Boolean(row.approval_by_policy),
  approval_expires_at: iso(row.approval_expires_at),
  approved_by: row.approved_by ?? null,
  approved_at: iso(row.approved_at),
  approval_via: row.approval_via ?? null,
  denial_reason: row.denial_reason ?? null,
  outcome: row.outcome ?? null,
  outcome_hash: row.outcome_hash ?? null,
  receipt_uuid: row.receipt_uuid ?? null,
  receipt_payload_hash: row.receipt_payload_hash ?? null,
  receipt: jsonValue(row.receipt, null),
  agent_sequence: row.agent_sequence === null || row.agent_sequence === undefined ? null : Number(row.agent_sequence),
  created_at: isoRequired(row.created_at),
  updated_at: isoRequired(row.updated_at)
})

/** What the agent's actor needs of an action it did not lock (agent-messages.ts `ActionRead`), from its row. */
const toRead = (row: any): ActionRead => ({
  ...toActionFields(row),
  status: row.status,
  policy_uuid: row.policy_uuid ?? null,
  approved_by: row.approved_by ?? null,
  approved_at: iso(row.approved_at),
  approval_via: row.approval_via ?? null,
  created_at: isoRequired(row.created_at),
  parent_payload_hash: row.parent_payload_hash ?? null,
  agent_decommissioned: row.agent_decommissioned === true
})

/** What a terminal transition writes besides the status. */
export interface TerminalUpdate {
  readonly status: "notarized" | "failed" | "denied_by_policy" | "denied_by_human"
  readonly outcome?: string | null
  readonly outcome_hash?: string | null
  readonly output_scan_flags?: ReadonlyArray<Record<string, unknown>> | null
  readonly approved_by?: string | null
  readonly approved_at?: string | null
  readonly approval_via?: string | null
  readonly denial_reason?: string | null
  readonly receipt: MintedReceipt
  readonly agent_sequence: number
}

/** A personal approval credential; the code itself is never stored. */
export interface GrantRow {
  readonly grant_id: string
  readonly org_uuid: string
  readonly action_uuid: string
  readonly approver_email: string
  readonly expires_at: string
  readonly used_at: string | null
}

export interface NewGrant extends Omit<GrantRow, "used_at"> {
  readonly code_digest: string
}

const toGrant = (row: any): GrantRow => ({
  grant_id: row.grant_id,
  org_uuid: row.org_uuid,
  action_uuid: row.action_uuid,
  approver_email: row.approver_email,
  expires_at: isoRequired(row.expires_at),
  used_at: iso(row.used_at)
})

export interface IdempotencyRecord {
  readonly request_hash: string
  readonly status_code: number | null
  readonly response: Record<string, unknown> | null
  readonly created_at: string
}

export const makeActionsStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  /** The SET list of an action's terminal state (the receipt's summary is kept on the row). */
  const terminalColumns = (u: TerminalUpdate) => {
    const { signed_payload: _signed, ...receipt } = u.receipt
    return sql`status = ${u.status},
      outcome = ${u.outcome ?? null}, outcome_hash = ${u.outcome_hash ?? null},
      output_scan_flags = ${u.output_scan_flags ? jsonb(u.output_scan_flags) : null},
      approved_by = COALESCE(${u.approved_by ?? null}, approved_by),
      approved_at = COALESCE(${u.approved_at ?? null}, approved_at),
      approval_via = COALESCE(${u.approval_via ?? null}, approval_via),
      denial_reason = ${u.denial_reason ?? null},
      receipt_uuid = ${u.receipt.receipt_uuid}, receipt_payload_hash = ${u.receipt.payload_hash},
      receipt = ${jsonb(receipt)}, agent_sequence = ${u.agent_sequence}, updated_at = now()`
  }

  /** The outbox rows, inserted only when `when` holds. */
  const eventsInsertion = (events: ReadonlyArray<RecordedEvent>, when: Statement.Fragment) =>
    sql`INSERT INTO events (event_id, org_uuid, type, data, created_at)
        SELECT event_id, org_uuid, type, data, created_at
        FROM jsonb_to_recordset(${eventRowsJson(events)})
          AS r(event_id text, org_uuid text, type text, data jsonb, created_at timestamptz)
        WHERE ${when}`

  /**
   * The status-history rows (evidence time travel) for what `rows` selects: (org_uuid, action_uuid,
   * status, changed_at). Part of the statement that changes the status, never a round trip of its
   * own; a status already recorded (a policy denial is inserted, then finished) is kept as it was.
   */
  const historyInsertion = (rows: Statement.Fragment) =>
    sql`INSERT INTO action_status_history (org_uuid, action_uuid, status, changed_at) ${rows} ON CONFLICT (action_uuid, status) DO NOTHING`

  const insertAction = (a: NewAction) =>
    sql`INSERT INTO actions (action_uuid, org_uuid, agent_id, agent_version, action_type, action_details_hash,
          instruction_hash, details_sealed, details_storage_key, model_id, model_version, parent_action_uuid,
          endpoint_url, status, policy_uuid, require_approval, approvers, authorized_by, approval_by_policy, context, sdk, warnings,
          approval_expires_at, policy_evaluations, created_at, updated_at)
        VALUES (${a.action_uuid}, ${a.org_uuid}, ${a.agent_id}, ${a.agent_version}, ${a.action_type},
          ${a.action_details_hash}, ${a.instruction_hash}, ${a.details_sealed}, ${a.details_storage_key},
          ${a.model_id}, ${a.model_version}, ${a.parent_action_uuid}, ${a.endpoint_url}, ${a.status},
          ${a.policy_uuid}, ${a.require_approval}, ${a.approvers === null ? null : jsonb(a.approvers)},
          ${a.authorized_by}, ${a.approval_by_policy}, ${a.context === null ? null : jsonb(a.context)}, ${a.sdk === null ? null : jsonb(a.sdk)},
          ${jsonb(a.warnings)}, ${a.approval_expires_at},
          ${a.policy_evaluations}::jsonb, ${a.created_at}, ${a.created_at})`

  return {
    sql,

    /** The action and the first row of its status history, in one statement. */
    insert: (a: NewAction) =>
      sql`WITH inserted AS (${insertAction(a)} RETURNING org_uuid, action_uuid, status, created_at)
          ${historyInsertion(sql`SELECT org_uuid, action_uuid, status, created_at FROM inserted`)}`.pipe(Effect.asVoid),

    byId: (orgUuid: string, actionUuid: string, forUpdate = false) =>
      (forUpdate
        ? sql`SELECT * FROM actions WHERE org_uuid = ${orgUuid} AND action_uuid = ${actionUuid} FOR UPDATE`
        : sql`SELECT * FROM actions WHERE org_uuid = ${orgUuid} AND action_uuid = ${actionUuid}`
      ).pipe(Effect.map((rows) => (rows[0] ? toAction(rows[0]) : undefined))),

    /** The action and its cosignatures in one round trip (GET /actions/{id}, the hottest read). */
    byIdWithCosignatures: (orgUuid: string, actionUuid: string) =>
      sql`SELECT a.*, COALESCE((
            SELECT json_agg(json_build_object('cosignature_uuid', c.cosignature_uuid, 'action_uuid', c.action_uuid,
                     'cosigner_email', c.cosigner_email, 'cosigned_at', c.cosigned_at) ORDER BY c.cosigned_at, c.cosignature_uuid)
            FROM action_cosignatures c WHERE c.org_uuid = a.org_uuid AND c.action_uuid = a.action_uuid), '[]') AS cosignatures_json
          FROM actions a WHERE a.org_uuid = ${orgUuid} AND a.action_uuid = ${actionUuid}`.pipe(
        Effect.map((rows) => {
          const row = rows[0]
          if (row === undefined) return undefined
          const cosignatures = jsonValue<ReadonlyArray<Record<string, unknown>>>((row as any).cosignatures_json, []).map(toCosignature)
          return { action: toAction(row), cosignatures }
        })
      ),

    /**
     * The action as a notarization reads it before it goes to the agent's actor: the row, its
     * parent's receipt hash and whether its registered agent is decommissioned, in one round trip.
     */
    forTransition: (orgUuid: string, actionUuid: string) =>
      sql`SELECT a.action_uuid, a.org_uuid, a.agent_id, a.agent_version, a.action_type, a.action_details_hash, a.instruction_hash,
            a.details_sealed, a.details_storage_key, a.model_id, a.model_version, a.parent_action_uuid, a.endpoint_url, a.status,
            a.policy_uuid, a.approved_by, a.approved_at, a.approval_via, a.created_at,
            p.receipt_payload_hash AS parent_payload_hash,
            EXISTS (SELECT 1 FROM agents g WHERE g.org_uuid = a.org_uuid AND g.agent_slug = a.agent_id AND g.status = 'decommissioned') AS agent_decommissioned
          FROM actions a LEFT JOIN actions p ON p.org_uuid = a.org_uuid AND p.action_uuid = a.parent_action_uuid
          WHERE a.org_uuid = ${orgUuid} AND a.action_uuid = ${actionUuid}`.pipe(Effect.map((rows: ReadonlyArray<any>) => (rows[0] === undefined ? undefined : toRead(rows[0])))),

    /** Public routes (code, legacy token) know no organization: look up by id alone. */
    byIdAnyOrg: (actionUuid: string) =>
      sql`SELECT * FROM actions WHERE action_uuid = ${actionUuid}`.pipe(Effect.map((rows) => (rows[0] ? toAction(rows[0]) : undefined))),

    /** The grant a code digest names, whatever its organization (the code is the credential). */
    grantByCodeDigest: (digest: string) =>
      sql`SELECT * FROM approval_grants WHERE code_digest = ${digest}`.pipe(Effect.map((rows) => (rows[0] ? toGrant(rows[0]) : undefined))),

    grantById: (grantId: string) =>
      sql`SELECT * FROM approval_grants WHERE grant_id = ${grantId}`.pipe(Effect.map((rows) => (rows[0] ? toGrant(rows[0]) : undefined))),

    /** Spends a grant; false when it was already spent. Call inside the decision's transaction. */
    useGrant: (grantId: string) =>
      sql`UPDATE approval_grants SET used_at = now() WHERE grant_id = ${grantId} AND used_at IS NULL RETURNING grant_id`.pipe(
        Effect.map((rows) => rows.length > 0)
      ),

    /** Inserts grants; an approver who already holds one for the action keeps it. Returns the inserted ids. */
    insertGrants: (grants: ReadonlyArray<NewGrant>) =>
      grants.length === 0
        ? Effect.succeed(new Set<string>())
        : sql`INSERT INTO approval_grants (grant_id, org_uuid, action_uuid, approver_email, code_digest, expires_at)
              SELECT grant_id, org_uuid, action_uuid, approver_email, code_digest, expires_at
              FROM jsonb_to_recordset(${jsonb(grants)})
                AS g(grant_id text, org_uuid text, action_uuid text, approver_email text, code_digest text, expires_at timestamptz)
              ON CONFLICT (action_uuid, approver_email) DO NOTHING
              RETURNING grant_id`.pipe(Effect.map((rows: ReadonlyArray<any>) => new Set(rows.map((row) => row.grant_id as string)))),

    /** Active users of an organization, for choosing who may receive approval codes. */
    activeMembers: (orgUuid: string) =>
      sql`SELECT user_uuid, email, role FROM users WHERE org_uuid = ${orgUuid} AND deactivated_at IS NULL`.pipe(
        Effect.map((rows: ReadonlyArray<any>) => rows.map((row): Member => ({ user_uuid: row.user_uuid as string, email: row.email as string, role: row.role as string })))
      ),

    /** pending_approval → approved; false when the action was no longer pending. */
    approve: (actionUuid: string, by: string | null, via: string, at: string) =>
      sql`WITH approved AS (
            UPDATE actions SET status = 'approved', approved_by = ${by}, approved_at = ${at}, approval_via = ${via}, updated_at = ${at}
            WHERE action_uuid = ${actionUuid} AND status = 'pending_approval' RETURNING org_uuid, action_uuid, status, updated_at
          ), history AS (${historyInsertion(sql`SELECT org_uuid, action_uuid, status, updated_at FROM approved`)})
          SELECT action_uuid FROM approved`.pipe(Effect.map((rows) => rows.length > 0)),

    list: (orgUuid: string, filter: { action_type?: string; agent_id?: string; status?: string }, page: number, perPage: number) =>
      Effect.gen(function* () {
        const where = sql.and([
          sql`org_uuid = ${orgUuid}`,
          ...(filter.action_type !== undefined ? [sql`action_type = ${filter.action_type}`] : []),
          ...(filter.agent_id !== undefined ? [sql`agent_id = ${filter.agent_id}`] : []),
          ...(filter.status !== undefined ? [sql`status = ${filter.status}`] : [])
        ])
        const skip = offset(page, perPage)
        const rows = yield* sql`SELECT action_uuid, action_type, agent_id, status, legal_hold, created_at FROM actions
                                WHERE ${where} ORDER BY created_at DESC, action_uuid DESC
                                LIMIT ${perPage} OFFSET ${skip}`
        // A short page that is not past the end (or an empty first page) is the last: its total is known.
        const last = rows.length < perPage && (rows.length > 0 || page === 1)
        // Otherwise count no further than ten pages from this one's start, plus one row: exact when the
        // list ends within them, else a lower bound above page × per_page, so has_more stays exact and
        // the count costs the same at any size (docs/decisions.md "Actions list total").
        const total = last
          ? skip + rows.length
          : count((yield* sql`SELECT COUNT(*) AS n FROM (SELECT 1 FROM actions WHERE ${where} LIMIT ${skip + 10 * perPage + 1}) AS upto`)[0]?.n)
        return [
          rows.map((row: any) => ({
            action_uuid: row.action_uuid as string,
            action_type: row.action_type as string,
            agent_id: (row.agent_id ?? null) as string | null,
            status: row.status as string,
            legal_hold: Boolean(row.legal_hold),
            created_at: isoRequired(row.created_at)
          })),
          total
        ] as const
      }),

    pending: (orgUuid: string, limit: number) =>
      sql`SELECT action_uuid, org_uuid, action_type, agent_id, created_at FROM actions
          WHERE org_uuid = ${orgUuid} AND status = 'pending_approval' ORDER BY created_at DESC LIMIT ${limit}`.pipe(
        Effect.map((rows) =>
          rows.map((row: any) => ({
            action_uuid: row.action_uuid as string,
            org_uuid: row.org_uuid as string,
            action_type: row.action_type as string,
            agent_id: (row.agent_id ?? null) as string | null,
            created_at: isoRequired(row.created_at)
          }))
        )
      ),

    /** Pending approvals past their deadline, oldest first. */
    expired: (limit: number) =>
      sql`SELECT org_uuid, action_uuid, agent_id FROM actions
          WHERE status = 'pending_approval' AND approval_expires_at <= now()
          ORDER BY approval_expires_at LIMIT ${limit}`.pipe(
        Effect.map((rows) => rows.map((row: any) => ({ orgUuid: row.org_uuid as string, actionUuid: row.action_uuid as string, agentId: (row.agent_id ?? null) as string | null })))
      ),

    setHold: (orgUuid: string, actionUuid: string, hold: boolean) =>
      sql`UPDATE actions SET legal_hold = ${hold}, updated_at = now() WHERE org_uuid = ${orgUuid} AND action_uuid = ${actionUuid}
          RETURNING action_uuid`.pipe(Effect.map((rows) => rows.length > 0)),

    cosignatures: (orgUuid: string, actionUuid: string) =>
      sql`SELECT cosignature_uuid, action_uuid, cosigner_email, cosigned_at FROM action_cosignatures
          WHERE org_uuid = ${orgUuid} AND action_uuid = ${actionUuid} ORDER BY cosigned_at, cosignature_uuid`.pipe(
        Effect.map((rows) => rows.map(toCosignature))
      ),

    /** Undefined when this user already cosigned. */
    cosign: (c: { cosignature_uuid: string; org_uuid: string; action_uuid: string; user_uuid: string; email: string }) =>
      sql`INSERT INTO action_cosignatures (cosignature_uuid, org_uuid, action_uuid, user_uuid, cosigner_email)
          VALUES (${c.cosignature_uuid}, ${c.org_uuid}, ${c.action_uuid}, ${c.user_uuid}, ${c.email})
          ON CONFLICT (action_uuid, user_uuid) DO NOTHING
          RETURNING cosignature_uuid, action_uuid, cosigner_email, cosigned_at`.pipe(
        Effect.map((rows: ReadonlyArray<any>) =>
          rows[0]
            ? {
                cosignature_uuid: rows[0].cosignature_uuid as string,
                action_uuid: rows[0].action_uuid as string,
                cosigner_email: rows[0].cosigner_email as string,
                cosigned_at: isoRequired(rows[0].cosigned_at)
              }
            : undefined
        )
      ),

    defaultApprovers: (orgUuid: string) =>
      sql`SELECT default_approvers FROM organizations WHERE org_uuid = ${orgUuid}`.pipe(
        Effect.map((rows: ReadonlyArray<any>) => jsonValue<ReadonlyArray<string>>(rows[0]?.default_approvers, []))
      ),

    audit: (entry: AuditEntry) => insertAudit(sql, entry),

    // Idempotency: the row is claimed first (autocommit) so concurrent twins see it.
    claimIdempotency: (orgUuid: string, key: string, requestHash: string) =>
      sql`INSERT INTO idempotency_keys (org_uuid, idempotency_key, request_hash) VALUES (${orgUuid}, ${key}, ${requestHash})
          ON CONFLICT (org_uuid, idempotency_key) DO NOTHING RETURNING idempotency_key`.pipe(Effect.map((rows) => rows.length > 0)),

    idempotencyRecord: (orgUuid: string, key: string) =>
      sql`SELECT request_hash, status_code, response, created_at FROM idempotency_keys
          WHERE org_uuid = ${orgUuid} AND idempotency_key = ${key}`.pipe(
        Effect.map((rows: ReadonlyArray<any>): IdempotencyRecord | undefined =>
          rows[0]
            ? {
                request_hash: rows[0].request_hash,
                status_code: rows[0].status_code === null ? null : Number(rows[0].status_code),
                response: jsonValue(rows[0].response, null),
                created_at: isoRequired(rows[0].created_at)
              }
            : undefined
        )
      ),

    /** Drops a record older than the retention window so the key can be claimed afresh. */
    dropStaleIdempotency: (orgUuid: string, key: string, olderThan: string) =>
      sql`DELETE FROM idempotency_keys WHERE org_uuid = ${orgUuid} AND idempotency_key = ${key} AND created_at < ${olderThan}`.pipe(Effect.asVoid),

    completeIdempotency: (orgUuid: string, key: string, statusCode: number, response: Record<string, unknown>) =>
      sql`UPDATE idempotency_keys SET status_code = ${statusCode}, response = ${jsonb(response)}, completed_at = now()
          WHERE org_uuid = ${orgUuid} AND idempotency_key = ${key}`.pipe(Effect.asVoid),

    releaseIdempotency: (orgUuid: string, key: string) =>
      sql`DELETE FROM idempotency_keys WHERE org_uuid = ${orgUuid} AND idempotency_key = ${key} AND response IS NULL`.pipe(Effect.asVoid),

    pruneIdempotency: (olderThan: string) => sql`DELETE FROM idempotency_keys WHERE created_at < ${olderThan}`.pipe(Effect.asVoid),

    /**
     * An agent chain's committed head, its row created when missing (the commit pipeline moves a
     * head only from where its actor saw it, so the row must exist before the first receipt).
     */
    chainHead: (orgUuid: string, agentId: string) =>
      sql`WITH created AS (
            INSERT INTO agent_chains (org_uuid, agent_id) VALUES (${orgUuid}, ${agentId})
            ON CONFLICT (org_uuid, agent_id) DO NOTHING RETURNING last_sequence, last_payload_hash
          )
          SELECT last_sequence, last_payload_hash FROM created
          UNION ALL SELECT last_sequence, last_payload_hash FROM agent_chains WHERE org_uuid = ${orgUuid} AND agent_id = ${agentId}`.pipe(
        Effect.map((rows: ReadonlyArray<any>) => ({
          agent_sequence: Number(rows[0]?.last_sequence ?? 0),
          previous_payload_hash: (rows[0]?.last_payload_hash ?? null) as string | null
        }))
      ),

    // Chain head: insert-if-missing and lock in one statement (an upsert that
    // updates locks the row and RETURNING sees the latest committed head).
    lockChain: (orgUuid: string, agentId: string) =>
      Effect.map(
        sql`INSERT INTO agent_chains (org_uuid, agent_id) VALUES (${orgUuid}, ${agentId})
            ON CONFLICT (org_uuid, agent_id) DO UPDATE SET last_sequence = agent_chains.last_sequence
            RETURNING last_sequence, last_payload_hash`,
        (rows: ReadonlyArray<any>) => ({ lastSequence: Number(rows[0]?.last_sequence ?? 0), lastPayloadHash: (rows[0]?.last_payload_hash ?? null) as string | null })
      ),

    /**
     * Locks an action row and then its agent's chain head (insert-if-missing)
     * in one statement, in that order; undefined when the action is not there.
     * Call inside the transaction of a terminal transition. It also reads the
     * action's registered agent (the agents area's table) FOR SHARE: a
     * decommission's UPDATE waits for transitions holding it, and one that
     * comes after the decommission sees it, however the requests interleave.
     */
    lockActionAndChain: (orgUuid: string, actionUuid: string) =>
      Effect.map(
        sql`WITH target AS (
              SELECT * FROM actions WHERE org_uuid = ${orgUuid} AND action_uuid = ${actionUuid} FOR UPDATE
            ), head AS (
              INSERT INTO agent_chains (org_uuid, agent_id)
              SELECT org_uuid, COALESCE(agent_id, ${DEFAULT_AGENT_ID}) FROM target
              ON CONFLICT (org_uuid, agent_id) DO UPDATE SET last_sequence = agent_chains.last_sequence
              RETURNING last_sequence, last_payload_hash
            ), agent AS (
              SELECT g.status FROM agents g, target t WHERE g.agent_slug = t.agent_id AND g.org_uuid = t.org_uuid FOR SHARE OF g
            )
            SELECT target.*, head.last_sequence AS chain_last_sequence, head.last_payload_hash AS chain_last_payload_hash,
              EXISTS (SELECT 1 FROM agent WHERE status = 'decommissioned') AS agent_decommissioned
            FROM target CROSS JOIN head`,
        (rows: ReadonlyArray<any>) =>
          rows[0] === undefined
            ? undefined
            : {
                row: toAction(rows[0]),
                head: { lastSequence: Number(rows[0].chain_last_sequence ?? 0), lastPayloadHash: (rows[0].chain_last_payload_hash ?? null) as string | null },
                agentDecommissioned: rows[0].agent_decommissioned === true
              }
      ),

    /**
     * The end of a terminal transition in ONE statement: the action's terminal
     * state and its status-history row, its receipt (`receiptInsert`, from the receipts area), the chain
     * head advanced to that receipt, and the outbox events. Call inside the
     * transaction that locked the chain.
     */
    finishAndAdvance: (
      actionUuid: string,
      u: TerminalUpdate,
      chain: { readonly orgUuid: string; readonly agentId: string },
      events: ReadonlyArray<RecordedEvent>,
      receiptInsert: Statement.Fragment
    ) =>
      sql`WITH stored AS (${receiptInsert} RETURNING 1), advanced AS (
            UPDATE agent_chains SET last_sequence = ${u.agent_sequence}, last_payload_hash = ${u.receipt.payload_hash}, updated_at = now()
            WHERE org_uuid = ${chain.orgUuid} AND agent_id = ${chain.agentId} RETURNING 1
          ), finished AS (
            UPDATE actions SET ${terminalColumns(u)} WHERE action_uuid = ${actionUuid} RETURNING org_uuid, action_uuid, status, updated_at
          ), history AS (${historyInsertion(sql`SELECT org_uuid, action_uuid, status, updated_at FROM finished`)})
          ${eventsInsertion(events, sql`TRUE`)}`.pipe(Effect.asVoid),

    parentPayloadHash: (orgUuid: string, parentUuid: string | null) =>
      parentUuid === null
        ? Effect.succeed(null)
        : sql`SELECT receipt_payload_hash FROM actions WHERE org_uuid = ${orgUuid} AND action_uuid = ${parentUuid}`.pipe(
            Effect.map((rows: ReadonlyArray<any>) => (rows[0]?.receipt_payload_hash ?? null) as string | null)
          ),

    /** Walks parent links upward from an action, stopping at `limit` links or a cycle. */
    chain: (orgUuid: string, actionUuid: string, limit: number) =>
      sql`WITH RECURSIVE walk AS (
            SELECT action_uuid, action_type, agent_id, action_details_hash, status, parent_action_uuid, created_at, 1 AS depth
            FROM actions WHERE org_uuid = ${orgUuid} AND action_uuid = ${actionUuid}
            UNION ALL
            SELECT a.action_uuid, a.action_type, a.agent_id, a.action_details_hash, a.status, a.parent_action_uuid, a.created_at, w.depth + 1
            FROM actions a JOIN walk w ON a.action_uuid = w.parent_action_uuid
            WHERE a.org_uuid = ${orgUuid} AND w.depth < ${limit}
          )
          SELECT * FROM walk ORDER BY depth`.pipe(
        Effect.map((rows) =>
          rows.map((row: any) => ({
            action_uuid: row.action_uuid as string,
            action_type: row.action_type as string,
            agent_id: (row.agent_id ?? null) as string | null,
            action_details_hash: row.action_details_hash as string,
            status: row.status as string,
            parent_action_uuid: (row.parent_action_uuid ?? null) as string | null,
            created_at: isoRequired(row.created_at)
          }))
        )
      )
  }
})

export type ActionsStore = Effect.Success<typeof makeActionsStore>
