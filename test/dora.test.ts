/**
 * DORA end to end (CONTRACT.md "DORA module"): incidents through their lifecycle with every
 * forbidden transition answered 409, the three classification bases and their warnings, the
 * deadline, the measured duration at resolution; the signed report PDF (read back with
 * pdftotext, identical on every download, signature verified with the JWKS key, one report under
 * concurrent first downloads); the third-party register and resilience tests; roles; and the
 * `dora` flag: off for an organization, or ENABLE_DORA=false, makes every route 404.
 */
import { createHash, createPublicKey, verify } from "node:crypto"
import canonicalize from "canonicalize"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { addMember, call, type Org, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { pdfText, pdftotextPath } from "./support/pdf-text.js"
import { startServer, type TestServer, useServer } from "./support/server.js"

const server = useServer()
const org = useFixture(() => registerOrg(server.url, "DORA Org"))
const other = useFixture(() => registerOrg(server.url, "Other DORA Org"))
let member: { token: string; key: string }
let admin: { token: string; key: string }

beforeAll(async () => {
  member = await addMember(server.url, org, "member")
  admin = await addMember(server.url, org, "admin")
})

const HOUR = 3_600_000
const ago = (ms: number) => new Date(Date.now() - ms).toISOString()
const api = (method: string, path: string, token: string, body?: unknown) => call(server.url, method, `/api/v1/dora${path}`, { token, body })

const open = async (token: string, body: Record<string, unknown> = {}) => {
  const reply = await api("POST", "/incidents", token, { title: "Payments API outage", description: "Card payments failed", detected_at: ago(HOUR), ...body })
  expect(reply.status, reply.text).toBe(201)
  return reply.body
}
const classify = (uuid: string, body: Record<string, unknown>, token = org.key) => api("PUT", `/incidents/${uuid}/classify`, token, body)
const resolve = (uuid: string, body: Record<string, unknown> = { resolution_summary: "Rolled back the release" }, token = org.key) =>
  api("PUT", `/incidents/${uuid}/resolve`, token, body)

const download = async (uuid: string, token = org.key) => {
  const response = await fetch(`${server.url}/api/v1/dora/incidents/${uuid}/report`, { headers: { authorization: `Bearer ${token}` } })
  return { status: response.status, headers: response.headers, bytes: new Uint8Array(await response.arrayBuffer()) }
}
const sha256 = (bytes: Uint8Array) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`

const INCIDENT_KEYS = [
  "uuid", "org_uuid", "title", "description", "status", "severity", "category", "is_major", "classification_basis", "criteria", "rts_assessment",
  "became_major_at", "initial_notification_due_at", "detected_at", "classified_at", "resolved_at", "reported_at", "clients_affected_count",
  "affected_services", "geographic_scope", "root_cause_summary", "root_cause_classification", "third_party_uuid", "resolution_summary",
  "lessons_learned", "related_action_uuids", "has_report", "report_content_hash", "report_signature", "report_signing_key_id", "report_signed_at",
  "report_pdf_size_bytes", "created_at", "updated_at", "warnings", "request_id"
]

describe("incidents", () => {
  it("opens an incident with every documented key, null when empty", async () => {
    const action = await call(server.url, "POST", "/api/v1/actions", { token: org.key, body: { action_type: "payment.send", details: "pay 10 EUR" } })
    expect(action.status).toBe(201)
    const incident = await open(member.key, {
      detected_at: "2026-04-01T00:00:00",
      affected_services: ["payments"],
      geographic_scope: ["DE", "FR"],
      clients_affected_count: 12,
      related_action_uuids: [action.body.action_uuid, action.body.action_uuid]
    })
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
      related_action_uuids: [action.body.action_uuid],
      has_report: false,
      report_content_hash: null,
      warnings: []
    })
    const read = await api("GET", `/incidents/${incident.uuid}`, member.key)
    expect(read.status).toBe(200)
    expect(read.body).toMatchObject({ uuid: incident.uuid, initial_notification_due_at: null })
  })

  it("refuses bad input with 422 listing each problem, and another organization's actions with 404", async () => {
    const bad = await api("POST", "/incidents", org.key, { title: "", description: "x".repeat(10_001), detected_at: "yesterday", affected_services: Array(51).fill("s") })
    expect(bad.status).toBe(422)
    expect(bad.body.code).toBe("VALIDATION_ERROR")
    expect(bad.body.details.issues.map((i: { path: string }) => i.path).sort()).toEqual(["affected_services", "description", "title"].sort())
    const when = await api("POST", "/incidents", org.key, { title: "t", description: "d", detected_at: "yesterday" })
    expect(when.status).toBe(422)
    expect(when.body.details.issues[0].path).toBe("detected_at")
    const future = await api("POST", "/incidents", org.key, { title: "t", description: "d", detected_at: new Date(Date.now() + 10 * 60_000).toISOString() })
    expect(future.status).toBe(422)
    expect((await api("POST", "/incidents", org.key, { title: "t", description: "d", detected_at: new Date(Date.now() + 60_000).toISOString() })).status).toBe(201)
    const foreign = await call(server.url, "POST", "/api/v1/actions", { token: other.key, body: { action_type: "x", details: "theirs" } })
    const refused = await api("POST", "/incidents", org.key, { title: "t", description: "d", detected_at: ago(0), related_action_uuids: [foreign.body.action_uuid, "nope"] })
    expect(refused.status).toBe(404)
    expect(refused.body).toMatchObject({ code: "NOT_FOUND", details: { action_uuids: [foreign.body.action_uuid, "nope"] } })
    expect((await api("POST", "/incidents", org.key, { title: "t", description: "d", detected_at: ago(0), related_action_uuids: Array(101).fill("a") })).status).toBe(422)
  })

  it("answers 409 INVALID_INCIDENT_STATE for every transition the lifecycle forbids", async () => {
    const expectState = async (reply: Promise<{ status: number; body: any }>, status: string) => {
      const answered = await reply
      expect(answered.status).toBe(409)
      expect(answered.body).toMatchObject({ code: "INVALID_INCIDENT_STATE", details: { status } })
    }
    const incident = await open(org.key)
    // detected: resolve and report are refused (classify first).
    await expectState(resolve(incident.uuid), "detected")
    expect((await download(incident.uuid)).status).toBe(409)
    // classified: report is refused; classify again is allowed.
    expect((await classify(incident.uuid, { severity: "low", category: "other" })).status).toBe(200)
    expect((await download(incident.uuid)).status).toBe(409)
    expect((await classify(incident.uuid, { severity: "critical", category: "other" })).status).toBe(200)
    // resolved: classify and resolve are refused.
    expect((await resolve(incident.uuid)).status).toBe(200)
    await expectState(classify(incident.uuid, { severity: "low", category: "other" }), "resolved")
    await expectState(resolve(incident.uuid), "resolved")
    // reported: classify and resolve are refused; the report stays available.
    expect((await download(incident.uuid)).status).toBe(200)
    expect((await api("GET", `/incidents/${incident.uuid}`, org.key)).body.status).toBe("reported")
    await expectState(classify(incident.uuid, { severity: "low", category: "other" }), "reported")
    await expectState(resolve(incident.uuid), "reported")
    expect((await download(incident.uuid)).status).toBe(200)
    // Each change, not a refusal nor a repeated download, left one audit entry.
    const audit = await server.run(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ event: string; org_uuid: string }>`SELECT event, org_uuid FROM audit_log WHERE target = ${incident.uuid} ORDER BY id`)
    )
    expect(audit.map((row) => row.event)).toEqual(["dora.incident_opened", "dora.incident_classified", "dora.incident_classified", "dora.incident_resolved", "dora.incident_reported"])
    expect(new Set(audit.map((row) => row.org_uuid))).toEqual(new Set([org.orgUuid]))
  })

  it("classifies by explicit value, by RTS criteria or by severity; warns on disagreement; never downgrades by itself", async () => {
    const detectedAt = ago(2 * HOUR)
    const incident = await open(org.key, { detected_at: detectedAt })
    const bySeverity = await classify(incident.uuid, { severity: "medium", category: "system_failure" })
    expect(bySeverity.body).toMatchObject({ status: "classified", is_major: false, classification_basis: "severity", became_major_at: null, initial_notification_due_at: null })

    const byCriteria = await classify(incident.uuid, {
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

    const computedOff = await classify(incident.uuid, { severity: "low", category: "other" })
    expect(computedOff.body).toMatchObject({ is_major: true, classification_basis: "severity", became_major_at: becameMajor })
    expect(computedOff.body.warnings).toHaveLength(1)

    const explicit = await classify(incident.uuid, { severity: "low", category: "other", is_major: false, criteria: { malicious_unauthorised_access: true } })
    expect(explicit.body).toMatchObject({ is_major: false, classification_basis: "explicit", became_major_at: becameMajor, initial_notification_due_at: null })
    expect(explicit.body.rts_assessment.major).toBe(true)
    expect(explicit.body.warnings[0]).toMatch(/disagrees/)
  })

  it("needs a register entry of the organization for a third-party failure", async () => {
    const incident = await open(org.key)
    const missing = await classify(incident.uuid, { severity: "high", category: "third_party_failure" })
    expect(missing.status).toBe(422)
    expect(missing.body.details.issues[0].path).toBe("third_party_uuid")
    expect((await classify(incident.uuid, { severity: "high", category: "third_party_failure", third_party_uuid: "00000000-0000-0000-0000-000000000000" })).status).toBe(404)
    const theirs = await api("POST", "/third-parties", other.key, { vendor_name: "V", service_description: "d", service_type: "saas", criticality: "supporting" })
    expect((await classify(incident.uuid, { severity: "high", category: "third_party_failure", third_party_uuid: theirs.body.uuid })).status).toBe(404)
    const ours = await api("POST", "/third-parties", org.key, { vendor_name: "Cloud", service_description: "compute", service_type: "cloud_compute", criticality: "critical" })
    const done = await classify(incident.uuid, { severity: "high", category: "third_party_failure", third_party_uuid: ours.body.uuid, root_cause_classification: "third_party_issue" })
    expect(done.status).toBe(200)
    expect(done.body).toMatchObject({ third_party_uuid: ours.body.uuid, is_major: true, classification_basis: "severity" })
    expect((await classify(incident.uuid, { severity: "high", category: "Bad Token" })).status).toBe(422)
  })

  it("resolves with the measured duration when the criteria gave none: it can make the incident major", async () => {
    const incident = await open(org.key, { detected_at: ago(30 * HOUR) })
    const classified = await classify(incident.uuid, { severity: "medium", category: "system_failure", criteria: { critical_services_affected: true, reputational_impact: true } })
    expect(classified.body.is_major).toBe(false)
    const early = await resolve(incident.uuid, { resolution_summary: "fixed", resolved_at: ago(31 * HOUR) })
    expect(early.status).toBe(422)
    const late = await resolve(incident.uuid, { resolution_summary: "fixed", resolved_at: new Date(Date.now() + 10 * 60_000).toISOString() })
    expect(late.status).toBe(422)
    const resolved = await resolve(incident.uuid, { resolution_summary: "Replaced the disk", lessons_learned: "Monitor disks" })
    expect(resolved.status).toBe(200)
    expect(resolved.body).toMatchObject({ status: "resolved", is_major: true, resolution_summary: "Replaced the disk", lessons_learned: "Monitor disks" })
    expect(resolved.body.criteria.duration_hours).toBeGreaterThan(29.9)
    expect(resolved.body.rts_assessment.thresholds_met).toEqual(["reputational", "duration"])
    expect(resolved.body.became_major_at).not.toBeNull()
  })

  it("lists newest detected first, filtered by status, severity and is_major, as an offset list", async () => {
    const fresh = await registerOrg(server.url, "DORA list org")
    const a = await open(fresh.key, { detected_at: ago(3 * HOUR), title: "oldest" })
    const b = await open(fresh.key, { detected_at: ago(1 * HOUR), title: "newest" })
    const c = await open(fresh.key, { detected_at: ago(2 * HOUR), title: "middle" })
    await classify(b.uuid, { severity: "critical", category: "other" }, fresh.key)
    await classify(c.uuid, { severity: "low", category: "other" }, fresh.key)
    const all = await api("GET", "/incidents", fresh.key)
    expect(all.body).toMatchObject({ total: 3, limit: 50, offset: 0, pagination: { page: 1, per_page: 50, total: 3, has_more: false } })
    expect(all.body.items.map((i: any) => i.title)).toEqual(["newest", "middle", "oldest"])
    expect(all.body.data).toEqual(all.body.items)
    const paged = await api("GET", "/incidents?limit=1&offset=1", fresh.key)
    expect(paged.body.items.map((i: any) => i.uuid)).toEqual([c.uuid])
    expect(paged.body.pagination.has_more).toBe(true)
    expect((await api("GET", "/incidents?is_major=true", fresh.key)).body.items.map((i: any) => i.uuid)).toEqual([b.uuid])
    expect((await api("GET", "/incidents?is_major=false", fresh.key)).body.total).toBe(2)
    expect((await api("GET", "/incidents?status=detected", fresh.key)).body.items.map((i: any) => i.uuid)).toEqual([a.uuid])
    expect((await api("GET", "/incidents?severity=low", fresh.key)).body.items.map((i: any) => i.uuid)).toEqual([c.uuid])
    expect((await api("GET", "/incidents?is_major=yes", fresh.key)).status).toBe(422)
    expect((await api("GET", "/incidents?limit=101", fresh.key)).status).toBe(422)
  })
})

describe("incident reports", () => {
  const jwks = async () => (await call(server.url, "GET", "/api/v1/.well-known/jwks.json")).body.keys as Array<{ kid: string; kty: string; crv: string; x: string }>

  it.skipIf(pdftotextPath === undefined)("prints the incident and its criteria, signs once, and answers the same bytes on every download", async () => {
    const action = await call(server.url, "POST", "/api/v1/actions", { token: org.key, body: { action_type: "payment.send", details: "pay" } })
    const notarized = await call(server.url, "POST", `/api/v1/actions/${action.body.action_uuid}/notarize`, { token: org.key, body: { outcome: "completed" } })
    expect(notarized.status).toBe(200)
    const incident = await open(org.key, { title: "Ledger replication halted", related_action_uuids: [action.body.action_uuid] })
    await classify(incident.uuid, {
      severity: "high",
      category: "system_failure",
      root_cause_summary: "A schema migration locked the ledger",
      root_cause_classification: "software_bug",
      criteria: { critical_services_affected: true, member_states_affected: ["DE", "NL"], economic_impact_eur: 150_000 }
    })
    await resolve(incident.uuid, { resolution_summary: "Migration reverted", lessons_learned: "Run migrations online" })

    const first = await download(incident.uuid, admin.key)
    expect(first.status).toBe(200)
    expect(first.headers.get("content-type")).toBe("application/pdf")
    expect(first.headers.get("content-disposition")).toBe(`attachment; filename="dora-incident-${incident.uuid}.pdf"`)
    expect(Number(first.headers.get("content-length"))).toBe(first.bytes.byteLength)
    expect(first.headers.get("etag")).toBe(`"${sha256(first.bytes)}"`)
    const text = pdfText(first.bytes).replace(/\s+/g, " ")
    expect(text).toContain("Ledger replication halted")
    expect(text).toContain("Criteria met")
    expect(text).toContain("Thresholds met: geographical, economic")
    expect(text).toContain("A schema migration locked the ledger")
    expect(text).toContain("Migration reverted")
    expect(text).toContain("Run migrations online")
    expect(text).toContain(notarized.body.receipt_uuid)
    expect(text).toContain("Article 19")

    const after = (await api("GET", `/incidents/${incident.uuid}`, org.key)).body
    expect(after).toMatchObject({ status: "reported", has_report: true, report_content_hash: sha256(first.bytes), report_pdf_size_bytes: first.bytes.byteLength })
    expect(after.reported_at).toBe(after.report_signed_at)
    const second = await download(incident.uuid)
    expect(Buffer.from(second.bytes).equals(Buffer.from(first.bytes))).toBe(true)
    expect((await api("GET", `/incidents/${incident.uuid}`, org.key)).body.report_signed_at).toBe(after.report_signed_at)

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
    const jwk = (await jwks()).find((key) => key.kid === after.report_signing_key_id)!
    const key = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, format: "jwk" })
    const signature = Buffer.from(String(after.report_signature).replace(/^ed25519:/, ""), "base64url")
    expect(verify(null, signed, key, signature)).toBe(true)
    expect(verify(null, Buffer.from(signed.toString("utf8").replace(after.report_content_hash, sha256(new Uint8Array([1])))), key, signature)).toBe(false)
  })

  it.skipIf(pdftotextPath === undefined)("a non-major incident's report says no Article 19 notification is due, and it stays resolved", async () => {
    const incident = await open(org.key, { title: "Minor batch delay" })
    await classify(incident.uuid, { severity: "low", category: "operational_error" })
    await resolve(incident.uuid)
    const report = await download(incident.uuid)
    expect(report.status).toBe(200)
    expect(pdfText(report.bytes).replace(/\s+/g, " ")).toContain("no Article 19 notification is due")
    const after = (await api("GET", `/incidents/${incident.uuid}`, org.key)).body
    expect(after).toMatchObject({ status: "resolved", has_report: true, reported_at: null })
    expect(Buffer.from((await download(incident.uuid)).bytes).equals(Buffer.from(report.bytes))).toBe(true)
  })

  it("concurrent first downloads make one report", async () => {
    const incident = await open(org.key)
    await classify(incident.uuid, { severity: "critical", category: "cyber_attack" })
    await resolve(incident.uuid)
    const downloads = await Promise.all(Array.from({ length: 6 }, () => download(incident.uuid)))
    for (const d of downloads) expect(d.status).toBe(200)
    const hashes = new Set(downloads.map((d) => sha256(d.bytes)))
    expect(hashes.size).toBe(1)
    expect((await api("GET", `/incidents/${incident.uuid}`, org.key)).body.report_content_hash).toBe([...hashes][0])
  })
})

describe("third-party register", () => {
  const create = (body: Record<string, unknown>, token = org.key) =>
    api("POST", "/third-parties", token, { vendor_name: "Acme Cloud", service_description: "Hosting", service_type: "cloud_compute", criticality: "non_critical", ...body })

  it("creates with defaults and dates as UTC calendar dates; warns for a critical entry without exit strategy", async () => {
    const entry = await create({ criticality: "critical", contract_start_date: "2026-01-31T23:30:00-02:00", contract_end_date: "2027-01-31", subcontractors: ["Sub"] })
    expect(entry.status).toBe(201)
    expect(Object.keys(entry.body).sort()).toEqual(
      ["uuid", "org_uuid", "vendor_name", "service_description", "service_type", "criticality", "contract_start_date", "contract_end_date", "exit_strategy_summary",
        "subcontractors", "data_categories", "jurisdiction", "is_active", "created_at", "updated_at", "warnings", "request_id"].sort()
    )
    expect(entry.body).toMatchObject({ contract_start_date: "2026-02-01", contract_end_date: "2027-01-31", is_active: true, exit_strategy_summary: null, jurisdiction: null, data_categories: [] })
    expect(entry.body.warnings).toHaveLength(1)
    expect(entry.body.warnings[0]).toContain("28(8)")
    const fine = await create({ criticality: "critical", exit_strategy_summary: "Migrate to the second provider" })
    expect(fine.body.warnings).toEqual([])
  })

  it("refuses bad dates, an end before the start, bad tokens and enums", async () => {
    const backwards = await create({ contract_start_date: "2026-05-02", contract_end_date: "2026-05-01" })
    expect(backwards.status).toBe(422)
    expect(backwards.body.details.issues[0].path).toBe("contract_end_date")
    expect((await create({ contract_start_date: "2026-02-30" })).status).toBe(422)
    expect((await create({ service_type: "Cloud" })).status).toBe(422)
    expect((await create({ criticality: "high" })).status).toBe(422)
    expect((await create({ subcontractors: Array(101).fill("x") })).status).toBe(422)
    expect((await create({ jurisdiction: "x".repeat(65) })).status).toBe(422)
  })

  it("updates only the fields sent; null clears optional fields and is refused on required ones; {} changes nothing", async () => {
    const entry = (await create({ exit_strategy_summary: "plan", jurisdiction: "DE", contract_start_date: "2026-01-01" })).body
    const noop = await api("PUT", `/third-parties/${entry.uuid}`, org.key, {})
    expect(noop.status).toBe(200)
    expect(noop.body.updated_at).toBe(entry.updated_at)
    const patched = await api("PUT", `/third-parties/${entry.uuid}`, org.key, {
      jurisdiction: null,
      criticality: "critical",
      uuid: "ignored",
      org_uuid: "ignored",
      created_at: "2000-01-01T00:00:00Z",
      warnings: ["ignored"]
    })
    expect(patched.status).toBe(200)
    expect(patched.body).toMatchObject({ uuid: entry.uuid, org_uuid: org.orgUuid, created_at: entry.created_at, jurisdiction: null, criticality: "critical", exit_strategy_summary: "plan", vendor_name: "Acme Cloud", warnings: [] })
    const cleared = await api("PUT", `/third-parties/${entry.uuid}`, org.key, { exit_strategy_summary: null })
    expect(cleared.body.warnings).toHaveLength(1)
    const refused = await api("PUT", `/third-parties/${entry.uuid}`, org.key, { vendor_name: null, is_active: null })
    expect(refused.status).toBe(422)
    expect(refused.body.details.issues.map((i: { path: string }) => i.path)).toEqual(["vendor_name", "is_active"])
    expect((await api("PUT", `/third-parties/${entry.uuid}`, org.key, { contract_end_date: "2025-12-31" })).status).toBe(422)
    const retired = await api("PUT", `/third-parties/${entry.uuid}`, org.key, { is_active: false })
    expect(retired.body.is_active).toBe(false)
    expect((await api("GET", `/third-parties/${entry.uuid}`, member.key)).body).toMatchObject({ is_active: false, exit_strategy_summary: null })
  })

  it("lists newest first with criticality and is_active filters (without is_active: all)", async () => {
    const fresh = await registerOrg(server.url, "DORA register org")
    const a = (await create({ vendor_name: "A", criticality: "critical", exit_strategy_summary: "x" }, fresh.key)).body
    const b = (await create({ vendor_name: "B", is_active: false }, fresh.key)).body
    const c = (await create({ vendor_name: "C", criticality: "supporting" }, fresh.key)).body
    const all = await api("GET", "/third-parties", fresh.key)
    expect(all.body.items.map((t: any) => t.vendor_name)).toEqual(["C", "B", "A"])
    expect(all.body.total).toBe(3)
    expect((await api("GET", "/third-parties?is_active=false", fresh.key)).body.items.map((t: any) => t.uuid)).toEqual([b.uuid])
    expect((await api("GET", "/third-parties?is_active=true", fresh.key)).body.items.map((t: any) => t.uuid)).toEqual([c.uuid, a.uuid])
    expect((await api("GET", "/third-parties?criticality=critical", fresh.key)).body.items.map((t: any) => t.uuid)).toEqual([a.uuid])
  })
})

describe("resilience tests", () => {
  const log = (body: Record<string, unknown>, token = org.key) =>
    api("POST", "/tests", token, { test_type: "penetration_test", title: "Annual pentest", scope: "Public APIs", conducted_at: "2026-03-01", conducted_by: "Red team", status: "passed", ...body })

  it("keeps the precision of conducted_at, warns on a failed test without remediation plan, lists newest first by type", async () => {
    const fresh = await registerOrg(server.url, "DORA tests org")
    const dated = await log({}, fresh.key)
    expect(dated.status).toBe(201)
    expect(dated.body).toMatchObject({ conducted_at: "2026-03-01", status: "passed", warnings: [], findings_summary: null, remediation_plan: null, remediation_due_at: null })
    const timed = await log({ conducted_at: "2026-03-02T10:15:00+01:00", status: "failed", test_type: "tlpt" }, fresh.key)
    expect(timed.body.conducted_at).toBe("2026-03-02T09:15:00.000Z")
    expect(timed.body.warnings).toHaveLength(1)
    const planned = await log({ conducted_at: "2026-02-01", status: "partial", remediation_plan: "Patch", remediation_due_at: "2026-06-30" }, fresh.key)
    expect(planned.body).toMatchObject({ warnings: [], remediation_due_at: "2026-06-30" })
    const list = await api("GET", "/tests", fresh.key)
    expect(list.body.items.map((t: any) => t.uuid)).toEqual([timed.body.uuid, dated.body.uuid, planned.body.uuid])
    expect((await api("GET", "/tests?test_type=tlpt", fresh.key)).body.items.map((t: any) => t.uuid)).toEqual([timed.body.uuid])
    expect((await api("GET", `/tests/${dated.body.uuid}`, fresh.key)).body.uuid).toBe(dated.body.uuid)
    expect((await log({ conducted_at: "March 1st" }, fresh.key)).status).toBe(422)
    expect((await log({ status: "unknown" }, fresh.key)).status).toBe(422)
    expect((await log({ test_type: "" }, fresh.key)).status).toBe(422)
  })
})

describe("roles and scopes", () => {
  it("lets a member read, open incidents and log tests, but not classify, resolve, download or write the register", async () => {
    const incident = await open(member.token)
    expect((await api("GET", "/incidents", member.key)).status).toBe(200)
    expect((await api("POST", "/tests", member.key, { test_type: "gap_analysis", title: "t", scope: "s", conducted_at: "2026-01-01", conducted_by: "me", status: "passed" })).status).toBe(201)
    const forbidden = [
      await classify(incident.uuid, { severity: "low", category: "other" }, member.key),
      await resolve(incident.uuid, { resolution_summary: "x" }, member.token),
      await download(incident.uuid, member.key),
      await api("POST", "/third-parties", member.key, { vendor_name: "V", service_description: "d", service_type: "saas", criticality: "supporting" }),
      await api("PUT", `/third-parties/00000000-0000-0000-0000-000000000000`, member.key, {})
    ]
    expect(forbidden.map((reply) => reply.status)).toEqual([403, 403, 403, 403, 403])
    expect((await classify(incident.uuid, { severity: "low", category: "other" }, admin.token)).status).toBe(200)
  })

  it("needs dora:read to read and dora:write to write", async () => {
    const readOnly = await call(server.url, "POST", "/api/v1/api-keys", { token: org.token, body: { name: "dora reader", scopes: ["dora:read"] } })
    expect(readOnly.status).toBe(201)
    expect((await api("GET", "/incidents", readOnly.body.key)).status).toBe(200)
    expect((await api("POST", "/incidents", readOnly.body.key, { title: "t", description: "d", detected_at: ago(0) })).status).toBe(403)
    const incident = await open(org.key)
    expect((await classify(incident.uuid, { severity: "low", category: "other" }, readOnly.body.key)).status).toBe(403)
    await classify(incident.uuid, { severity: "low", category: "other" })
    await resolve(incident.uuid)
    // The owner's read-only key may download the report (a read); a member's may not (role).
    expect((await download(incident.uuid, readOnly.body.key)).status).toBe(200)
    const unrelated = await call(server.url, "POST", "/api/v1/api-keys", { token: org.token, body: { name: "actions only", scopes: ["actions:write"] } })
    expect((await api("GET", "/tests", unrelated.body.key)).status).toBe(403)
    expect((await api("GET", "/incidents", "svc_live_nope")).status).toBe(401)
  })

  it("answers 404 for another organization's incidents, entries and tests", async () => {
    const incident = await open(org.key)
    const entry = (await api("POST", "/third-parties", org.key, { vendor_name: "V", service_description: "d", service_type: "saas", criticality: "supporting" })).body
    const test = (await api("POST", "/tests", org.key, { test_type: "other", title: "t", scope: "s", conducted_at: "2026-01-01", conducted_by: "me", status: "passed" })).body
    for (const path of [`/incidents/${incident.uuid}`, `/third-parties/${entry.uuid}`, `/tests/${test.uuid}`]) expect((await api("GET", path, other.key)).status).toBe(404)
    expect((await classify(incident.uuid, { severity: "low", category: "other" }, other.token)).status).toBe(404)
    expect((await api("PUT", `/third-parties/${entry.uuid}`, other.token, { vendor_name: "mine" })).status).toBe(404)
    expect((await api("GET", "/incidents", other.key)).body.items.map((i: any) => i.uuid)).not.toContain(incident.uuid)
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

describe("the dora flag", () => {
  let off: TestServer
  let orgA: Org
  let orgB: Org
  beforeAll(async () => {
    off = await startServer({ ENABLE_DORA: "false" })
    orgA = await registerOrg(off.url, "DORA off A")
    orgB = await registerOrg(off.url, "DORA off B")
  }, 120_000)
  afterAll(() => off?.stop())

  const statuses = async (base: string, token: string, id: string, body?: "invalid") =>
    Promise.all(
      everyRoute(id).map(async ([method, path, valid]) => {
        const reply = await call(base, method, `/api/v1/dora${path}`, { token, body: body === "invalid" && valid !== undefined ? { title: 5 } : valid })
        return `${method} ${path.replace(id, ":uuid")} ${reply.status} ${reply.body?.code ?? ""}`
      })
    )
  const all404 = (id: string) => everyRoute(id).map(([method, path]) => `${method} ${path.replace(id, ":uuid")} 404 NOT_FOUND`)

  it("is on by default: the main server answers", async () => {
    expect((await api("GET", "/incidents", org.key)).status).toBe(200)
  })

  it("ENABLE_DORA=false answers 404 NOT_FOUND on every route, before validation; no credential is still 401", async () => {
    const id = "00000000-0000-0000-0000-000000000000"
    expect(await statuses(off.url, orgA.key, id)).toEqual(all404(id))
    expect(await statuses(off.url, orgA.token, id, "invalid")).toEqual(all404(id))
    expect((await call(off.url, "GET", "/api/v1/dora/incidents")).status).toBe(401)
  })

  it("a stored flag decides per organization: listed → on, others off", async () => {
    const created = await call(off.url, "POST", "/api/v1/admin/feature-flags", {
      headers: { "x-admin-key": "test-admin-key" },
      body: { key: "dora", enabled_global: false, enabled_org_ids: [orgB.orgUuid] }
    })
    expect(created.status).toBe(201)
    const incident = await call(off.url, "POST", "/api/v1/dora/incidents", { token: orgB.key, body: { title: "t", description: "d", detected_at: ago(0) } })
    expect(incident.status).toBe(201)
    expect((await call(off.url, "GET", "/api/v1/dora/incidents", { token: orgB.key })).body.total).toBe(1)
    expect(await statuses(off.url, orgA.key, incident.body.uuid)).toEqual(all404(incident.body.uuid))
    // The organization turns it off for itself (its own entry): every route 404 for it too.
    const toggled = await call(off.url, "PUT", "/api/v1/feature-flags/dora", { token: orgB.token, body: { enabled: false } })
    expect(toggled.status).toBe(200)
    expect(await statuses(off.url, orgB.key, incident.body.uuid)).toEqual(all404(incident.body.uuid))
  })
})
