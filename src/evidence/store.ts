/**
 * SQL for evidence packages, discovery queries and the reads they make of actions, receipts and
 * the actions' status history. Every read of actions is scoped by organization, except the one
 * that tells which of a package's uuids belong to another (it returns nothing else).
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient } from "effect/sql"
import { type AuditEntry, insertAudit } from "../platform/audit.js"
import { Count, Json, NullableTimestamp, Timestamp } from "../platform/columns.js"
import { jsonb } from "../platform/db/index.js"
import * as Rows from "../platform/db/rows.js"
import { sqlDefects } from "../platform/db/store.js"
import { offset } from "../platform/sql.js"

/** A statement that always answers a row (a count): no row is a defect. */
const always = <A, E, R>(effect: Effect.Effect<A, E | Cause.NoSuchElementError, R>): Effect.Effect<A, Exclude<E, Cause.NoSuchElementError>, R> =>
  Effect.catchIf(effect, Cause.isNoSuchElementError, (error) => Effect.die(error)) as Effect.Effect<A, Exclude<E, Cause.NoSuchElementError>, R>

const Text = Schema.NullOr(Schema.String)

const ActionColumns = {
  action_uuid: Schema.String,
  action_type: Schema.String,
  agent_id: Text,
  agent_version: Text,
  model_id: Text,
  model_version: Text,
  status: Schema.String,
  action_details_hash: Schema.String,
  instruction_hash: Text,
  outcome: Text,
  outcome_hash: Text,
  policy_uuid: Text,
  approved_by: Text,
  approved_at: NullableTimestamp,
  denial_reason: Text,
  parent_action_uuid: Text,
  created_at: Timestamp,
  previous_receipt_uuid: Text
}

/** An action with its receipt, or one without (never signed, or its receipt not the organization's). */
const PackagedActionColumns = Schema.Union([
  Schema.Struct({
    ...ActionColumns,
    receipt_uuid: Schema.String,
    receipt_version: Schema.String,
    receipt_status: Schema.String,
    payload_hash: Schema.String,
    signature: Schema.String,
    public_key_id: Schema.String,
    timestamp_token: Text,
    signed_payload: Schema.String,
    receipt_agent_sequence: Count,
    receipt_created_at: Timestamp
  }),
  Schema.Struct({ ...ActionColumns, receipt_uuid: Schema.Null })
])

const PackageColumns = Schema.Struct({
  package_uuid: Schema.String,
  org_uuid: Schema.String,
  title: Schema.String,
  purpose: Text,
  action_count: Count,
  signed_payload: Schema.String,
  package_hash: Schema.String,
  signature: Schema.String,
  public_key_id: Schema.String,
  timestamp_token: Text,
  created_by: Schema.String,
  sealed_at: Timestamp,
  action_uuids: Json(Schema.Array(Schema.String)),
  agent_ids: Json(Schema.Array(Schema.String))
})

const AsOfColumns = Schema.Struct({
  action_uuid: Schema.String,
  action_type: Schema.String,
  agent_id: Text,
  model_id: Text,
  created_at: Timestamp,
  status: Schema.String,
  changed_at: Timestamp,
  receipt_uuid_then: Text,
  total: Count
})

const ChainColumns = Schema.Struct({
  hop: Count,
  action_uuid: Schema.String,
  action_type: Schema.String,
  agent_id: Text,
  model_id: Text,
  status: Schema.String,
  policy_uuid: Text,
  approved_by: Text,
  approved_at: NullableTimestamp,
  approval_via: Text,
  parent_action_uuid: Text,
  created_at: Timestamp
})

/** An action of a package, with its receipt as stored and its agent-chain predecessor's receipt id. */
export interface PackagedActionRow {
  readonly action_uuid: string
  readonly action_type: string
  readonly agent_id: string | null
  readonly agent_version: string | null
  readonly model_id: string | null
  readonly model_version: string | null
  readonly status: string
  readonly action_details_hash: string
  readonly instruction_hash: string | null
  readonly outcome: string | null
  readonly outcome_hash: string | null
  readonly policy_uuid: string | null
  readonly approved_by: string | null
  readonly approved_at: string | null
  readonly denial_reason: string | null
  readonly parent_action_uuid: string | null
  readonly created_at: string
  readonly receipt: {
    readonly receipt_uuid: string
    readonly receipt_version: string
    readonly receipt_status: string
    readonly payload_hash: string
    readonly signature: string
    readonly public_key_id: string
    readonly timestamp_token: string | null
    readonly signed_payload: string
    readonly agent_sequence: number
    readonly created_at: string
  } | null
  readonly previous_receipt_uuid: string | null
}

