/**
 * DORA module (CONTRACT.md "DORA module"): ICT-related incidents with the major-incident
 * classification of Delegated Regulation (EU) 2024/1772, their signed PDF reports, the ICT
 * third-party register and digital operational resilience tests. Behind the `dora` flag: when it
 * is off for the caller's organization every route answers 404 (`DoraEnabled`, after the
 * credential check and before any input is read).
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { Authenticated, type CurrentPrincipal } from "./auth.js"
import { NullableTimestamp, OffsetList, OffsetPageQuery, Timestamp } from "./common.js"
import { Forbidden, InvalidInput, NotFound, refusal } from "./errors.js"

export const IncidentSeverities = ["critical", "high", "medium", "low"] as const
export const IncidentStatuses = ["detected", "classified", "resolved", "reported"] as const
export type IncidentStatus = (typeof IncidentStatuses)[number]
export const Criticalities = ["critical", "non_critical", "supporting"] as const
export const TestStatuses = ["passed", "failed", "partial"] as const
export const ClassificationBases = ["explicit", "rts_criteria", "severity"] as const
export type ClassificationBasis = (typeof ClassificationBases)[number]

/** Fields the SDKs type as plain strings: any token, with a recommended vocabulary (CONTRACT). */
export const Token = Schema.String.check(Schema.isPattern(/^[a-z][a-z0-9_]{0,63}$/)).annotate({
  description: "A lowercase token: a letter, then letters, digits or `_` (at most 64 characters)"
})
const Text = (min: number, max: number) => Schema.String.check(Schema.isMinLength(min), Schema.isMaxLength(max))
const Strings = (maxItems: number, maxLength = 200) => Schema.Array(Text(1, maxLength)).check(Schema.isMaxLength(maxItems))
const Optional = <S extends Schema.Top>(schema: S) => Schema.optionalKey(Schema.NullOr(schema))
/** Dates and date-times arrive as text and are parsed by the service (a missing offset reads as UTC). */
const When = Text(1, 64)

const Percent = Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 100 }))
const NonNegative = Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))
const MemberState = Schema.String.check(Schema.isPattern(/^[A-Za-z]{2}$/)).annotate({ description: "ISO 3166-1 alpha-2 code" })

/** The RTS inputs (CONTRACT "criteria object"): all optional; an absent one counts as not met. */
const criteriaFields = {
  critical_services_affected: Schema.Boolean,
  malicious_unauthorised_access: Schema.Boolean,
  clients_affected_pct: Percent,
  financial_counterparts_affected_pct: Percent,
  transactions_affected_pct: Percent,
  transactions_value_affected_pct: Percent,
  relevant_clients_affected: Schema.Boolean,
  reputational_impact: Schema.Boolean,
  duration_hours: NonNegative,
  service_downtime_hours: NonNegative,
  member_states_affected: Schema.Array(MemberState).check(Schema.isMaxLength(50)),
  data_loss_adverse_impact: Schema.Boolean,
  economic_impact_eur: NonNegative
}
export const CRITERIA_KEYS = Object.keys(criteriaFields) as ReadonlyArray<keyof typeof criteriaFields>

export const CriteriaInput = Schema.Struct({
  critical_services_affected: Optional(criteriaFields.critical_services_affected),
  malicious_unauthorised_access: Optional(criteriaFields.malicious_unauthorised_access),
  clients_affected_pct: Optional(criteriaFields.clients_affected_pct),
  financial_counterparts_affected_pct: Optional(criteriaFields.financial_counterparts_affected_pct),
  transactions_affected_pct: Optional(criteriaFields.transactions_affected_pct),
  transactions_value_affected_pct: Optional(criteriaFields.transactions_value_affected_pct),
  relevant_clients_affected: Optional(criteriaFields.relevant_clients_affected),
  reputational_impact: Optional(criteriaFields.reputational_impact),
  duration_hours: Optional(criteriaFields.duration_hours),
  service_downtime_hours: Optional(criteriaFields.service_downtime_hours),
  member_states_affected: Optional(criteriaFields.member_states_affected),
  data_loss_adverse_impact: Optional(criteriaFields.data_loss_adverse_impact),
  economic_impact_eur: Optional(criteriaFields.economic_impact_eur)
})
export type CriteriaInput = typeof CriteriaInput.Type

