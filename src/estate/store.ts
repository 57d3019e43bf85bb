/** SQL for estate records. Every read is scoped to an organization; rows are decoded (`SqlSchema`). */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient } from "effect/sql"
import { FINDING_STATUSES, NotifyTarget, OVERALL_STATUSES, SUCCESSION_POLICIES } from "../../protocol/estate.js"
import { type AuditEntry, insertAudit } from "../platform/audit.js"
import { Count, Json, NullableTimestamp, Timestamp } from "../platform/columns.js"
import { jsonb } from "../platform/db/index.js"
import * as Rows from "../platform/db/rows.js"
import { sqlDefects } from "../platform/db/store.js"

const AgentRow = Schema.Struct({ agent_slug: Schema.String, org_uuid: Schema.String, status: Schema.String })
export type AgentRow = typeof AgentRow.Type

/** What a will writes. */
const WillFields = Schema.Struct({
  agent_slug: Schema.String,
  org_uuid: Schema.String,
  successor_slug: Schema.NullOr(Schema.String),
  succession_policy: Schema.Literals(SUCCESSION_POLICIES),
  data_retention_days: Schema.NullOr(Schema.Number),
  notify: Schema.Array(NotifyTarget),
  instructions: Schema.NullOr(Schema.String)
})
export type WillFields = typeof WillFields.Type

const WillRow = Schema.Struct({ ...WillFields.fields, notify: Json(Schema.Array(NotifyTarget)), updated_at: Timestamp })
export type WillRow = typeof WillRow.Type

/** What a death certificate writes (timestamps as ISO 8601). */
const CertificateFields = Schema.Struct({
  certificate_id: Schema.String,
  agent_slug: Schema.String,
  org_uuid: Schema.String,
  cause: Schema.String,
  notes: Schema.NullOr(Schema.String),
  issued_at: Schema.String,
  issued_by: Schema.String,
  succession_triggered: Schema.Boolean,
  successor_slug: Schema.NullOr(Schema.String),
  succession_policy: Schema.NullOr(Schema.Literals(SUCCESSION_POLICIES)),
  transfer_receipt_id: Schema.NullOr(Schema.String),
  purge_after: Schema.NullOr(Schema.String),
  purged_at: Schema.NullOr(Schema.String)
})
export type CertificateFields = typeof CertificateFields.Type

const CertificateRow = Schema.Struct({ ...CertificateFields.fields, issued_at: Timestamp, purge_after: NullableTimestamp, purged_at: NullableTimestamp })
export type CertificateRow = typeof CertificateRow.Type

const StoredFinding = Schema.Struct({ requirement: Schema.String, status: Schema.Literals(FINDING_STATUSES), evidence: Schema.NullOr(Schema.String) })

/** What a snapshot writes. */
const SnapshotFields = Schema.Struct({
  snapshot_uuid: Schema.String,
  org_uuid: Schema.String,
  agent_slug: Schema.String,
  framework: Schema.String,
  overall_status: Schema.Literals(OVERALL_STATUSES),
  findings: Schema.Array(StoredFinding),
  notes: Schema.NullOr(Schema.String),
  finding_count: Schema.Number,
  pass_count: Schema.Number,
  fail_count: Schema.Number,
  partial_count: Schema.Number,
  created_by: Schema.String,
  created_at: Schema.String,
  // Its seal (signed like a receipt); null on snapshots recorded before they were signed.
  snapshot_hash: Schema.NullOr(Schema.String),
  signature: Schema.NullOr(Schema.String),
  public_key_id: Schema.NullOr(Schema.String),
  timestamp_token: Schema.NullOr(Schema.String)
})
export type SnapshotFields = typeof SnapshotFields.Type

const SnapshotRow = Schema.Struct({ ...SnapshotFields.fields, findings: Json(Schema.Array(StoredFinding)), created_at: Timestamp })
export type SnapshotRow = typeof SnapshotRow.Type

/** A transfer receipt, as `agent_transfers` stores the agents area's own (same columns, same signing). */
const TransferRecord = Schema.Struct({
  transfer_receipt_id: Schema.String,
  agent_slug: Schema.String,
  previous_owner: Schema.String,
  new_owner: Schema.String,
  signed_payload: Schema.String,
  payload_hash: Schema.String,
  signature: Schema.String,
  public_key_id: Schema.String,
  transferred_at: Schema.String
})
export type TransferRecord = typeof TransferRecord.Type

const SnapshotFilter = Schema.Struct({ framework: Schema.optional(Schema.String), agentSlug: Schema.optional(Schema.String) })
export type SnapshotFilter = typeof SnapshotFilter.Type

const BySlug = Schema.Struct({ orgUuid: Schema.String, slug: Schema.String })

