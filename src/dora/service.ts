/**
 * The DORA module: incidents through their lifecycle (detected → classified → resolved →
 * reported), the major-incident rule (`major.ts`), the signed report PDF made once and kept,
 * the ICT third-party register and resilience tests. Roles are checked by the handlers.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql"
import type { Principal } from "../../protocol/auth.js"
import {
  type ClassifyIncident,
  CRITERIA_KEYS,
  type CreateIncident,
  type CreateResilienceTest,
  type CreateThirdParty,
  type Criteria,
  type CriteriaInput,
  type Incident,
  type IncidentStatus,
  type ResilienceTest,
  type ResolveIncident,
  type ThirdParty,
  type UpdateThirdParty
} from "../../protocol/dora.js"
import { auditActor, insertAudit } from "../platform/audit.js"
import { InvalidInput, type Issue } from "../platform/domain-error.js"
import { newUuid } from "../platform/ids.js"
import { parseInstant } from "../platform/instant.js"
import { renderPdf } from "../platform/pdf.js"
import { Receipts } from "../receipts/service.js"
import { canonicalJsonBytes, sha256Tagged } from "../receipts/signing.js"
import { type DoraError, IncidentNotFound, InvalidIncidentState, RelatedActionsNotFound, refuse, TestNotFound, ThirdPartyNotFound } from "./errors.js"
import { assessMajor } from "./major.js"
import { incidentReportModel } from "./report.js"
import { type IncidentFilter, type IncidentRecord, makeDoraStore, type TestRecord, type ThirdPartyRecord, type Window } from "./store.js"

const HOUR_MS = 3_600_000
/** Clock skew allowed for times "now" on the client's side. */
const FUTURE_SLACK_MS = 5 * 60_000
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/

export const MAJOR_SEVERITIES: ReadonlyArray<string> = ["critical", "high"]

/** Earlier of became_major_at + 4 h and detected_at + 24 h (Art. 19, Delegated Regulation (EU) 2025/301); null unless major. */
export const initialNotificationDue = (incident: Pick<Incident, "is_major" | "became_major_at" | "detected_at">): string | null => {
  if (!incident.is_major || incident.became_major_at === null) return null
  const due = Math.min(Date.parse(incident.became_major_at) + 4 * HOUR_MS, Date.parse(incident.detected_at) + 24 * HOUR_MS)
  return new Date(due).toISOString()
}

const view = (record: IncidentRecord): Incident => ({
  ...record,
  initial_notification_due_at: initialNotificationDue(record),
  has_report: record.report_content_hash !== null
})

/** Every criteria key, null when not given. */
const fullCriteria = (input: CriteriaInput): Criteria =>
  Object.fromEntries(CRITERIA_KEYS.map((key) => [key, input[key] ?? null])) as unknown as Criteria

const invalid = (issues: ReadonlyArray<Issue>) => refuse(InvalidInput.of(issues))

/** An instant from a date-time (no offset: UTC); a date alone is refused. */
const dateTime = (value: string): number | undefined => (DATE_ONLY.test(value) ? undefined : parseInstant(value))

/** A calendar date: `YYYY-MM-DD` as given (if it exists), or a date-time's UTC date. */
const calendarDate = (value: string): string | undefined => {
  const at = parseInstant(value)
  if (at === undefined) return undefined
  const date = new Date(at).toISOString().slice(0, 10)
  return DATE_ONLY.test(value) && date !== value ? undefined : date
}

/** A date stays a date, a date-time becomes UTC: the precision the caller gave is kept. */
const keepPrecision = (value: string): { readonly text: string; readonly instant: number } | undefined => {
  const at = parseInstant(value)
  if (at === undefined) return undefined
  if (DATE_ONLY.test(value)) return new Date(at).toISOString().slice(0, 10) === value ? { text: value, instant: at } : undefined
  return { text: new Date(at).toISOString(), instant: at }
}

/** Optional text: blank is the same as absent. */
const optionalText = (value: string | null | undefined): string | null => (value === null || value === undefined || value.trim() === "" ? null : value)

const TRANSITIONS = {
  classify: ["detected", "classified"],
  resolve: ["classified"],
  report: ["resolved", "reported"]
} as const satisfies Record<string, ReadonlyArray<IncidentStatus>>