/** As answered: every key present, null when it was not given. */
export const Criteria = Schema.Struct({
  critical_services_affected: Schema.NullOr(Schema.Boolean),
  malicious_unauthorised_access: Schema.NullOr(Schema.Boolean),
  clients_affected_pct: Schema.NullOr(Schema.Number),
  financial_counterparts_affected_pct: Schema.NullOr(Schema.Number),
  transactions_affected_pct: Schema.NullOr(Schema.Number),
  transactions_value_affected_pct: Schema.NullOr(Schema.Number),
  relevant_clients_affected: Schema.NullOr(Schema.Boolean),
  reputational_impact: Schema.NullOr(Schema.Boolean),
  duration_hours: Schema.NullOr(Schema.Number),
  service_downtime_hours: Schema.NullOr(Schema.Number),
  member_states_affected: Schema.NullOr(Schema.Array(Schema.String)),
  data_loss_adverse_impact: Schema.NullOr(Schema.Boolean),
  economic_impact_eur: Schema.NullOr(Schema.Number)
})
export type Criteria = typeof Criteria.Type

export const RtsThresholds = ["clients", "reputational", "duration", "geographical", "data_losses", "economic"] as const
export type RtsThreshold = (typeof RtsThresholds)[number]

export const RtsAssessment = Schema.Struct({
  critical_services_affected: Schema.Boolean.annotate({ description: "The Art. 6 gate: critical services affected, or a successful malicious unauthorised access" }),
  thresholds_met: Schema.Array(Schema.Literals(RtsThresholds)),
  missing: Schema.Array(Schema.String).annotate({ description: "criteria fields that were not given (counted as not met)" }),
  major: Schema.Boolean
})
export type RtsAssessment = typeof RtsAssessment.Type

export const Incident = Schema.Struct({
  uuid: Schema.String,
  org_uuid: Schema.String,
  title: Schema.String,
  description: Schema.String,
  status: Schema.Literals(IncidentStatuses),
  severity: Schema.NullOr(Schema.Literals(IncidentSeverities)),
  category: Schema.NullOr(Schema.String),
  is_major: Schema.Boolean,
  classification_basis: Schema.NullOr(Schema.Literals(ClassificationBases)),
  criteria: Schema.NullOr(Criteria),
  rts_assessment: Schema.NullOr(RtsAssessment),
  became_major_at: NullableTimestamp,
  initial_notification_due_at: NullableTimestamp.annotate({ description: "earlier of became_major_at + 4 h and detected_at + 24 h (informational)" }),
  detected_at: Timestamp,
  classified_at: NullableTimestamp,
  resolved_at: NullableTimestamp,
  reported_at: NullableTimestamp,
  clients_affected_count: Schema.Int,
  affected_services: Schema.Array(Schema.String),
  geographic_scope: Schema.Array(Schema.String),
  root_cause_summary: Schema.NullOr(Schema.String),
  root_cause_classification: Schema.NullOr(Schema.String),
  third_party_uuid: Schema.NullOr(Schema.String),
  resolution_summary: Schema.NullOr(Schema.String),
  lessons_learned: Schema.NullOr(Schema.String),
  related_action_uuids: Schema.Array(Schema.String),
  has_report: Schema.Boolean,
  report_content_hash: Schema.NullOr(Schema.String),
  report_signature: Schema.NullOr(Schema.String),
  report_signing_key_id: Schema.NullOr(Schema.String),
  report_signed_at: NullableTimestamp,
  report_pdf_size_bytes: Schema.NullOr(Schema.Int),
  created_at: Timestamp,
  updated_at: Timestamp,
  warnings: Schema.Array(Schema.String)
})
export type Incident = typeof Incident.Type

export const CreateIncident = Schema.Struct({
  title: Text(1, 200),
  description: Text(1, 10_000),
  detected_at: When.annotate({ description: "ISO 8601 date-time, at most now + 5 minutes" }),
  affected_services: Optional(Strings(50)),
  clients_affected_count: Optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  geographic_scope: Optional(Strings(50, 64)),
  related_action_uuids: Optional(Strings(100))
})
export type CreateIncident = typeof CreateIncident.Type

