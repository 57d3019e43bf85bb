/** SQL of the DORA module: incidents (with the stored report), third parties and resilience tests, all scoped by organization. */
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql"
import type { Criteria, Incident, ResilienceTest, RtsAssessment, ThirdParty } from "../../protocol/dora.js"
import { jsonb } from "../platform/db/index.js"
import { count, iso, isoRequired, jsonValue } from "../platform/sql.js"

/** An incident as stored; `warnings` are those of its latest classification or resolution. */
export type IncidentRecord = Omit<Incident, "has_report">

const text = (value: unknown): string | null => (value === null || value === undefined ? null : String(value))

const toIncident = (row: any): IncidentRecord => ({
  uuid: row.uuid,
  org_uuid: row.org_uuid,
  title: row.title,
  description: row.description,
  status: row.status,
  severity: row.severity ?? null,
  category: text(row.category),
  is_major: row.is_major === true,
  classification_basis: row.classification_basis ?? null,
  criteria: jsonValue<Criteria | null>(row.criteria, null),
  rts_assessment: jsonValue<RtsAssessment | null>(row.rts_assessment, null),
  became_major_at: iso(row.became_major_at),
  initial_notification_due_at: null,
  detected_at: isoRequired(row.detected_at),
  classified_at: iso(row.classified_at),
  resolved_at: iso(row.resolved_at),
  reported_at: iso(row.reported_at),
  clients_affected_count: count(row.clients_affected_count),
  affected_services: jsonValue<Array<string>>(row.affected_services, []),
  geographic_scope: jsonValue<Array<string>>(row.geographic_scope, []),
  root_cause_summary: text(row.root_cause_summary),
  root_cause_classification: text(row.root_cause_classification),
  third_party_uuid: text(row.third_party_uuid),
  resolution_summary: text(row.resolution_summary),
  lessons_learned: text(row.lessons_learned),
  related_action_uuids: jsonValue<Array<string>>(row.related_action_uuids, []),
  report_content_hash: text(row.report_content_hash),
  report_signature: text(row.report_signature),
  report_signing_key_id: text(row.report_signing_key_id),
  report_signed_at: iso(row.report_signed_at),
  report_pdf_size_bytes: row.report_pdf_size_bytes === null || row.report_pdf_size_bytes === undefined ? null : Number(row.report_pdf_size_bytes),
  created_at: isoRequired(row.created_at),
  updated_at: isoRequired(row.updated_at),
  warnings: jsonValue<Array<string>>(row.warnings, [])
})

/** Every column but the PDF bytes, which only the report reads. */
const INCIDENT_COLUMNS = `uuid, org_uuid, title, description, status, severity, category, is_major, classification_basis, criteria,
  rts_assessment, became_major_at, detected_at, classified_at, resolved_at, reported_at, clients_affected_count, affected_services,
  geographic_scope, root_cause_summary, root_cause_classification, third_party_uuid, resolution_summary, lessons_learned,
  related_action_uuids, report_content_hash, report_signature, report_signing_key_id, report_signed_at, report_pdf_size_bytes,
  warnings, created_at, updated_at`

const THIRD_PARTY_COLUMNS = `uuid, org_uuid, vendor_name, service_description, service_type, criticality,
  to_char(contract_start_date, 'YYYY-MM-DD') AS contract_start_date, to_char(contract_end_date, 'YYYY-MM-DD') AS contract_end_date,
  exit_strategy_summary, subcontractors, data_categories, jurisdiction, is_active, created_at, updated_at`

export type ThirdPartyRecord = Omit<ThirdParty, "warnings">

const toThirdParty = (row: any): ThirdPartyRecord => ({
  uuid: row.uuid,
  org_uuid: row.org_uuid,
  vendor_name: row.vendor_name,
  service_description: row.service_description,
  service_type: row.service_type,
  criticality: row.criticality,
  contract_start_date: text(row.contract_start_date),
  contract_end_date: text(row.contract_end_date),
  exit_strategy_summary: text(row.exit_strategy_summary),
  subcontractors: jsonValue<Array<string>>(row.subcontractors, []),
  data_categories: jsonValue<Array<string>>(row.data_categories, []),
  jurisdiction: text(row.jurisdiction),
  is_active: row.is_active === true,
  created_at: isoRequired(row.created_at),
  updated_at: isoRequired(row.updated_at)
})