const toPackagedAction = (row: typeof PackagedActionColumns.Type): PackagedActionRow => ({
  action_uuid: row.action_uuid,
  action_type: row.action_type,
  agent_id: row.agent_id,
  agent_version: row.agent_version,
  model_id: row.model_id,
  model_version: row.model_version,
  status: row.status,
  action_details_hash: row.action_details_hash,
  instruction_hash: row.instruction_hash,
  outcome: row.outcome,
  outcome_hash: row.outcome_hash,
  policy_uuid: row.policy_uuid,
  approved_by: row.approved_by,
  approved_at: row.approved_at,
  denial_reason: row.denial_reason,
  parent_action_uuid: row.parent_action_uuid,
  created_at: row.created_at,
  receipt:
    row.receipt_uuid === null
      ? null
      : {
          receipt_uuid: row.receipt_uuid,
          receipt_version: row.receipt_version,
          receipt_status: row.receipt_status,
          payload_hash: row.payload_hash,
          signature: row.signature,
          public_key_id: row.public_key_id,
          timestamp_token: row.timestamp_token,
          signed_payload: row.signed_payload,
          agent_sequence: row.receipt_agent_sequence,
          created_at: row.receipt_created_at
        },
  previous_receipt_uuid: row.previous_receipt_uuid
})

export interface PackageRow {
  readonly package_uuid: string
  readonly org_uuid: string
  readonly title: string
  readonly purpose: string | null
  readonly action_count: number
  readonly signed_payload: string
  readonly package_hash: string
  readonly signature: string
  readonly public_key_id: string
  readonly timestamp_token: string | null
  readonly created_by: string
  readonly sealed_at: string
  /** The sealed actions' uuids in package order, and their agent ids (distinct, any order): kept beside the document for lists. */
  readonly action_uuids: ReadonlyArray<string>
  readonly agent_ids: ReadonlyArray<string>
}

export interface DiscoveryFilter {
  readonly agent_id: string | null
  readonly action_type: string | null
  readonly date_from: string | null
  readonly date_to: string | null
  readonly status: string | null
}

export interface AsOfRow {
  readonly action_uuid: string
  readonly action_type: string
  readonly agent_id: string | null
  readonly model_id: string | null
  readonly status: string
  readonly status_since: string
  readonly receipt_uuid: string | null
  readonly created_at: string
}

export interface NewDiscovery {
  readonly discovery_query_uuid: string
  readonly org_uuid: string
  readonly point_in_time: string
  readonly reason: string
  readonly query: DiscoveryFilter
  readonly result_count: number
  readonly results: ReadonlyArray<AsOfRow>
  readonly results_hash: string
  readonly queried_by: string
  readonly queried_at: string
}

export interface ChainRow {
  readonly hop: number
  readonly action_uuid: string
  readonly action_type: string
  readonly agent_id: string | null
  readonly model_id: string | null
  readonly status: string
  readonly policy_uuid: string | null
  readonly approved_by: string | null
  readonly approved_at: string | null
  readonly approval_via: string | null
  readonly parent_action_uuid: string | null
  readonly created_at: string
}

