/** SQL of the DORA module: incidents (with the stored report), third parties and resilience tests, all scoped by organization. */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient, type SqlError } from "effect/sql"
import {
  ClassificationBases,
  Criteria,
  Criticalities,
  type Incident,
  IncidentSeverities,
  IncidentStatuses,
  type ResilienceTest,
  RtsAssessment,
  TestStatuses,
  type ThirdParty
} from "../../protocol/dora.js"
import { Count, Json, NullableCount, NullableJson, NullableTimestamp, Timestamp } from "../platform/columns.js"
import { jsonb } from "../platform/db/index.js"
import * as Rows from "../platform/db/rows.js"
import { sqlDefects } from "../platform/db/store.js"

/** An incident as stored; `warnings` are those of its latest classification or resolution. */
export type IncidentRecord = Omit<Incident, "has_report">

const Strings = Json(Schema.Array(Schema.String))

const IncidentRow = Schema.Struct({
  uuid: Schema.String,
  org_uuid: Schema.String,
  title: Schema.String,
  description: Schema.String,
  status: Schema.Literals(IncidentStatuses),
  severity: Schema.NullOr(Schema.Literals(IncidentSeverities)),
  category: Schema.NullOr(Schema.String),
  is_major: Schema.Boolean,
  classification_basis: Schema.NullOr(Schema.Literals(ClassificationBases)),
  criteria: NullableJson(Criteria),
  rts_assessment: NullableJson(RtsAssessment),
  became_major_at: NullableTimestamp,
  detected_at: Timestamp,
  classified_at: NullableTimestamp,
  resolved_at: NullableTimestamp,
  reported_at: NullableTimestamp,
  clients_affected_count: Count,
  affected_services: Strings,
  geographic_scope: Strings,
  root_cause_summary: Schema.NullOr(Schema.String),
  root_cause_classification: Schema.NullOr(Schema.String),
  third_party_uuid: Schema.NullOr(Schema.String),
  resolution_summary: Schema.NullOr(Schema.String),
  lessons_learned: Schema.NullOr(Schema.String),
  related_action_uuids: Strings,
  report_content_hash: Schema.NullOr(Schema.String),
  report_signature: Schema.NullOr(Schema.String),
  report_signing_key_id: Schema.NullOr(Schema.String),
  report_signed_at: NullableTimestamp,
  report_pdf_size_bytes: NullableCount,
  created_at: Timestamp,
  updated_at: Timestamp,
  warnings: Strings
})

/** The due time is computed by the service, never stored. */
const toIncident = (row: typeof IncidentRow.Type): IncidentRecord => ({ ...row, initial_notification_due_at: null })

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

const ThirdPartyRow = Schema.Struct({
  uuid: Schema.String,
  org_uuid: Schema.String,
  vendor_name: Schema.String,
  service_description: Schema.String,
  service_type: Schema.String,
  criticality: Schema.Literals(Criticalities),
  contract_start_date: Schema.NullOr(Schema.String),
  contract_end_date: Schema.NullOr(Schema.String),
  exit_strategy_summary: Schema.NullOr(Schema.String),
  subcontractors: Strings,
  data_categories: Strings,
  jurisdiction: Schema.NullOr(Schema.String),
  is_active: Schema.Boolean,
  created_at: Timestamp,
  updated_at: Timestamp
})

export type TestRecord = Omit<ResilienceTest, "warnings">
export interface NewTest extends TestRecord {
  /** conducted_at as an instant, to order by (a date is its day's start, UTC). */
  readonly conducted_at_instant: string
}

const TestRow = Schema.Struct({
  uuid: Schema.String,
  org_uuid: Schema.String,
  test_type: Schema.String,
  title: Schema.String,
  scope: Schema.String,
  conducted_at: Schema.String,
  conducted_by: Schema.String,
  status: Schema.Literals(TestStatuses),
  findings_summary: Schema.NullOr(Schema.String),
  remediation_plan: Schema.NullOr(Schema.String),
  remediation_due_at: Schema.NullOr(Schema.String),
  created_at: Timestamp
})

const TEST_COLUMNS = `uuid, org_uuid, test_type, title, scope, conducted_at, conducted_by, status, findings_summary, remediation_plan,
  remediation_due_at, created_at`

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

/** A related action's receipts, for the report (nulls when it has no receipt yet). */
const RelatedReceiptRow = Schema.Struct({
  action_uuid: Schema.String,
  action_type: Schema.String,
  receipt_uuid: Schema.NullOr(Schema.String),
  receipt_status: Schema.NullOr(Schema.String),
  payload_hash: Schema.NullOr(Schema.String),
  created_at: Timestamp
})
export type RelatedReceipt = typeof RelatedReceiptRow.Type

