/**
 * SQL for compliance reports: the report rows, their PDF bytes (a table of their own, read only by
 * download and verify), the Article 9 observations, and the reads a report makes of the
 * organization's actions and receipts in its period. Every read is scoped by organization; long
 * periods are read in keyset pages, never as one result set.
 */
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql"
import { jsonb } from "../platform/db/index.js"
import { count, iso, isoRequired, jsonValue } from "../platform/sql.js"

const text = (value: unknown): string | null => (value === null || value === undefined ? null : String(value))

export interface ReportRow {
  readonly report_uuid: string
  readonly org_uuid: string
  readonly framework: string
  readonly status: string
  readonly period_start: string | null
  readonly period_end: string | null
  readonly action_uuid: string | null
  readonly agent_filter: ReadonlyArray<string> | null
  readonly receipt_count: number
  readonly pdf_size_bytes: number | null
  readonly content_hash: string | null
  readonly signature: string | null
  readonly signing_key_id: string | null
  readonly timestamp_token: string | null
  readonly report_metadata: Record<string, unknown> | null
  readonly error_message: string | null
  readonly generated_at: string | null
  readonly retain_until: string | null
  readonly created_at: string
}

const toReport = (row: any): ReportRow => ({
  report_uuid: row.report_uuid,
  org_uuid: row.org_uuid,
  framework: row.framework,
  status: row.status,
  period_start: iso(row.period_start),
  period_end: iso(row.period_end),
  action_uuid: text(row.action_uuid),
  agent_filter: jsonValue<ReadonlyArray<string> | null>(row.agent_filter, null),
  receipt_count: count(row.receipt_count),
  pdf_size_bytes: row.pdf_size_bytes === null ? null : count(row.pdf_size_bytes),
  content_hash: text(row.content_hash),
  signature: text(row.signature),
  signing_key_id: text(row.signing_key_id),
  timestamp_token: text(row.timestamp_token),
  report_metadata: jsonValue<Record<string, unknown> | null>(row.report_metadata, null),
  error_message: text(row.error_message),
  generated_at: iso(row.generated_at),
  retain_until: iso(row.retain_until),
  created_at: isoRequired(row.created_at)
})

/** What a report reads: the organization, the period (inclusive) and the optional agent ids. */
export interface Scope {
  readonly orgUuid: string
  readonly from: string
  readonly to: string
  readonly agents: ReadonlyArray<string> | null
}

/** A receipt of the period with what Article 12 prints beside it. */
export interface ReceiptLine {
  readonly receipt_uuid: string
  readonly action_uuid: string
  readonly agent_id: string | null
  readonly agent_version: string | null
  readonly receipt_status: string
  readonly payload_hash: string
  readonly signature: string
  readonly public_key_id: string
  readonly timestamp_token_present: boolean
  readonly action_type: string | null
  readonly action_status: string | null
  readonly model_id: string | null
  readonly model_version: string | null
  readonly action_details_hash: string | null
  readonly policy_uuid: string | null
  /** As authorize recorded them (src/policies/recorded.ts); null for older actions. */
  readonly policy_evaluations: unknown
  readonly approved_by: string | null
  readonly approval_via: string | null
  readonly cosigners: string | null
  readonly created_at: string
}

/** An action of the period as Article 9 classifies it. */
export interface ActionLine {
  readonly action_uuid: string
  readonly agent_id: string | null
  readonly action_type: string
  readonly art9_category: unknown
  readonly created_at: string
}

export interface PeriodStats {
  readonly total_actions: number
  readonly status_breakdown: Record<string, number>
  readonly distinct_agents: number
  readonly distinct_models: number
  readonly models: ReadonlyArray<{ model_id: string; model_version: string | null; actions: number }>
  readonly agents: ReadonlyArray<{ agent_id: string; agent_version: string | null; actions: number }>
  readonly receipt_count: number
  readonly signing_keys: ReadonlyArray<string>
}

export interface ObservationRow {
  readonly agent_id: string
  readonly category: string
  readonly risk_level: string
  readonly action_count: number
  readonly first_seen_at: string
  readonly last_seen_at: string
  readonly last_report_id: string
}

