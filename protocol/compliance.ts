/**
 * Compliance reports (CONTRACT "Compliance reports"): signed, retained PDF reports for the EU AI
 * Act's Articles 12, 9 and 6 (the explanation of one action) and Annex IV, generated inside the
 * request; the Article 9 categories and the risk observations art9 reports leave behind.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { Authenticated } from "./auth.js"
import { NullableTimestamp, OffsetList, OffsetPageQuery, Timestamp } from "./common.js"
import { Forbidden, InvalidInput, refusal } from "./errors.js"

export const ReportFrameworks = ["eu_ai_act_art12", "eu_ai_act_art9", "eu_ai_act_art6", "eu_ai_act_annex_iv"] as const
export type ReportFramework = (typeof ReportFrameworks)[number]
export const ReportStatuses = ["pending", "generating", "ready", "failed"] as const
export type ReportStatus = (typeof ReportStatuses)[number]

/** Agent ids one report may be narrowed to. */
export const MAX_AGENT_FILTER = 100
/** Characters of one Annex IV documentation section. */
export const MAX_SECTION_CHARS = 20_000
export const ANNEX_IV_SECTIONS = ["section_1", "section_2", "section_3", "section_4", "section_5", "section_6", "section_7", "section_8", "section_9"] as const

const Text = (max: number) => Schema.String.check(Schema.isMaxLength(max))
const Section = Schema.optionalKey(Schema.NullOr(Text(MAX_SECTION_CHARS)))

export const AnnexIvDocumentation = Schema.Struct({
  section_1: Section,
  section_2: Section,
  section_3: Section,
  section_4: Section,
  section_5: Section,
  section_6: Section,
  section_7: Section,
  section_8: Section,
  section_9: Section
})
export type AnnexIvDocumentation = typeof AnnexIvDocumentation.Type

export const CreateReportRequest = Schema.Struct({
  framework: Schema.Literals(ReportFrameworks),
  period_start: Schema.optionalKey(Schema.NullOr(Text(64))).annotate({ description: "ISO 8601; without an offset it is read as UTC" }),
  period_end: Schema.optionalKey(Schema.NullOr(Text(64))),
  action_uuid: Schema.optionalKey(Schema.NullOr(Text(100))),
  agent_filter: Schema.optionalKey(
    Schema.NullOr(Schema.Array(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200))).check(Schema.isMinLength(1), Schema.isMaxLength(MAX_AGENT_FILTER)))
  ),
  documentation: Schema.optionalKey(Schema.NullOr(AnnexIvDocumentation))
})
export type CreateReportRequest = typeof CreateReportRequest.Type

export const ComplianceReport = Schema.Struct({
  id: Schema.String,
  report_uuid: Schema.String,
  framework: Schema.Literals(ReportFrameworks),
  status: Schema.Literals(ReportStatuses),
  org_uuid: Schema.String,
  period_start: NullableTimestamp,
  period_end: NullableTimestamp,
  action_uuid: Schema.NullOr(Schema.String),
  agent_filter: Schema.NullOr(Schema.Array(Schema.String)),
  receipt_count: Schema.Int,
  pdf_size_bytes: Schema.NullOr(Schema.Int),
  content_hash: Schema.NullOr(Schema.String),
  signature: Schema.NullOr(Schema.String),
  signing_key_id: Schema.NullOr(Schema.String),
  timestamp_token: Schema.NullOr(Schema.String),
  timestamp_token_present: Schema.Boolean,
  report_metadata: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)),
  error_message: Schema.NullOr(Schema.String),
  generated_at: NullableTimestamp,
  retain_until: NullableTimestamp,
  created_at: Timestamp
}).annotate({
  description:
    "`signature` is Ed25519 (JWKS key `signing_key_id`) over the JCS of the descriptor {report_uuid, org_uuid, framework, period_start, period_end, action_uuid, agent_filter, receipt_count, pdf_size_bytes, content_hash, report_metadata, generated_at}; `timestamp_token` is RFC 3161 over sha256 of the same bytes; `content_hash` is sha256 of the PDF bytes"
})
export type ComplianceReport = typeof ComplianceReport.Type

const Check = Schema.Union([Schema.Literal(true), Schema.String])

export const ReportVerification = Schema.Struct({
  report_uuid: Schema.String,
  valid: Schema.Boolean,
  checks: Schema.Struct({
    key_known: Check,
    content_hash_matches: Check,
    signature_valid: Check,
    timestamp_token_matches: Schema.optionalKey(Check)
  }),
  descriptor: Schema.Record(Schema.String, Schema.Unknown)
})
export type ReportVerification = typeof ReportVerification.Type

