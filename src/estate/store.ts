/** SQL for estate records. Every read is scoped to an organization; rows are decoded (`SqlSchema`). */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient, SqlSchema } from "effect/sql"
import { FINDING_STATUSES, NotifyTarget, OVERALL_STATUSES, SUCCESSION_POLICIES } from "../../protocol/estate.js"
import { type AuditEntry, insertAudit } from "../platform/audit.js"
import { Count, Json, NullableTimestamp, Timestamp } from "../platform/columns.js"
import { jsonb } from "../platform/db/index.js"
import { offset } from "../platform/sql.js"

const AgentRow = Schema.Struct({ agent_slug: Schema.String, org_uuid: Schema.String, status: Schema.String })
export type AgentRow = typeof AgentRow.Type

const WillRow = Schema.Struct({
  agent_slug: Schema.String,
  org_uuid: Schema.String,
  successor_slug: Schema.NullOr(Schema.String),
  succession_policy: Schema.Literals(SUCCESSION_POLICIES),
  data_retention_days: Schema.NullOr(Schema.Number),
  notify: Json(Schema.Array(NotifyTarget), []),
  instructions: Schema.NullOr(Schema.String),
  updated_at: Timestamp
})
export type WillRow = typeof WillRow.Type

const CertificateRow = Schema.Struct({
  certificate_id: Schema.String,
  agent_slug: Schema.String,
  org_uuid: Schema.String,
  cause: Schema.String,
  notes: Schema.NullOr(Schema.String),
  issued_at: Timestamp,
  issued_by: Schema.String,
  succession_triggered: Schema.Boolean,
  successor_slug: Schema.NullOr(Schema.String),
  succession_policy: Schema.NullOr(Schema.Literals(SUCCESSION_POLICIES)),
  transfer_receipt_id: Schema.NullOr(Schema.String),
  purge_after: NullableTimestamp,
  purged_at: NullableTimestamp
})
export type CertificateRow = typeof CertificateRow.Type

const StoredFinding = Schema.Struct({ requirement: Schema.String, status: Schema.Literals(FINDING_STATUSES), evidence: Schema.NullOr(Schema.String) })

const SnapshotRow = Schema.Struct({
  snapshot_uuid: Schema.String,
  org_uuid: Schema.String,
  agent_slug: Schema.String,
  framework: Schema.String,
  overall_status: Schema.Literals(OVERALL_STATUSES),
  findings: Json(Schema.Array(StoredFinding), []),
  notes: Schema.NullOr(Schema.String),
  finding_count: Schema.Number,
  pass_count: Schema.Number,
  fail_count: Schema.Number,
  partial_count: Schema.Number,
  created_at: Timestamp,
  created_by: Schema.String
})
export type SnapshotRow = typeof SnapshotRow.Type

export type WillFields = Omit<WillRow, "updated_at">
export type CertificateFields = CertificateRow
export type SnapshotFields = Omit<SnapshotRow, "created_at">

/** A transfer receipt, as `agent_transfers` stores the agents area's own (same columns, same signing). */
export interface TransferRecord {
  readonly transfer_receipt_id: string
  readonly agent_slug: string
  readonly previous_owner: string
  readonly new_owner: string
  readonly signed_payload: string
  readonly payload_hash: string
  readonly signature: string
  readonly public_key_id: string
  readonly transferred_at: string
}

export interface SnapshotFilter {
  readonly framework?: string | undefined
  readonly agentSlug?: string | undefined
}

const BySlug = Schema.Struct({ orgUuid: Schema.String, slug: Schema.String })

