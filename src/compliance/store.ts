/**
 * SQL for compliance reports: the report rows, their PDF bytes (a table of their own, read only by
 * download and verify), the Article 9 observations, and the reads a report makes of the
 * organization's actions and receipts in its period. Every read is scoped by organization; long
 * periods are read in keyset pages, never as one result set.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient } from "effect/sql"
import { ReportFrameworks, ReportStatuses } from "../../protocol/compliance.js"
import { Count, JsonObject, NullableCount, NullableJson, NullableTimestamp, Timestamp } from "../platform/columns.js"
import { jsonb } from "../platform/db/index.js"
import * as Rows from "../platform/db/rows.js"
import { sqlDefects } from "../platform/db/store.js"

const ReportRowSchema = Schema.Struct({
  report_uuid: Schema.String,
  org_uuid: Schema.String,
  framework: Schema.Literals(ReportFrameworks),
  status: Schema.Literals(ReportStatuses),
  period_start: NullableTimestamp,
  period_end: NullableTimestamp,
  action_uuid: Schema.NullOr(Schema.String),
  agent_filter: NullableJson(Schema.Array(Schema.String)),
  receipt_count: Count,
  pdf_size_bytes: NullableCount,
  content_hash: Schema.NullOr(Schema.String),
  signature: Schema.NullOr(Schema.String),
  signing_key_id: Schema.NullOr(Schema.String),
  timestamp_token: Schema.NullOr(Schema.String),
  report_metadata: Schema.NullOr(JsonObject),
  error_message: Schema.NullOr(Schema.String),
  generated_at: NullableTimestamp,
  retain_until: NullableTimestamp,
  created_at: Timestamp
})
export type ReportRow = typeof ReportRowSchema.Type

const REPORT_COLUMNS = `report_uuid, org_uuid, framework, status, period_start, period_end, action_uuid, agent_filter, receipt_count, pdf_size_bytes,
  content_hash, signature, signing_key_id, timestamp_token, report_metadata, error_message, generated_at, retain_until, created_at`

/** What a report reads: the organization, the period (inclusive) and the optional agent ids. */
export interface Scope {
  readonly orgUuid: string
  readonly from: string
  readonly to: string
  readonly agents: ReadonlyArray<string> | null
}

/** A receipt of the period with what Article 12 prints beside it. */
const ReceiptLineSchema = Schema.Struct({
  receipt_uuid: Schema.String,
  action_uuid: Schema.String,
  agent_id: Schema.NullOr(Schema.String),
  // The action's columns are NULL when the receipt's action is gone (LEFT JOIN).
  agent_version: Schema.NullOr(Schema.String),
  receipt_status: Schema.String,
  payload_hash: Schema.String,
  signature: Schema.String,
  public_key_id: Schema.String,
  timestamp_token_present: Schema.Boolean,
  action_type: Schema.NullOr(Schema.String),
  action_status: Schema.NullOr(Schema.String),
  model_id: Schema.NullOr(Schema.String),
  model_version: Schema.NullOr(Schema.String),
  action_details_hash: Schema.NullOr(Schema.String),
  policy_uuid: Schema.NullOr(Schema.String),
  /** As authorize recorded them (src/policies/recorded.ts); null for older actions. */
  policy_evaluations: NullableJson(Schema.Unknown),
  approved_by: Schema.NullOr(Schema.String),
  approval_via: Schema.NullOr(Schema.String),
  cosigners: Schema.NullOr(Schema.String),
  created_at: Timestamp
})
export type ReceiptLine = typeof ReceiptLineSchema.Type

/** An action of the period as Article 9 classifies it. */
const ActionLineSchema = Schema.Struct({
  action_uuid: Schema.String,
  agent_id: Schema.NullOr(Schema.String),
  action_type: Schema.String,
  art9_category: Schema.NullOr(Schema.String),
  created_at: Timestamp
})
export type ActionLine = typeof ActionLineSchema.Type

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

const ObservationRowSchema = Schema.Struct({
  agent_id: Schema.String,
  category: Schema.String,
  risk_level: Schema.String,
  action_count: Count,
  first_seen_at: Timestamp,
  last_seen_at: Timestamp,
  last_report_id: Schema.String
})
export type ObservationRow = typeof ObservationRowSchema.Type