const OrgUuid = Schema.Struct({ orgUuid: Schema.String, uuid: Schema.String })

export const makeDoraStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const columns = sql.literal(INCIDENT_COLUMNS)
  const thirdPartyColumns = sql.literal(THIRD_PARTY_COLUMNS)
  const testColumns = sql.literal(TEST_COLUMNS)

  /** One page of a table's rows matching `where`, and how many match in all. */
  const page = <A, I>(
    Result: Schema.Codec<A, I>,
    table: string,
    select: ReturnType<typeof sql.literal>,
    where: ReturnType<typeof sql.and>,
    order: string,
    window: Window
  ) =>
    Effect.all([
      Rows.findAll({
        Request: Schema.Void,
        Result,
        execute: () => sql`SELECT ${select} FROM ${sql(table)} WHERE ${where} ORDER BY ${sql.literal(order)} LIMIT ${window.limit} OFFSET ${window.offset}`
      })(undefined),
      // COUNT(*) always answers one row.
      Effect.orDie(
        Rows.findOne({ Request: Schema.Void, Result: Schema.Struct({ n: Count }), execute: () => sql`SELECT count(*) AS n FROM ${sql(table)} WHERE ${where}` })(
          undefined
        )
      )
    ]).pipe(Effect.map(([items, { n }]) => ({ items, total: n })))

  /** The one row an INSERT or UPDATE … RETURNING answers (the caller knows it exists). */
  const returning = <A, I>(Result: Schema.Codec<A, I>, statement: Effect.Effect<ReadonlyArray<unknown>, SqlError.SqlError>) =>
    Rows.findOne({ Request: Schema.Void, Result, execute: () => statement })(undefined).pipe(
      // No row would be the database's fault; an undecodable one stays a SchemaError for sqlDefects to name.
      Effect.catchTag("NoSuchElementError", (error) => Effect.die(error))
    )

  const ownActions = Rows.findAll({
    Request: Schema.Struct({ orgUuid: Schema.String, uuids: Schema.Array(Schema.String) }),
    Result: Schema.Struct({ action_uuid: Schema.String }),
    execute: ({ orgUuid, uuids }) => sql`SELECT action_uuid FROM actions WHERE org_uuid = ${orgUuid} AND action_uuid IN ${sql.in(uuids)}`
  })

  const incidentById = Rows.findOneOption({
    Request: Schema.Struct({ ...OrgUuid.fields, lock: Schema.Boolean }),
    Result: IncidentRow,
    execute: ({ orgUuid, uuid, lock }) =>
      lock
        ? sql`SELECT ${columns} FROM dora_incidents WHERE org_uuid = ${orgUuid} AND uuid = ${uuid} FOR UPDATE`
        : sql`SELECT ${columns} FROM dora_incidents WHERE org_uuid = ${orgUuid} AND uuid = ${uuid}`
  })

  const reportPdf = Rows.findOneOption({
    Request: OrgUuid,
    Result: Schema.Struct({ report_pdf: Schema.NullOr(Schema.Uint8Array) }),
    execute: ({ orgUuid, uuid }) => sql`SELECT report_pdf FROM dora_incidents WHERE org_uuid = ${orgUuid} AND uuid = ${uuid}`
  })

  const relatedReceipts = Rows.findAll({
    Request: Schema.Struct({ orgUuid: Schema.String, uuids: Schema.Array(Schema.String) }),
    Result: RelatedReceiptRow,
    execute: ({ orgUuid, uuids }) =>
      sql`SELECT a.action_uuid, a.action_type, a.created_at, r.receipt_uuid, r.receipt_status, r.payload_hash
          FROM actions a
          LEFT JOIN LATERAL (SELECT receipt_uuid, receipt_status, payload_hash FROM receipts
                             WHERE receipts.action_uuid = a.action_uuid AND receipts.org_uuid = a.org_uuid
                             ORDER BY created_at DESC LIMIT 1) r ON true
          WHERE a.org_uuid = ${orgUuid} AND a.action_uuid IN ${sql.in(uuids)}
          ORDER BY a.created_at, a.action_uuid`
  })

  const thirdPartyExists = Rows.findOne({
    Request: OrgUuid,
    Result: Schema.Struct({ found: Schema.Boolean }),
    execute: ({ orgUuid, uuid }) => sql`SELECT EXISTS (SELECT 1 FROM dora_third_parties WHERE org_uuid = ${orgUuid} AND uuid = ${uuid}) AS found`
  })

  const thirdPartyById = Rows.findOneOption({
    Request: Schema.Struct({ ...OrgUuid.fields, lock: Schema.Boolean }),
    Result: ThirdPartyRow,
    execute: ({ orgUuid, uuid, lock }) =>
      lock
        ? sql`SELECT ${thirdPartyColumns} FROM dora_third_parties WHERE org_uuid = ${orgUuid} AND uuid = ${uuid} FOR UPDATE`
        : sql`SELECT ${thirdPartyColumns} FROM dora_third_parties WHERE org_uuid = ${orgUuid} AND uuid = ${uuid}`
  })

  const testById = Rows.findOneOption({
    Request: OrgUuid,
    Result: TestRow,
    execute: ({ orgUuid, uuid }) => sql`SELECT ${testColumns} FROM dora_resilience_tests WHERE org_uuid = ${orgUuid} AND uuid = ${uuid}`
  })

  return sqlDefects({
    sql,

    /** Which of these ids are actions of the organization. */
    ownActions: (orgUuid: string, uuids: ReadonlyArray<string>) =>
      uuids.length === 0 ? Effect.succeed(new Set<string>()) : Effect.map(ownActions({ orgUuid, uuids }), (rows) => new Set(rows.map((row) => row.action_uuid))),

    insertIncident: (i: IncidentRecord) =>
      Effect.map(
        returning(
          IncidentRow,
          sql`INSERT INTO dora_incidents (uuid, org_uuid, title, description, status, detected_at, clients_affected_count, affected_services,
                geographic_scope, related_action_uuids, created_at, updated_at)
              VALUES (${i.uuid}, ${i.org_uuid}, ${i.title}, ${i.description}, ${i.status}, ${i.detected_at}, ${i.clients_affected_count},
                ${jsonb(i.affected_services)}, ${jsonb(i.geographic_scope)}, ${jsonb(i.related_action_uuids)}, ${i.created_at}, ${i.updated_at})
              RETURNING ${columns}`
        ),
        toIncident
      ),

    /** The organization's incident; `lock` takes its row lock (inside a transaction). */
    incident: (orgUuid: string, uuid: string, lock = false) =>
      Effect.map(incidentById({ orgUuid, uuid, lock }), (row) => (Option.isSome(row) ? toIncident(row.value) : undefined)),

    listIncidents: (orgUuid: string, filter: IncidentFilter, window: Window) =>
      Effect.map(
        page(
          IncidentRow,
          "dora_incidents",
          columns,
          sql.and([
            sql`org_uuid = ${orgUuid}`,
            ...(filter.status === undefined ? [] : [sql`status = ${filter.status}`]),
            ...(filter.severity === undefined ? [] : [sql`severity = ${filter.severity}`]),
            ...(filter.isMajor === undefined ? [] : [sql`is_major = ${filter.isMajor}`])
          ]),
          "detected_at DESC, seq DESC",
          window
        ),
        ({ items, total }) => ({ items: items.map(toIncident), total })
      ),

    /** Writes the classification and resolution fields the service computed. */
    saveIncident: (i: IncidentRecord) =>
      Effect.map(
        returning(
          IncidentRow,
          sql`UPDATE dora_incidents SET status = ${i.status}, severity = ${i.severity}, category = ${i.category}, is_major = ${i.is_major},
                classification_basis = ${i.classification_basis}, criteria = ${i.criteria === null ? null : jsonb(i.criteria)},
                rts_assessment = ${i.rts_assessment === null ? null : jsonb(i.rts_assessment)}, became_major_at = ${i.became_major_at},
                classified_at = ${i.classified_at}, resolved_at = ${i.resolved_at}, clients_affected_count = ${i.clients_affected_count},
                root_cause_summary = ${i.root_cause_summary}, root_cause_classification = ${i.root_cause_classification},
                third_party_uuid = ${i.third_party_uuid}, resolution_summary = ${i.resolution_summary}, lessons_learned = ${i.lessons_learned},
                warnings = ${jsonb(i.warnings)}, updated_at = now()
              WHERE org_uuid = ${i.org_uuid} AND uuid = ${i.uuid}
              RETURNING ${columns}`
        ),
        toIncident
      ),

    reportPdf: (orgUuid: string, uuid: string) =>
      Effect.map(reportPdf({ orgUuid, uuid }), (row) =>
        Option.isNone(row) || row.value.report_pdf === null ? undefined : new Uint8Array(row.value.report_pdf)
      ),

    saveReport: (orgUuid: string, uuid: string, r: ReportFields) =>
      sql`UPDATE dora_incidents SET report_pdf = ${r.pdf}, report_content_hash = ${r.content_hash}, report_signature = ${r.signature},
            report_signing_key_id = ${r.signing_key_id}, report_signed_at = ${r.signed_at}, report_pdf_size_bytes = ${r.size},
            status = ${r.status}, reported_at = CASE WHEN ${r.status} = 'reported' THEN ${r.signed_at}::timestamptz ELSE reported_at END,
            updated_at = now()
          WHERE org_uuid = ${orgUuid} AND uuid = ${uuid}`.pipe(Effect.asVoid),

    /** The related actions with their latest receipt (none yet: nulls), oldest first. */
    relatedReceipts: (orgUuid: string, uuids: ReadonlyArray<string>) =>
      uuids.length === 0 ? Effect.succeed<ReadonlyArray<RelatedReceipt>>([]) : relatedReceipts({ orgUuid, uuids }),

    thirdPartyExists: (orgUuid: string, uuid: string) => Effect.map(Effect.orDie(thirdPartyExists({ orgUuid, uuid })), (row) => row.found),

    insertThirdParty: (t: ThirdPartyRecord) =>
      returning(
        ThirdPartyRow,
        sql`INSERT INTO dora_third_parties (uuid, org_uuid, vendor_name, service_description, service_type, criticality, contract_start_date,
              contract_end_date, exit_strategy_summary, subcontractors, data_categories, jurisdiction, is_active, created_at, updated_at)
            VALUES (${t.uuid}, ${t.org_uuid}, ${t.vendor_name}, ${t.service_description}, ${t.service_type}, ${t.criticality},
              ${t.contract_start_date}::date, ${t.contract_end_date}::date, ${t.exit_strategy_summary}, ${jsonb(t.subcontractors)},
              ${jsonb(t.data_categories)}, ${t.jurisdiction}, ${t.is_active}, ${t.created_at}, ${t.updated_at})
            RETURNING ${thirdPartyColumns}`
      ),

    thirdParty: (orgUuid: string, uuid: string, lock = false) => Effect.map(thirdPartyById({ orgUuid, uuid, lock }), Option.getOrUndefined),

    listThirdParties: (orgUuid: string, filter: { criticality?: string | undefined; isActive?: boolean | undefined }, window: Window) =>
      page(
        ThirdPartyRow,
        "dora_third_parties",
        thirdPartyColumns,
        sql.and([
          sql`org_uuid = ${orgUuid}`,
          ...(filter.criticality === undefined ? [] : [sql`criticality = ${filter.criticality}`]),
          ...(filter.isActive === undefined ? [] : [sql`is_active = ${filter.isActive}`])
        ]),
        "created_at DESC, seq DESC",
        window
      ),

    saveThirdParty: (t: ThirdPartyRecord) =>
      returning(
        ThirdPartyRow,
        sql`UPDATE dora_third_parties SET vendor_name = ${t.vendor_name}, service_description = ${t.service_description},
              service_type = ${t.service_type}, criticality = ${t.criticality}, contract_start_date = ${t.contract_start_date}::date,
              contract_end_date = ${t.contract_end_date}::date, exit_strategy_summary = ${t.exit_strategy_summary},
              subcontractors = ${jsonb(t.subcontractors)}, data_categories = ${jsonb(t.data_categories)}, jurisdiction = ${t.jurisdiction},
              is_active = ${t.is_active}, updated_at = now()
            WHERE org_uuid = ${t.org_uuid} AND uuid = ${t.uuid}
            RETURNING ${thirdPartyColumns}`
      ),

    insertTest: (t: NewTest) =>
      returning(
        TestRow,
        sql`INSERT INTO dora_resilience_tests (uuid, org_uuid, test_type, title, scope, conducted_at, conducted_at_instant, conducted_by, status,
              findings_summary, remediation_plan, remediation_due_at, created_at)
            VALUES (${t.uuid}, ${t.org_uuid}, ${t.test_type}, ${t.title}, ${t.scope}, ${t.conducted_at}, ${t.conducted_at_instant}, ${t.conducted_by},
              ${t.status}, ${t.findings_summary}, ${t.remediation_plan}, ${t.remediation_due_at}, ${t.created_at})
            RETURNING ${testColumns}`
      ),

    test: (orgUuid: string, uuid: string) => Effect.map(testById({ orgUuid, uuid }), Option.getOrUndefined),

    listTests: (orgUuid: string, testType: string | undefined, window: Window) =>
      page(
        TestRow,
        "dora_resilience_tests",
        testColumns,
        sql.and([sql`org_uuid = ${orgUuid}`, ...(testType === undefined ? [] : [sql`test_type = ${testType}`])]),
        "conducted_at_instant DESC, seq DESC",
        window
      )
  })
})

export type DoraStore = Effect.Success<typeof makeDoraStore>
