/**
 * Compliance reports end to end: each framework generated from real authorized and notarized
 * actions, the stored PDF answered byte-identical and read back with pdftotext, the verify route
 * (and the portable verifier and CLI) passing and then failing once the stored bytes, the
 * descriptor or the signature are altered in the database, the contract's 422s, 404s and 409s,
 * the role rule, lists, and the Article 9 observations. Over the typed client (HttpApiClient over
 * GatewayApi); bodies and queries outside the contract go raw (`raw`).
 */
import { execFile } from "node:child_process"
import { writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { expect } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql"
import type { AuthorizeRequest } from "../protocol/actions.js"
import type { CreateReportRequest } from "../protocol/compliance.js"
import { reportDescriptor, verifyReportDescriptor } from "../protocol/verifier/index.js"
import { Explanations } from "../src/explanations/service.js"
import { answer, client, clientAt, member, raw, register } from "./support/api.js"
import type { Org } from "./support/client.js"
import { liveLayer } from "./support/effect.js"
import { pdfText, pdftotextPath } from "./support/pdf-text.js"
import { Gateway, type TestServer } from "./support/server.js"

/** A server whose Article 12 reports list at most one receipt, so a larger period gives a `failed` report. */
class Capped extends Context.Service<Capped, TestServer>()("test/compliance/Capped") {}
class Orgs extends Context.Service<Orgs, { readonly org: Org }>()("test/compliance/Orgs") {}

const Setup = Layer.mergeAll(
  Layer.effect(Orgs, Effect.map(register("Reporting Org"), (org) => ({ org }))).pipe(Layer.provideMerge(Gateway.layer())),
  Layer.effect(Capped, Effect.map(Gateway, (server) => server)).pipe(Layer.provide(Gateway.layer({ COMPLIANCE_MAX_REPORT_RECEIPTS: "1" })))
)

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
const act = (owner: Org, body: Omit<AuthorizeRequest, "details">, outcome = "completed") =>
  Effect.gen(function* () {
    const api = yield* client(owner.key)
    const [created, createdReply] = yield* api.actions.authorize({ headers: {}, payload: { details: "do it", ...body }, responseMode: "decoded-and-response" })
    expect(createdReply.status).toBe(201)
    if (created.status === "authorized") {
      const [, done] = yield* api.actions.notarize({ params: { action_uuid: created.action_uuid }, payload: { outcome }, responseMode: "decoded-and-response" })
      expect(done.status).toBe(200)
    }
    return created.action_uuid
  })

/** An ISO instant without its zone (the SDK tests send `2026-04-01T00:00:00`). */
const zoneless = (ms: number) => new Date(ms).toISOString().slice(0, 19)
const hourAround = () => ({ period_start: zoneless(Date.now() - 3_600_000), period_end: zoneless(Date.now() + 3_600_000) })

/** A report as created (201), decoded, with the answer's body as sent (for its keys). */
const createReport = (payload: CreateReportRequest, token: string) =>
  Effect.gen(function* () {
    const [report, reply] = yield* (yield* client(token)).compliance.createReport({ payload, responseMode: "decoded-and-response" })
    expect(reply.status).toBe(201)
    return { report, sent: (yield* reply.json) as Record<string, unknown> }
  })
/** A report creation as answered (status and JSON body). */
const tryReport = (payload: CreateReportRequest, token: string) =>
  Effect.flatMap(client(token), (api) => answer(api.compliance.createReport({ payload, responseMode: "response-only" })))

/** The report's PDF as answered: status, headers and bytes. */
const download = (owner: Org, id: string) =>
  Effect.gen(function* () {
    const reply = yield* (yield* client(owner.key)).compliance.downloadReport({ params: { report_uuid: id }, responseMode: "response-only" })
    return { status: reply.status, headers: reply.headers, bytes: new Uint8Array(yield* reply.arrayBuffer) }
  })
const verifyReport = (owner: Org, id: string) => Effect.flatMap(client(owner.key), (api) => api.compliance.verifyReport({ params: { report_uuid: id } }))

const sql = <A>(run: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  Effect.flatMap(Gateway, (server) => Effect.promise(() => server.run(Effect.flatMap(SqlClient.SqlClient, run))))


liveLayer(Setup)((it) => {
  it.describe("compliance reports", () => {
    it.effect(
      "Article 12 lists the period's receipts by agent, downloads the same stored bytes each time and verifies until altered",
      () =>
        Effect.gen(function* () {
          const { org } = yield* Orgs
          const owner = yield* register("Art12 Org")
          const api = yield* client(owner.key)
          const first = yield* act(owner, { action_type: "payment", agent_id: "payer", agent_version: "1.2.0", model_id: "gpt-x", model_version: "2026-01" })
          yield* act(owner, { action_type: "payment", agent_id: "payer", agent_version: "1.2.0", model_id: "gpt-x", model_version: "2026-01" }, "failed")
          // A human approval, so the file names an approver.
          const pending = yield* api.actions.authorize({
            headers: {},
            payload: { action_type: "refund", details: "refund", agent_id: "refunder", require_approval: true }
          })
          expect(pending.status).toBe("pending_approval")
          const pendingParams = { action_uuid: pending.action_uuid }
          expect((yield* (yield* client(owner.token)).actions.dashboardApprove({ params: pendingParams, responseMode: "response-only" })).status).toBe(200)
          expect((yield* api.actions.notarize({ params: pendingParams, payload: { outcome: "completed" }, responseMode: "response-only" })).status).toBe(200)
          // A policy denial: its receipt names the policy's decision.
          const policy = yield* api.policies.create({
            payload: { name: "no wires", mode: "rules", decision: "deny", conditions: [{ field: "action_type", op: "eq", value: "wire" }], activate: true },
            responseMode: "response-only"
          })
          expect(policy.status).toBe(201)
          const wire = yield* answer(
            api.actions.authorize({ headers: {}, payload: { action_type: "wire", details: "all of it", agent_id: "payer" }, responseMode: "response-only" })
          )
          expect(wire.body.code).toBe("POLICY_DENIED")
          // Outside the agent filter, and in another organization: not counted.
          yield* act(owner, { action_type: "lookup", agent_id: "elsewhere" })
          yield* act(org, { action_type: "payment", agent_id: "payer" })

          const period = hourAround()
          const { report, sent } = yield* createReport({ framework: "eu_ai_act_art12", ...period, agent_filter: ["payer", "refunder", "payer"] }, owner.key)
          expect(Object.keys(sent).sort()).toEqual(REPORT_KEYS)
          expect(report).toMatchObject({
            id: report.report_uuid,
            framework: "eu_ai_act_art12",
            status: "ready",
            org_uuid: owner.orgUuid,
            action_uuid: null,
            agent_filter: ["payer", "refunder"],
            receipt_count: 4,
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
            total_actions: 4,
            distinct_agents: 2,
            distinct_models: 1,
            status_breakdown: { notarized: 2, failed: 1, denied_by_policy: 1 }
          })
          const retain = new Date(report.generated_at!)
          retain.setUTCFullYear(retain.getUTCFullYear() + 6)
          expect(report.retain_until).toBe(retain.toISOString())

          // The stored bytes, twice, with the download headers.
          const one = yield* download(owner, report.id)
          const two = yield* download(owner, report.id)
          expect(one.status).toBe(200)
          expect(one.headers["content-type"]).toBe("application/pdf")
          expect(one.headers["content-disposition"]).toBe(`attachment; filename="eu_ai_act_art12-${report.id}.pdf"`)
          expect(one.headers["content-length"]).toBe(String(report.pdf_size_bytes))
          expect(one.headers.etag).toBe(`"${report.content_hash}"`)
          expect(Buffer.from(one.bytes).equals(Buffer.from(two.bytes))).toBe(true)
          expect(one.bytes.length).toBe(report.pdf_size_bytes)
          if (pdftotextPath !== undefined) {
            const text = pdfText(one.bytes).replace(/\s+/g, " ")
            expect(text).toContain("Article 12")
            expect(text).toContain("Agent payer - 3 receipts")
            expect(text).toContain("no wires: deny (rules)")
            expect(text).toContain("policy decisions: 1 evaluated, 0 allow")
            expect(text).toContain("policy decisions: no policy evaluated")
            expect(text).toContain("Agent refunder - 1 receipt")
            expect(text).not.toContain("elsewhere")
            expect(text).toContain(first)
            expect(text).toContain(owner.email)
            expect(text).toContain(report.signing_key_id)
          }

          // Metadata and list reads.
          const [got, gotReply] = yield* api.compliance.getReport({ params: { report_uuid: report.id }, responseMode: "decoded-and-response" })
          expect(gotReply.status).toBe(200)
          expect(got).toEqual(report)

          // Verified by the route and by the portable verifier with the JWKS.
          const [verified, verifiedReply] = yield* api.compliance.verifyReport({ params: { report_uuid: report.id }, responseMode: "decoded-and-response" })
          expect(verifiedReply.status).toBe(200)
          expect(verified).toMatchObject({
            report_uuid: report.id,
            valid: true,
            checks: { key_known: true, content_hash_matches: true, signature_valid: true, timestamp_token_matches: true }
          })
          expect(verified.descriptor).toEqual(reportDescriptor(report))
          expect(Object.keys(verified.descriptor)).toHaveLength(12)
          const { keys } = yield* (yield* client()).receiptsPublic.jwks({})
          expect(
            verifyReportDescriptor({ descriptor: report, signature: report.signature, signing_key_id: report.signing_key_id, timestamp_token: report.timestamp_token }, keys, one.bytes)
              .valid
          ).toBe(true)

          // The stored bytes altered: the content check fails, the descriptor still verifies.
          yield* sql((db) => db`UPDATE compliance_report_pdfs SET pdf = pdf || '\\x00'::bytea WHERE report_uuid = ${report.id}`)
          const tampered = yield* verifyReport(owner, report.id)
          expect(tampered.valid).toBe(false)
          expect(tampered.checks.content_hash_matches).toEqual(expect.stringContaining("hashes to"))
          expect(tampered.checks.signature_valid).toBe(true)

          // The descriptor altered (one more receipt claimed): the signature and the token no longer match.
          yield* sql((db) => db`UPDATE compliance_report_pdfs SET pdf = substring(pdf from 1 for ${report.pdf_size_bytes}) WHERE report_uuid = ${report.id}`)
          expect((yield* verifyReport(owner, report.id)).valid).toBe(true)
          yield* sql((db) => db`UPDATE compliance_reports SET receipt_count = receipt_count + 1 WHERE report_uuid = ${report.id}`)
          const inflated = yield* verifyReport(owner, report.id)
          expect(inflated.valid).toBe(false)
          expect(inflated.checks.signature_valid).toBe("the signature does not match the descriptor")
          expect(inflated.checks.timestamp_token_matches).toEqual(expect.stringContaining("imprint differs"))
          expect(inflated.descriptor.receipt_count).toBe(report.receipt_count + 1)

          // The signature swapped for another report's.
          yield* sql((db) => db`UPDATE compliance_reports SET receipt_count = receipt_count - 1 WHERE report_uuid = ${report.id}`)
          const other = (yield* createReport({ framework: "eu_ai_act_art12", ...period }, owner.key)).report
          yield* sql((db) => db`UPDATE compliance_reports SET signature = ${other.signature} WHERE report_uuid = ${report.id}`)
          const swapped = yield* verifyReport(owner, report.id)
          expect(swapped.valid).toBe(false)
          expect(swapped.checks.signature_valid).toBe("the signature does not match the descriptor")
          expect(swapped.checks.timestamp_token_matches).toBe(true)
        }),
      120_000
    )

    it.effect(
      "Article 9 sorts the period's actions into Annex III categories and refreshes one observation per agent and category",
      () =>
        Effect.gen(function* () {
          const { org } = yield* Orgs
          const owner = yield* register("Art9 Org")
          const api = yield* client(owner.key)
          const face = yield* act(owner, { action_type: "face_match", agent_id: "gate" })
          yield* act(owner, { action_type: "Face.Verify", agent_id: "gate" })
          const loan = yield* act(owner, { action_type: "loan-approval", agent_id: "lender" })
          // The context names the category: it wins over the keyword.
          const flagged = yield* act(owner, { action_type: "loan_check", agent_id: "lender", context: { art9_category: "law_enforcement" } })
          // A context value that names no category is ignored.
          yield* act(owner, { action_type: "exam grading", agent_id: "tutor", context: { art9_category: "not_a_category" } })
          const plain = yield* act(owner, { action_type: "weather_lookup" })

          const { report } = yield* createReport({ framework: "eu_ai_act_art9", ...hourAround() }, owner.key)
          expect(report).toMatchObject({ status: "ready", receipt_count: 6, error_message: null })
          // The metadata is free-form in the contract: read loosely.
          const metadata = report.report_metadata as any
          const categories = metadata.categories
          expect(metadata.retention_requirement_years).toBe(6)
          expect(Object.keys(categories)).toEqual([
            "biometric_identification",
            "critical_infrastructure",
            "education_vocational",
            "employment_hr",
            "essential_services",
            "law_enforcement",
            "migration_asylum",
            "justice_democracy",
            "other"
          ])
          expect(categories.biometric_identification).toEqual({ count: 2, risk_level: "high", annex_iii_point: 1, sample_action_uuids: [face, expect.any(String)] })
          expect(categories.essential_services).toEqual({ count: 1, risk_level: "high", annex_iii_point: 5, sample_action_uuids: [loan] })
          expect(categories.law_enforcement).toEqual({ count: 1, risk_level: "high", annex_iii_point: 6, sample_action_uuids: [flagged] })
          expect(categories.education_vocational.count).toBe(1)
          expect(categories.other).toEqual({ count: 1, risk_level: "low", annex_iii_point: null, sample_action_uuids: [plain] })
          expect(categories.critical_infrastructure.count).toBe(0)
          expect((yield* verifyReport(owner, report.id)).valid).toBe(true)

          const [route, routeReply] = yield* api.compliance.art9Categories({ query: {}, responseMode: "decoded-and-response" })
          expect(routeReply.status).toBe(200)
          expect(route.categories).toHaveLength(9)
          expect(route.categories[0]).toEqual({ key: "biometric_identification", annex_iii_point: 1, title: "Biometrics", risk_level: "high" })
          expect(route.categories[8]).toEqual({ key: "other", annex_iii_point: null, title: "Not in Annex III", risk_level: "low" })
          const observed = route.observations.map((o) => `${o.agent_id}/${o.category}/${o.action_count}/${o.last_report_id === report.id}`)
          expect(observed).toEqual([
            "_default/other/1/true",
            "gate/biometric_identification/2/true",
            "lender/essential_services/1/true",
            "lender/law_enforcement/1/true",
            "tutor/education_vocational/1/true"
          ])
          const first = route.observations.find((o) => o.agent_id === "gate")!
          expect(first).toMatchObject({ risk_level: "high", first_seen_at: expect.stringMatching(/Z$/), last_seen_at: expect.stringMatching(/Z$/) })

          // A second report over a new action: the observation is updated in place, not duplicated.
          yield* act(owner, { action_type: "fingerprint_scan", agent_id: "gate" })
          const again = (yield* createReport({ framework: "eu_ai_act_art9", ...hourAround(), agent_filter: ["gate"] }, owner.key)).report
          expect((again.report_metadata as any).categories.biometric_identification.count).toBe(3)
          const gate = yield* api.compliance.art9Categories({ query: { agent_id: "gate" } })
          expect(gate.observations).toHaveLength(1)
          expect(gate.observations[0]).toMatchObject({ agent_id: "gate", category: "biometric_identification", action_count: 3, last_report_id: again.id, first_seen_at: first.first_seen_at })
          expect(Date.parse(gate.observations[0]!.last_seen_at)).toBeGreaterThan(Date.parse(first.last_seen_at))
          const lender = yield* api.compliance.art9Categories({ query: { category: "law_enforcement" } })
          expect(lender.observations.map((o) => o.agent_id)).toEqual(["lender"])
          expect((yield* api.compliance.art9Categories({ query: { category: "nope" }, responseMode: "response-only" })).status).toBe(422)
          // Another organization sees none of them.
          expect((yield* (yield* client(org.key)).compliance.art9Categories({ query: {} })).observations).toEqual([])

          if (pdftotextPath !== undefined) {
            const text = pdfText((yield* download(owner, report.id)).bytes).replace(/\s+/g, " ")
            expect(text).toContain("Article 9")
            expect(text).toContain("Annex III point 1, high risk")
            expect(text).toContain("gate biometric_identification (high)")
            expect(text).toContain("lender law_enforcement (high)")
            expect(text).toContain(face)
          }
        }),
      120_000
    )

    it.effect(
      "Annex IV prints the provider's sections, marks the rest not provided and lists them",
      () =>
        Effect.gen(function* () {
          const owner = yield* register("Annex Org")
          yield* act(owner, { action_type: "payment", agent_id: "payer", agent_version: "3.1", model_id: "claude-x", model_version: "7" })
          const { report } = yield* createReport(
            {
              framework: "eu_ai_act_annex_iv",
              period_start: new Date(Date.now() - 86_400_000).toISOString().slice(0, 10),
              period_end: new Date(Date.now() + 86_400_000).toISOString().slice(0, 10),
              documentation: { section_1: "Pays supplier invoices under 10,000 EUR.", section_7: "ISO/IEC 42001:2023", section_8: "   " }
            },
            owner.key
          )
          expect(report.retain_until!.slice(0, 4)).toBe(String(new Date(report.generated_at!).getUTCFullYear() + 10))
          expect(report.period_start).toMatch(/T00:00:00\.000Z$/)
          expect(report.period_end).toMatch(/T23:59:59\.999Z$/)
          const metadata = report.report_metadata as any
          expect(metadata).toMatchObject({ retention_requirement_years: 10, annex: "IV", article_reference: "11", total_actions: 1 })
          expect(metadata.missing_sections).toEqual(["section_2", "section_3", "section_4", "section_5", "section_6", "section_8", "section_9"])
          expect(metadata.sections).toHaveLength(9)
          expect(metadata.sections[0]).toEqual({ key: "section_1", point: 1, title: "General description of the AI system", provided: true })
          expect((yield* verifyReport(owner, report.id)).valid).toBe(true)
          if (pdftotextPath !== undefined) {
            const text = pdfText((yield* download(owner, report.id)).bytes).replace(/\s+/g, " ")
            expect(text).toContain("Pays supplier invoices under 10,000 EUR.")
            expect(text).toContain("ISO/IEC 42001:2023")
            expect(text.match(/not provided/g)).toHaveLength(7)
            expect(text).toContain("9. Post-market monitoring system")
            expect(text).toContain("claude-x")
          }
        }),
      60_000
    )

    it.effect(
      "refuses bad requests with the contract's codes",
      () =>
        Effect.gen(function* () {
          const { org } = yield* Orgs
          const api = yield* client(org.key)
          const period = hourAround()
          const judged = (body: unknown, reply: { readonly status: number; readonly body: any }, status: number, path?: string) => {
            expect(reply.status, JSON.stringify(body)).toBe(status)
            expect(reply.body.code).toBe(status === 422 ? "VALIDATION_ERROR" : "NOT_FOUND")
            if (path !== undefined) expect(reply.body.details.issues.map((issue: { path: string }) => issue.path)).toContain(path)
            return reply
          }
          const refused = (payload: CreateReportRequest, status: number, path?: string) =>
            Effect.map(tryReport(payload, org.key), (reply) => judged(payload, reply, status, path))
          // Raw: bodies outside the contract (an unknown framework, none, an empty or too long agent_filter).
          const refusedRaw = (body: Record<string, unknown>, status: number, path: string) =>
            Effect.map(raw("POST", "/api/v1/compliance/reports", { token: org.key, body }), (reply) => judged(body, reply, status, path))
          yield* refusedRaw({ framework: "sox_404", ...period }, 422, "framework")
          yield* refusedRaw({ ...period }, 422, "framework")
          yield* refused({ framework: "eu_ai_act_art12" }, 422, "period_start")
          const both = yield* refused({ framework: "eu_ai_act_art9", period_start: period.period_start }, 422, "period_end")
          expect(both.body.details.issues).toHaveLength(1)
          yield* refused({ framework: "eu_ai_act_annex_iv", period_start: "2026-04-02T00:00:00", period_end: "2026-04-01T00:00:00" }, 422, "period_end")
          yield* refused({ framework: "eu_ai_act_art12", period_start: "2025-01-01T00:00:00Z", period_end: "2026-01-03T00:00:00Z" }, 422, "period_end")
          yield* refused({ framework: "eu_ai_act_art12", period_start: "yesterday", period_end: "2026-01-03T00:00:00Z" }, 422, "period_start")
          yield* refused({ framework: "eu_ai_act_art6" }, 422, "action_uuid")
          yield* refusedRaw({ framework: "eu_ai_act_art12", ...period, agent_filter: [] }, 422, "agent_filter")
          yield* refusedRaw({ framework: "eu_ai_act_art12", ...period, agent_filter: Array.from({ length: 101 }, (_, i) => `a${i}`) }, 422, "agent_filter")
          yield* refused({ framework: "eu_ai_act_art6", action_uuid: "act_does_not_exist" }, 404)
          // 366 days is the longest period.
          expect((yield* tryReport({ framework: "eu_ai_act_art12", period_start: "2025-01-01T00:00:00Z", period_end: "2026-01-02T00:00:00Z" }, org.key)).status).toBe(201)
          expect((yield* api.compliance.getReport({ params: { report_uuid: "not-a-report" }, responseMode: "response-only" })).status).toBe(404)
          const missing = yield* answer(api.compliance.downloadReport({ params: { report_uuid: "00000000-0000-0000-0000-000000000000" }, responseMode: "response-only" }))
          expect(missing.body.code).toBe("NOT_FOUND")
        }),
      60_000
    )

    it.effect(
      "lets owners and admins create, any role read, and lists newest first with filters",
      () =>
        Effect.gen(function* () {
          const owner = yield* register("Roles Org")
          const teammate = yield* member(owner, "member")
          const admin = yield* member(owner, "admin")
          const reading = yield* client(teammate.key)
          const period = hourAround()
          const denied = yield* tryReport({ framework: "eu_ai_act_art12", ...period }, teammate.key)
          expect(denied.status).toBe(403)
          expect(denied.body.code).toBe("FORBIDDEN")
          const a = (yield* createReport({ framework: "eu_ai_act_art12", ...period }, admin.key)).report
          const b = (yield* createReport({ framework: "eu_ai_act_art9", ...period }, owner.token)).report
          const c = (yield* createReport({ framework: "eu_ai_act_art12", ...period }, owner.key)).report
          const [list, listReply] = yield* reading.compliance.listReports({ query: {}, responseMode: "decoded-and-response" })
          expect(listReply.status).toBe(200)
          expect(list.items.map((r) => r.id)).toEqual([c.id, b.id, a.id])
          expect(list.data).toEqual(list.items)
          expect(list).toMatchObject({ total: 3, limit: 50, offset: 0, pagination: { page: 1, per_page: 50, total: 3, has_more: false } })
          // The keys as sent (the decoder would drop any others).
          const sent = (yield* listReply.json) as { items: Array<object> }
          expect(Object.keys(sent.items[0]!).sort()).toEqual(REPORT_KEYS.filter((key) => key !== "request_id"))
          const art12 = yield* reading.compliance.listReports({ query: { framework: "eu_ai_act_art12", limit: 1, offset: 1 } })
          expect(art12.items.map((r) => r.id)).toEqual([a.id])
          expect(art12).toMatchObject({ total: 2, limit: 1, offset: 1, pagination: { page: 2, per_page: 1, total: 2, has_more: false } })
          expect((yield* reading.compliance.listReports({ query: { status: "failed" } })).total).toBe(0)
          // Raw: an unknown framework and a limit above 100 are outside the contract.
          expect((yield* raw("GET", "/api/v1/compliance/reports?framework=gdpr", { token: teammate.key })).status).toBe(422)
          expect((yield* raw("GET", "/api/v1/compliance/reports?limit=101", { token: teammate.key })).status).toBe(422)
          // Scopes: a key without compliance scopes reads nothing; compliance:read cannot create.
          const dashboard = yield* client(owner.token)
          const [reader, readerReply] = yield* dashboard.apiKeys.create({ payload: { name: "reader", scopes: ["compliance:read"] }, responseMode: "decoded-and-response" })
          expect(readerReply.status).toBe(201)
          expect((yield* (yield* client(reader.key)).compliance.listReports({ query: {}, responseMode: "response-only" })).status).toBe(200)
          expect((yield* tryReport({ framework: "eu_ai_act_art12", ...period }, reader.key)).status).toBe(403)
          const other = yield* dashboard.apiKeys.create({ payload: { name: "other", scopes: ["actions:read"] } })
          expect((yield* (yield* client(other.key)).compliance.listReports({ query: {}, responseMode: "response-only" })).status).toBe(403)
        }),
      60_000
    )

    it.effect(
      "Article 6 prints one action's signed explanation and ties the report to its content hash",
      () =>
        Effect.gen(function* () {
          const server = yield* Gateway
          const { org } = yield* Orgs
          const owner = yield* register("Art6 Org")
          const action = yield* act(owner, { action_type: "credit_decision", agent_id: "scorer", model_id: "m1" })
          const { report } = yield* createReport({ framework: "eu_ai_act_art6", action_uuid: action }, owner.key)
          const explanation = yield* Effect.promise(() =>
            server.run(
              Effect.gen(function* () {
                const service = yield* Explanations
                return yield* service.explain(owner.orgUuid, action)
              })
            )
          )
          expect(report).toMatchObject({ status: "ready", action_uuid: action, period_start: null, period_end: null, receipt_count: 1 })
          expect(report.report_metadata).toEqual({
            retention_requirement_years: 6,
            action_uuid: action,
            explanation_content_hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/)
          })
          expect(report.report_metadata!.explanation_content_hash).toBe(explanation._envelope.content_hash)
          // The explanation's content is stable, so a second report names the same hash.
          const again = (yield* createReport({ framework: "eu_ai_act_art6", action_uuid: action }, owner.key)).report
          expect(again.report_metadata!.explanation_content_hash).toBe(report.report_metadata!.explanation_content_hash)
          expect((yield* verifyReport(owner, report.id)).valid).toBe(true)
          if (pdftotextPath !== undefined) {
            const text = pdfText((yield* download(owner, report.id)).bytes).replace(/\s+/g, " ")
            expect(text).toContain("Explanation of an individual decision")
            expect(text).toContain(action)
            expect(text).toContain(report.report_metadata!.explanation_content_hash as string)
          }
          // Another organization's action is 404, like an unknown one.
          const reply = yield* tryReport({ framework: "eu_ai_act_art6", action_uuid: action }, org.key)
          expect(reply.status).toBe(404)
        }),
      60_000
    )

    it.effect(
      "keeps a report that could not be generated as failed, and answers 409 REPORT_NOT_READY for it",
      () =>
        Effect.gen(function* () {
          const capped = yield* Capped
          const owner = yield* register("Capped Org").pipe(Effect.provideService(Gateway, capped))
          const api = yield* clientAt(capped.url, owner.key)
          for (const n of [1, 2]) {
            const created = yield* api.actions.authorize({ headers: {}, payload: { action_type: "payment", details: `pay ${n}`, agent_id: "payer" } })
            yield* api.actions.notarize({ params: { action_uuid: created.action_uuid }, payload: { outcome: "completed" }, responseMode: "response-only" })
          }
          const [report, createdReply] = yield* api.compliance.createReport({ payload: { framework: "eu_ai_act_art12", ...hourAround() }, responseMode: "decoded-and-response" })
          expect(createdReply.status).toBe(201)
          // The keys as sent (the decoder would drop request_id).
          expect(Object.keys((yield* createdReply.json) as object).sort()).toEqual(REPORT_KEYS)
          expect(report).toMatchObject({
            status: "failed",
            error_message: expect.stringContaining("the period holds 2 receipts"),
            content_hash: null,
            signature: null,
            signing_key_id: null,
            timestamp_token: null,
            timestamp_token_present: false,
            pdf_size_bytes: null,
            generated_at: null,
            retain_until: null,
            report_metadata: { retention_requirement_years: 6 }
          })
          const params = { report_uuid: report.id }
          for (const [route, reply] of [
            ["download", api.compliance.downloadReport({ params, responseMode: "response-only" })],
            ["verify", api.compliance.verifyReport({ params, responseMode: "response-only" })]
          ] as const) {
            const refused = yield* answer(reply)
            expect(refused.status, route).toBe(409)
            expect(refused.body).toMatchObject({ code: "REPORT_NOT_READY", request_id: expect.stringMatching(/^req_/) })
          }
          // Kept for audit: it is listed and readable.
          const failed = yield* api.compliance.listReports({ query: { status: "failed" } })
          expect(failed.items.map((r) => r.id)).toEqual([report.id])
          expect((yield* api.compliance.getReport({ params })).status).toBe("failed")
          // A narrower period still works there.
          const narrow = yield* api.compliance.createReport({ payload: { framework: "eu_ai_act_art9", ...hourAround() } })
          expect(narrow.status).toBe("ready")
        }),
      60_000
    )

    it.effect(
      "are verified offline by the CLI from the report object or the verify answer's descriptor",
      () =>
        Effect.gen(function* () {
          const server = yield* Gateway
          const owner = yield* register("CLI Org")
          yield* act(owner, { action_type: "payment", agent_id: "payer" })
          // The CLI reads the report object as the server sent it.
          const report = (yield* createReport({ framework: "eu_ai_act_art12", ...hourAround() }, owner.key)).sent as Record<string, any>
          const pdf = (yield* download(owner, report.id)).bytes
          const verified = yield* verifyReport(owner, report.id)
          const dir = tmpdir()
          const file = (name: string, value: unknown) => {
            const path = join(dir, `report-${process.pid}-${name}`)
            writeFileSync(path, value instanceof Uint8Array ? value : JSON.stringify(value))
            return path
          }
          const jwksUrl = `${server.url}/api/v1/.well-known/jwks.json`
          const cli = (...args: string[]) =>
            promisify(execFile)("npx", ["tsx", "scripts/verify.ts", ...args], { cwd: join(__dirname, "..") }).then(
              ({ stdout }) => ({ code: 0, stdout }),
              (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout })
            )
          const pdfFile = file("report.pdf", pdf)
          const results = yield* Effect.promise(() =>
            Promise.all([
              cli(file("report.json", report), "--jwks", jwksUrl, "--pdf", pdfFile),
              cli(
                file("descriptor.json", {
                  descriptor: verified.descriptor,
                  signature: report.signature,
                  signing_key_id: report.signing_key_id,
                  timestamp_token: report.timestamp_token
                }),
                "--jwks",
                jwksUrl
              ),
              cli(file("changed.json", { ...report, receipt_count: report.receipt_count + 1 }), "--jwks", jwksUrl),
              cli(file("report-again.json", report), "--jwks", jwksUrl, "--pdf", file("other.pdf", new Uint8Array([...pdf, 10])))
            ])
          )
          expect(results.map((result) => result.code)).toEqual([0, 0, 1, 1])
          expect(results[0].stdout).toContain("ok   content_hash_matches")
          expect(results[0].stdout).toContain("ok   timestamp_token_matches")
          expect(results[2].stdout).toContain("FAIL signature_valid")
          expect(results[3].stdout).toContain("FAIL content_hash_matches")
        }),
      120_000
    )

    it.effect(
      "render off the request loop: other requests are answered while a 4,000-receipt Article 12 report is made",
      () =>
        Effect.gen(function* () {
          const owner = yield* register("Bulk Org")
          yield* sql(
            (db) => db`
              INSERT INTO receipts (receipt_uuid, action_uuid, org_uuid, agent_id, agent_sequence, receipt_status, receipt_version,
                signed_payload, payload_hash, signature, public_key_id, timestamp_token, created_at)
              SELECT 'rct_bulk_' || g, 'act_bulk_' || g, ${owner.orgUuid}, 'agent-' || (g % 7), g, 'notarized', '1.1', '{}',
                'sha256:' || encode(sha256(convert_to('r' || g, 'UTF8')), 'hex'), 'ed25519:bulk', 'rk_bulk', NULL, now() - g * interval '1 millisecond'
              FROM generate_series(1, 4000) AS g`
          )
          const anonymous = yield* client()
          let done = false
          const latencies: number[] = []
          const probe = yield* Effect.forkChild(
            Effect.gen(function* () {
              while (!done) {
                const started = performance.now()
                yield* anonymous.system.health({ responseMode: "response-only" })
                latencies.push(performance.now() - started)
                yield* Effect.sleep("20 millis")
              }
            })
          )
          const started = performance.now()
          const { report } = yield* createReport({ framework: "eu_ai_act_art12", ...hourAround() }, owner.key)
          const took = performance.now() - started
          done = true
          yield* Fiber.join(probe)
          expect(report).toMatchObject({ status: "ready", receipt_count: 4000 })
          // The report takes seconds; no answer in between waited for it.
          expect(took).toBeGreaterThan(1000)
          expect(latencies.length).toBeGreaterThan(10)
          expect(Math.max(...latencies)).toBeLessThan(took / 2)
          expect(Math.max(...latencies)).toBeLessThan(750)
          const pdf = yield* download(owner, report.id)
          expect(pdf.bytes.length).toBe(report.pdf_size_bytes)
        }),
      120_000
    )
  })
})
