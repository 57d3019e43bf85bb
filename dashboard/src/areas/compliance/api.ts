/**
 * The compliance area's calls: EU AI Act reports (`/api/v1/compliance/reports`) and the DORA module
 * (`/api/v1/dora/…`: incidents, the ICT third-party register, resilience tests). Types come from the
 * wire contract (protocol/), type-only, so no schema code reaches the browser.
 */
import type { ComplianceReport, CreateReportRequest } from "../../../../protocol/compliance.ts"
import type {
  ClassifyIncident,
  CreateIncident,
  CreateResilienceTest,
  CreateThirdParty,
  Incident,
  ResilienceTest,
  ResolveIncident,
  ThirdParty,
  UpdateThirdParty
} from "../../../../protocol/dora.ts"
import { downloadBytes, request } from "../../api.ts"
import type { Pagination } from "../../kit.tsx"

export type { ClassifyIncident, ComplianceReport, CreateIncident, CreateReportRequest, CreateResilienceTest, CreateThirdParty, Incident, ResilienceTest, ResolveIncident, ThirdParty, UpdateThirdParty }

/** A list as the offset routes answer it (the `pagination` block is what the pager reads). */
export interface Page<T> {
  readonly data: ReadonlyArray<T>
  readonly total: number
  readonly pagination: Pagination
}

const id = encodeURIComponent

/** `page`/`per_page` plus the filters that are set (empty ones are left out). */
const listQuery = (filters: Record<string, string | undefined>, page: number, perPage: number) => {
  const query = new URLSearchParams({ page: String(page), per_page: String(perPage) })
  for (const [key, value] of Object.entries(filters)) if (value !== undefined && value !== "") query.set(key, value)
  return query.toString()
}

// Vocabularies (CONTRACT "Compliance reports", "DORA module"): the API's literals, repeated here so the
// browser bundle does not load the schemas.
export const FRAMEWORKS = ["eu_ai_act_art12", "eu_ai_act_art9", "eu_ai_act_art6", "eu_ai_act_annex_iv"] as const
export const FRAMEWORK_LABELS: Record<string, string> = {
  eu_ai_act_art12: "EU AI Act Art. 12 (record keeping)",
  eu_ai_act_art9: "EU AI Act Art. 9 (risk register)",
  eu_ai_act_art6: "EU AI Act Art. 6/86 (explanation of one action)",
  eu_ai_act_annex_iv: "EU AI Act Annex IV (technical documentation)"
}
export const REPORT_STATUSES = ["pending", "generating", "ready", "failed"] as const
export const INCIDENT_STATUSES = ["detected", "classified", "resolved", "reported"] as const
export const SEVERITIES = ["critical", "high", "medium", "low"] as const
export const CATEGORIES = ["cyber_attack", "system_failure", "third_party_failure", "data_breach", "operational_error", "other"] as const
export const ROOT_CAUSES = ["software_bug", "configuration_error", "human_error", "malicious_attack", "third_party_issue", "infrastructure_failure", "unknown"] as const
export const CRITICALITIES = ["critical", "non_critical", "supporting"] as const
export const SERVICE_TYPES = ["cloud_compute", "cloud_storage", "saas", "payment_processor", "identity_provider", "data_provider", "network", "other"] as const
export const TEST_TYPES = [
  "vulnerability_scan",
  "open_source_analysis",
  "network_security_assessment",
  "gap_analysis",
  "physical_security_review",
  "source_code_review",
  "scenario_based",
  "compatibility",
  "performance",
  "end_to_end",
  "penetration_test",
  "tlpt",
  "other"
] as const
export const TEST_STATUSES = ["passed", "failed", "partial"] as const
/** Annex IV points 1-9 (the `documentation` sections a report cannot know by itself). */
export const ANNEX_IV_TITLES = [
  "General description of the AI system",
  "Elements of the AI system and its development",
  "Monitoring, functioning and control",
  "Appropriateness of the performance metrics",
  "Risk management system (Art. 9)",
  "Changes through the lifecycle",
  "Harmonised standards applied",
  "EU declaration of conformity",
  "Post-market monitoring"
] as const

// Compliance reports.
const REPORTS = "/api/v1/compliance/reports"

export const listReports = (token: string, filters: { framework?: string; status?: string }, page: number, perPage: number) =>
  request<Page<ComplianceReport>>("GET", `${REPORTS}?${listQuery(filters, page, perPage)}`, token)

export const getReport = (token: string, reportUuid: string) => request<ComplianceReport>("GET", `${REPORTS}/${id(reportUuid)}`, token)

export const createReport = (token: string, body: CreateReportRequest) => request<ComplianceReport>("POST", REPORTS, token, body)

export const reportPdfPath = (reportUuid: string) => `${REPORTS}/${id(reportUuid)}/download`

export const downloadReport = (token: string, reportUuid: string) => downloadBytes(token, reportPdfPath(reportUuid))

// DORA incidents.
const DORA = "/api/v1/dora"

export const listIncidents = (token: string, filters: { status?: string; severity?: string; is_major?: string }, page: number, perPage: number) =>
  request<Page<Incident>>("GET", `${DORA}/incidents?${listQuery(filters, page, perPage)}`, token)

export const getIncident = (token: string, uuid: string) => request<Incident>("GET", `${DORA}/incidents/${id(uuid)}`, token)

export const createIncident = (token: string, body: CreateIncident) => request<Incident>("POST", `${DORA}/incidents`, token, body)

export const classifyIncident = (token: string, uuid: string, body: ClassifyIncident) => request<Incident>("PUT", `${DORA}/incidents/${id(uuid)}/classify`, token, body)

export const resolveIncident = (token: string, uuid: string, body: ResolveIncident) => request<Incident>("PUT", `${DORA}/incidents/${id(uuid)}/resolve`, token, body)

/** The incident's signed PDF: the first call makes it (and moves a major incident to `reported`). */
export const incidentReportPath = (uuid: string) => `${DORA}/incidents/${id(uuid)}/report`

// ICT third-party register.
export const listThirdParties = (token: string, filters: { criticality?: string; is_active?: string }, page: number, perPage: number) =>
  request<Page<ThirdParty>>("GET", `${DORA}/third-parties?${listQuery(filters, page, perPage)}`, token)

export const getThirdParty = (token: string, uuid: string) => request<ThirdParty>("GET", `${DORA}/third-parties/${id(uuid)}`, token)

export const createThirdParty = (token: string, body: CreateThirdParty) => request<ThirdParty>("POST", `${DORA}/third-parties`, token, body)

export const updateThirdParty = (token: string, uuid: string, body: UpdateThirdParty) => request<ThirdParty>("PUT", `${DORA}/third-parties/${id(uuid)}`, token, body)

// Resilience tests.
export const listTests = (token: string, filters: { test_type?: string }, page: number, perPage: number) =>
  request<Page<ResilienceTest>>("GET", `${DORA}/tests?${listQuery(filters, page, perPage)}`, token)

export const getTest = (token: string, uuid: string) => request<ResilienceTest>("GET", `${DORA}/tests/${id(uuid)}`, token)

export const createTest = (token: string, body: CreateResilienceTest) => request<ResilienceTest>("POST", `${DORA}/tests`, token, body)

/** A token as written ("third_party_failure" → "third party failure"). */
export const words = (token: string | null | undefined): string => (token === null || token === undefined ? "—" : token.replaceAll("_", " "))

/** Comma- or newline-separated text → trimmed, non-empty items. */
export const listOf = (text: string): Array<string> =>
  text
    .split(/[,\n]/)
    .map((item) => item.trim())
    .filter((item) => item !== "")