const N = Schema.Struct({ n: Count })
const ScopeSchema = Schema.Struct({ orgUuid: Schema.String, from: Schema.String, to: Schema.String, agents: Schema.NullOr(Schema.Array(Schema.String)) })
const ModelCount = Schema.Struct({ model_id: Schema.String, model_version: Schema.NullOr(Schema.String), n: Count })
const AgentCount = Schema.Struct({ agent_id: Schema.String, agent_version: Schema.NullOr(Schema.String), n: Count })

/** The PDF is stored in rows of this size: the driver refuses a protocol message over 16 MiB. */
const PDF_CHUNK_BYTES = 4 * 1024 * 1024

/** Distinct models and agent versions listed in one report; more are counted, not listed. */
const MAX_LISTED_VERSIONS = 200

export const makeComplianceStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const reportColumns = sql.literal(REPORT_COLUMNS)

  const agentClause = (column: string, agents: ReadonlyArray<string> | null) =>
    agents === null ? sql`TRUE` : sql`${sql.literal(column)} IN (SELECT jsonb_array_elements_text(${jsonb(agents)}))`

  const insertReport = (row: ReportRow, pdf: Uint8Array | null, observations: ReadonlyArray<ObservationRow>) =>
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
    )

  const reportById = Rows.findOneOption({
    Request: Schema.Struct({ orgUuid: Schema.String, reportUuid: Schema.String }),
    Result: ReportRowSchema,
    execute: ({ orgUuid, reportUuid }) => sql`SELECT ${reportColumns} FROM compliance_reports WHERE org_uuid = ${orgUuid} AND report_uuid = ${reportUuid}`
  })

  const pdfChunks = Rows.findAll({
    Request: Schema.Struct({ orgUuid: Schema.String, reportUuid: Schema.String }),
    Result: Schema.Struct({ pdf: Schema.Uint8Array }),
    execute: ({ orgUuid, reportUuid }) => sql`SELECT pdf FROM compliance_report_pdfs WHERE org_uuid = ${orgUuid} AND report_uuid = ${reportUuid} ORDER BY chunk`
  })

  const ReportFilter = Schema.Struct({ orgUuid: Schema.String, framework: Schema.NullOr(Schema.String), status: Schema.NullOr(Schema.String) })
  const reportWhere = (filter: typeof ReportFilter.Type) =>
    sql.and([
      sql`org_uuid = ${filter.orgUuid}`,
      filter.framework === null ? sql`TRUE` : sql`framework = ${filter.framework}`,
      filter.status === null ? sql`TRUE` : sql`status = ${filter.status}`
    ])
  const reportPage = Rows.findAll({
    Request: Schema.Struct({ ...ReportFilter.fields, limit: Schema.Number, offset: Schema.Number }),
    Result: ReportRowSchema,
    execute: (request) =>
      sql`SELECT ${reportColumns} FROM compliance_reports WHERE ${reportWhere(request)}
          ORDER BY created_at DESC, report_uuid DESC LIMIT ${request.limit} OFFSET ${request.offset}`
  })
  const reportCount = Rows.findOne({
    Request: ReportFilter,
    Result: N,
    execute: (filter) => sql`SELECT count(*) AS n FROM compliance_reports WHERE ${reportWhere(filter)}`
  })

  const actionExists = Rows.findOne({
    Request: Schema.Struct({ orgUuid: Schema.String, actionUuid: Schema.String }),
    Result: Schema.Struct({ found: Schema.Boolean }),
    execute: ({ orgUuid, actionUuid }) => sql`SELECT EXISTS (SELECT 1 FROM actions WHERE org_uuid = ${orgUuid} AND action_uuid = ${actionUuid}) AS found`
  })
  const receiptsOfAction = Rows.findOne({
    Request: Schema.Struct({ orgUuid: Schema.String, actionUuid: Schema.String }),
    Result: N,
    execute: ({ orgUuid, actionUuid }) => sql`SELECT count(*) AS n FROM receipts WHERE org_uuid = ${orgUuid} AND action_uuid = ${actionUuid}`
  })

  const receiptPage = Rows.findAll({
    Request: Schema.Struct({
      scope: ScopeSchema,
      after: Schema.NullOr(Schema.Struct({ created_at: Schema.String, receipt_uuid: Schema.String })),
      limit: Schema.Number
    }),
    Result: ReceiptLineSchema,
    execute: ({ scope, after, limit }) =>
      sql`SELECT r.receipt_uuid, r.action_uuid, r.agent_id, r.receipt_status, r.payload_hash, r.signature, r.public_key_id,
            r.timestamp_token IS NOT NULL AS timestamp_token_present, r.created_at,
            a.action_type, a.status AS action_status, a.agent_version, a.model_id, a.model_version, a.action_details_hash, a.policy_uuid,
            a.policy_evaluations, a.approved_by, a.approval_via,
            (SELECT string_agg(c.cosigner_email, ', ' ORDER BY c.cosigned_at) FROM action_cosignatures c WHERE c.action_uuid = a.action_uuid) AS cosigners
          FROM receipts r LEFT JOIN actions a ON a.action_uuid = r.action_uuid AND a.org_uuid = r.org_uuid
          WHERE r.org_uuid = ${scope.orgUuid} AND r.created_at >= ${scope.from} AND r.created_at <= ${scope.to}
            AND ${agentClause("r.agent_id", scope.agents)}
            AND ${after === null ? sql`TRUE` : sql`(r.created_at, r.receipt_uuid) > (${after.created_at}::timestamptz, ${after.receipt_uuid})`}
          ORDER BY r.created_at, r.receipt_uuid LIMIT ${limit}`
  })

  const actionPage = Rows.findAll({
    Request: Schema.Struct({
      scope: ScopeSchema,
      after: Schema.NullOr(Schema.Struct({ created_at: Schema.String, action_uuid: Schema.String })),
      limit: Schema.Number
    }),
    Result: ActionLineSchema,
    execute: ({ scope, after, limit }) =>
      sql`SELECT action_uuid, agent_id, action_type, context ->> 'art9_category' AS art9_category, created_at FROM actions
          WHERE org_uuid = ${scope.orgUuid} AND created_at >= ${scope.from} AND created_at <= ${scope.to}
            AND ${agentClause("agent_id", scope.agents)}
            AND ${after === null ? sql`TRUE` : sql`(created_at, action_uuid) > (${after.created_at}::timestamptz, ${after.action_uuid})`}
          ORDER BY created_at, action_uuid LIMIT ${limit}`
  })

  const inPeriod = (scope: Scope) =>
    sql`org_uuid = ${scope.orgUuid} AND created_at >= ${scope.from} AND created_at <= ${scope.to} AND ${agentClause("agent_id", scope.agents)}`
  const statusCounts = Rows.findAll({
    Request: ScopeSchema,
    Result: Schema.Struct({ status: Schema.String, n: Count }),
    execute: (scope) => sql`SELECT status, count(*) AS n FROM actions WHERE ${inPeriod(scope)} GROUP BY status ORDER BY status`
  })
  const distinctCounts = Rows.findOne({
    Request: ScopeSchema,
    Result: Schema.Struct({ agents: Count, models: Count }),
    execute: (scope) => sql`SELECT count(DISTINCT agent_id) AS agents, count(DISTINCT model_id) AS models FROM actions WHERE ${inPeriod(scope)}`
  })
  const modelCounts = Rows.findAll({
    Request: ScopeSchema,
    Result: ModelCount,
    execute: (scope) =>
      sql`SELECT model_id, model_version, count(*) AS n FROM actions WHERE ${inPeriod(scope)} AND model_id IS NOT NULL
          GROUP BY model_id, model_version ORDER BY model_id, model_version NULLS FIRST LIMIT ${MAX_LISTED_VERSIONS}`
  })
  const agentCounts = Rows.findAll({
    Request: ScopeSchema,
    Result: AgentCount,
    execute: (scope) =>
      sql`SELECT agent_id, agent_version, count(*) AS n FROM actions WHERE ${inPeriod(scope)} AND agent_id IS NOT NULL
          GROUP BY agent_id, agent_version ORDER BY agent_id, agent_version NULLS FIRST LIMIT ${MAX_LISTED_VERSIONS}`
  })
  const receiptCounts = Rows.findOne({
    Request: ScopeSchema,
    // No receipt in the period: array_agg is NULL, so COALESCE answers an empty list.
    Result: Schema.Struct({ n: Count, keys: Schema.Array(Schema.String) }),
    execute: (scope) =>
      sql`SELECT count(*) AS n, COALESCE(array_agg(DISTINCT public_key_id ORDER BY public_key_id), '{}') AS keys FROM receipts
          WHERE org_uuid = ${scope.orgUuid} AND created_at >= ${scope.from} AND created_at <= ${scope.to} AND ${agentClause("agent_id", scope.agents)}`
  })

  const observationRows = Rows.findAll({
    Request: Schema.Struct({ orgUuid: Schema.String, agent_id: Schema.NullOr(Schema.String), category: Schema.NullOr(Schema.String), limit: Schema.Number }),
    Result: ObservationRowSchema,
    execute: ({ orgUuid, agent_id, category, limit }) =>
      sql`SELECT agent_id, category, risk_level, action_count, first_seen_at, last_seen_at, last_report_id FROM compliance_art9_observations
          WHERE org_uuid = ${orgUuid} AND ${agent_id === null ? sql`TRUE` : sql`agent_id = ${agent_id}`}
            AND ${category === null ? sql`TRUE` : sql`category = ${category}`}
          ORDER BY agent_id, category LIMIT ${limit}`
  })

  return sqlDefects({
    sql,
    insertReport,

    reportById: (orgUuid: string, reportUuid: string) => Effect.map(reportById({ orgUuid, reportUuid }), Option.getOrUndefined),

    reportPdf: (orgUuid: string, reportUuid: string) =>
      Effect.map(pdfChunks({ orgUuid, reportUuid }), (rows) => (rows.length === 0 ? undefined : new Uint8Array(Buffer.concat(rows.map((row) => row.pdf))))),

    listReports: (orgUuid: string, filter: { framework: string | null; status: string | null }, limit: number, offset: number) =>
      Effect.gen(function* () {
        const rows = yield* reportPage({ orgUuid, ...filter, limit, offset })
        // COUNT(*) always answers one row.
        const { n } = yield* Effect.orDie(reportCount({ orgUuid, ...filter }))
        return { rows, total: n }
      }),

    /** The action an art6 report explains, when it is the organization's. */
    actionExists: (orgUuid: string, actionUuid: string) => Effect.map(Effect.orDie(actionExists({ orgUuid, actionUuid })), (row) => row.found),

    receiptsOfAction: (orgUuid: string, actionUuid: string) => Effect.map(Effect.orDie(receiptsOfAction({ orgUuid, actionUuid })), (row) => row.n),

    /** Receipts of the period after the cursor, in (created_at, receipt_uuid) order. */
    receiptPage: (scope: Scope, after: { created_at: string; receipt_uuid: string } | null, limit: number) => receiptPage({ scope, after, limit }),

    /** Actions of the period after the cursor, in (created_at, action_uuid) order. */
    actionPage: (scope: Scope, after: { created_at: string; action_uuid: string } | null, limit: number) => actionPage({ scope, after, limit }),

    /** Counts of the period computed in the database. */
    periodStats: (scope: Scope) =>
      Effect.gen(function* () {
        const statuses = yield* statusCounts(scope)
        // Aggregates without GROUP BY always answer one row.
        const distinct = yield* Effect.orDie(distinctCounts(scope))
        const models = yield* modelCounts(scope)
        const agents = yield* agentCounts(scope)
        const receipts = yield* Effect.orDie(receiptCounts(scope))
        const breakdown: Record<string, number> = {}
        for (const row of statuses) breakdown[row.status] = row.n
        return {
          total_actions: Object.values(breakdown).reduce((sum, n) => sum + n, 0),
          status_breakdown: breakdown,
          distinct_agents: distinct.agents,
          distinct_models: distinct.models,
          models: models.map((row) => ({ model_id: row.model_id, model_version: row.model_version, actions: row.n })),
          agents: agents.map((row) => ({ agent_id: row.agent_id, agent_version: row.agent_version, actions: row.n })),
          receipt_count: receipts.n,
          signing_keys: receipts.keys
        } satisfies PeriodStats
      }),

    observations: (orgUuid: string, filter: { agent_id: string | null; category: string | null }, limit: number) =>
      observationRows({ orgUuid, ...filter, limit })
  })
})

export type ComplianceStore = Effect.Success<typeof makeComplianceStore>
