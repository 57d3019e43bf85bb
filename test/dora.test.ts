/**
 * DORA end to end (CONTRACT.md "DORA module"): incidents through their lifecycle with every
 * forbidden transition answered 409, the three classification bases and their warnings, the
 * deadline, the measured duration at resolution; the signed report PDF (read back with
 * pdftotext, identical on every download, signature verified with the JWKS key, one report under
 * concurrent first downloads); the third-party register and resilience tests; roles; and the
 * `dora` flag: off for an organization, or ENABLE_DORA=false, makes every route 404. Over the
 * typed client (HttpApiClient over GatewayApi); bodies outside the contract go raw (`raw`).
 */
import { createHash, createPublicKey, verify } from "node:crypto"
import { expect } from "@effect/vitest"
import canonicalize from "canonicalize"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql"
import type { ClassifyIncident, CreateIncident, CreateResilienceTest, CreateThirdParty, ResolveIncident } from "../protocol/dora.js"
import { answer, client, clientAt, member, register } from "./support/api.js"
import { call, type Org } from "./support/client.js"
import { liveLayer } from "./support/effect.js"
import { pdfText, pdftotextPath } from "./support/pdf-text.js"
import { Gateway } from "./support/server.js"

interface Teammate {
  readonly token: string
  readonly key: string
}
class Orgs extends Context.Service<Orgs, { readonly org: Org; readonly other: Org; readonly member: Teammate; readonly admin: Teammate }>()("test/dora/Orgs") {}

const Setup = Layer.effect(
  Orgs,
  Effect.gen(function* () {
    const { org, other } = yield* Effect.all({ org: register("DORA Org"), other: register("Other DORA Org") })
    return { org, other, member: yield* member(org, "member"), admin: yield* member(org, "admin") }
  })
).pipe(Layer.provideMerge(Gateway.layer()))

const HOUR = 3_600_000
const ago = (ms: number) => new Date(Date.now() - ms).toISOString()

/** Raw call under /api/v1/dora, for bodies and queries the contract refuses (the typed client would not encode them). */
const raw = (method: string, path: string, token: string, body?: unknown) =>
  Effect.flatMap(Gateway, (server) => Effect.promise(() => call(server.url, method, `/api/v1/dora${path}`, { token, body })))

const dora = (token: string) => Effect.map(client(token), (api) => api.dora)
const keyOf = (pick: "org" | "other" | "member" | "admin", as: "key" | "token" = "key") => Effect.map(Orgs, (orgs) => orgs[pick][as])

const open = (token: string, body: Partial<CreateIncident> = {}) =>
  Effect.gen(function* () {
    const [incident, reply] = yield* (yield* dora(token)).createIncident({
      payload: { title: "Payments API outage", description: "Card payments failed", detected_at: ago(HOUR), ...body },
      responseMode: "decoded-and-response"
    })
    expect(reply.status).toBe(201)
    return incident
  })
/** A classification as answered (status and JSON body). */
const classify = (uuid: string, payload: ClassifyIncident, token?: string) =>
  Effect.gen(function* () {
    const api = yield* dora(token ?? (yield* keyOf("org")))
    return yield* answer(api.classifyIncident({ params: { uuid }, payload, responseMode: "response-only" }))
  })
/** A resolution as answered (status and JSON body). */
const resolve = (uuid: string, payload: ResolveIncident = { resolution_summary: "Rolled back the release" }, token?: string) =>
  Effect.gen(function* () {
    const api = yield* dora(token ?? (yield* keyOf("org")))
    return yield* answer(api.resolveIncident({ params: { uuid }, payload, responseMode: "response-only" }))
  })
const getIncident = (uuid: string, token?: string) => Effect.flatMap(Effect.flatMap(token === undefined ? keyOf("org") : Effect.succeed(token), dora), (api) => api.getIncident({ params: { uuid } }))

/** The report as answered: status, headers and bytes. */
const download = (uuid: string, token?: string) =>
  Effect.gen(function* () {
    const api = yield* dora(token ?? (yield* keyOf("org")))
    const reply = yield* api.incidentReport({ params: { uuid }, responseMode: "response-only" })
    return { status: reply.status, headers: reply.headers, bytes: new Uint8Array(yield* reply.arrayBuffer) }
  })