const allowed = (incident: IncidentRecord, operation: keyof typeof TRANSITIONS) =>
  (TRANSITIONS[operation] as ReadonlyArray<string>).includes(incident.status)
    ? Effect.void
    : refuse(InvalidIncidentState.of(incident.uuid, incident.status, operation, TRANSITIONS[operation]))

export const EXIT_STRATEGY_WARNING =
  "Art. 28(8) of Regulation (EU) 2022/2554: ICT services supporting critical or important functions need an exit strategy; none is recorded for this critical third party"

const thirdPartyView = (record: ThirdPartyRecord): ThirdParty => ({
  ...record,
  warnings: record.criticality === "critical" && record.exit_strategy_summary === null ? [EXIT_STRATEGY_WARNING] : []
})

const testView = (record: TestRecord): ResilienceTest => ({
  ...record,
  warnings:
    record.status !== "passed" && record.remediation_plan === null
      ? [`A ${record.status} test has no remediation plan: Art. 24(5) of Regulation (EU) 2022/2554 expects the weaknesses found to be addressed`]
      : []
})

const dateIssues = (fields: Record<string, string | null | undefined>) => {
  const issues: Array<Issue> = []
  const dates: Record<string, string | null> = {}
  for (const [path, value] of Object.entries(fields)) {
    if (value === null || value === undefined) {
      dates[path] = null
      continue
    }
    const date = calendarDate(value)
    if (date === undefined) issues.push({ path, message: "must be a date (YYYY-MM-DD) or an ISO 8601 date-time" })
    dates[path] = date ?? null
  }
  return { issues, dates }
}