export const makeEvidenceStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const owners = Rows.findAll({
    Request: Schema.Struct({ orgUuid: Schema.String, uuids: Schema.Array(Schema.String) }),
    Result: Schema.Struct({ action_uuid: Schema.String, own: Schema.Boolean }),
    execute: ({ orgUuid, uuids }) =>
      sql`SELECT action_uuid, org_uuid = ${orgUuid} AS own FROM actions
          WHERE action_uuid IN (SELECT jsonb_array_elements_text(${jsonb(uuids)}))`
  })

  const packagedActions = Rows.findAll({
    Request: Schema.Struct({ orgUuid: Schema.String, uuids: Schema.Array(Schema.String) }),
    Result: PackagedActionColumns,
    execute: ({ orgUuid, uuids }) =>
      sql`SELECT a.action_uuid, a.action_type, a.agent_id, a.agent_version, a.model_id, a.model_version, a.status, a.action_details_hash,
            a.instruction_hash, a.outcome, a.outcome_hash, a.policy_uuid, a.approved_by, a.approved_at, a.denial_reason,
            a.parent_action_uuid, a.created_at,
            r.receipt_uuid, r.receipt_version, r.receipt_status, r.payload_hash, r.signature, r.public_key_id, r.timestamp_token,
            r.signed_payload, r.agent_sequence AS receipt_agent_sequence, r.created_at AS receipt_created_at,
            prev.receipt_uuid AS previous_receipt_uuid
          FROM actions a
          LEFT JOIN receipts r ON r.receipt_uuid = a.receipt_uuid AND r.org_uuid = a.org_uuid
          LEFT JOIN receipts prev ON prev.org_uuid = r.org_uuid AND COALESCE(prev.agent_id, '') = COALESCE(r.agent_id, '')
            AND prev.agent_sequence = r.agent_sequence - 1
          WHERE a.org_uuid = ${orgUuid} AND a.action_uuid IN (SELECT jsonb_array_elements_text(${jsonb(uuids)}))`
  })

  const insertPackage = Rows.void({
    Request: Schema.Any,
    execute: (row: PackageRow) =>
      sql`INSERT INTO evidence_packages (package_uuid, org_uuid, title, purpose, action_count, signed_payload, package_hash, signature,
            public_key_id, timestamp_token, created_by, sealed_at, action_uuids, agent_ids)
          VALUES (${row.package_uuid}, ${row.org_uuid}, ${row.title}, ${row.purpose}, ${row.action_count}, ${row.signed_payload},
            ${row.package_hash}, ${row.signature}, ${row.public_key_id}, ${row.timestamp_token}, ${row.created_by}, ${row.sealed_at},
            ${jsonb(row.action_uuids)}, ${jsonb(row.agent_ids)})`
  })

  const packageById = Rows.findOneOption({
    Request: Schema.Struct({ orgUuid: Schema.String, packageUuid: Schema.String }),
    Result: PackageColumns,
    execute: ({ orgUuid, packageUuid }) => sql`SELECT * FROM evidence_packages WHERE org_uuid = ${orgUuid} AND package_uuid = ${packageUuid}`
  })

  const packagePage = Rows.findAll({
    Request: Schema.Struct({ orgUuid: Schema.String, limit: Schema.Number, offset: Schema.Number }),
    Result: PackageColumns,
    execute: ({ orgUuid, limit, offset }) =>
      sql`SELECT * FROM evidence_packages WHERE org_uuid = ${orgUuid} ORDER BY sealed_at DESC, package_uuid DESC LIMIT ${limit} OFFSET ${offset}`
  })

  const packageCount = Rows.findOne({
    Request: Schema.String,
    Result: Schema.Struct({ n: Count }),
    execute: (orgUuid) => sql`SELECT count(*) AS n FROM evidence_packages WHERE org_uuid = ${orgUuid}`
  })

  const asOf = Rows.findAll({
    Request: Schema.Any,
    Result: AsOfColumns,
    execute: ({ orgUuid, at, filter, limit }: { orgUuid: string; at: string; filter: DiscoveryFilter; limit: number }) => {
      const where = sql.and([
        sql`a.org_uuid = ${orgUuid}`,
        sql`a.created_at <= ${at}`,
        ...(filter.agent_id !== null ? [sql`a.agent_id = ${filter.agent_id}`] : []),
        ...(filter.action_type !== null ? [sql`a.action_type = ${filter.action_type}`] : []),
        ...(filter.date_from !== null ? [sql`a.created_at >= ${filter.date_from}`] : []),
        ...(filter.date_to !== null ? [sql`a.created_at <= ${filter.date_to}`] : []),
        ...(filter.status !== null ? [sql`h.status = ${filter.status}`] : [])
      ])
      return sql`
          SELECT a.action_uuid, a.action_type, a.agent_id, a.model_id, a.created_at, h.status, h.changed_at,
            CASE WHEN r.created_at <= ${at} THEN r.receipt_uuid END AS receipt_uuid_then,
            count(*) OVER () AS total
          FROM actions a
          JOIN LATERAL (
            SELECT status, changed_at FROM action_status_history h
            WHERE h.action_uuid = a.action_uuid AND h.changed_at <= ${at}
            ORDER BY changed_at DESC,
              CASE status WHEN 'authorized' THEN 0 WHEN 'pending_approval' THEN 0 WHEN 'approved' THEN 1 ELSE 2 END DESC
            LIMIT 1
          ) h ON true
          LEFT JOIN receipts r ON r.receipt_uuid = a.receipt_uuid AND r.org_uuid = a.org_uuid
          WHERE ${where}
          ORDER BY a.created_at DESC, a.action_uuid DESC
          LIMIT ${limit}`
    }
  })

  const insertDiscovery = Rows.void({
    Request: Schema.Any,
    execute: (d: NewDiscovery) =>
      sql`INSERT INTO discovery_queries (discovery_query_uuid, org_uuid, point_in_time, reason, query, result_count, results, results_hash,
            queried_by, queried_at)
          VALUES (${d.discovery_query_uuid}, ${d.org_uuid}, ${d.point_in_time}, ${d.reason}, ${jsonb(d.query)}, ${d.result_count},
            ${jsonb(d.results)}, ${d.results_hash}, ${d.queried_by}, ${d.queried_at})`
  })

  const liabilityChain = Rows.findAll({
    Request: Schema.Struct({ orgUuid: Schema.String, actionUuid: Schema.String, max: Schema.Number }),
    Result: ChainColumns,
    execute: ({ orgUuid, actionUuid, max }) =>
      sql`WITH RECURSIVE walk AS (
            SELECT action_uuid, parent_action_uuid, 0 AS hop, ARRAY[action_uuid] AS path
            FROM actions WHERE org_uuid = ${orgUuid} AND action_uuid = ${actionUuid}
            UNION ALL
            SELECT a.action_uuid, a.parent_action_uuid, w.hop + 1, w.path || a.action_uuid
            FROM walk w JOIN actions a ON a.action_uuid = w.parent_action_uuid AND a.org_uuid = ${orgUuid}
            WHERE w.hop + 1 < ${max} AND NOT a.action_uuid = ANY (w.path)
          )
          SELECT w.hop, a.action_uuid, a.action_type, a.agent_id, a.model_id, a.status, a.policy_uuid, a.approved_by, a.approved_at,
            a.approval_via, a.parent_action_uuid, a.created_at
          FROM walk w JOIN actions a ON a.action_uuid = w.action_uuid
          ORDER BY w.hop`
  })

  return sqlDefects({
    sql,

    /** Which of `uuids` exist, and whether each is `orgUuid`'s; nothing else about them. */
    owners: (orgUuid: string, uuids: ReadonlyArray<string>) =>
      Effect.map(owners({ orgUuid, uuids }), (rows) => new Map(rows.map((row) => [row.action_uuid, row.own]))),

    /** The organization's actions among `uuids`, each with its receipt and the receipt before it in its agent's chain. */
    packagedActions: (orgUuid: string, uuids: ReadonlyArray<string>) => Effect.map(packagedActions({ orgUuid, uuids }), (rows) => rows.map(toPackagedAction)),

    /** The package and its audit entry, together. */
    insertPackage: (row: PackageRow, audit: AuditEntry) => sql.withTransaction(Effect.andThen(insertPackage(row), insertAudit(sql, audit))),

    packageById: (orgUuid: string, packageUuid: string) =>
      Effect.map(packageById({ orgUuid, packageUuid }), Option.getOrUndefined),

    packages: (orgUuid: string, page: number, perPage: number) =>
      Effect.all([
        packagePage({ orgUuid, limit: perPage, offset: offset(page, perPage) }),
        Effect.map(always(packageCount(orgUuid)), (row) => row.n)
      ]),

    /**
     * The organization's actions created by `at` that match `filter`, each with the status it had
     * at `at` (the latest history row not after it; on a tie the later lifecycle step), newest
     * first, at most `limit`; with the number of all matches.
     */
    asOf: (orgUuid: string, at: string, filter: DiscoveryFilter, limit: number) =>
      Effect.map(asOf({ orgUuid, at, filter, limit }), (rows) => ({
        results: rows.map(
          (row): AsOfRow => ({
            action_uuid: row.action_uuid,
            action_type: row.action_type,
            agent_id: row.agent_id,
            model_id: row.model_id,
            status: row.status,
            status_since: row.changed_at,
            receipt_uuid: row.receipt_uuid_then,
            created_at: row.created_at
          })
        ),
        total: rows[0]?.total ?? 0
      })),

    /** The discovery record and its audit entry, together. */
    insertDiscovery: (d: NewDiscovery, audit: AuditEntry) => sql.withTransaction(Effect.andThen(insertDiscovery(d), insertAudit(sql, audit))),

    /**
     * From the action up its parent links within the organization: hop 0 is the action. Stops at
     * a root, a parent that is not the organization's, a cycle, or `max` entries.
     */
    liabilityChain: (orgUuid: string, actionUuid: string, max: number) => liabilityChain({ orgUuid, actionUuid, max })
  })
})

export type EvidenceStore = Effect.Success<typeof makeEvidenceStore>