/** For a statement that always answers one row (an aggregate, INSERT … RETURNING): no row is a defect. */
const oneRow = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, Cause.NoSuchElementError>, R> =>
  Effect.catchIf(effect, Cause.isNoSuchElementError, Effect.die) as Effect.Effect<A, Exclude<E, Cause.NoSuchElementError>, R>

export const makeEstateStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const findAgent = Rows.findOneOption({
    Request: BySlug,
    Result: AgentRow,
    execute: ({ orgUuid, slug }) => sql`SELECT agent_slug, org_uuid, status FROM agents WHERE agent_slug = ${slug} AND org_uuid = ${orgUuid}`
  })

  const lockAgent = Rows.findOneOption({
    Request: BySlug,
    Result: AgentRow,
    execute: ({ orgUuid, slug }) => sql`SELECT agent_slug, org_uuid, status FROM agents WHERE agent_slug = ${slug} AND org_uuid = ${orgUuid} FOR UPDATE`
  })

  const findWill = Rows.findOneOption({
    Request: BySlug,
    Result: WillRow,
    execute: ({ orgUuid, slug }) => sql`SELECT * FROM agent_wills WHERE agent_slug = ${slug} AND org_uuid = ${orgUuid}`
  })

  const upsertWill = Rows.findOne({
    Request: WillFields,
    Result: WillRow,
    execute: (w) =>
      sql`INSERT INTO agent_wills (agent_slug, org_uuid, successor_slug, succession_policy, data_retention_days, notify, instructions)
          VALUES (${w.agent_slug}, ${w.org_uuid}, ${w.successor_slug}, ${w.succession_policy}, ${w.data_retention_days}, ${jsonb(w.notify)}, ${w.instructions})
          ON CONFLICT (agent_slug) DO UPDATE SET org_uuid = EXCLUDED.org_uuid, successor_slug = EXCLUDED.successor_slug,
            succession_policy = EXCLUDED.succession_policy, data_retention_days = EXCLUDED.data_retention_days,
            notify = EXCLUDED.notify, instructions = EXCLUDED.instructions, updated_at = now()
          RETURNING *`
  })

  const findCertificate = Rows.findOneOption({
    Request: BySlug,
    Result: CertificateRow,
    execute: ({ orgUuid, slug }) => sql`SELECT * FROM agent_death_certificates WHERE agent_slug = ${slug} AND org_uuid = ${orgUuid}`
  })

  const anyCertificate = Rows.findOneOption({
    Request: Schema.String,
    Result: Schema.Struct({ certificate_id: Schema.String }),
    execute: (slug) => sql`SELECT certificate_id FROM agent_death_certificates WHERE agent_slug = ${slug}`
  })

  const insertCertificate = Rows.findOne({
    Request: CertificateFields,
    Result: CertificateRow,
    execute: (c) =>
      sql`INSERT INTO agent_death_certificates (certificate_id, agent_slug, org_uuid, cause, notes, issued_at, issued_by, succession_triggered,
            successor_slug, succession_policy, transfer_receipt_id, purge_after, purged_at)
          VALUES (${c.certificate_id}, ${c.agent_slug}, ${c.org_uuid}, ${c.cause}, ${c.notes}, ${c.issued_at}, ${c.issued_by}, ${c.succession_triggered},
            ${c.successor_slug}, ${c.succession_policy}, ${c.transfer_receipt_id}, ${c.purge_after}, ${c.purged_at})
          RETURNING *`
  })

  const dueForPurge = Rows.findAll({
    Request: Schema.String,
    Result: CertificateRow,
    execute: (now) =>
      sql`SELECT * FROM agent_death_certificates WHERE purge_after IS NOT NULL AND purged_at IS NULL AND purge_after <= ${now}
          ORDER BY purge_after LIMIT 100`
  })

  const insertSnapshot = Rows.findOne({
    Request: SnapshotFields,
    Result: SnapshotRow,
    execute: (s) =>
      sql`INSERT INTO compliance_snapshots (snapshot_uuid, org_uuid, agent_slug, framework, overall_status, findings, notes,
            finding_count, pass_count, fail_count, partial_count, created_by, created_at, snapshot_hash, signature, public_key_id, timestamp_token)
          VALUES (${s.snapshot_uuid}, ${s.org_uuid}, ${s.agent_slug}, ${s.framework}, ${s.overall_status}, ${jsonb(s.findings)}, ${s.notes},
            ${s.finding_count}, ${s.pass_count}, ${s.fail_count}, ${s.partial_count}, ${s.created_by}, ${s.created_at},
            ${s.snapshot_hash}, ${s.signature}, ${s.public_key_id}, ${s.timestamp_token})
          RETURNING *`
  })

  const snapshotWhere = (orgUuid: string, filter: SnapshotFilter) =>
    sql.and([
      sql`org_uuid = ${orgUuid}`,
      ...(filter.framework !== undefined ? [sql`framework = ${filter.framework}`] : []),
      ...(filter.agentSlug !== undefined ? [sql`agent_slug = ${filter.agentSlug}`] : [])
    ])

  const snapshotPage = Rows.findAll({
    Request: Schema.Struct({ orgUuid: Schema.String, filter: SnapshotFilter, limit: Schema.Number, offset: Schema.Number }),
    Result: SnapshotRow,
    execute: ({ orgUuid, filter, limit, offset }) =>
      sql`SELECT * FROM compliance_snapshots WHERE ${snapshotWhere(orgUuid, filter)}
          ORDER BY created_at DESC, snapshot_uuid DESC LIMIT ${limit} OFFSET ${offset}`
  })

  const snapshotCount = Rows.findOne({
    Request: Schema.Struct({ orgUuid: Schema.String, filter: SnapshotFilter }),
    Result: Schema.Struct({ n: Count }),
    execute: ({ orgUuid, filter }) => sql`SELECT count(*) AS n FROM compliance_snapshots WHERE ${snapshotWhere(orgUuid, filter)}`
  })

  const insertTransfer = Rows.void({
    Request: TransferRecord,
    execute: (t) =>
      sql`INSERT INTO agent_transfers (transfer_receipt_id, agent_slug, previous_owner, new_owner, signed_payload, payload_hash, signature, public_key_id, transferred_at)
          VALUES (${t.transfer_receipt_id}, ${t.agent_slug}, ${t.previous_owner}, ${t.new_owner}, ${t.signed_payload}, ${t.payload_hash}, ${t.signature},
            ${t.public_key_id}, ${t.transferred_at})`
  })

  const markPurged = Rows.findOneOption({
    Request: Schema.String,
    Result: Schema.Struct({ certificate_id: Schema.String }),
    execute: (certificateId) =>
      sql`UPDATE agent_death_certificates SET purged_at = now(), notes = NULL
          WHERE certificate_id = ${certificateId} AND purged_at IS NULL RETURNING certificate_id`
  })

  /** Everything the `delete` policy forgets about an agent, in its tables. */
  const purgeAgentData = Rows.void({
    Request: Schema.String,
    execute: (slug) =>
      sql.withTransaction(
        Effect.all([
          sql`UPDATE agents SET description = NULL, metadata = '{}'::jsonb, capabilities = '[]'::jsonb, updated_at = now() WHERE agent_slug = ${slug}`,
          sql`UPDATE agent_versions SET changelog = NULL WHERE agent_slug = ${slug}`,
          sql`UPDATE agent_wills SET instructions = NULL, notify = '[]'::jsonb, updated_at = now() WHERE agent_slug = ${slug}`
        ])
      )
  })

  return sqlDefects({
    sql,
    findAgent: (orgUuid: string, slug: string) => Effect.map(findAgent({ orgUuid, slug }), Option.getOrUndefined),
    /** The agent row locked for the rest of the transaction (a decommission or transfer waits). */
    lockAgent: (orgUuid: string, slug: string) => Effect.map(lockAgent({ orgUuid, slug }), Option.getOrUndefined),
    findWill: (orgUuid: string, slug: string) => Effect.map(findWill({ orgUuid, slug }), Option.getOrUndefined),
    upsertWill: (will: WillFields) => oneRow(upsertWill(will)),
    findCertificate: (orgUuid: string, slug: string) => Effect.map(findCertificate({ orgUuid, slug }), Option.getOrUndefined),
    /** Whether the agent has a certificate, whoever issued it (a transferred agent stays dead). */
    anyCertificate: (slug: string) => Effect.map(anyCertificate(slug), Option.isSome),
    insertCertificate: (certificate: CertificateFields) => oneRow(insertCertificate(certificate)),
    insertTransfer,
    /** Certificates whose purge is due at `now` (ISO 8601), oldest first. */
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
          const marked = yield* markPurged(certificate.certificate_id)
          if (Option.isNone(marked)) return false
          yield* purgeAgentData(certificate.agent_slug)
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

    insertSnapshot: (snapshot: SnapshotFields) => oneRow(insertSnapshot(snapshot)),
    listSnapshots: (orgUuid: string, filter: SnapshotFilter, page: number, perPage: number) =>
      Effect.all({
        rows: snapshotPage({ orgUuid, filter, limit: perPage, offset: (page - 1) * perPage }),
        total: Effect.map(oneRow(snapshotCount({ orgUuid, filter })), (row) => row.n)
      }),

    audit: (entry: AuditEntry) => insertAudit(sql, entry)
  })
})

export type EstateStore = Effect.Success<typeof makeEstateStore>