export const makeDora = Effect.gen(function* () {
  const store = yield* makeDoraStore
  const receipts = yield* Receipts
  const sql = store.sql
  /** One audit entry per change, written in the change's transaction. */
  const audit = (principal: Principal, requestId: string | null, event: string, target: string, details: Record<string, unknown> = {}) =>
    Effect.orDie(insertAudit(sql, { orgUuid: principal.orgUuid, actor: auditActor(principal), event, target, details, requestId }))
  const inTransaction = <A, E, R>(effect: Effect.Effect<A, E, R>) => sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die))

  const lockedIncident = (orgUuid: string, uuid: string) =>
    Effect.flatMap(store.incident(orgUuid, uuid, true), (found) =>
      found === undefined ? refuse(IncidentNotFound.of(uuid)) : Effect.succeed(found)
    )

  const withContractDates = (record: ThirdPartyRecord) => {
    const { issues, dates } = dateIssues({ contract_start_date: record.contract_start_date, contract_end_date: record.contract_end_date })
    const start = dates.contract_start_date ?? null
    const end = dates.contract_end_date ?? null
    if (issues.length === 0 && start !== null && end !== null && end < start) issues.push({ path: "contract_end_date", message: "must not be before contract_start_date" })
    return { issues, record: { ...record, contract_start_date: start, contract_end_date: end } }
  }

  return Dora.of({
    createIncident: Effect.fn("Dora.createIncident")(function* (principal: Principal, input: CreateIncident, requestId: string | null) {
      const now = yield* Clock.currentTimeMillis
      const detected = dateTime(input.detected_at)
      if (detected === undefined) return yield* invalid([{ path: "detected_at", message: "must be an ISO 8601 date-time" }])
      if (detected > now + FUTURE_SLACK_MS) return yield* invalid([{ path: "detected_at", message: "must not be more than 5 minutes in the future" }])
      const related = [...new Set(input.related_action_uuids ?? [])]
      const own = yield* store.ownActions(principal.orgUuid, related)
      const unknown = related.filter((uuid) => !own.has(uuid))
      if (unknown.length > 0) return yield* refuse(RelatedActionsNotFound.of(unknown))
      const at = new Date(now).toISOString()
      const record = yield* store.insertIncident({
        uuid: newUuid(),
        org_uuid: principal.orgUuid,
        title: input.title,
        description: input.description,
        status: "detected",
        severity: null,
        category: null,
        is_major: false,
        classification_basis: null,
        criteria: null,
        rts_assessment: null,
        became_major_at: null,
        initial_notification_due_at: null,
        detected_at: new Date(detected).toISOString(),
        classified_at: null,
        resolved_at: null,
        reported_at: null,
        clients_affected_count: input.clients_affected_count ?? 0,
        affected_services: [...(input.affected_services ?? [])],
        geographic_scope: [...(input.geographic_scope ?? [])],
        root_cause_summary: null,
        root_cause_classification: null,
        third_party_uuid: null,
        resolution_summary: null,
        lessons_learned: null,
        related_action_uuids: related,
        report_content_hash: null,
        report_signature: null,
        report_signing_key_id: null,
        report_signed_at: null,
        report_pdf_size_bytes: null,
        created_at: at,
        updated_at: at,
        warnings: []
      })
      yield* audit(principal, requestId, "dora.incident_opened", record.uuid, { detected_at: record.detected_at })
      return view(record)
    }, inTransaction),

    listIncidents: Effect.fn("Dora.listIncidents")(function* (principal: Principal, filter: IncidentFilter, window: Window) {
      return yield* Effect.map(store.listIncidents(principal.orgUuid, filter, window), (found) => ({ items: found.items.map(view), total: found.total }))
    }),

    getIncident: Effect.fn("Dora.getIncident")(function* (principal: Principal, uuid: string) {
      return yield* Effect.flatMap(store.incident(principal.orgUuid, uuid), (found) =>
        found === undefined ? refuse(IncidentNotFound.of(uuid)) : Effect.succeed(view(found))
      )
    }),

    /**
     * Restates the classification: an explicit is_major wins, else the criteria's RTS assessment,
     * else critical/high severity. A computed value never turns a major incident back.
     */
    classify: Effect.fn("Dora.classify")(function* (principal: Principal, uuid: string, input: ClassifyIncident, requestId: string | null) {
      const incident = yield* lockedIncident(principal.orgUuid, uuid)
      const thirdParty = input.third_party_uuid ?? null
      if (input.category === "third_party_failure" && thirdParty === null)
        return yield* invalid([{ path: "third_party_uuid", message: "is required when category is third_party_failure" }])
      yield* allowed(incident, "classify")
      if (thirdParty !== null && !(yield* store.thirdPartyExists(principal.orgUuid, thirdParty)))
        return yield* refuse(ThirdPartyNotFound.of(thirdParty))

      const now = new Date(yield* Clock.currentTimeMillis).toISOString()
      const clients = input.clients_affected_count ?? incident.clients_affected_count
      const criteria = input.criteria === null || input.criteria === undefined ? null : fullCriteria(input.criteria)
      const assessment = criteria === null ? null : assessMajor(criteria, { clients_affected_count: clients, geographic_scope: incident.geographic_scope })
      const warnings: Array<string> = []
      let isMajor: boolean
      let basis: "explicit" | "rts_criteria" | "severity"
      if (input.is_major !== null && input.is_major !== undefined) {
        isMajor = input.is_major
        basis = "explicit"
        if (assessment !== null && assessment.major !== isMajor)
          warnings.push(`is_major ${isMajor} disagrees with the RTS assessment of the criteria (major: ${assessment.major}); the explicit value is kept`)
      } else if (assessment !== null) {
        isMajor = assessment.major
        basis = "rts_criteria"
      } else {
        isMajor = MAJOR_SEVERITIES.includes(input.severity)
        basis = "severity"
      }
      if (!isMajor && incident.is_major && basis !== "explicit") {
        isMajor = true
        warnings.push("is_major stays true: a major incident is not downgraded by a computed classification; send is_major false to change it")
      }
      const saved = yield* store.saveIncident({
        ...incident,
        status: "classified",
        severity: input.severity,
        category: input.category,
        is_major: isMajor,
        classification_basis: basis,
        criteria,
        rts_assessment: assessment,
        became_major_at: incident.became_major_at ?? (isMajor ? now : null),
        classified_at: now,
        clients_affected_count: clients,
        root_cause_summary: optionalText(input.root_cause_summary),
        root_cause_classification: input.root_cause_classification ?? null,
        third_party_uuid: thirdParty,
        warnings
      })
      yield* audit(principal, requestId, "dora.incident_classified", uuid, { severity: saved.severity, category: saved.category, is_major: saved.is_major, classification_basis: basis })
      return view(saved)
    }, inTransaction),

    /** Resolves a classified incident; with RTS criteria lacking a duration, the measured one is assessed (it may make it major, never the reverse). */
    resolve: Effect.fn("Dora.resolve")(function* (principal: Principal, uuid: string, input: ResolveIncident, requestId: string | null) {
      const incident = yield* lockedIncident(principal.orgUuid, uuid)
      const nowMs = yield* Clock.currentTimeMillis
      let resolvedMs = nowMs
      if (input.resolved_at !== null && input.resolved_at !== undefined) {
        const at = dateTime(input.resolved_at)
        if (at === undefined) return yield* invalid([{ path: "resolved_at", message: "must be an ISO 8601 date-time" }])
        resolvedMs = at
      }
      if (resolvedMs < Date.parse(incident.detected_at)) return yield* invalid([{ path: "resolved_at", message: "must not be before detected_at" }])
      if (resolvedMs > nowMs + FUTURE_SLACK_MS) return yield* invalid([{ path: "resolved_at", message: "must not be more than 5 minutes in the future" }])
      yield* allowed(incident, "resolve")

      let { criteria, rts_assessment: assessment, is_major: isMajor, became_major_at: becameMajorAt } = incident
      const warnings = [...incident.warnings]
      if (incident.classification_basis === "rts_criteria" && criteria !== null && criteria.duration_hours === null) {
        criteria = { ...criteria, duration_hours: (resolvedMs - Date.parse(incident.detected_at)) / HOUR_MS }
        assessment = assessMajor(criteria, incident)
        if (assessment.major && !isMajor) {
          isMajor = true
          becameMajorAt = becameMajorAt ?? new Date(nowMs).toISOString()
          warnings.push("The measured duration made the incident major at resolution")
        }
      }
      const saved = yield* store.saveIncident({
        ...incident,
        status: "resolved",
        criteria,
        rts_assessment: assessment,
        is_major: isMajor,
        became_major_at: becameMajorAt,
        resolved_at: new Date(resolvedMs).toISOString(),
        resolution_summary: input.resolution_summary,
        lessons_learned: optionalText(input.lessons_learned),
        warnings
      })
      yield* audit(principal, requestId, "dora.incident_resolved", uuid, { resolved_at: saved.resolved_at, is_major: saved.is_major })
      return view(saved)
    }, inTransaction),

    /**
     * The report PDF: made, signed and stored by the first call under the incident's row lock (so
     * concurrent first calls make one), then answered from storage byte for byte.
     */
    report: Effect.fn("Dora.report")(function* (principal: Principal, uuid: string, requestId: string | null) {
      const incident = yield* lockedIncident(principal.orgUuid, uuid)
      yield* allowed(incident, "report")
      if (incident.report_content_hash !== null) {
        const stored = yield* store.reportPdf(principal.orgUuid, uuid)
        if (stored !== undefined) return { bytes: stored, incident: view(incident) }
      }
      const signedAt = new Date(yield* Clock.currentTimeMillis).toISOString()
      const status = incident.is_major ? "reported" : "resolved"
      const printed: IncidentRecord = { ...incident, status, reported_at: incident.is_major ? signedAt : null }
      const related = yield* store.relatedReceipts(principal.orgUuid, incident.related_action_uuids)
      const bytes = yield* Effect.promise(() => renderPdf(incidentReportModel(printed, initialNotificationDue(printed), related, signedAt)))
      const contentHash = sha256Tagged(bytes)
      const signer = yield* receipts.platformSigner
      const signature = signer.sign(
        canonicalJsonBytes({
          incident_uuid: incident.uuid,
          org_uuid: incident.org_uuid,
          report_content_hash: contentHash,
          report_pdf_size_bytes: bytes.byteLength,
          report_signed_at: signedAt
        })
      )
      yield* store.saveReport(principal.orgUuid, uuid, {
        pdf: bytes,
        content_hash: contentHash,
        signature,
        signing_key_id: signer.publicKeyId,
        signed_at: signedAt,
        size: bytes.byteLength,
        status
      })
      yield* audit(principal, requestId, "dora.incident_reported", uuid, { report_content_hash: contentHash, status })
      const saved = yield* store.incident(principal.orgUuid, uuid)
      return { bytes, incident: view(saved ?? printed) }
    },
    inTransaction,
    // Signing reads the active key through the ambient SqlClient.
    Effect.provideService(SqlClient.SqlClient, sql)
    ),

    createThirdParty: Effect.fn("Dora.createThirdParty")(function* (principal: Principal, input: CreateThirdParty, requestId: string | null) {
      const at = new Date(yield* Clock.currentTimeMillis).toISOString()
      const { issues, record } = withContractDates({
        uuid: newUuid(),
        org_uuid: principal.orgUuid,
        vendor_name: input.vendor_name,
        service_description: input.service_description,
        service_type: input.service_type,
        criticality: input.criticality,
        contract_start_date: input.contract_start_date ?? null,
        contract_end_date: input.contract_end_date ?? null,
        exit_strategy_summary: optionalText(input.exit_strategy_summary),
        subcontractors: [...(input.subcontractors ?? [])],
        data_categories: [...(input.data_categories ?? [])],
        jurisdiction: optionalText(input.jurisdiction),
        is_active: input.is_active ?? true,
        created_at: at,
        updated_at: at
      })
      if (issues.length > 0) return yield* invalid(issues)
      const saved = yield* store.insertThirdParty(record)
      yield* audit(principal, requestId, "dora.third_party_created", saved.uuid, { vendor_name: saved.vendor_name, criticality: saved.criticality })
      return thirdPartyView(saved)
    }, inTransaction),

    listThirdParties: Effect.fn("Dora.listThirdParties")(function* (principal: Principal, filter: ThirdPartyFilter, window: Window) {
      return yield* Effect.map(store.listThirdParties(principal.orgUuid, filter, window), (found) => ({
        items: found.items.map(thirdPartyView),
        total: found.total
      }))
    }),

    getThirdParty: Effect.fn("Dora.getThirdParty")(function* (principal: Principal, uuid: string) {
      return yield* Effect.flatMap(store.thirdParty(principal.orgUuid, uuid), (found) =>
        found === undefined ? refuse(ThirdPartyNotFound.of(uuid)) : Effect.succeed(thirdPartyView(found))
      )
    }),

    /** Partial update: a key sent changes its field, null clears an optional one; `{}` changes nothing. */
    updateThirdParty: Effect.fn("Dora.updateThirdParty")(function* (principal: Principal, uuid: string, patch: UpdateThirdParty, requestId: string | null) {
      const current = yield* store.thirdParty(principal.orgUuid, uuid, true)
      if (current === undefined) return yield* refuse(ThirdPartyNotFound.of(uuid))
      const required = ["vendor_name", "service_description", "service_type", "criticality", "is_active"] as const
      const nulls = required.filter((key) => patch[key] === null).map((key) => ({ path: key, message: "is required and cannot be null" }))
      const sent = <K extends keyof UpdateThirdParty>(key: K) => key in patch
      const next: ThirdPartyRecord = {
        ...current,
        vendor_name: patch.vendor_name ?? current.vendor_name,
        service_description: patch.service_description ?? current.service_description,
        service_type: patch.service_type ?? current.service_type,
        criticality: patch.criticality ?? current.criticality,
        is_active: patch.is_active ?? current.is_active,
        contract_start_date: sent("contract_start_date") ? (patch.contract_start_date ?? null) : current.contract_start_date,
        contract_end_date: sent("contract_end_date") ? (patch.contract_end_date ?? null) : current.contract_end_date,
        exit_strategy_summary: sent("exit_strategy_summary") ? optionalText(patch.exit_strategy_summary) : current.exit_strategy_summary,
        subcontractors: sent("subcontractors") ? [...(patch.subcontractors ?? [])] : current.subcontractors,
        data_categories: sent("data_categories") ? [...(patch.data_categories ?? [])] : current.data_categories,
        jurisdiction: sent("jurisdiction") ? optionalText(patch.jurisdiction) : current.jurisdiction
      }
      const { issues, record } = withContractDates(next)
      if (nulls.length + issues.length > 0) return yield* invalid([...nulls, ...issues])
      const fields = Object.keys(patch)
      if (fields.length === 0) return thirdPartyView(current)
      const saved = yield* store.saveThirdParty(record)
      yield* audit(principal, requestId, "dora.third_party_updated", uuid, { fields })
      return thirdPartyView(saved)
    }, inTransaction),

    createTest: Effect.fn("Dora.createTest")(function* (principal: Principal, input: CreateResilienceTest, requestId: string | null) {
      const conducted = keepPrecision(input.conducted_at)
      const due = input.remediation_due_at === null || input.remediation_due_at === undefined ? null : keepPrecision(input.remediation_due_at)
      const issues: Array<Issue> = []
      if (conducted === undefined) issues.push({ path: "conducted_at", message: "must be a date (YYYY-MM-DD) or an ISO 8601 date-time" })
      if (due === undefined) issues.push({ path: "remediation_due_at", message: "must be a date (YYYY-MM-DD) or an ISO 8601 date-time" })
      if (conducted === undefined || due === undefined) return yield* invalid(issues)
      const record = yield* store.insertTest({
        uuid: newUuid(),
        org_uuid: principal.orgUuid,
        test_type: input.test_type,
        title: input.title,
        scope: input.scope,
        conducted_at: conducted.text,
        conducted_at_instant: new Date(conducted.instant).toISOString(),
        conducted_by: input.conducted_by,
        status: input.status,
        findings_summary: optionalText(input.findings_summary),
        remediation_plan: optionalText(input.remediation_plan),
        remediation_due_at: due?.text ?? null,
        created_at: new Date(yield* Clock.currentTimeMillis).toISOString()
      })
      yield* audit(principal, requestId, "dora.test_logged", record.uuid, { test_type: record.test_type, status: record.status })
      return testView(record)
    }, inTransaction),

    listTests: Effect.fn("Dora.listTests")(function* (principal: Principal, testType: string | undefined, window: Window) {
      return yield* Effect.map(store.listTests(principal.orgUuid, testType, window), (found) => ({ items: found.items.map(testView), total: found.total }))
    }),

    getTest: Effect.fn("Dora.getTest")(function* (principal: Principal, uuid: string) {
      return yield* Effect.flatMap(store.test(principal.orgUuid, uuid), (found) =>
        found === undefined ? refuse(TestNotFound.of(uuid)) : Effect.succeed(testView(found))
      )
    })
  })
})

