/**
 * Compliance reports end to end: each framework generated from real authorized and notarized
 * actions, the stored PDF answered byte-identical and read back with pdftotext, the verify route
 * (and the portable verifier and CLI) passing and then failing once the stored bytes, the
 * descriptor or the signature are altered in the database, the contract's 422s, 404s and 409s,
 * the role rule, lists, and the Article 9 observations.
 */
import { execFile } from "node:child_process"
import { writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { reportDescriptor, verifyReportDescriptor } from "../protocol/verifier/index.js"
import { addMember, call, type Org, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { pdfText, pdftotextPath } from "./support/pdf-text.js"
import { useServer } from "./support/server.js"

const server = useServer()
const org = useFixture(() => registerOrg(server.url, "Reporting Org"))

const REPORT_KEYS = [
  "id",
  "report_uuid",
  "framework",
  "status",
  "org_uuid",
  "period_start",
  "period_end",
  "action_uuid",
  "agent_filter",
  "receipt_count",
  "pdf_size_bytes",
  "content_hash",
  "signature",
  "signing_key_id",
  "timestamp_token",
  "timestamp_token_present",
  "report_metadata",
  "error_message",
  "generated_at",
  "retain_until",
  "created_at",
  "request_id"
].sort()

/** Authorizes and notarizes one action; answers its uuid. */
const act = async (owner: Org, body: Record<string, unknown>, outcome = "completed") => {
  const created = await call(server.url, "POST", "/api/v1/actions", { token: owner.key, body: { details: "do it", ...body } })
  expect(created.status, created.text).toBe(201)
  if (created.body.status === "authorized") {
    const done = await call(server.url, "POST", `/api/v1/actions/${created.body.action_uuid}/notarize`, { token: owner.key, body: { outcome } })
    expect(done.status, done.text).toBe(200)
  }
  return created.body.action_uuid as string
}

/** An ISO instant without its zone (the SDK tests send `2026-04-01T00:00:00`). */
const zoneless = (ms: number) => new Date(ms).toISOString().slice(0, 19)
const hourAround = () => ({ period_start: zoneless(Date.now() - 3_600_000), period_end: zoneless(Date.now() + 3_600_000) })

const createReport = (owner: Org, body: Record<string, unknown>, token = owner.key) => call(server.url, "POST", "/api/v1/compliance/reports", { token, body })

const download = (owner: Org, id: string) =>
  fetch(`${server.url}/api/v1/compliance/reports/${id}/download`, { headers: { authorization: `Bearer ${owner.key}` } }).then(async (response) => ({
    status: response.status,
    headers: response.headers,
    bytes: new Uint8Array(await response.arrayBuffer())
  }))

const sql = <A>(run: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => server.run(Effect.flatMap(SqlClient.SqlClient, run))

const jwks = async () => (await call(server.url, "GET", "/api/v1/.well-known/jwks.json")).body.keys

describe("compliance reports", () => {
  it("Article 12 lists the period's receipts by agent, downloads the same stored bytes each time and verifies until altered", async () => {
    const owner = await registerOrg(server.url, "Art12 Org")
    const first = await act(owner, { action_type: "payment", agent_id: "payer", agent_version: "1.2.0", model_id: "gpt-x", model_version: "2026-01" })
    await act(owner, { action_type: "payment", agent_id: "payer", agent_version: "1.2.0", model_id: "gpt-x", model_version: "2026-01" }, "failed")
    // A human approval, so the file names an approver.
    const pending = await call(server.url, "POST", "/api/v1/actions", { token: owner.key, body: { action_type: "refund", details: "refund", agent_id: "refunder", require_approval: true } })
    expect(pending.body.status).toBe("pending_approval")
    expect((await call(server.url, "POST", `/api/v1/actions/${pending.body.action_uuid}/dashboard-approve`, { token: owner.token, body: {} })).status).toBe(200)
    expect((await call(server.url, "POST", `/api/v1/actions/${pending.body.action_uuid}/notarize`, { token: owner.key, body: { outcome: "completed" } })).status).toBe(200)
    // Outside the agent filter, and in another organization: not counted.
    await act(owner, { action_type: "lookup", agent_id: "elsewhere" })
    await act(org, { action_type: "payment", agent_id: "payer" })

    const period = hourAround()
    const created = await createReport(owner, { framework: "eu_ai_act_art12", ...period, agent_filter: ["payer", "refunder", "payer"] })
    expect(created.status, created.text).toBe(201)
    const report = created.body
    expect(Object.keys(report).sort()).toEqual(REPORT_KEYS)
    expect(report).toMatchObject({
      id: report.report_uuid,
      framework: "eu_ai_act_art12",
      status: "ready",
      org_uuid: owner.orgUuid,
      action_uuid: null,
      agent_filter: ["payer", "refunder"],
      receipt_count: 3,
      error_message: null,
      timestamp_token_present: true,
      signing_key_id: expect.stringMatching(/^rk_/),
      content_hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      signature: expect.stringMatching(/^ed25519:/)
    })
    // Zoneless input is UTC; answers carry Z.
    expect(report.period_start).toBe(`${period.period_start}.000Z`)
    expect(report.period_end).toBe(`${period.period_end}.000Z`)
    expect(report.report_metadata).toEqual({
      retention_requirement_years: 6,
      article: "12",
      total_actions: 3,
      distinct_agents: 2,
      distinct_models: 1,
      status_breakdown: { notarized: 2, failed: 1 }
    })
    const retain = new Date(report.generated_at)
    retain.setUTCFullYear(retain.getUTCFullYear() + 6)
    expect(report.retain_until).toBe(retain.toISOString())

    // The stored bytes, twice, with the download headers.
    const one = await download(owner, report.id)
    const two = await download(owner, report.id)
    expect(one.status).toBe(200)
    expect(one.headers.get("content-type")).toBe("application/pdf")
    expect(one.headers.get("content-disposition")).toBe(`attachment; filename="eu_ai_act_art12-${report.id}.pdf"`)
    expect(one.headers.get("content-length")).toBe(String(report.pdf_size_bytes))
    expect(one.headers.get("etag")).toBe(`"${report.content_hash}"`)
    expect(Buffer.from(one.bytes).equals(Buffer.from(two.bytes))).toBe(true)
    expect(one.bytes.length).toBe(report.pdf_size_bytes)
    if (pdftotextPath !== undefined) {
      const text = pdfText(one.bytes).replace(/\s+/g, " ")
      expect(text).toContain("Article 12")
      expect(text).toContain("Agent payer - 2 receipts")
      expect(text).toContain("Agent refunder - 1 receipt")
      expect(text).not.toContain("elsewhere")
      expect(text).toContain(first)
      expect(text).toContain(owner.email)
      expect(text).toContain(report.signing_key_id)
    }

    // Metadata and list reads.
    const got = await call(server.url, "GET", `/api/v1/compliance/reports/${report.id}`, { token: owner.key })
    expect(got.status).toBe(200)
    expect({ ...got.body, request_id: undefined }).toEqual({ ...report, request_id: undefined })

    // Verified by the route and by the portable verifier with the JWKS.
    const verified = await call(server.url, "GET", `/api/v1/compliance/reports/${report.id}/verify`, { token: owner.key })
    expect(verified.status).toBe(200)
    expect(verified.body).toMatchObject({
      report_uuid: report.id,
      valid: true,
      checks: { key_known: true, content_hash_matches: true, signature_valid: true, timestamp_token_matches: true }
    })
    expect(verified.body.descriptor).toEqual(reportDescriptor(report))
    expect(Object.keys(verified.body.descriptor)).toHaveLength(12)
    const keys = await jwks()
    expect(verifyReportDescriptor({ descriptor: report, signature: report.signature, signing_key_id: report.signing_key_id, timestamp_token: report.timestamp_token }, keys, one.bytes).valid).toBe(true)

    // The stored bytes altered: the content check fails, the descriptor still verifies.
    await sql((db) => db`UPDATE compliance_report_pdfs SET pdf = pdf || '\\x00'::bytea WHERE report_uuid = ${report.id}`)
    const tampered = await call(server.url, "GET", `/api/v1/compliance/reports/${report.id}/verify`, { token: owner.key })
    expect(tampered.body.valid).toBe(false)
    expect(tampered.body.checks.content_hash_matches).toEqual(expect.stringContaining("hashes to"))
    expect(tampered.body.checks.signature_valid).toBe(true)

    // The descriptor altered (one more receipt claimed): the signature and the token no longer match.
    await sql((db) => db`UPDATE compliance_report_pdfs SET pdf = substring(pdf from 1 for ${report.pdf_size_bytes}) WHERE report_uuid = ${report.id}`)
    expect((await call(server.url, "GET", `/api/v1/compliance/reports/${report.id}/verify`, { token: owner.key })).body.valid).toBe(true)
    await sql((db) => db`UPDATE compliance_reports SET receipt_count = receipt_count + 1 WHERE report_uuid = ${report.id}`)
    const inflated = await call(server.url, "GET", `/api/v1/compliance/reports/${report.id}/verify`, { token: owner.key })
    expect(inflated.body.valid).toBe(false)
    expect(inflated.body.checks.signature_valid).toBe("the signature does not match the descriptor")
    expect(inflated.body.checks.timestamp_token_matches).toEqual(expect.stringContaining("imprint differs"))
    expect(inflated.body.descriptor.receipt_count).toBe(4)

    // The signature swapped for another report's.
    await sql((db) => db`UPDATE compliance_reports SET receipt_count = receipt_count - 1 WHERE report_uuid = ${report.id}`)
    const other = (await createReport(owner, { framework: "eu_ai_act_art12", ...period })).body
    await sql((db) => db`UPDATE compliance_reports SET signature = ${other.signature} WHERE report_uuid = ${report.id}`)
    const swapped = await call(server.url, "GET", `/api/v1/compliance/reports/${report.id}/verify`, { token: owner.key })
    expect(swapped.body.valid).toBe(false)
    expect(swapped.body.checks.signature_valid).toBe("the signature does not match the descriptor")
    expect(swapped.body.checks.timestamp_token_matches).toBe(true)
  }, 120_000)
})