/** The PDF is stored in rows of this size: the driver refuses a protocol message over 16 MiB. */
const PDF_CHUNK_BYTES = 4 * 1024 * 1024

/** Distinct models and agent versions listed in one report; more are counted, not listed. */
const MAX_LISTED_VERSIONS = 200

export const makeComplianceStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const agentClause = (column: string, agents: ReadonlyArray<string> | null) =>
    agents === null ? sql`TRUE` : sql`${sql.literal(column)} IN (SELECT jsonb_array_elements_text(${jsonb(agents)}))`

  return {
    sql,

    insertReport: (row: ReportRow, pdf: Uint8Array | null, observations: ReadonlyArray<ObservationRow>) =>
      sql.withTransaction(
        Effect.gen(function* () {
          yield* sql`INSERT INTO compliance_reports (report_uuid, org_uuid, framework, status, period_start, period_end, action_uuid, agent_filter,
                receipt_count, pdf_size_bytes, content_hash, signature, signing_key_id, timestamp_token, report_metadata, error_message,
                generated_at, retain_until, created_at)
              VALUES (${row.report_uuid}, ${row.org_uuid}, ${row.framework}, ${row.status}, ${row.period_start}, ${row.period_end}, ${row.action_uuid},
                ${row.agent_filter === null ? null : jsonb(row.agent_filter)}, ${row.receipt_count}, ${row.pdf_size_bytes}, ${row.content_hash},
                ${row.signature}, ${row.signing_key_id}, ${row.timestamp_token}, ${row.report_metadata === null ? null : jsonb(row.report_metadata)},
                ${row.error_message}, ${row.generated_at}, ${row.retain_until}, ${row.created_at})`
          if (pdf !== null) {
            for (let chunk = 0; chunk * PDF_CHUNK_BYTES < pdf.length; chunk++) {
              const bytes = pdf.subarray(chunk * PDF_CHUNK_BYTES, (chunk + 1) * PDF_CHUNK_BYTES)
              yield* sql`INSERT INTO compliance_report_pdfs (report_uuid, chunk, org_uuid, pdf) VALUES (${row.report_uuid}, ${chunk}, ${row.org_uuid}, ${bytes})`
            }
          }
          if (observations.length > 0) {
            // One statement: the observations arrive as one jsonb array.
            yield* sql`
              INSERT INTO compliance_art9_observations (org_uuid, agent_id, category, risk_level, action_count, first_seen_at, last_seen_at, last_report_id)
              SELECT ${row.org_uuid}, o.agent_id, o.category, o.risk_level, o.action_count, o.first_seen_at, o.last_seen_at, o.last_report_id
              FROM jsonb_to_recordset(${jsonb(observations)}) AS o(agent_id text, category text, risk_level text, action_count bigint,
                first_seen_at timestamptz, last_seen_at timestamptz, last_report_id text)
              ON CONFLICT (org_uuid, agent_id, category) DO UPDATE SET
                risk_level = EXCLUDED.risk_level,
                action_count = EXCLUDED.action_count,
                first_seen_at = LEAST(compliance_art9_observations.first_seen_at, EXCLUDED.first_seen_at),
                last_seen_at = GREATEST(compliance_art9_observations.last_seen_at, EXCLUDED.last_seen_at),
                last_report_id = EXCLUDED.last_report_id,
                updated_at = now()`
          }
        })
      ),

    reportById: (orgUuid: string, reportUuid: string) =>
      Effect.map(sql`SELECT * FROM compliance_reports WHERE org_uuid = ${orgUuid} AND report_uuid = ${reportUuid}`, (rows) =>
        rows.length === 0 ? undefined : toReport(rows[0])
      ),

    reportPdf: (orgUuid: string, reportUuid: string) =>
      Effect.map(
        sql<{ pdf: Uint8Array }>`SELECT pdf FROM compliance_report_pdfs WHERE org_uuid = ${orgUuid} AND report_uuid = ${reportUuid} ORDER BY chunk`,
        (rows) => (rows.length === 0 ? undefined : new Uint8Array(Buffer.concat(rows.map((row) => row.pdf))))
      ),

    listReports: (orgUuid: string, filter: { framework: string | null; status: string | null }, limit: number, offset: number) =>
      Effect.gen(function* () {
        const where = sql.and([
          sql`org_uuid = ${orgUuid}`,
          filter.framework === null ? sql`TRUE` : sql`framework = ${filter.framework}`,
          filter.status === null ? sql`TRUE` : sql`status = ${filter.status}`
        ])
        const rows = yield* sql`SELECT * FROM compliance_reports WHERE ${where} ORDER BY created_at DESC, report_uuid DESC LIMIT ${limit} OFFSET ${offset}`
        const total = yield* sql<{ n: unknown }>`SELECT count(*) AS n FROM compliance_reports WHERE ${where}`
        return { rows: rows.map(toReport), total: count(total[0]?.n) }
      }),

    /** The action an art6 report explains, when it is the organization's. */
    actionExists: (orgUuid: string, actionUuid: string) =>
      Effect.map(sql`SELECT 1 FROM actions WHERE org_uuid = ${orgUuid} AND action_uuid = ${actionUuid}`, (rows) => rows.length > 0),

    receiptsOfAction: (orgUuid: string, actionUuid: string) =>
      Effect.map(sql<{ n: unknown }>`SELECT count(*) AS n FROM receipts WHERE org_uuid = ${orgUuid} AND action_uuid = ${actionUuid}`, (rows) => count(rows[0]?.n)),

    /** Receipts of the period after the cursor, in (created_at, receipt_uuid) order. */
    receiptPage: (scope: Scope, after: { created_at: string; receipt_uuid: string } | null, limit: number) =>
      Effect.map(
        sql`SELECT r.receipt_uuid, r.action_uuid, r.agent_id, r.receipt_status, r.payload_hash, r.signature, r.public_key_id,
              r.timestamp_token IS NOT NULL AS timestamp_token_present, r.created_at,
              a.action_type, a.status AS action_status, a.agent_version, a.model_id, a.model_version, a.action_details_hash, a.policy_uuid,
              a.policy_evaluations, a.approved_by, a.approval_via,
              (SELECT string_agg(c.cosigner_email, ', ' ORDER BY c.cosigned_at) FROM action_cosignatures c WHERE c.action_uuid = a.action_uuid) AS cosigners
            FROM receipts r LEFT JOIN actions a ON a.action_uuid = r.action_uuid AND a.org_uuid = r.org_uuid
            WHERE r.org_uuid = ${scope.orgUuid} AND r.created_at >= ${scope.from} AND r.created_at <= ${scope.to}
              AND ${agentClause("r.agent_id", scope.agents)}
              AND ${after === null ? sql`TRUE` : sql`(r.created_at, r.receipt_uuid) > (${after.created_at}::timestamptz, ${after.receipt_uuid})`}
            ORDER BY r.created_at, r.receipt_uuid LIMIT ${limit}`,
        (rows: ReadonlyArray<any>): Array<ReceiptLine> =>
          rows.map((row) => ({
            receipt_uuid: row.receipt_uuid,
            action_uuid: row.action_uuid,
            agent_id: text(row.agent_id),
            agent_version: text(row.agent_version),
            receipt_status: row.receipt_status,
            payload_hash: row.payload_hash,
            signature: row.signature,
            public_key_id: row.public_key_id,
            timestamp_token_present: row.timestamp_token_present === true,
            action_type: text(row.action_type),
            action_status: text(row.action_status),
            model_id: text(row.model_id),
            model_version: text(row.model_version),
            action_details_hash: text(row.action_details_hash),
            policy_uuid: text(row.policy_uuid),
            policy_evaluations: jsonValue<unknown>(row.policy_evaluations, null),
            approved_by: text(row.approved_by),
            approval_via: text(row.approval_via),
            cosigners: text(row.cosigners),
            created_at: isoRequired(row.created_at)
          }))
      ),

    /** Actions of the period after the cursor, in (created_at, action_uuid) order. */
    actionPage: (scope: Scope, after: { created_at: string; action_uuid: string } | null, limit: number) =>
      Effect.map(
        sql`SELECT action_uuid, agent_id, action_type, context ->> 'art9_category' AS art9_category, created_at FROM actions
            WHERE org_uuid = ${scope.orgUuid} AND created_at >= ${scope.from} AND created_at <= ${scope.to}
              AND ${agentClause("agent_id", scope.agents)}
              AND ${after === null ? sql`TRUE` : sql`(created_at, action_uuid) > (${after.created_at}::timestamptz, ${after.action_uuid})`}
            ORDER BY created_at, action_uuid LIMIT ${limit}`,
        (rows: ReadonlyArray<any>): Array<ActionLine> =>
          rows.map((row) => ({
            action_uuid: row.action_uuid,
            agent_id: text(row.agent_id),
            action_type: row.action_type,
            art9_category: text(row.art9_category),
            created_at: isoRequired(row.created_at)
          }))
      ),

    /** Counts of the period computed in the database. */
    periodStats: (scope: Scope) =>
      Effect.gen(function* () {
        const inPeriod = sql`org_uuid = ${scope.orgUuid} AND created_at >= ${scope.from} AND created_at <= ${scope.to} AND ${agentClause("agent_id", scope.agents)}`
        const statuses = yield* sql<{ status: string; n: unknown }>`SELECT status, count(*) AS n FROM actions WHERE ${inPeriod} GROUP BY status ORDER BY status`
        const distinct = yield* sql<{ agents: unknown; models: unknown }>`
          SELECT count(DISTINCT agent_id) AS agents, count(DISTINCT model_id) AS models FROM actions WHERE ${inPeriod}`
        const models = yield* sql<{ model_id: string; model_version: string | null; n: unknown }>`
          SELECT model_id, model_version, count(*) AS n FROM actions WHERE ${inPeriod} AND model_id IS NOT NULL
          GROUP BY model_id, model_version ORDER BY model_id, model_version NULLS FIRST LIMIT ${MAX_LISTED_VERSIONS}`
        const agents = yield* sql<{ agent_id: string; agent_version: string | null; n: unknown }>`
          SELECT agent_id, agent_version, count(*) AS n FROM actions WHERE ${inPeriod} AND agent_id IS NOT NULL
          GROUP BY agent_id, agent_version ORDER BY agent_id, agent_version NULLS FIRST LIMIT ${MAX_LISTED_VERSIONS}`
        const receipts = yield* sql<{ n: unknown; keys: ReadonlyArray<string> | null }>`
          SELECT count(*) AS n, array_agg(DISTINCT public_key_id ORDER BY public_key_id) AS keys FROM receipts WHERE org_uuid = ${scope.orgUuid} AND created_at >= ${scope.from} AND created_at <= ${scope.to}
            AND ${agentClause("agent_id", scope.agents)}`
        const breakdown: Record<string, number> = {}
        for (const row of statuses) breakdown[row.status] = count(row.n)
        return {
          total_actions: Object.values(breakdown).reduce((sum, n) => sum + n, 0),
          status_breakdown: breakdown,
          distinct_agents: count(distinct[0]?.agents),
          distinct_models: count(distinct[0]?.models),
          models: models.map((row) => ({ model_id: row.model_id, model_version: text(row.model_version), actions: count(row.n) })),
          agents: agents.map((row) => ({ agent_id: row.agent_id, agent_version: text(row.agent_version), actions: count(row.n) })),
          receipt_count: count(receipts[0]?.n),
          signing_keys: (receipts[0]?.keys ?? []).filter((key) => key !== null)
        } satisfies PeriodStats
      }),

    observations: (orgUuid: string, filter: { agent_id: string | null; category: string | null }, limit: number) =>
      Effect.map(
        sql`SELECT * FROM compliance_art9_observations
            WHERE org_uuid = ${orgUuid} AND ${filter.agent_id === null ? sql`TRUE` : sql`agent_id = ${filter.agent_id}`}
              AND ${filter.category === null ? sql`TRUE` : sql`category = ${filter.category}`}
            ORDER BY agent_id, category LIMIT ${limit}`,
        (rows: ReadonlyArray<any>): Array<ObservationRow> =>
          rows.map((row) => ({
            agent_id: row.agent_id,
            category: row.category,
            risk_level: row.risk_level,
            action_count: count(row.action_count),
            first_seen_at: isoRequired(row.first_seen_at),
            last_seen_at: isoRequired(row.last_seen_at),
            last_report_id: row.last_report_id
          }))
      )
  }
})

export type ComplianceStore = Effect.Success<typeof makeComplianceStore>