export type TestRecord = Omit<ResilienceTest, "warnings">
export interface NewTest extends TestRecord {
  /** conducted_at as an instant, to order by (a date is its day's start, UTC). */
  readonly conducted_at_instant: string
}

const toTest = (row: any): TestRecord => ({
  uuid: row.uuid,
  org_uuid: row.org_uuid,
  test_type: row.test_type,
  title: row.title,
  scope: row.scope,
  conducted_at: row.conducted_at,
  conducted_by: row.conducted_by,
  status: row.status,
  findings_summary: text(row.findings_summary),
  remediation_plan: text(row.remediation_plan),
  remediation_due_at: text(row.remediation_due_at),
  created_at: isoRequired(row.created_at)
})

export interface IncidentFilter {
  readonly status?: string | undefined
  readonly severity?: string | undefined
  readonly isMajor?: boolean | undefined
}

export interface Window {
  readonly limit: number
  readonly offset: number
}

export interface ReportFields {
  readonly pdf: Uint8Array
  readonly content_hash: string
  readonly signature: string
  readonly signing_key_id: string
  readonly signed_at: string
  readonly size: number
  readonly status: string
}

/** A related action's receipts, for the report. */
export interface RelatedReceipt {
  readonly action_uuid: string
  readonly action_type: string
  readonly receipt_uuid: string | null
  readonly receipt_status: string | null
  readonly payload_hash: string | null
  readonly created_at: string
}