export const ClassifyIncident = Schema.Struct({
  severity: Schema.Literals(IncidentSeverities),
  category: Token.annotate({ description: "cyber_attack, system_failure, third_party_failure, data_breach, operational_error, other, or another token" }),
  is_major: Optional(Schema.Boolean),
  root_cause_summary: Optional(Text(0, 10_000)),
  root_cause_classification: Optional(
    Token.annotate({
      description: "software_bug, configuration_error, human_error, malicious_attack, third_party_issue, infrastructure_failure, unknown, or another token"
    })
  ),
  third_party_uuid: Optional(Text(1, 200)),
  clients_affected_count: Optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  criteria: Optional(CriteriaInput)
})
export type ClassifyIncident = typeof ClassifyIncident.Type

export const ResolveIncident = Schema.Struct({
  resolution_summary: Text(1, 10_000),
  lessons_learned: Optional(Text(0, 10_000)),
  resolved_at: Optional(When)
})
export type ResolveIncident = typeof ResolveIncident.Type

export const IncidentQuery = {
  status: Schema.optionalKey(Schema.Literals(IncidentStatuses)),
  severity: Schema.optionalKey(Schema.Literals(IncidentSeverities)),
  is_major: Schema.optionalKey(Schema.Literals(["true", "false"])),
  ...OffsetPageQuery
}

export const ThirdParty = Schema.Struct({
  uuid: Schema.String,
  org_uuid: Schema.String,
  vendor_name: Schema.String,
  service_description: Schema.String,
  service_type: Schema.String,
  criticality: Schema.Literals(Criticalities),
  contract_start_date: Schema.NullOr(Schema.String.annotate({ description: "YYYY-MM-DD" })),
  contract_end_date: Schema.NullOr(Schema.String.annotate({ description: "YYYY-MM-DD" })),
  exit_strategy_summary: Schema.NullOr(Schema.String),
  subcontractors: Schema.Array(Schema.String),
  data_categories: Schema.Array(Schema.String),
  jurisdiction: Schema.NullOr(Schema.String),
  is_active: Schema.Boolean,
  created_at: Timestamp,
  updated_at: Timestamp,
  warnings: Schema.Array(Schema.String)
})
export type ThirdParty = typeof ThirdParty.Type

const thirdPartyOptional = {
  contract_start_date: Optional(When.annotate({ description: "YYYY-MM-DD (a date-time keeps its UTC date)" })),
  contract_end_date: Optional(When.annotate({ description: "YYYY-MM-DD, not before the start" })),
  exit_strategy_summary: Optional(Text(0, 10_000)),
  subcontractors: Optional(Strings(100)),
  data_categories: Optional(Strings(100)),
  jurisdiction: Optional(Text(0, 64))
}
const ServiceType = Token.annotate({
  description: "cloud_compute, cloud_storage, saas, payment_processor, identity_provider, data_provider, network, other, or another token"
})

export const CreateThirdParty = Schema.Struct({
  vendor_name: Text(1, 200),
  service_description: Text(1, 2_000),
  service_type: ServiceType,
  criticality: Schema.Literals(Criticalities),
  ...thirdPartyOptional,
  is_active: Optional(Schema.Boolean)
})
export type CreateThirdParty = typeof CreateThirdParty.Type

/** Only the fields sent change; null clears an optional field and is refused (422) on a required one. */
export const UpdateThirdParty = Schema.Struct({
  vendor_name: Optional(Text(1, 200)),
  service_description: Optional(Text(1, 2_000)),
  service_type: Optional(ServiceType),
  criticality: Optional(Schema.Literals(Criticalities)),
  ...thirdPartyOptional,
  is_active: Optional(Schema.Boolean)
})
export type UpdateThirdParty = typeof UpdateThirdParty.Type

export const ThirdPartyQuery = {
  criticality: Schema.optionalKey(Schema.Literals(Criticalities)),
  is_active: Schema.optionalKey(Schema.Literals(["true", "false"])),
  ...OffsetPageQuery
}