export const makeEstateStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const findAgent = SqlSchema.findOneOption({
    Request: BySlug,
    Result: AgentRow,
    execute: ({ orgUuid, slug }) => sql`SELECT agent_slug, org_uuid, status FROM agents WHERE agent_slug = ${slug} AND org_uuid = ${orgUuid}`
  })

  const lockAgent = SqlSchema.findOneOption({
    Request: BySlug,
    Result: AgentRow,
    execute: ({ orgUuid, slug }) => sql`SELECT agent_slug, org_uuid, status FROM agents WHERE agent_slug = ${slug} AND org_uuid = ${orgUuid} FOR UPDATE`
  })

  const findWill = SqlSchema.findOneOption({
    Request: BySlug,
    Result: WillRow,
    execute: ({ orgUuid, slug }) => sql`SELECT * FROM agent_wills WHERE agent_slug = ${slug} AND org_uuid = ${orgUuid}`
  })

  const upsertWill = SqlSchema.findOne({
    Request: Schema.Any,
    Result: WillRow,
    execute: (w: WillFields) =>
      sql`INSERT INTO agent_wills (agent_slug, org_uuid, successor_slug, succession_policy, data_retention_days, notify, instructions)
          VALUES (${w.agent_slug}, ${w.org_uuid}, ${w.successor_slug}, ${w.succession_policy}, ${w.data_retention_days}, ${jsonb(w.notify)}, ${w.instructions})
          ON CONFLICT (agent_slug) DO UPDATE SET org_uuid = EXCLUDED.org_uuid, successor_slug = EXCLUDED.successor_slug,
            succession_policy = EXCLUDED.succession_policy, data_retention_days = EXCLUDED.data_retention_days,
            notify = EXCLUDED.notify, instructions = EXCLUDED.instructions, updated_at = now()
          RETURNING *`
  })

  const findCertificate = SqlSchema.findOneOption({
    Request: BySlug,
    Result: CertificateRow,
    execute: ({ orgUuid, slug }) => sql`SELECT * FROM agent_death_certificates WHERE agent_slug = ${slug} AND org_uuid = ${orgUuid}`
  })

  const anyCertificate = (slug: string) => sql`SELECT 1 FROM agent_death_certificates WHERE agent_slug = ${slug}`.pipe(Effect.map((rows) => rows.length > 0))

  const insertCertificate = SqlSchema.findOne({
    Request: Schema.Any,
    Result: CertificateRow,
    execute: (c: CertificateFields) =>
      sql`INSERT INTO agent_death_certificates (certificate_id, agent_slug, org_uuid, cause, notes, issued_at, issued_by, succession_triggered,
            successor_slug, succession_policy, transfer_receipt_id, purge_after, purged_at)
          VALUES (${c.certificate_id}, ${c.agent_slug}, ${c.org_uuid}, ${c.cause}, ${c.notes}, ${c.issued_at}, ${c.issued_by}, ${c.succession_triggered},
            ${c.successor_slug}, ${c.succession_policy}, ${c.transfer_receipt_id}, ${c.purge_after}, ${c.purged_at})
          RETURNING *`
  })

  const dueForPurge = SqlSchema.findAll({
    Request: Schema.String,
    Result: CertificateRow,
    execute: (now) =>
      sql`SELECT * FROM agent_death_certificates WHERE purge_after IS NOT NULL AND purged_at IS NULL AND purge_after <= ${now}
          ORDER BY purge_after LIMIT 100`
  })

  const insertSnapshot = SqlSchema.findOne({
    Request: Schema.Any,
    Result: SnapshotRow,
    execute: (s: SnapshotFields) =>
      sql`INSERT INTO compliance_snapshots (snapshot_uuid, org_uuid, agent_slug, framework, overall_status, findings, notes,
            finding_count, pass_count, fail_count, partial_count, created_by)
          VALUES (${s.snapshot_uuid}, ${s.org_uuid}, ${s.agent_slug}, ${s.framework}, ${s.overall_status}, ${jsonb(s.findings)}, ${s.notes},
            ${s.finding_count}, ${s.pass_count}, ${s.fail_count}, ${s.partial_count}, ${s.created_by})
          RETURNING *`
  })

  const snapshotWhere = (orgUuid: string, filter: SnapshotFilter) =>
    sql.and([
      sql`org_uuid = ${orgUuid}`,
      ...(filter.framework !== undefined ? [sql`framework = ${filter.framework}`] : []),
      ...(filter.agentSlug !== undefined ? [sql`agent_slug = ${filter.agentSlug}`] : [])
    ])

  const snapshotPage = SqlSchema.findAll({
    Request: Schema.Struct({ orgUuid: Schema.String, filter: Schema.Any, limit: Schema.Number, offset: Schema.Number }),
    Result: SnapshotRow,
    execute: ({ orgUuid, filter, limit, offset }) =>
      sql`SELECT * FROM compliance_snapshots WHERE ${snapshotWhere(orgUuid, filter)}
          ORDER BY created_at DESC, snapshot_uuid DESC LIMIT ${limit} OFFSET ${offset}`
  })

  const snapshotCount = SqlSchema.findOne({
    Request: Schema.Struct({ orgUuid: Schema.String, filter: Schema.Any }),
    Result: Schema.Struct({ n: Count }),
    execute: ({ orgUuid, filter }) => sql`SELECT count(*) AS n FROM compliance_snapshots WHERE ${snapshotWhere(orgUuid, filter)}`
  })

  return {
    sql,
    findAgent: (orgUuid: string, slug: string) => Effect.map(findAgent({ orgUuid, slug }), Option.getOrUndefined),
    /** The agent row locked for the rest of the transaction (a decommission or transfer waits). */
    lockAgent: (orgUuid: string, slug: string) => Effect.map(lockAgent({ orgUuid, slug }), Option.getOrUndefined),
    findWill: (orgUuid: string, slug: string) => Effect.map(findWill({ orgUuid, slug }), Option.getOrUndefined),
    upsertWill,
    findCertificate: (orgUuid: string, slug: string) => Effect.map(findCertificate({ orgUuid, slug }), Option.getOrUndefined),
    /** Whether the agent has a certificate, whoever issued it (a transferred agent stays dead). */
    anyCertificate,
    insertCertificate,
    insertTransfer: (t: TransferRecord) =>
      sql`INSERT INTO agent_transfers (transfer_receipt_id, agent_slug, previous_owner, new_owner, signed_payload, payload_hash, signature, public_key_id, transferred_at)
          VALUES (${t.transfer_receipt_id}, ${t.agent_slug}, ${t.previous_owner}, ${t.new_owner}, ${t.signed_payload}, ${t.payload_hash}, ${t.signature},
            ${t.public_key_id}, ${t.transferred_at})`.pipe(Effect.asVoid),
    dueForPurge,

    /**
     * The `delete` policy's purge of one agent: its descriptive data, version changelogs, the will's
     * instructions and notification targets and the certificate's notes. The agent row stays as a
     * tombstone (the slug, and so the did:web, is never handed out again), and so do its key,
     * credentials, actions, receipts and transfer receipts: they are evidence. Marked and audited
     * once, in the same transaction.
     */
    purge: (certificate: CertificateRow) =>
      sql.withTransaction(
        Effect.gen(function* () {
          const marked = yield* sql`UPDATE agent_death_certificates SET purged_at = now(), notes = NULL
                                    WHERE certificate_id = ${certificate.certificate_id} AND purged_at IS NULL RETURNING certificate_id`
          if (marked.length === 0) return false
          yield* sql`UPDATE agents SET description = NULL, metadata = '{}'::jsonb, capabilities = '[]'::jsonb, updated_at = now()
                     WHERE agent_slug = ${certificate.agent_slug}`
          yield* sql`UPDATE agent_versions SET changelog = NULL WHERE agent_slug = ${certificate.agent_slug}`
          yield* sql`UPDATE agent_wills SET instructions = NULL, notify = '[]'::jsonb, updated_at = now() WHERE agent_slug = ${certificate.agent_slug}`
          yield* insertAudit(sql, {
            orgUuid: certificate.org_uuid,
            actor: "system",
            event: "agent.data_purged",
            target: certificate.agent_slug,
            details: { certificate_id: certificate.certificate_id }
          })
          return true
        })
      ),

    insertSnapshot,
    listSnapshots: (orgUuid: string, filter: SnapshotFilter, page: number, perPage: number) =>
      Effect.all({
        rows: snapshotPage({ orgUuid, filter, limit: perPage, offset: offset(page, perPage) }),
        total: Effect.map(snapshotCount({ orgUuid, filter }), (row) => row.n)
      }),

    audit: (entry: AuditEntry) => insertAudit(sql, entry)
  }
})

export type EstateStore = Effect.Success<typeof makeEstateStore>