export interface ThirdPartyFilter {
  readonly criticality?: string | undefined
  readonly isActive?: boolean | undefined
}

interface Found<A> {
  readonly items: ReadonlyArray<A>
  readonly total: number
}

export interface DoraService {
  readonly createIncident: (principal: Principal, input: CreateIncident, requestId: string | null) => Effect.Effect<Incident, DoraError>
  readonly listIncidents: (principal: Principal, filter: IncidentFilter, window: Window) => Effect.Effect<Found<Incident>>
  readonly getIncident: (principal: Principal, uuid: string) => Effect.Effect<Incident, DoraError>
  readonly classify: (principal: Principal, uuid: string, input: ClassifyIncident, requestId: string | null) => Effect.Effect<Incident, DoraError>
  /** Resolves a classified incident; with RTS criteria lacking a duration, the measured one is assessed (it may make it major, never the reverse). */
  readonly resolve: (principal: Principal, uuid: string, input: ResolveIncident, requestId: string | null) => Effect.Effect<Incident, DoraError>
  /** The report PDF, made and signed by the first call, then answered from storage byte for byte. */
  readonly report: (principal: Principal, uuid: string, requestId: string | null) => Effect.Effect<{ readonly bytes: Uint8Array; readonly incident: Incident }, DoraError>
  readonly createThirdParty: (principal: Principal, input: CreateThirdParty, requestId: string | null) => Effect.Effect<ThirdParty, DoraError>
  readonly listThirdParties: (principal: Principal, filter: ThirdPartyFilter, window: Window) => Effect.Effect<Found<ThirdParty>>
  readonly getThirdParty: (principal: Principal, uuid: string) => Effect.Effect<ThirdParty, DoraError>
  readonly updateThirdParty: (principal: Principal, uuid: string, patch: UpdateThirdParty, requestId: string | null) => Effect.Effect<ThirdParty, DoraError>
  readonly createTest: (principal: Principal, input: CreateResilienceTest, requestId: string | null) => Effect.Effect<ResilienceTest, DoraError>
  readonly listTests: (principal: Principal, testType: string | undefined, window: Window) => Effect.Effect<Found<ResilienceTest>>
  readonly getTest: (principal: Principal, uuid: string) => Effect.Effect<ResilienceTest, DoraError>
}

export class Dora extends Context.Service<Dora, DoraService>()("gateway/Dora") {
  static readonly layer = Layer.effect(Dora, makeDora)
}