const sha256 = (bytes: Uint8Array) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`

const INCIDENT_KEYS = [
  "uuid", "org_uuid", "title", "description", "status", "severity", "category", "is_major", "classification_basis", "criteria", "rts_assessment",
  "became_major_at", "initial_notification_due_at", "detected_at", "classified_at", "resolved_at", "reported_at", "clients_affected_count",
  "affected_services", "geographic_scope", "root_cause_summary", "root_cause_classification", "third_party_uuid", "resolution_summary",
  "lessons_learned", "related_action_uuids", "has_report", "report_content_hash", "report_signature", "report_signing_key_id", "report_signed_at",
  "report_pdf_size_bytes", "created_at", "updated_at", "warnings", "request_id"
]

const authorizeAction = (token: string) =>
  Effect.flatMap(client(token), (api) =>
    api.actions.authorize({ payload: { action_type: "payment.send", details: "pay 10 EUR" }, headers: {}, responseMode: "decoded-and-response" })
  )

const thirdParty = (token: string, body: Partial<CreateThirdParty> = {}) =>
  Effect.flatMap(dora(token), (api) =>
    answer(
      api.createThirdParty({
        payload: { vendor_name: "V", service_description: "d", service_type: "saas", criticality: "supporting", ...body },
        responseMode: "response-only"
      })
    )
  )
const resilienceTest = (token: string, body: Partial<CreateResilienceTest> = {}) =>
  Effect.flatMap(dora(token), (api) =>
    answer(
      api.createTest({
        payload: { test_type: "other", title: "t", scope: "s", conducted_at: "2026-01-01", conducted_by: "me", status: "passed", ...body },
        responseMode: "response-only"
      })
    )
  )

liveLayer(Setup)((it) => {
  it.describe("incidents", () => {
    it.effect("opens an incident with every documented key, null when empty", () =>
      Effect.gen(function* () {
        const { org, member } = yield* Orgs
        const [action, actionReply] = yield* authorizeAction(org.key)
        expect(actionReply.status).toBe(201)
        // The exact keys sent (request_id included): the body as sent.
        const opened = yield* answer(
          (yield* dora(member.key)).createIncident({
            payload: {
              title: "Payments API outage",
              description: "Card payments failed",
              detected_at: "2026-04-01T00:00:00",
              affected_services: ["payments"],
              geographic_scope: ["DE", "FR"],
              clients_affected_count: 12,
              related_action_uuids: [action.action_uuid, action.action_uuid]
            },
            responseMode: "response-only"
          })
        )
        expect(opened.status).toBe(201)
        const incident = opened.body
        expect(Object.keys(incident).sort()).toEqual([...INCIDENT_KEYS].sort())
        expect(incident).toMatchObject({
          org_uuid: org.orgUuid,
          status: "detected",
          severity: null,
          category: null,
          is_major: false,
          classification_basis: null,
          criteria: null,
          rts_assessment: null,
          detected_at: "2026-04-01T00:00:00.000Z",
          clients_affected_count: 12,
          affected_services: ["payments"],
          geographic_scope: ["DE", "FR"],
          related_action_uuids: [action.action_uuid],
          has_report: false,
          report_content_hash: null,
          warnings: []
        })
        const [read, readReply] = yield* (yield* dora(member.key)).getIncident({ params: { uuid: incident.uuid }, responseMode: "decoded-and-response" })
        expect(readReply.status).toBe(200)
        expect(read).toMatchObject({ uuid: incident.uuid, initial_notification_due_at: null })
      })
    )

    it.effect("refuses bad input with 422 listing each problem, and another organization's actions with 404", () =>
      Effect.gen(function* () {
        const { org, other } = yield* Orgs
        // Raw: bodies the contract refuses.
        const bad = yield* raw("POST", "/incidents", org.key, { title: "", description: "x".repeat(10_001), detected_at: "yesterday", affected_services: Array(51).fill("s") })
        expect(bad.status).toBe(422)
        expect(bad.body.code).toBe("VALIDATION_ERROR")
        expect(bad.body.details.issues.map((i: { path: string }) => i.path).sort()).toEqual(["affected_services", "description", "title"].sort())
        const when = yield* raw("POST", "/incidents", org.key, { title: "t", description: "d", detected_at: "yesterday" })
        expect(when.status).toBe(422)
        expect(when.body.details.issues[0].path).toBe("detected_at")
        const api = yield* dora(org.key)
        const create = (payload: CreateIncident) => answer(api.createIncident({ payload, responseMode: "response-only" }))
        const future = yield* create({ title: "t", description: "d", detected_at: new Date(Date.now() + 10 * 60_000).toISOString() })
        expect(future.status).toBe(422)
        expect((yield* create({ title: "t", description: "d", detected_at: new Date(Date.now() + 60_000).toISOString() })).status).toBe(201)
        const [foreign] = yield* authorizeAction(other.key)
        const refused = yield* create({ title: "t", description: "d", detected_at: ago(0), related_action_uuids: [foreign.action_uuid, "nope"] })
        expect(refused.status).toBe(404)
        expect(refused.body).toMatchObject({ code: "NOT_FOUND", details: { action_uuids: [foreign.action_uuid, "nope"] } })
        expect((yield* raw("POST", "/incidents", org.key, { title: "t", description: "d", detected_at: ago(0), related_action_uuids: Array(101).fill("a") })).status).toBe(422)
      })
    )

    it.effect("answers 409 INVALID_INCIDENT_STATE for every transition the lifecycle forbids", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const server = yield* Gateway
        const expectState = (reply: { status: number; body: any }, status: string) => {
          expect(reply.status).toBe(409)
          expect(reply.body).toMatchObject({ code: "INVALID_INCIDENT_STATE", details: { status } })
        }
        const incident = yield* open(org.key)
        // detected: resolve and report are refused (classify first).
        expectState(yield* resolve(incident.uuid), "detected")
        expect((yield* download(incident.uuid)).status).toBe(409)
        // classified: report is refused; classify again is allowed.
        expect((yield* classify(incident.uuid, { severity: "low", category: "other" })).status).toBe(200)
        expect((yield* download(incident.uuid)).status).toBe(409)
        expect((yield* classify(incident.uuid, { severity: "critical", category: "other" })).status).toBe(200)
        // resolved: classify and resolve are refused.
        expect((yield* resolve(incident.uuid)).status).toBe(200)
        expectState(yield* classify(incident.uuid, { severity: "low", category: "other" }), "resolved")
        expectState(yield* resolve(incident.uuid), "resolved")
        // reported: classify and resolve are refused; the report stays available.
        expect((yield* download(incident.uuid)).status).toBe(200)
        expect((yield* getIncident(incident.uuid)).status).toBe("reported")
        expectState(yield* classify(incident.uuid, { severity: "low", category: "other" }), "reported")
        expectState(yield* resolve(incident.uuid), "reported")
        expect((yield* download(incident.uuid)).status).toBe(200)
        // Each change, not a refusal nor a repeated download, left one audit entry.
        const audit = yield* Effect.promise(() =>
          server.run(
            Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ event: string; org_uuid: string }>`SELECT event, org_uuid FROM audit_log WHERE target = ${incident.uuid} ORDER BY id`)
          )
        )
        expect(audit.map((row) => row.event)).toEqual(["dora.incident_opened", "dora.incident_classified", "dora.incident_classified", "dora.incident_resolved", "dora.incident_reported"])
        expect(new Set(audit.map((row) => row.org_uuid))).toEqual(new Set([org.orgUuid]))
      })
    )

    it.effect("classifies by explicit value, by RTS criteria or by severity; warns on disagreement; never downgrades by itself", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const detectedAt = ago(2 * HOUR)
        const incident = yield* open(org.key, { detected_at: detectedAt })
        const bySeverity = yield* classify(incident.uuid, { severity: "medium", category: "system_failure" })
        expect(bySeverity.body).toMatchObject({ status: "classified", is_major: false, classification_basis: "severity", became_major_at: null, initial_notification_due_at: null })

        const byCriteria = yield* classify(incident.uuid, {
          severity: "medium",
          category: "cyber_attack",
          criteria: { critical_services_affected: true, reputational_impact: true, economic_impact_eur: 250_000 }
        })
        expect(byCriteria.status).toBe(200)
        expect(byCriteria.body).toMatchObject({ is_major: true, classification_basis: "rts_criteria", warnings: [] })
        expect(byCriteria.body.rts_assessment).toMatchObject({ critical_services_affected: true, thresholds_met: ["reputational", "economic"], major: true })
        expect(byCriteria.body.rts_assessment.missing).toContain("duration_hours")
        expect(byCriteria.body.criteria).toMatchObject({ reputational_impact: true, duration_hours: null, member_states_affected: null })
        const becameMajor = byCriteria.body.became_major_at
        expect(becameMajor).not.toBeNull()
        // Earlier of became_major_at + 4 h and detected_at + 24 h.
        expect(byCriteria.body.initial_notification_due_at).toBe(new Date(Math.min(Date.parse(becameMajor) + 4 * HOUR, Date.parse(detectedAt) + 24 * HOUR)).toISOString())

        const computedOff = yield* classify(incident.uuid, { severity: "low", category: "other" })
        expect(computedOff.body).toMatchObject({ is_major: true, classification_basis: "severity", became_major_at: becameMajor })
        expect(computedOff.body.warnings).toHaveLength(1)

        const explicit = yield* classify(incident.uuid, { severity: "low", category: "other", is_major: false, criteria: { malicious_unauthorised_access: true } })
        expect(explicit.body).toMatchObject({ is_major: false, classification_basis: "explicit", became_major_at: becameMajor, initial_notification_due_at: null })
        expect(explicit.body.rts_assessment.major).toBe(true)
        expect(explicit.body.warnings[0]).toMatch(/disagrees/)
      })
    )

    it.effect("needs a register entry of the organization for a third-party failure", () =>
      Effect.gen(function* () {
        const { org, other } = yield* Orgs
        const incident = yield* open(org.key)
        const missing = yield* classify(incident.uuid, { severity: "high", category: "third_party_failure" })
        expect(missing.status).toBe(422)
        expect(missing.body.details.issues[0].path).toBe("third_party_uuid")
        expect((yield* classify(incident.uuid, { severity: "high", category: "third_party_failure", third_party_uuid: "00000000-0000-0000-0000-000000000000" })).status).toBe(404)
        const theirs = yield* thirdParty(other.key)
        expect((yield* classify(incident.uuid, { severity: "high", category: "third_party_failure", third_party_uuid: theirs.body.uuid })).status).toBe(404)
        const ours = yield* (yield* dora(org.key)).createThirdParty({
          payload: { vendor_name: "Cloud", service_description: "compute", service_type: "cloud_compute", criticality: "critical" }
        })
        const done = yield* classify(incident.uuid, { severity: "high", category: "third_party_failure", third_party_uuid: ours.uuid, root_cause_classification: "third_party_issue" })
        expect(done.status).toBe(200)
        expect(done.body).toMatchObject({ third_party_uuid: ours.uuid, is_major: true, classification_basis: "severity" })
        // Raw: not a token, refused by the contract.
        expect((yield* raw("PUT", `/incidents/${incident.uuid}/classify`, org.key, { severity: "high", category: "Bad Token" })).status).toBe(422)
      })
    )

    it.effect("resolves with the measured duration when the criteria gave none: it can make the incident major", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const incident = yield* open(org.key, { detected_at: ago(30 * HOUR) })
        const classified = yield* classify(incident.uuid, { severity: "medium", category: "system_failure", criteria: { critical_services_affected: true, reputational_impact: true } })
        expect(classified.body.is_major).toBe(false)
        const early = yield* resolve(incident.uuid, { resolution_summary: "fixed", resolved_at: ago(31 * HOUR) })
        expect(early.status).toBe(422)
        const late = yield* resolve(incident.uuid, { resolution_summary: "fixed", resolved_at: new Date(Date.now() + 10 * 60_000).toISOString() })
        expect(late.status).toBe(422)
        const [resolved, resolvedReply] = yield* (yield* dora(org.key)).resolveIncident({
          params: { uuid: incident.uuid },
          payload: { resolution_summary: "Replaced the disk", lessons_learned: "Monitor disks" },
          responseMode: "decoded-and-response"
        })
        expect(resolvedReply.status).toBe(200)
        expect(resolved).toMatchObject({ status: "resolved", is_major: true, resolution_summary: "Replaced the disk", lessons_learned: "Monitor disks" })
        expect(resolved.criteria?.duration_hours).toBeGreaterThan(29.9)
        expect(resolved.rts_assessment?.thresholds_met).toEqual(["reputational", "duration"])
        expect(resolved.became_major_at).not.toBeNull()
      })
    )

    it.effect("lists newest detected first, filtered by status, severity and is_major, as an offset list", () =>
      Effect.gen(function* () {
        const fresh = yield* register("DORA list org")
        const api = yield* dora(fresh.key)
        const a = yield* open(fresh.key, { detected_at: ago(3 * HOUR), title: "oldest" })
        const b = yield* open(fresh.key, { detected_at: ago(1 * HOUR), title: "newest" })
        const c = yield* open(fresh.key, { detected_at: ago(2 * HOUR), title: "middle" })
        yield* classify(b.uuid, { severity: "critical", category: "other" }, fresh.key)
        yield* classify(c.uuid, { severity: "low", category: "other" }, fresh.key)
        const all = yield* api.listIncidents({ query: {} })
        expect(all).toMatchObject({ total: 3, limit: 50, offset: 0, pagination: { page: 1, per_page: 50, total: 3, has_more: false } })
        expect(all.items.map((i) => i.title)).toEqual(["newest", "middle", "oldest"])
        expect(all.data).toEqual(all.items)
        const paged = yield* api.listIncidents({ query: { limit: 1, offset: 1 } })
        expect(paged.items.map((i) => i.uuid)).toEqual([c.uuid])
        expect(paged.pagination.has_more).toBe(true)
        expect((yield* api.listIncidents({ query: { is_major: "true" } })).items.map((i) => i.uuid)).toEqual([b.uuid])
        expect((yield* api.listIncidents({ query: { is_major: "false" } })).total).toBe(2)
        expect((yield* api.listIncidents({ query: { status: "detected" } })).items.map((i) => i.uuid)).toEqual([a.uuid])
        expect((yield* api.listIncidents({ query: { severity: "low" } })).items.map((i) => i.uuid)).toEqual([c.uuid])
        // Raw: queries the contract refuses.
        expect((yield* raw("GET", "/incidents?is_major=yes", fresh.key)).status).toBe(422)
        expect((yield* raw("GET", "/incidents?limit=101", fresh.key)).status).toBe(422)
      })
    )
  })

  it.describe("incident reports", () => {
    const jwks = Effect.flatMap(client(), (api) => api.receiptsPublic.jwks())

    it.effect.skipIf(pdftotextPath === undefined)("prints the incident and its criteria, signs once, and answers the same bytes on every download", () =>
      Effect.gen(function* () {
        const { org, admin } = yield* Orgs
        const actions = (yield* client(org.key)).actions
        const [action] = yield* authorizeAction(org.key)
        const [notarized, notarizedReply] = yield* actions.notarize({
          params: { action_uuid: action.action_uuid },
          payload: { outcome: "completed" },
          responseMode: "decoded-and-response"
        })
        expect(notarizedReply.status).toBe(200)
        const incident = yield* open(org.key, { title: "Ledger replication halted", related_action_uuids: [action.action_uuid] })
        yield* classify(incident.uuid, {
          severity: "high",
          category: "system_failure",
          root_cause_summary: "A schema migration locked the ledger",
          root_cause_classification: "software_bug",
          criteria: { critical_services_affected: true, member_states_affected: ["DE", "NL"], economic_impact_eur: 150_000 }
        })
        yield* resolve(incident.uuid, { resolution_summary: "Migration reverted", lessons_learned: "Run migrations online" })

        const first = yield* download(incident.uuid, admin.key)
        expect(first.status).toBe(200)
        expect(first.headers["content-type"]).toBe("application/pdf")
        expect(first.headers["content-disposition"]).toBe(`attachment; filename="dora-incident-${incident.uuid}.pdf"`)
        expect(Number(first.headers["content-length"])).toBe(first.bytes.byteLength)
        expect(first.headers.etag).toBe(`"${sha256(first.bytes)}"`)
        const text = pdfText(first.bytes).replace(/\s+/g, " ")
        expect(text).toContain("Ledger replication halted")
        expect(text).toContain("Criteria met")
        expect(text).toContain("Thresholds met: geographical, economic")
        expect(text).toContain("A schema migration locked the ledger")
        expect(text).toContain("Migration reverted")
        expect(text).toContain("Run migrations online")
        expect(text).toContain(notarized.receipt_uuid)
        expect(text).toContain("Article 19")

        const after = yield* getIncident(incident.uuid)
        expect(after).toMatchObject({ status: "reported", has_report: true, report_content_hash: sha256(first.bytes), report_pdf_size_bytes: first.bytes.byteLength })
        expect(after.reported_at).toBe(after.report_signed_at)
        const second = yield* download(incident.uuid)
        expect(Buffer.from(second.bytes).equals(Buffer.from(first.bytes))).toBe(true)
        expect((yield* getIncident(incident.uuid)).report_signed_at).toBe(after.report_signed_at)

        const signed = Buffer.from(
          canonicalize({
            incident_uuid: after.uuid,
            org_uuid: after.org_uuid,
            report_content_hash: after.report_content_hash,
            report_pdf_size_bytes: after.report_pdf_size_bytes,
            report_signed_at: after.report_signed_at
          })!,
          "utf8"
        )
        const jwk = (yield* jwks).keys.find((key) => key.kid === after.report_signing_key_id)!
        const key = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, format: "jwk" })
        const signature = Buffer.from(String(after.report_signature).replace(/^ed25519:/, ""), "base64url")
        expect(verify(null, signed, key, signature)).toBe(true)
        expect(verify(null, Buffer.from(signed.toString("utf8").replace(after.report_content_hash!, sha256(new Uint8Array([1])))), key, signature)).toBe(false)
      })
    )

    it.effect.skipIf(pdftotextPath === undefined)("a non-major incident's report says no Article 19 notification is due, and it stays resolved", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const incident = yield* open(org.key, { title: "Minor batch delay" })
        yield* classify(incident.uuid, { severity: "low", category: "operational_error" })
        yield* resolve(incident.uuid)
        const report = yield* download(incident.uuid)
        expect(report.status).toBe(200)
        expect(pdfText(report.bytes).replace(/\s+/g, " ")).toContain("no Article 19 notification is due")
        expect(yield* getIncident(incident.uuid)).toMatchObject({ status: "resolved", has_report: true, reported_at: null })
        expect(Buffer.from((yield* download(incident.uuid)).bytes).equals(Buffer.from(report.bytes))).toBe(true)
      })
    )

    it.effect("concurrent first downloads make one report", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const incident = yield* open(org.key)
        yield* classify(incident.uuid, { severity: "critical", category: "cyber_attack" })
        yield* resolve(incident.uuid)
        const downloads = yield* Effect.all(
          Array.from({ length: 6 }, () => download(incident.uuid)),
          { concurrency: "unbounded" }
        )
        for (const d of downloads) expect(d.status).toBe(200)
        const hashes = new Set(downloads.map((d) => sha256(d.bytes)))
        expect(hashes.size).toBe(1)
        expect((yield* getIncident(incident.uuid)).report_content_hash).toBe([...hashes][0])
      })
    )
  })

  it.describe("third-party register", () => {
    const entryOf = (token: string, body: Partial<CreateThirdParty> = {}) =>
      thirdParty(token, { vendor_name: "Acme Cloud", service_description: "Hosting", service_type: "cloud_compute", criticality: "non_critical", ...body })
    const create = (body: Partial<CreateThirdParty> = {}, token?: string) => Effect.flatMap(token === undefined ? keyOf("org") : Effect.succeed(token), (t) => entryOf(t, body))
    /** Raw: bodies the contract refuses. */
    const createRaw = (body: Record<string, unknown>) =>
      Effect.flatMap(keyOf("org"), (token) =>
        raw("POST", "/third-parties", token, { vendor_name: "Acme Cloud", service_description: "Hosting", service_type: "cloud_compute", criticality: "non_critical", ...body })
      )

    it.effect("creates with defaults and dates as UTC calendar dates; warns for a critical entry without exit strategy", () =>
      Effect.gen(function* () {
        // The exact keys sent (request_id included): the body as sent.
        const entry = yield* create({ criticality: "critical", contract_start_date: "2026-01-31T23:30:00-02:00", contract_end_date: "2027-01-31", subcontractors: ["Sub"] })
        expect(entry.status).toBe(201)
        expect(Object.keys(entry.body).sort()).toEqual(
          ["uuid", "org_uuid", "vendor_name", "service_description", "service_type", "criticality", "contract_start_date", "contract_end_date", "exit_strategy_summary",
            "subcontractors", "data_categories", "jurisdiction", "is_active", "created_at", "updated_at", "warnings", "request_id"].sort()
        )
        expect(entry.body).toMatchObject({ contract_start_date: "2026-02-01", contract_end_date: "2027-01-31", is_active: true, exit_strategy_summary: null, jurisdiction: null, data_categories: [] })
        expect(entry.body.warnings).toHaveLength(1)
        expect(entry.body.warnings[0]).toContain("28(8)")
        const fine = yield* (yield* dora(yield* keyOf("org"))).createThirdParty({
          payload: { vendor_name: "Acme Cloud", service_description: "Hosting", service_type: "cloud_compute", criticality: "critical", exit_strategy_summary: "Migrate to the second provider" }
        })
        expect(fine.warnings).toEqual([])
      })
    )

    it.effect("refuses bad dates, an end before the start, bad tokens and enums", () =>
      Effect.gen(function* () {
        const backwards = yield* create({ contract_start_date: "2026-05-02", contract_end_date: "2026-05-01" })
        expect(backwards.status).toBe(422)
        expect(backwards.body.details.issues[0].path).toBe("contract_end_date")
        expect((yield* createRaw({ contract_start_date: "2026-02-30" })).status).toBe(422)
        expect((yield* createRaw({ service_type: "Cloud" })).status).toBe(422)
        expect((yield* createRaw({ criticality: "high" })).status).toBe(422)
        expect((yield* createRaw({ subcontractors: Array(101).fill("x") })).status).toBe(422)
        expect((yield* createRaw({ jurisdiction: "x".repeat(65) })).status).toBe(422)
      })
    )

    it.effect("updates only the fields sent; null clears optional fields and is refused on required ones; {} changes nothing", () =>
      Effect.gen(function* () {
        const { org, member } = yield* Orgs
        const api = yield* dora(org.key)
        const entry = (yield* create({ exit_strategy_summary: "plan", jurisdiction: "DE", contract_start_date: "2026-01-01" })).body
        const params = { uuid: entry.uuid }
        const [noop, noopReply] = yield* api.updateThirdParty({ params, payload: {}, responseMode: "decoded-and-response" })
        expect(noopReply.status).toBe(200)
        expect(noop.updated_at).toBe(entry.updated_at)
        // Raw: read-only fields the contract does not carry, to show they are ignored.
        const patched = yield* raw("PUT", `/third-parties/${entry.uuid}`, org.key, {
          jurisdiction: null,
          criticality: "critical",
          uuid: "ignored",
          org_uuid: "ignored",
          created_at: "2000-01-01T00:00:00Z",
          warnings: ["ignored"]
        })
        expect(patched.status).toBe(200)
        expect(patched.body).toMatchObject({ uuid: entry.uuid, org_uuid: org.orgUuid, created_at: entry.created_at, jurisdiction: null, criticality: "critical", exit_strategy_summary: "plan", vendor_name: "Acme Cloud", warnings: [] })
        const cleared = yield* api.updateThirdParty({ params, payload: { exit_strategy_summary: null } })
        expect(cleared.warnings).toHaveLength(1)
        // Raw: null on required fields, refused by the contract.
        const refused = yield* raw("PUT", `/third-parties/${entry.uuid}`, org.key, { vendor_name: null, is_active: null })
        expect(refused.status).toBe(422)
        expect(refused.body.details.issues.map((i: { path: string }) => i.path)).toEqual(["vendor_name", "is_active"])
        expect((yield* api.updateThirdParty({ params, payload: { contract_end_date: "2025-12-31" }, responseMode: "response-only" })).status).toBe(422)
        const retired = yield* api.updateThirdParty({ params, payload: { is_active: false } })
        expect(retired.is_active).toBe(false)
        expect(yield* (yield* dora(member.key)).getThirdParty({ params })).toMatchObject({ is_active: false, exit_strategy_summary: null })
      })
    )

    it.effect("lists newest first with criticality and is_active filters (without is_active: all)", () =>
      Effect.gen(function* () {
        const fresh = yield* register("DORA register org")
        const api = yield* dora(fresh.key)
        const a = (yield* create({ vendor_name: "A", criticality: "critical", exit_strategy_summary: "x" }, fresh.key)).body
        const b = (yield* create({ vendor_name: "B", is_active: false }, fresh.key)).body
        const c = (yield* create({ vendor_name: "C", criticality: "supporting" }, fresh.key)).body
        const all = yield* api.listThirdParties({ query: {} })
        expect(all.items.map((t) => t.vendor_name)).toEqual(["C", "B", "A"])
        expect(all.total).toBe(3)
        expect((yield* api.listThirdParties({ query: { is_active: "false" } })).items.map((t) => t.uuid)).toEqual([b.uuid])
        expect((yield* api.listThirdParties({ query: { is_active: "true" } })).items.map((t) => t.uuid)).toEqual([c.uuid, a.uuid])
        expect((yield* api.listThirdParties({ query: { criticality: "critical" } })).items.map((t) => t.uuid)).toEqual([a.uuid])
      })
    )
  })

  it.describe("resilience tests", () => {
    const log = (body: Partial<CreateResilienceTest>, token: string) =>
      resilienceTest(token, { test_type: "penetration_test", title: "Annual pentest", scope: "Public APIs", conducted_at: "2026-03-01", conducted_by: "Red team", status: "passed", ...body })
    /** Raw: bodies the contract refuses. */
    const logRaw = (body: Record<string, unknown>, token: string) =>
      raw("POST", "/tests", token, { test_type: "penetration_test", title: "Annual pentest", scope: "Public APIs", conducted_at: "2026-03-01", conducted_by: "Red team", status: "passed", ...body })

    it.effect("keeps the precision of conducted_at, warns on a failed test without remediation plan, lists newest first by type", () =>
      Effect.gen(function* () {
        const fresh = yield* register("DORA tests org")
        const api = yield* dora(fresh.key)
        const dated = yield* log({}, fresh.key)
        expect(dated.status).toBe(201)
        expect(dated.body).toMatchObject({ conducted_at: "2026-03-01", status: "passed", warnings: [], findings_summary: null, remediation_plan: null, remediation_due_at: null })
        const timed = yield* log({ conducted_at: "2026-03-02T10:15:00+01:00", status: "failed", test_type: "tlpt" }, fresh.key)
        expect(timed.body.conducted_at).toBe("2026-03-02T09:15:00.000Z")
        expect(timed.body.warnings).toHaveLength(1)
        const planned = yield* log({ conducted_at: "2026-02-01", status: "partial", remediation_plan: "Patch", remediation_due_at: "2026-06-30" }, fresh.key)
        expect(planned.body).toMatchObject({ warnings: [], remediation_due_at: "2026-06-30" })
        const list = yield* api.listTests({ query: {} })
        expect(list.items.map((t) => t.uuid)).toEqual([timed.body.uuid, dated.body.uuid, planned.body.uuid])
        expect((yield* api.listTests({ query: { test_type: "tlpt" } })).items.map((t) => t.uuid)).toEqual([timed.body.uuid])
        expect((yield* api.getTest({ params: { uuid: dated.body.uuid } })).uuid).toBe(dated.body.uuid)
        expect((yield* logRaw({ conducted_at: "March 1st" }, fresh.key)).status).toBe(422)
        expect((yield* logRaw({ status: "unknown" }, fresh.key)).status).toBe(422)
        expect((yield* logRaw({ test_type: "" }, fresh.key)).status).toBe(422)
      })
    )
  })

  it.describe("roles and scopes", () => {
    it.effect("lets a member read, open incidents and log tests, but not classify, resolve, download or write the register", () =>
      Effect.gen(function* () {
        const { member, admin } = yield* Orgs
        const incident = yield* open(member.token)
        const memberApi = yield* dora(member.key)
        expect((yield* memberApi.listIncidents({ query: {}, responseMode: "response-only" })).status).toBe(200)
        expect((yield* resilienceTest(member.key, { test_type: "gap_analysis" })).status).toBe(201)
        const forbidden = [
          yield* classify(incident.uuid, { severity: "low", category: "other" }, member.key),
          yield* resolve(incident.uuid, { resolution_summary: "x" }, member.token),
          yield* download(incident.uuid, member.key),
          yield* thirdParty(member.key),
          yield* memberApi.updateThirdParty({ params: { uuid: "00000000-0000-0000-0000-000000000000" }, payload: {}, responseMode: "response-only" })
        ]
        expect(forbidden.map((reply) => reply.status)).toEqual([403, 403, 403, 403, 403])
        expect((yield* classify(incident.uuid, { severity: "low", category: "other" }, admin.token)).status).toBe(200)
      })
    )

    it.effect("needs dora:read to read and dora:write to write", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const keys = (yield* client(org.token)).apiKeys
        const [readOnly, readOnlyReply] = yield* keys.create({ payload: { name: "dora reader", scopes: ["dora:read"] }, responseMode: "decoded-and-response" })
        expect(readOnlyReply.status).toBe(201)
        const reader = yield* dora(readOnly.key)
        expect((yield* reader.listIncidents({ query: {}, responseMode: "response-only" })).status).toBe(200)
        expect((yield* reader.createIncident({ payload: { title: "t", description: "d", detected_at: ago(0) }, responseMode: "response-only" })).status).toBe(403)
        const incident = yield* open(org.key)
        expect((yield* classify(incident.uuid, { severity: "low", category: "other" }, readOnly.key)).status).toBe(403)
        yield* classify(incident.uuid, { severity: "low", category: "other" })
        yield* resolve(incident.uuid)
        // The owner's read-only key may download the report (a read); a member's may not (role).
        expect((yield* download(incident.uuid, readOnly.key)).status).toBe(200)
        const unrelated = yield* keys.create({ payload: { name: "actions only", scopes: ["actions:write"] } })
        expect((yield* (yield* dora(unrelated.key)).listTests({ query: {}, responseMode: "response-only" })).status).toBe(403)
        expect((yield* (yield* dora("svc_live_nope")).listIncidents({ query: {}, responseMode: "response-only" })).status).toBe(401)
      })
    )

    it.effect("answers 404 for another organization's incidents, entries and tests", () =>
      Effect.gen(function* () {
        const { org, other } = yield* Orgs
        const incident = yield* open(org.key)
        const entry = (yield* thirdParty(org.key)).body
        const test = (yield* resilienceTest(org.key)).body
        const stranger = yield* dora(other.key)
        expect((yield* stranger.getIncident({ params: { uuid: incident.uuid }, responseMode: "response-only" })).status).toBe(404)
        expect((yield* stranger.getThirdParty({ params: { uuid: entry.uuid }, responseMode: "response-only" })).status).toBe(404)
        expect((yield* stranger.getTest({ params: { uuid: test.uuid }, responseMode: "response-only" })).status).toBe(404)
        expect((yield* classify(incident.uuid, { severity: "low", category: "other" }, other.token)).status).toBe(404)
        const strangerJwt = yield* dora(other.token)
        expect((yield* strangerJwt.updateThirdParty({ params: { uuid: entry.uuid }, payload: { vendor_name: "mine" }, responseMode: "response-only" })).status).toBe(404)
        expect((yield* stranger.listIncidents({ query: {} })).items.map((i) => i.uuid)).not.toContain(incident.uuid)
      })
    )
  })

  it.describe("the dora flag", () => {
    it.effect("is on by default: the main server answers", () =>
      Effect.gen(function* () {
        expect((yield* (yield* dora(yield* keyOf("org"))).listIncidents({ query: {}, responseMode: "response-only" })).status).toBe(200)
      })
    )
  })
})

/** Every DORA route, with a body that would pass validation. */
const everyRoute = (id: string): Array<[string, string, unknown?]> => [
  ["POST", "/incidents", { title: "t", description: "d", detected_at: ago(0) }],
  ["GET", "/incidents"],
  ["GET", `/incidents/${id}`],
  ["PUT", `/incidents/${id}/classify`, { severity: "low", category: "other" }],
  ["PUT", `/incidents/${id}/resolve`, { resolution_summary: "x" }],
  ["GET", `/incidents/${id}/report`],
  ["POST", "/third-parties", { vendor_name: "V", service_description: "d", service_type: "saas", criticality: "supporting" }],
  ["GET", "/third-parties"],
  ["GET", `/third-parties/${id}`],
  ["PUT", `/third-parties/${id}`, {}],
  ["POST", "/tests", { test_type: "other", title: "t", scope: "s", conducted_at: "2026-01-01", conducted_by: "me", status: "passed" }],
  ["GET", "/tests"],
  ["GET", `/tests/${id}`]
]

class OffOrgs extends Context.Service<OffOrgs, { readonly orgA: Org; readonly orgB: Org }>()("test/dora/OffOrgs") {}

const OffSetup = Layer.effect(OffOrgs, Effect.all({ orgA: register("DORA off A"), orgB: register("DORA off B") })).pipe(
  Layer.provideMerge(Gateway.layer({ ENABLE_DORA: "false" }))
)

liveLayer(OffSetup)((it) => {
  // Raw calls: every route walked generically, with valid bodies or a deliberately invalid one ({ title: 5 }).
  const statuses = (token: string, id: string, body?: "invalid") =>
    Effect.flatMap(Gateway, (off) =>
      Effect.promise(() =>
        Promise.all(
          everyRoute(id).map(async ([method, path, valid]) => {
            const reply = await call(off.url, method, `/api/v1/dora${path}`, { token, body: body === "invalid" && valid !== undefined ? { title: 5 } : valid })
            return `${method} ${path.replace(id, ":uuid")} ${reply.status} ${reply.body?.code ?? ""}`
          })
        )
      )
    )
  const all404 = (id: string) => everyRoute(id).map(([method, path]) => `${method} ${path.replace(id, ":uuid")} 404 NOT_FOUND`)

  it.describe("the dora flag", () => {
    it.effect("ENABLE_DORA=false answers 404 NOT_FOUND on every route, before validation; no credential is still 401", () =>
      Effect.gen(function* () {
        const { orgA } = yield* OffOrgs
        const id = "00000000-0000-0000-0000-000000000000"
        expect(yield* statuses(orgA.key, id)).toEqual(all404(id))
        expect(yield* statuses(orgA.token, id, "invalid")).toEqual(all404(id))
        expect((yield* (yield* client()).dora.listIncidents({ query: {}, responseMode: "response-only" })).status).toBe(401)
      })
    )

    it.effect("a stored flag decides per organization: listed → on, others off", () =>
      Effect.gen(function* () {
        const { orgA, orgB } = yield* OffOrgs
        const off = yield* Gateway
        // Raw: the admin routes authenticate with the x-admin-key header, which the typed client does not send.
        const created = yield* Effect.promise(() =>
          call(off.url, "POST", "/api/v1/admin/feature-flags", {
            headers: { "x-admin-key": "test-admin-key" },
            body: { key: "dora", enabled_global: false, enabled_org_ids: [orgB.orgUuid] }
          })
        )
        expect(created.status).toBe(201)
        const api = (yield* clientAt(off.url, orgB.key)).dora
        const [incident, incidentReply] = yield* api.createIncident({ payload: { title: "t", description: "d", detected_at: ago(0) }, responseMode: "decoded-and-response" })
        expect(incidentReply.status).toBe(201)
        expect((yield* api.listIncidents({ query: {} })).total).toBe(1)
        expect(yield* statuses(orgA.key, incident.uuid)).toEqual(all404(incident.uuid))
        // The organization turns it off for itself (its own entry): every route 404 for it too.
        const [, toggled] = yield* (yield* clientAt(off.url, orgB.token)).flags.toggle({ params: { key: "dora" }, payload: { enabled: false }, responseMode: "decoded-and-response" })
        expect(toggled.status).toBe(200)
        expect(yield* statuses(orgB.key, incident.uuid)).toEqual(all404(incident.uuid))
      })
    )
  })
})
