/**
 * SQL for actions, cosignatures, idempotency records and agent chain heads.
 * Every query is scoped by organization; callers decide the transaction.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient, type Statement } from "effect/sql"
import { ActionStatuses, ReceiptSummary } from "../../protocol/actions.js"
import { eventRowsJson, type RecordedEvent } from "../events/service.js"
import { type AuditEntry, insertAudit } from "../platform/audit.js"
import { Count, Json, NullableCount, NullableJson, NullableTimestamp, Timestamp } from "../platform/columns.js"
import { jsonb } from "../platform/db/index.js"
import * as Rows from "../platform/db/rows.js"
import { sqlDefects } from "../platform/db/store.js"
import type { MintedReceipt } from "../receipts/ports.js"
import { ActionFields, type NewAction } from "./agent-messages.js"
import { DEFAULT_AGENT_ID } from "./chain.js"

const Text = Schema.String
const OptionalText = Schema.NullOr(Schema.String)

/** The columns every action carries from its authorization. */
const actionFields = ActionFields.fields

const ActionRow = Schema.Struct({
  ...actionFields,
  status: Schema.Literals(ActionStatuses),
  legal_hold: Schema.Boolean,
  policy_uuid: OptionalText,
  require_approval: Schema.Boolean,
  approvers: NullableJson(Schema.Array(Schema.String)),
  authorized_by: OptionalText,
  approval_by_policy: Schema.Boolean,
  approval_expires_at: NullableTimestamp,
  approved_by: OptionalText,
  approved_at: NullableTimestamp,
  approval_via: OptionalText,
  denial_reason: OptionalText,
  outcome: OptionalText,
  outcome_hash: OptionalText,
  receipt_uuid: OptionalText,
  receipt_payload_hash: OptionalText,
  /** The receipt's summary kept on the row (the signed payload lives in `receipts`). */
  receipt: NullableJson(ReceiptSummary),
  agent_sequence: NullableCount,
  created_at: Timestamp,
  updated_at: Timestamp
})
export type ActionRow = typeof ActionRow.Type

/** What the agent's actor needs of an action it did not lock (agent-messages.ts `ActionRead`). */
const ReadRow = Schema.Struct({
  ...actionFields,
  status: Text,
  policy_uuid: OptionalText,
  approved_by: OptionalText,
  approved_at: NullableTimestamp,
  approval_via: OptionalText,
  created_at: Timestamp,
  parent_payload_hash: OptionalText,
  agent_decommissioned: Schema.Boolean
})

const LockedRow = Schema.Struct({
  ...ActionRow.fields,
  chain_last_sequence: Count,
  chain_last_payload_hash: OptionalText,
  agent_decommissioned: Schema.Boolean
})

const CosignatureRow = Schema.Struct({ cosignature_uuid: Text, action_uuid: Text, cosigner_email: Text, cosigned_at: Timestamp })
export type Cosignature = typeof CosignatureRow.Type

/** The `sdk` column: the replay context fields sent on authorize, only those sent (replay-context.ts). */
const SdkColumn = NullableJson(
  Schema.Struct({
    system_prompt_hash: Schema.optionalKey(Schema.String),
    tool_inputs_hash: Schema.optionalKey(Schema.String),
    model_params: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
    execution_env: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))
  })
)

/** An action's cosignatures as one JSON array, in the order they were given. */
const cosignaturesJson = Json(Schema.Array(CosignatureRow))

const WithCosignatures = Schema.Struct({ ...ActionRow.fields, sdk: SdkColumn, cosignatures_json: cosignaturesJson })

const ListItem = Schema.Struct({
  action_uuid: Text,
  action_type: Text,
  agent_id: OptionalText,
  status: Text,
  legal_hold: Schema.Boolean,
  created_at: Timestamp,
  org_uuid: Text,
  action_details_hash: Text,
  instruction_hash: OptionalText,
  parent_action_uuid: OptionalText,
  model_id: OptionalText,
  receipt: NullableJson(ReceiptSummary),
  sdk: SdkColumn,
  replay_context_hash: OptionalText,
  cosignatures_json: cosignaturesJson
})