export const makeDoraStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const columns = sql.unsafe(INCIDENT_COLUMNS)
  const thirdPartyColumns = sql.unsafe(THIRD_PARTY_COLUMNS)

  /** One page of a table's rows matching `where`, and how many match in all. */
  const page = <T>(table: string, select: ReturnType<typeof sql.unsafe>, where: ReturnType<typeof sql.and>, order: string, window: Window, map: (row: any) => T) =>
    Effect.map(
      Effect.all([
        sql`SELECT ${select} FROM ${sql(table)} WHERE ${where} ORDER BY ${sql.unsafe(order)} LIMIT ${window.limit} OFFSET ${window.offset}`,
        sql`SELECT count(*) AS n FROM ${sql(table)} WHERE ${where}`
      ]),
      ([rows, total]) => ({ items: rows.map(map), total: count((total[0] as any)?.n) })
    )

  return {
    sql,

    /** Which of these ids are actions of the organization. */
    ownActions: (orgUuid: string, uuids: ReadonlyArray<string>) =>
      uuids.length === 0
        ? Effect.succeed(new Set<string>())
        : Effect.map(
            sql`SELECT action_uuid FROM actions WHERE org_uuid = ${orgUuid} AND action_uuid IN ${sql.in(uuids)}`,
            (rows) => new Set(rows.map((row: any) => String(row.action_uuid)))
          ),

    insertIncident: (i: IncidentRecord) =>
      Effect.map(
        sql`INSERT INTO dora_incidents (uuid, org_uuid, title, description, status, detected_at, clients_affected_count, affected_services,
              geographic_scope, related_action_uuids, created_at, updated_at)
            VALUES (${i.uuid}, ${i.org_uuid}, ${i.title}, ${i.description}, ${i.status}, ${i.detected_at}, ${i.clients_affected_count},
              ${jsonb(i.affected_services)}, ${jsonb(i.geographic_scope)}, ${jsonb(i.related_action_uuids)}, ${i.created_at}, ${i.updated_at})
            RETURNING ${columns}`,
        (rows) => toIncident(rows[0])
      ),

    /** The organization's incident; `lock` takes its row lock (inside a transaction). */
    incident: (orgUuid: string, uuid: string, lock = false) =>
      Effect.map(
        lock
          ? sql`SELECT ${columns} FROM dora_incidents WHERE org_uuid = ${orgUuid} AND uuid = ${uuid} FOR UPDATE`
          : sql`SELECT ${columns} FROM dora_incidents WHERE org_uuid = ${orgUuid} AND uuid = ${uuid}`,
        (rows) => (rows.length === 0 ? undefined : toIncident(rows[0]))
      ),

    listIncidents: (orgUuid: string, filter: IncidentFilter, window: Window) =>
      page(
        "dora_incidents",
        columns,
        sql.and([
          sql`org_uuid = ${orgUuid}`,
          ...(filter.status === undefined ? [] : [sql`status = ${filter.status}`]),
          ...(filter.severity === undefined ? [] : [sql`severity = ${filter.severity}`]),
          ...(filter.isMajor === undefined ? [] : [sql`is_major = ${filter.isMajor}`])
        ]),
        "detected_at DESC, seq DESC",
        window,
        toIncident
      ),

    /** Writes the classification and resolution fields the service computed. */
    saveIncident: (i: IncidentRecord) =>
      Effect.map(
        sql`UPDATE dora_incidents SET status = ${i.status}, severity = ${i.severity}, category = ${i.category}, is_major = ${i.is_major},
              classification_basis = ${i.classification_basis}, criteria = ${i.criteria === null ? null : jsonb(i.criteria)},
              rts_assessment = ${i.rts_assessment === null ? null : jsonb(i.rts_assessment)}, became_major_at = ${i.became_major_at},
              classified_at = ${i.classified_at}, resolved_at = ${i.resolved_at}, clients_affected_count = ${i.clients_affected_count},
              root_cause_summary = ${i.root_cause_summary}, root_cause_classification = ${i.root_cause_classification},
              third_party_uuid = ${i.third_party_uuid}, resolution_summary = ${i.resolution_summary}, lessons_learned = ${i.lessons_learned},
              warnings = ${jsonb(i.warnings)}, updated_at = now()
            WHERE org_uuid = ${i.org_uuid} AND uuid = ${i.uuid}
            RETURNING ${columns}`,
        (rows) => toIncident(rows[0])
      ),

    reportPdf: (orgUuid: string, uuid: string) =>
      Effect.map(sql`SELECT report_pdf FROM dora_incidents WHERE org_uuid = ${orgUuid} AND uuid = ${uuid}`, (rows) => {
        const bytes = (rows[0] as any)?.report_pdf
        return bytes === null || bytes === undefined ? undefined : new Uint8Array(bytes)
      }),

    saveReport: (orgUuid: string, uuid: string, r: ReportFields) =>
      sql`UPDATE dora_incidents SET report_pdf = ${r.pdf}, report_content_hash = ${r.content_hash}, report_signature = ${r.signature},
            report_signing_key_id = ${r.signing_key_id}, report_signed_at = ${r.signed_at}, report_pdf_size_bytes = ${r.size},
            status = ${r.status}, reported_at = CASE WHEN ${r.status} = 'reported' THEN ${r.signed_at}::timestamptz ELSE reported_at END,
            updated_at = now()
          WHERE org_uuid = ${orgUuid} AND uuid = ${uuid}`,

    /** The related actions with their latest receipt (none yet: nulls), oldest first. */
    relatedReceipts: (orgUuid: string, uuids: ReadonlyArray<string>) =>
      uuids.length === 0
        ? Effect.succeed([] as ReadonlyArray<RelatedReceipt>)
        : Effect.map(
            sql`SELECT a.action_uuid, a.action_type, a.created_at, r.receipt_uuid, r.receipt_status, r.payload_hash
                FROM actions a
                LEFT JOIN LATERAL (SELECT receipt_uuid, receipt_status, payload_hash FROM receipts
                                   WHERE receipts.action_uuid = a.action_uuid AND receipts.org_uuid = a.org_uuid
                                   ORDER BY created_at DESC LIMIT 1) r ON true
                WHERE a.org_uuid = ${orgUuid} AND a.action_uuid IN ${sql.in(uuids)}
                ORDER BY a.created_at, a.action_uuid`,
            (rows) =>
              rows.map(
                (row: any): RelatedReceipt => ({
                  action_uuid: row.action_uuid,
                  action_type: row.action_type,
                  receipt_uuid: text(row.receipt_uuid),
                  receipt_status: text(row.receipt_status),
                  payload_hash: text(row.payload_hash),
                  created_at: isoRequired(row.created_at)
                })
              )
          ),

    thirdPartyExists: (orgUuid: string, uuid: string) =>
      Effect.map(sql`SELECT 1 FROM dora_third_parties WHERE org_uuid = ${orgUuid} AND uuid = ${uuid}`, (rows) => rows.length > 0),

    insertThirdParty: (t: ThirdPartyRecord) =>
      Effect.map(
        sql`INSERT INTO dora_third_parties (uuid, org_uuid, vendor_name, service_description, service_type, criticality, contract_start_date,
              contract_end_date, exit_strategy_summary, subcontractors, data_categories, jurisdiction, is_active, created_at, updated_at)
            VALUES (${t.uuid}, ${t.org_uuid}, ${t.vendor_name}, ${t.service_description}, ${t.service_type}, ${t.criticality},
              ${t.contract_start_date}::date, ${t.contract_end_date}::date, ${t.exit_strategy_summary}, ${jsonb(t.subcontractors)},
              ${jsonb(t.data_categories)}, ${t.jurisdiction}, ${t.is_active}, ${t.created_at}, ${t.updated_at})
            RETURNING ${thirdPartyColumns}`,
        (rows) => toThirdParty(rows[0])
      ),

    thirdParty: (orgUuid: string, uuid: string, lock = false) =>
      Effect.map(
        lock
          ? sql`SELECT ${thirdPartyColumns} FROM dora_third_parties WHERE org_uuid = ${orgUuid} AND uuid = ${uuid} FOR UPDATE`
          : sql`SELECT ${thirdPartyColumns} FROM dora_third_parties WHERE org_uuid = ${orgUuid} AND uuid = ${uuid}`,
        (rows) => (rows.length === 0 ? undefined : toThirdParty(rows[0]))
      ),

    listThirdParties: (orgUuid: string, filter: { criticality?: string | undefined; isActive?: boolean | undefined }, window: Window) =>
      page(
        "dora_third_parties",
        thirdPartyColumns,
        sql.and([
          sql`org_uuid = ${orgUuid}`,
          ...(filter.criticality === undefined ? [] : [sql`criticality = ${filter.criticality}`]),
          ...(filter.isActive === undefined ? [] : [sql`is_active = ${filter.isActive}`])
        ]),
        "created_at DESC, seq DESC",
        window,
        toThirdParty
      ),

    saveThirdParty: (t: ThirdPartyRecord) =>
      Effect.map(
        sql`UPDATE dora_third_parties SET vendor_name = ${t.vendor_name}, service_description = ${t.service_description},
              service_type = ${t.service_type}, criticality = ${t.criticality}, contract_start_date = ${t.contract_start_date}::date,
              contract_end_date = ${t.contract_end_date}::date, exit_strategy_summary = ${t.exit_strategy_summary},
              subcontractors = ${jsonb(t.subcontractors)}, data_categories = ${jsonb(t.data_categories)}, jurisdiction = ${t.jurisdiction},
              is_active = ${t.is_active}, updated_at = now()
            WHERE org_uuid = ${t.org_uuid} AND uuid = ${t.uuid}
            RETURNING ${thirdPartyColumns}`,
        (rows) => toThirdParty(rows[0])
      ),

    insertTest: (t: NewTest) =>
      Effect.map(
        sql`INSERT INTO dora_resilience_tests (uuid, org_uuid, test_type, title, scope, conducted_at, conducted_at_instant, conducted_by, status,
              findings_summary, remediation_plan, remediation_due_at, created_at)
            VALUES (${t.uuid}, ${t.org_uuid}, ${t.test_type}, ${t.title}, ${t.scope}, ${t.conducted_at}, ${t.conducted_at_instant}, ${t.conducted_by},
              ${t.status}, ${t.findings_summary}, ${t.remediation_plan}, ${t.remediation_due_at}, ${t.created_at})
            RETURNING *`,
        (rows) => toTest(rows[0])
      ),

    test: (orgUuid: string, uuid: string) =>
      Effect.map(sql`SELECT * FROM dora_resilience_tests WHERE org_uuid = ${orgUuid} AND uuid = ${uuid}`, (rows) =>
        rows.length === 0 ? undefined : toTest(rows[0])
      ),

    listTests: (orgUuid: string, testType: string | undefined, window: Window) =>
      page(
        "dora_resilience_tests",
        sql.unsafe("*"),
        sql.and([sql`org_uuid = ${orgUuid}`, ...(testType === undefined ? [] : [sql`test_type = ${testType}`])]),
        "conducted_at_instant DESC, seq DESC",
        window,
        toTest
      )
  }
})

export type DoraStore = Effect.Success<typeof makeDoraStore>