export const ResilienceTest = Schema.Struct({
  uuid: Schema.String,
  org_uuid: Schema.String,
  test_type: Schema.String,
  title: Schema.String,
  scope: Schema.String,
  conducted_at: Schema.String.annotate({ description: "a date (YYYY-MM-DD) or a UTC date-time, as precise as it was given" }),
  conducted_by: Schema.String,
  status: Schema.Literals(TestStatuses),
  findings_summary: Schema.NullOr(Schema.String),
  remediation_plan: Schema.NullOr(Schema.String),
  remediation_due_at: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  warnings: Schema.Array(Schema.String)
})
export type ResilienceTest = typeof ResilienceTest.Type

export const CreateResilienceTest = Schema.Struct({
  test_type: Token.annotate({
    description:
      "vulnerability_scan, open_source_analysis, network_security_assessment, gap_analysis, physical_security_review, source_code_review, scenario_based, compatibility, performance, end_to_end, penetration_test, tlpt, other, or another token"
  }),
  title: Text(1, 200),
  scope: Text(1, 2_000),
  conducted_at: When.annotate({ description: "a date or a date-time; its precision is kept" }),
  conducted_by: Text(1, 200),
  status: Schema.Literals(TestStatuses),
  findings_summary: Optional(Text(0, 10_000)),
  remediation_plan: Optional(Text(0, 10_000)),
  remediation_due_at: Optional(When)
})
export type CreateResilienceTest = typeof CreateResilienceTest.Type

export const TestQuery = {
  test_type: Schema.optionalKey(Token),
  ...OffsetPageQuery
}

/**
 * The `dora` flag, resolved for the caller's organization: off → 404 NOT_FOUND on every route.
 * Runs inside `Authenticated` (it needs the principal) and before the request is decoded.
 */
export class DoraEnabled extends HttpApiMiddleware.Service<DoraEnabled, { requires: CurrentPrincipal }>()("gateway/DoraEnabled", { error: NotFound }) {}

export class IncidentNotFound extends Schema.Error<IncidentNotFound>("IncidentNotFound")(refusal("NOT_FOUND"), {
  httpApiStatus: 404,
  description: "No such incident in the caller's organization"
}) {
  readonly _tag = "IncidentNotFound"
  static of(uuid: string) {
    return new IncidentNotFound({ message: `Incident ${uuid} not found`, details: { uuid } })
  }
}

export class ThirdPartyNotFound extends Schema.Error<ThirdPartyNotFound>("ThirdPartyNotFound")(refusal("NOT_FOUND"), {
  httpApiStatus: 404,
  description: "No such third party in the caller's organization's register"
}) {
  readonly _tag = "ThirdPartyNotFound"
  static of(uuid: string) {
    return new ThirdPartyNotFound({ message: `Third party ${uuid} not found`, details: { uuid } })
  }
}

export class TestNotFound extends Schema.Error<TestNotFound>("TestNotFound")(refusal("NOT_FOUND"), {
  httpApiStatus: 404,
  description: "No such resilience test in the caller's organization"
}) {
  readonly _tag = "TestNotFound"
  static of(uuid: string) {
    return new TestNotFound({ message: `Resilience test ${uuid} not found`, details: { uuid } })
  }
}

/** Related actions that are not the organization's (unknown or another's: named back, nothing told). */
export class RelatedActionsNotFound extends Schema.Error<RelatedActionsNotFound>("RelatedActionsNotFound")(refusal("NOT_FOUND"), {
  httpApiStatus: 404,
  description: "Related actions that are not the caller's organization's (`details.action_uuids`)"
}) {
  readonly _tag = "RelatedActionsNotFound"
  static of(actionUuids: ReadonlyArray<string>) {
    const message = actionUuids.length === 1 ? `Action ${actionUuids[0]} not found` : `${actionUuids.length} actions not found`
    return new RelatedActionsNotFound({ message, details: { action_uuids: actionUuids } })
  }
}