const ReplayRow = Schema.Struct({
  action_uuid: Text,
  model_id: OptionalText,
  model_version: OptionalText,
  agent_id: OptionalText,
  agent_version: OptionalText,
  instruction_hash: OptionalText,
  sdk: SdkColumn,
  replay_context_hash: OptionalText,
  receipt: NullableJson(ReceiptSummary)
})

const PendingRow = Schema.Struct({ action_uuid: Text, org_uuid: Text, action_type: Text, agent_id: OptionalText, created_at: Timestamp })
const ExpiredRow = Schema.Struct({ org_uuid: Text, action_uuid: Text, agent_id: OptionalText })
const MemberRow = Schema.Struct({ user_uuid: Text, email: Text, role: Text })
const HeadRow = Schema.Struct({ last_sequence: Count, last_payload_hash: OptionalText })

const ChainLinkRow = Schema.Struct({
  action_uuid: Text,
  action_type: Text,
  agent_id: OptionalText,
  action_details_hash: Text,
  status: Text,
  parent_action_uuid: OptionalText,
  created_at: Timestamp
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
const GrantRow = Schema.Struct({
  grant_id: Text,
  org_uuid: Text,
  action_uuid: Text,
  approver_email: Text,
  expires_at: Timestamp,
  used_at: NullableTimestamp
})
export type GrantRow = typeof GrantRow.Type

const NewGrant = Schema.Struct({
  grant_id: Text,
  org_uuid: Text,
  action_uuid: Text,
  approver_email: Text,
  code_digest: Text,
  expires_at: Text
})
export type NewGrant = typeof NewGrant.Type

const IdempotencyRecord = Schema.Struct({
  request_hash: Text,
  status_code: NullableCount,
  response: NullableJson(Schema.Record(Schema.String, Schema.Unknown)),
  created_at: Timestamp
})
export type IdempotencyRecord = typeof IdempotencyRecord.Type

const ByOrg = Schema.Struct({ orgUuid: Text, actionUuid: Text })

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
          approval_expires_at, policy_evaluations, replay_context_hash, created_at, updated_at)
        VALUES (${a.action_uuid}, ${a.org_uuid}, ${a.agent_id}, ${a.agent_version}, ${a.action_type},
          ${a.action_details_hash}, ${a.instruction_hash}, ${a.details_sealed}, ${a.details_storage_key},
          ${a.model_id}, ${a.model_version}, ${a.parent_action_uuid}, ${a.endpoint_url}, ${a.status},
          ${a.policy_uuid}, ${a.require_approval}, ${a.approvers === null ? null : jsonb(a.approvers)},
          ${a.authorized_by}, ${a.approval_by_policy}, ${a.context === null ? null : jsonb(a.context)}, ${a.sdk === null ? null : jsonb(a.sdk)},
          ${jsonb(a.warnings)}, ${a.approval_expires_at},
          ${a.policy_evaluations}::jsonb, ${a.replay_context_hash ?? null}, ${a.created_at}, ${a.created_at})`

  const byIdRow = Rows.findOneOption({
    Request: ByOrg,
    Result: ActionRow,
    execute: ({ orgUuid, actionUuid }) => sql`SELECT * FROM actions WHERE org_uuid = ${orgUuid} AND action_uuid = ${actionUuid}`
  })
  const byIdLocked = Rows.findOneOption({
    Request: ByOrg,
    Result: ActionRow,
    execute: ({ orgUuid, actionUuid }) => sql`SELECT * FROM actions WHERE org_uuid = ${orgUuid} AND action_uuid = ${actionUuid} FOR UPDATE`
  })

  /**
   * Each action `a` of the statement joined to its cosignatures as one JSON array, `cs.list` (NULL for
   * none): a join of the statement it is in, never a query per action.
   */
  const cosignaturesJoin = sql`LEFT JOIN LATERAL (
            SELECT json_agg(json_build_object('cosignature_uuid', c.cosignature_uuid, 'action_uuid', c.action_uuid,
                     'cosigner_email', c.cosigner_email, 'cosigned_at', c.cosigned_at) ORDER BY c.cosigned_at, c.cosignature_uuid) AS list
            FROM action_cosignatures c WHERE c.org_uuid = a.org_uuid AND c.action_uuid = a.action_uuid) cs ON true`

  const withCosignatures = Rows.findOneOption({
    Request: ByOrg,
    Result: WithCosignatures,
    execute: ({ orgUuid, actionUuid }) =>
      sql`SELECT a.*, COALESCE(cs.list, '[]') AS cosignatures_json
          FROM actions a ${cosignaturesJoin} WHERE a.org_uuid = ${orgUuid} AND a.action_uuid = ${actionUuid}`
  })

  // The parent is found by its primary key only (the organization is compared, not indexed: `|| ''`): joined on
  // (org_uuid, action_uuid), a plan cached while the table was small walked the organization's list index,
  // every action of the organization per notarization (seen: 500 rows, 0.28 ms, growing with the org).
  const forTransitionRow = Rows.findOneOption({
    Request: ByOrg,
    Result: ReadRow,
    execute: ({ orgUuid, actionUuid }) =>
      sql`SELECT a.action_uuid, a.org_uuid, a.agent_id, a.agent_version, a.action_type, a.action_details_hash, a.instruction_hash,
            a.details_sealed, a.details_storage_key, a.model_id, a.model_version, a.parent_action_uuid, a.endpoint_url, a.status,
            a.policy_uuid, a.approved_by, a.approved_at, a.approval_via, a.created_at, a.replay_context_hash,
            (SELECT p.receipt_payload_hash FROM actions p WHERE p.action_uuid = a.parent_action_uuid AND p.org_uuid || '' = a.org_uuid) AS parent_payload_hash,
            EXISTS (SELECT 1 FROM agents g WHERE g.org_uuid = a.org_uuid AND g.agent_slug = a.agent_id AND g.status = 'decommissioned') AS agent_decommissioned
          FROM actions a
          WHERE a.org_uuid = ${orgUuid} AND a.action_uuid = ${actionUuid}`
  })

  const byIdAnyOrgRow = Rows.findOneOption({
    Request: Text,
    Result: ActionRow,
    execute: (actionUuid) => sql`SELECT * FROM actions WHERE action_uuid = ${actionUuid}`
  })

  const grantByDigest = Rows.findOneOption({
    Request: Text,
    Result: GrantRow,
    execute: (digest) => sql`SELECT * FROM approval_grants WHERE code_digest = ${digest}`
  })
  const grantByIdRow = Rows.findOneOption({
    Request: Text,
    Result: GrantRow,
    execute: (grantId) => sql`SELECT * FROM approval_grants WHERE grant_id = ${grantId}`
  })

  const insertedGrants = Rows.findAll({
    Request: Schema.Array(NewGrant),
    Result: Schema.Struct({ grant_id: Text }),
    execute: (grants) =>
      sql`INSERT INTO approval_grants (grant_id, org_uuid, action_uuid, approver_email, code_digest, expires_at)
          SELECT grant_id, org_uuid, action_uuid, approver_email, code_digest, expires_at
          FROM jsonb_to_recordset(${jsonb(grants)})
            AS g(grant_id text, org_uuid text, action_uuid text, approver_email text, code_digest text, expires_at timestamptz)
          ON CONFLICT (action_uuid, approver_email) DO NOTHING
          RETURNING grant_id`
  })

  const activeMembers = Rows.findAll({
    Request: Text,
    Result: MemberRow,
    execute: (orgUuid) => sql`SELECT user_uuid, email, role FROM users WHERE org_uuid = ${orgUuid} AND deactivated_at IS NULL`
  })

  const Filter = Schema.Struct({
    orgUuid: Text,
    action_type: Schema.optional(Text),
    agent_id: Schema.optional(Text),
    status: Schema.optional(Text)
  })
  const whereOf = (filter: typeof Filter.Type) =>
    sql.and([
      sql`org_uuid = ${filter.orgUuid}`,
      ...(filter.action_type !== undefined ? [sql`action_type = ${filter.action_type}`] : []),
      ...(filter.agent_id !== undefined ? [sql`agent_id = ${filter.agent_id}`] : []),
      ...(filter.status !== undefined ? [sql`status = ${filter.status}`] : [])
    ])
  // The page is cut first, then each of its actions joined to its cosignatures: one statement per page.
  const listPage = Rows.findAll({
    Request: Schema.Struct({ filter: Filter, limit: Schema.Number, skip: Schema.Number }),
    Result: ListItem,
    execute: ({ filter, limit, skip }) =>
      sql`SELECT a.action_uuid, a.action_type, a.agent_id, a.status, a.legal_hold, a.created_at, a.org_uuid, a.action_details_hash,
            a.instruction_hash, a.parent_action_uuid, a.model_id, a.receipt, a.sdk, a.replay_context_hash, COALESCE(cs.list, '[]') AS cosignatures_json
          FROM (
            SELECT action_uuid, action_type, agent_id, status, legal_hold, created_at, org_uuid, action_details_hash,
              instruction_hash, parent_action_uuid, model_id, receipt, sdk, replay_context_hash FROM actions
            WHERE ${whereOf(filter)} ORDER BY created_at DESC, action_uuid DESC
            LIMIT ${limit} OFFSET ${skip}
          ) a ${cosignaturesJoin}
          ORDER BY a.created_at DESC, a.action_uuid DESC`
  })
  const countUpTo = Rows.findOne({
    Request: Schema.Struct({ filter: Filter, upTo: Schema.Number }),
    Result: Schema.Struct({ n: Count }),
    execute: ({ filter, upTo }) => sql`SELECT COUNT(*) AS n FROM (SELECT 1 FROM actions WHERE ${whereOf(filter)} LIMIT ${upTo}) AS upto`
  })

  const replayRow = Rows.findOneOption({
    Request: ByOrg,
    Result: ReplayRow,
    execute: ({ orgUuid, actionUuid }) =>
      sql`SELECT action_uuid, model_id, model_version, agent_id, agent_version, instruction_hash, sdk, replay_context_hash, receipt
          FROM actions WHERE org_uuid = ${orgUuid} AND action_uuid = ${actionUuid}`
  })

  const pending = Rows.findAll({
    Request: Schema.Struct({ orgUuid: Text, limit: Schema.Number }),
    Result: PendingRow,
    execute: ({ orgUuid, limit }) =>
      sql`SELECT action_uuid, org_uuid, action_type, agent_id, created_at FROM actions
          WHERE org_uuid = ${orgUuid} AND status = 'pending_approval' ORDER BY created_at DESC LIMIT ${limit}`
  })

  const expiredRows = Rows.findAll({
    Request: Schema.Number,
    Result: ExpiredRow,
    execute: (limit) =>
      sql`SELECT org_uuid, action_uuid, agent_id FROM actions
          WHERE status = 'pending_approval' AND approval_expires_at <= now()
          ORDER BY approval_expires_at LIMIT ${limit}`
  })

  const cosignatures = Rows.findAll({
    Request: ByOrg,
    Result: CosignatureRow,
    execute: ({ orgUuid, actionUuid }) =>
      sql`SELECT cosignature_uuid, action_uuid, cosigner_email, cosigned_at FROM action_cosignatures
          WHERE org_uuid = ${orgUuid} AND action_uuid = ${actionUuid} ORDER BY cosigned_at, cosignature_uuid`
  })

  const NewCosignature = Schema.Struct({ cosignature_uuid: Text, org_uuid: Text, action_uuid: Text, user_uuid: Text, email: Text })
  const insertCosignature = Rows.findOneOption({
    Request: NewCosignature,
    Result: CosignatureRow,
    execute: (c) =>
      sql`INSERT INTO action_cosignatures (cosignature_uuid, org_uuid, action_uuid, user_uuid, cosigner_email)
          VALUES (${c.cosignature_uuid}, ${c.org_uuid}, ${c.action_uuid}, ${c.user_uuid}, ${c.email})
          ON CONFLICT (action_uuid, user_uuid) DO NOTHING
          RETURNING cosignature_uuid, action_uuid, cosigner_email, cosigned_at`
  })

  const defaultApprovers = Rows.findOneOption({
    Request: Text,
    Result: Schema.Struct({ default_approvers: Json(Schema.Array(Schema.String)) }),
    execute: (orgUuid) => sql`SELECT default_approvers FROM organizations WHERE org_uuid = ${orgUuid}`
  })

  const idempotencyRecord = Rows.findOneOption({
    Request: Schema.Struct({ orgUuid: Text, key: Text }),
    Result: IdempotencyRecord,
    execute: ({ orgUuid, key }) =>
      sql`SELECT request_hash, status_code, response, created_at FROM idempotency_keys
          WHERE org_uuid = ${orgUuid} AND idempotency_key = ${key}`
  })

  const OrgAgent = Schema.Struct({ orgUuid: Text, agentId: Text })
  const chainHeadRows = Rows.findAll({
    Request: OrgAgent,
    Result: HeadRow,
    execute: ({ orgUuid, agentId }) =>
      sql`WITH created AS (
            INSERT INTO agent_chains (org_uuid, agent_id) VALUES (${orgUuid}, ${agentId})
            ON CONFLICT (org_uuid, agent_id) DO NOTHING RETURNING last_sequence, last_payload_hash
          )
          SELECT last_sequence, last_payload_hash FROM created
          UNION ALL SELECT last_sequence, last_payload_hash FROM agent_chains WHERE org_uuid = ${orgUuid} AND agent_id = ${agentId}`
  })

  // An upsert that updates locks the row, and RETURNING answers its latest committed head: always one row.
  const lockedHead = Rows.findOne({
    Request: OrgAgent,
    Result: HeadRow,
    execute: ({ orgUuid, agentId }) =>
      sql`INSERT INTO agent_chains (org_uuid, agent_id) VALUES (${orgUuid}, ${agentId})
          ON CONFLICT (org_uuid, agent_id) DO UPDATE SET last_sequence = agent_chains.last_sequence
          RETURNING last_sequence, last_payload_hash`
  })

  const lockedAction = Rows.findOneOption({
    Request: ByOrg,
    Result: LockedRow,
    execute: ({ orgUuid, actionUuid }) =>
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
          FROM target CROSS JOIN head`
  })

  const parentHash = Rows.findOneOption({
    Request: ByOrg,
    Result: Schema.Struct({ receipt_payload_hash: OptionalText }),
    execute: ({ orgUuid, actionUuid }) => sql`SELECT receipt_payload_hash FROM actions WHERE org_uuid = ${orgUuid} AND action_uuid = ${actionUuid}`
  })

  const chainLinks = Rows.findAll({
    Request: Schema.Struct({ orgUuid: Text, actionUuid: Text, limit: Schema.Number }),
    Result: ChainLinkRow,
    execute: ({ orgUuid, actionUuid, limit }) =>
      sql`WITH RECURSIVE walk AS (
            SELECT action_uuid, action_type, agent_id, action_details_hash, status, parent_action_uuid, created_at, 1 AS depth
            FROM actions WHERE org_uuid = ${orgUuid} AND action_uuid = ${actionUuid}
            UNION ALL
            SELECT a.action_uuid, a.action_type, a.agent_id, a.action_details_hash, a.status, a.parent_action_uuid, a.created_at, w.depth + 1
            FROM actions a JOIN walk w ON a.action_uuid = w.parent_action_uuid
            WHERE a.org_uuid = ${orgUuid} AND w.depth < ${limit}
          )
          SELECT action_uuid, action_type, agent_id, action_details_hash, status, parent_action_uuid, created_at FROM walk ORDER BY depth`
  })

  return sqlDefects({
    sql,

    /** The action and the first row of its status history, in one statement. */
    insert: (a: NewAction) =>
      sql`WITH inserted AS (${insertAction(a)} RETURNING org_uuid, action_uuid, status, created_at)
          ${historyInsertion(sql`SELECT org_uuid, action_uuid, status, created_at FROM inserted`)}`.pipe(Effect.asVoid),

    byId: (orgUuid: string, actionUuid: string, forUpdate = false) =>
      Effect.map((forUpdate ? byIdLocked : byIdRow)({ orgUuid, actionUuid }), Option.getOrUndefined),

    /** The action and its cosignatures in one round trip (GET /actions/{id}, the hottest read). */
    byIdWithCosignatures: (orgUuid: string, actionUuid: string) =>
      Effect.map(withCosignatures({ orgUuid, actionUuid }), (found) => {
        if (Option.isNone(found)) return undefined
        const { cosignatures_json: cosignatures, sdk, ...action } = found.value
        return { action, sdk, cosignatures }
      }),

    /** What the replay-context route answers: the replay fields, the model and agent, the latest receipt. */
    replayContext: (orgUuid: string, actionUuid: string) => Effect.map(replayRow({ orgUuid, actionUuid }), Option.getOrUndefined),

    /**
     * The action as a notarization reads it before it goes to the agent's actor: the row, its
     * parent's receipt hash and whether its registered agent is decommissioned, in one round trip.
     */
    forTransition: (orgUuid: string, actionUuid: string) => Effect.map(forTransitionRow({ orgUuid, actionUuid }), Option.getOrUndefined),

    /** Public routes (code, legacy token) know no organization: look up by id alone. */
    byIdAnyOrg: (actionUuid: string) => Effect.map(byIdAnyOrgRow(actionUuid), Option.getOrUndefined),

    /** The grant a code digest names, whatever its organization (the code is the credential). */
    grantByCodeDigest: (digest: string) => Effect.map(grantByDigest(digest), Option.getOrUndefined),

    grantById: (grantId: string) => Effect.map(grantByIdRow(grantId), Option.getOrUndefined),

    /** Spends a grant; false when it was already spent. Call inside the decision's transaction. */
    useGrant: (grantId: string) =>
      sql`UPDATE approval_grants SET used_at = now() WHERE grant_id = ${grantId} AND used_at IS NULL RETURNING grant_id`.pipe(
        Effect.map((rows) => rows.length > 0)
      ),

    /** Inserts grants; an approver who already holds one for the action keeps it. Returns the inserted ids. */
    insertGrants: (grants: ReadonlyArray<NewGrant>) =>
      grants.length === 0 ? Effect.succeed(new Set<string>()) : Effect.map(insertedGrants(grants), (rows) => new Set(rows.map((row) => row.grant_id))),

    /** Active users of an organization, for choosing who may receive approval codes. */
    activeMembers,

    /** pending_approval → approved; false when the action was no longer pending. */
    approve: (actionUuid: string, by: string | null, via: string, at: string) =>
      sql`WITH approved AS (
            UPDATE actions SET status = 'approved', approved_by = ${by}, approved_at = ${at}, approval_via = ${via}, updated_at = ${at}
            WHERE action_uuid = ${actionUuid} AND status = 'pending_approval' RETURNING org_uuid, action_uuid, status, updated_at
          ), history AS (${historyInsertion(sql`SELECT org_uuid, action_uuid, status, updated_at FROM approved`)})
          SELECT action_uuid FROM approved`.pipe(Effect.map((rows) => rows.length > 0)),

    list: (orgUuid: string, filter: { action_type?: string; agent_id?: string; status?: string }, page: number, perPage: number) =>
      Effect.gen(function* () {
        const where = { orgUuid, ...filter }
        const skip = (page - 1) * perPage
        const rows = yield* listPage({ filter: where, limit: perPage, skip })
        // A short page that is not past the end (or an empty first page) is the last: its total is known.
        const last = rows.length < perPage && (rows.length > 0 || page === 1)
        // Otherwise count no further than ten pages from this one's start, plus one row: exact when the
        // list ends within them, else a lower bound above page × per_page, so has_more stays exact and
        // the count costs the same at any size (docs/decisions.md "Actions list total").
        // COUNT(*) always answers one row.
        const total = last ? skip + rows.length : (yield* Effect.orDie(countUpTo({ filter: where, upTo: skip + 10 * perPage + 1 }))).n
        return [rows, total] as const
      }),

    pending: (orgUuid: string, limit: number) => pending({ orgUuid, limit }),

    /** Pending approvals past their deadline, oldest first. */
    expired: (limit: number) =>
      Effect.map(expiredRows(limit), (rows) => rows.map((row) => ({ orgUuid: row.org_uuid, actionUuid: row.action_uuid, agentId: row.agent_id }))),

    setHold: (orgUuid: string, actionUuid: string, hold: boolean) =>
      sql`UPDATE actions SET legal_hold = ${hold}, updated_at = now() WHERE org_uuid = ${orgUuid} AND action_uuid = ${actionUuid}
          RETURNING action_uuid`.pipe(Effect.map((rows) => rows.length > 0)),

    cosignatures: (orgUuid: string, actionUuid: string) => cosignatures({ orgUuid, actionUuid }),

    /** Undefined when this user already cosigned. */
    cosign: (c: typeof NewCosignature.Type) => Effect.map(insertCosignature(c), Option.getOrUndefined),

    /** The organization's default approvers (none when the organization is gone). */
    defaultApprovers: (orgUuid: string) =>
      Effect.map(defaultApprovers(orgUuid), (row): ReadonlyArray<string> => (Option.isSome(row) ? row.value.default_approvers : [])),

    audit: (entry: AuditEntry) => insertAudit(sql, entry),

    // Idempotency: the row is claimed first (autocommit) so concurrent twins see it.
    claimIdempotency: (orgUuid: string, key: string, requestHash: string) =>
      sql`INSERT INTO idempotency_keys (org_uuid, idempotency_key, request_hash) VALUES (${orgUuid}, ${key}, ${requestHash})
          ON CONFLICT (org_uuid, idempotency_key) DO NOTHING RETURNING idempotency_key`.pipe(Effect.map((rows) => rows.length > 0)),

    idempotencyRecord: (orgUuid: string, key: string) => Effect.map(idempotencyRecord({ orgUuid, key }), Option.getOrUndefined),

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
     * No row visible yet (a twin's insert not committed when this statement began): a new chain.
     */
    chainHead: (orgUuid: string, agentId: string) =>
      Effect.map(chainHeadRows({ orgUuid, agentId }), (rows) => ({
        agent_sequence: rows[0]?.last_sequence ?? 0,
        previous_payload_hash: rows[0]?.last_payload_hash ?? null
      })),

    // Chain head: insert-if-missing and lock in one statement.
    lockChain: (orgUuid: string, agentId: string) =>
      Effect.map(Effect.orDie(lockedHead({ orgUuid, agentId })), (row) => ({ lastSequence: row.last_sequence, lastPayloadHash: row.last_payload_hash })),

    /**
     * Locks an action row and then its agent's chain head (insert-if-missing)
     * in one statement, in that order; undefined when the action is not there.
     * Call inside the transaction of a terminal transition. It also reads the
     * action's registered agent (the agents area's table) FOR SHARE: a
     * decommission's UPDATE waits for transitions holding it, and one that
     * comes after the decommission sees it, however the requests interleave.
     */
    lockActionAndChain: (orgUuid: string, actionUuid: string) =>
      Effect.map(lockedAction({ orgUuid, actionUuid }), (found) => {
        if (Option.isNone(found)) return undefined
        const { chain_last_sequence, chain_last_payload_hash, agent_decommissioned, ...row } = found.value
        return { row, head: { lastSequence: chain_last_sequence, lastPayloadHash: chain_last_payload_hash }, agentDecommissioned: agent_decommissioned }
      }),

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
        : Effect.map(parentHash({ orgUuid, actionUuid: parentUuid }), (row) => (Option.isSome(row) ? row.value.receipt_payload_hash : null)),

    /** Walks parent links upward from an action, stopping at `limit` links or a cycle. */
    chain: (orgUuid: string, actionUuid: string, limit: number) => chainLinks({ orgUuid, actionUuid, limit })
  })
})

export type ActionsStore = Effect.Success<typeof makeActionsStore>