export const Art9CategoryInfo = Schema.Struct({
  key: Schema.String,
  annex_iii_point: Schema.NullOr(Schema.Int),
  title: Schema.String,
  risk_level: Schema.Literals(["high", "low"])
})

export const Art9Observation = Schema.Struct({
  agent_id: Schema.String,
  category: Schema.String,
  risk_level: Schema.String,
  action_count: Schema.Int,
  first_seen_at: Timestamp,
  last_seen_at: Timestamp,
  last_report_id: Schema.String
})
export type Art9Observation = typeof Art9Observation.Type

export const Art9Categories = Schema.Struct({ categories: Schema.Array(Art9CategoryInfo), observations: Schema.Array(Art9Observation) })
export type Art9Categories = typeof Art9Categories.Type

export class ReportNotFound extends Schema.Error<ReportNotFound>("ReportNotFound")(refusal("NOT_FOUND", "Compliance report not found"), {
  httpApiStatus: 404,
  description: "No such report in the caller's organization"
}) {
  readonly _tag = "ReportNotFound"
  static of(reportUuid: string) {
    return new ReportNotFound({ details: { report_uuid: reportUuid } })
  }
}

/** The art6 action is unknown or another organization's. */
export class ReportActionNotFound extends Schema.Error<ReportActionNotFound>("ReportActionNotFound")(refusal("NOT_FOUND"), {
  httpApiStatus: 404,
  description: "The action an art6 report explains is not the caller's organization's"
}) {
  readonly _tag = "ReportActionNotFound"
  static of(actionUuid: string) {
    return new ReportActionNotFound({ message: `Action ${actionUuid} not found`, details: { action_uuid: actionUuid } })
  }
}

export class ReportNotReady extends Schema.Error<ReportNotReady>("ReportNotReady")(refusal("REPORT_NOT_READY"), {
  httpApiStatus: 409,
  description: "The report failed, so it has no PDF to download or verify"
}) {
  readonly _tag = "ReportNotReady"
  static of(reportUuid: string, status: string) {
    return new ReportNotReady({ message: `The report is ${status}, not ready`, details: { report_uuid: reportUuid, status } })
  }
}

const PATH = "/api/v1/compliance/reports"
const ReportParam = { report_uuid: Text(64) }

export class ComplianceGroup extends HttpApiGroup.make("compliance")
  .add(
    HttpApiEndpoint.post("createReport", PATH, {
      error: [Forbidden, ReportActionNotFound, InvalidInput],
      payload: CreateReportRequest,
      success: ComplianceReport.pipe(HttpApiSchema.status(201))
    }),
    HttpApiEndpoint.get("listReports", PATH, {
      error: [Forbidden],
      query: { framework: Schema.optionalKey(Schema.Literals(ReportFrameworks)), status: Schema.optionalKey(Schema.Literals(ReportStatuses)), ...OffsetPageQuery },
      success: OffsetList(ComplianceReport)
    }),
    // Before `/:report_uuid`, so "article9" is never read as an id.
    HttpApiEndpoint.get("art9Categories", `${PATH}/article9/categories`, {
      error: [Forbidden, InvalidInput],
      query: { agent_id: Schema.optionalKey(Text(200)), category: Schema.optionalKey(Text(64)) },
      success: Art9Categories
    }),
    HttpApiEndpoint.get("getReport", `${PATH}/:report_uuid`, { error: [Forbidden, ReportNotFound], params: ReportParam, success: ComplianceReport }),
    HttpApiEndpoint.get("downloadReport", `${PATH}/:report_uuid/download`, {
      error: [Forbidden, ReportNotFound, ReportNotReady],
      params: ReportParam,
      success: Schema.Uint8Array.pipe(HttpApiSchema.asUint8Array({ contentType: "application/pdf" }))
    }),
    HttpApiEndpoint.get("verifyReport", `${PATH}/:report_uuid/verify`, { error: [Forbidden, ReportNotFound, ReportNotReady], params: ReportParam, success: ReportVerification })
  )
  .middleware(Authenticated)
  .annotateMerge(
    OpenApi.annotations({
      title: "Compliance reports",
      description:
        "EU AI Act reports (Art. 12 record keeping, Art. 9 risk register, Art. 6/86 explanation of one action, Annex IV technical documentation) as signed, timestamped, retained PDFs."
    })
  )
{}