/** A transition the lifecycle table forbids. */
export class InvalidIncidentState extends Schema.Error<InvalidIncidentState>("InvalidIncidentState")(refusal("INVALID_INCIDENT_STATE"), {
  httpApiStatus: 409,
  description: "The incident's status does not allow this operation (`details.allowed_from`)"
}) {
  readonly _tag = "InvalidIncidentState"
  static of(uuid: string, status: string, operation: string, allowedFrom: ReadonlyArray<string>) {
    return new InvalidIncidentState({
      message: `Cannot ${operation} an incident that is ${status} (allowed from ${allowedFrom.join(" or ")})`,
      details: { uuid, status, operation, allowed_from: allowedFrom }
    })
  }
}

const Uuid = { uuid: Schema.String }
const Pdf = Schema.Uint8Array.pipe(HttpApiSchema.asUint8Array({ contentType: "application/pdf" }))

export class DoraGroup extends HttpApiGroup.make("dora")
  .add(
    HttpApiEndpoint.post("createIncident", "/api/v1/dora/incidents", {
      payload: CreateIncident,
      success: Incident.pipe(HttpApiSchema.status(201)),
      error: [Forbidden, RelatedActionsNotFound, InvalidInput]
    }),
    HttpApiEndpoint.get("listIncidents", "/api/v1/dora/incidents", { query: IncidentQuery, success: OffsetList(Incident), error: Forbidden }),
    HttpApiEndpoint.get("getIncident", "/api/v1/dora/incidents/:uuid", { params: Uuid, success: Incident, error: [Forbidden, IncidentNotFound] }),
    HttpApiEndpoint.put("classifyIncident", "/api/v1/dora/incidents/:uuid/classify", {
      params: Uuid,
      payload: ClassifyIncident,
      success: Incident,
      error: [Forbidden, IncidentNotFound, ThirdPartyNotFound, InvalidIncidentState, InvalidInput]
    }),
    HttpApiEndpoint.put("resolveIncident", "/api/v1/dora/incidents/:uuid/resolve", {
      params: Uuid,
      payload: ResolveIncident,
      success: Incident,
      error: [Forbidden, IncidentNotFound, InvalidIncidentState, InvalidInput]
    }),
    HttpApiEndpoint.get("incidentReport", "/api/v1/dora/incidents/:uuid/report", { params: Uuid, success: Pdf, error: [Forbidden, IncidentNotFound, InvalidIncidentState] }),
    HttpApiEndpoint.post("createThirdParty", "/api/v1/dora/third-parties", {
      payload: CreateThirdParty,
      success: ThirdParty.pipe(HttpApiSchema.status(201)),
      error: [Forbidden, InvalidInput]
    }),
    HttpApiEndpoint.get("listThirdParties", "/api/v1/dora/third-parties", { query: ThirdPartyQuery, success: OffsetList(ThirdParty), error: Forbidden }),
    HttpApiEndpoint.get("getThirdParty", "/api/v1/dora/third-parties/:uuid", { params: Uuid, success: ThirdParty, error: [Forbidden, ThirdPartyNotFound] }),
    HttpApiEndpoint.put("updateThirdParty", "/api/v1/dora/third-parties/:uuid", {
      params: Uuid,
      payload: UpdateThirdParty,
      success: ThirdParty,
      error: [Forbidden, ThirdPartyNotFound, InvalidInput]
    }),
    HttpApiEndpoint.post("createTest", "/api/v1/dora/tests", {
      payload: CreateResilienceTest,
      success: ResilienceTest.pipe(HttpApiSchema.status(201)),
      error: [Forbidden, InvalidInput]
    }),
    HttpApiEndpoint.get("listTests", "/api/v1/dora/tests", { query: TestQuery, success: OffsetList(ResilienceTest), error: Forbidden }),
    HttpApiEndpoint.get("getTest", "/api/v1/dora/tests/:uuid", { params: Uuid, success: ResilienceTest, error: [Forbidden, TestNotFound] })
  )
  .middleware(DoraEnabled)
  .middleware(Authenticated)
  .annotateMerge(
    OpenApi.annotations({
      title: "DORA",
      description:
        "Regulation (EU) 2022/2554: ICT-related incidents classified by the RTS (Delegated Regulation (EU) 2024/1772) with signed PDF reports, the ICT third-party register and resilience tests. Behind the `dora` flag (404 when off). Reads need dora:read; opening incidents and logging tests dora:write; classify, resolve, report and third-party writes also need the admin or owner role."
    })
  )
{}
