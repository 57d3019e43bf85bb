/**
 * Estate end to end over HTTP (spec 001 "Estate (K)"): wills with their checks, death certificates
 * (decommissioned agents only, once) and the succession a will orders — a transfer receipt that
 * verifies with the JWKS, archive, delete after the retention through the sweeper — with the
 * will's targets told through a real SMTP server and local chat/webhook receivers; compliance
 * snapshots with computed counts and list filters.
 */
import { createHash, createPublicKey, verify } from "node:crypto"
import { createServer, type Server } from "node:http"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { canonicalJson, verifyReceipt } from "../protocol/verifier/index.js"
import { countFindings, Estate, normalizeTargets } from "../src/estate/service.js"
import { addMember, call, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { useInbox } from "./support/mail.js"
import { useServer } from "./support/server.js"

interface Received {
  readonly path: string
  readonly headers: Record<string, string | string[] | undefined>
  readonly raw: Buffer
  readonly body: any
}

/** A local receiver for webhook and Slack notifications. */
const receiver = useFixture(
  async () => {
    const received: Array<Received> = []
    const server: Server = createServer((request, response) => {
      const chunks: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => {
        const raw = Buffer.concat(chunks)
        received.push({ path: request.url ?? "", headers: request.headers, raw, body: JSON.parse(raw.toString("utf8")) })
        response.writeHead(200).end("ok")
      })
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    return { received, url: (path: string) => `http://127.0.0.1:${port}${path}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
  },
  (r) => r.close()
)
const inbox = useInbox()
const server = useServer(() => ({ SMTP_URL: inbox.url, OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8", OUTBOUND_ALLOW_HTTP: "true" }))
const org = useFixture(() => registerOrg(server.url, "Estate Org"))
const other = useFixture(() => registerOrg(server.url, "Other Estate Org"))

let counter = 0
const uniqueSlug = (label: string) => `${label}-${process.pid}-${Date.now().toString(36)}-${++counter}`

const agent = async (token: string, label: string, extra: Record<string, unknown> = {}) => {
  const slug = uniqueSlug(label)
  const reply = await call(server.url, "POST", "/api/v1/agents", { token, body: { agent_slug: slug, name: `Agent ${label}`, ...extra } })
  expect(reply.status).toBe(201)
  return slug
}
const will = (token: string, slug: string, body: unknown) => call(server.url, "PUT", `/api/v1/estate/agents/${slug}/will`, { token, body })
const certify = (token: string, slug: string, body: unknown) => call(server.url, "POST", `/api/v1/estate/agents/${slug}/death-certificate`, { token, body })
const decommission = async (token: string, slug: string) =>
  expect((await call(server.url, "POST", `/api/v1/agents/${slug}/decommission`, { token, body: { reason: "retired" } })).status).toBe(200)
const snapshot = (token: string, body: unknown) => call(server.url, "POST", "/api/v1/estate/compliance", { token, body })

const waitFor = async <T>(find: () => T | undefined, timeoutMs = 10_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const found = find()
    if (found !== undefined) return found
    if (Date.now() > deadline) throw new Error("timed out")
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const sql = <A>(run: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => server.run(Effect.flatMap(SqlClient.SqlClient, run))

describe("succession", () => {
  it("end to end: will, decommission, death certificate, the successor holds the agent's identity, the transfer receipt verifies, the will's targets are told", async () => {
    const deceased = await agent(org.key, "elder")
    const heir = await agent(org.key, "heir")
    const put = await will(org.key, deceased, {
      successor_slug: heir,
      succession_policy: "transfer_to_successor",
      data_retention_days: 90,
      notify_emails: ["family@example.test", { type: "webhook", target: receiver.url("/hook") }, { type: "slack", target: receiver.url("/slack") }],
      instructions: "Hand over the open invoices",
      unknown: "ignored"
    })
    expect(put.status).toBe(200)
    expect(put.body).toMatchObject({
      agent_slug: deceased,
      will: {
        successor_slug: heir,
        succession_policy: "transfer_to_successor",
        data_retention_days: 90,
        notify_emails: [
          { type: "email", target: "family@example.test" },
          { type: "webhook", target: receiver.url("/hook") },
          { type: "slack", target: receiver.url("/slack") }
        ],
        instructions: "Hand over the open invoices"
      }
    })
    const read = await call(server.url, "GET", `/api/v1/estate/agents/${deceased}/will`, { token: org.key })
    expect(read.status).toBe(200)
    expect(read.body.will).toEqual(put.body.will)

    const early = await certify(org.key, deceased, { cause: "replaced" })
    expect(early.status).toBe(422)
    expect(early.body.code).toBe("NOT_DECOMMISSIONED")
    expect((await call(server.url, "GET", `/api/v1/estate/agents/${deceased}/death-certificate`, { token: org.key })).status).toBe(404)

    await decommission(org.key, deceased)
    // The published SDK sends `reason` for `cause`.
    const issued = await certify(org.token, deceased, { reason: "replaced", notes: "superseded by the heir" })
    expect(issued.status).toBe(201)
    expect(issued.body).toMatchObject({
      agent_slug: deceased,
      death_certificate: { certificate_id: expect.stringMatching(/^dc_/), cause: "replaced", notes: "superseded by the heir", issued_by: org.email },
      succession: { triggered: true, successor_slug: heir, succession_policy: "transfer_to_successor", transfer_receipt_id: expect.stringMatching(/^atr_/), purge_after: null }
    })
    const shown = await call(server.url, "GET", `/api/v1/estate/agents/${deceased}/death-certificate`, { token: org.key })
    expect(shown.status).toBe(200)
    expect(shown.body.death_certificate).toEqual(issued.body.death_certificate)
    expect(shown.body.succession).toEqual(issued.body.succession)

    const again = await certify(org.key, deceased, { cause: "replaced" })
    expect(again.status).toBe(409)
    expect(again.body.code).toBe("ALREADY_DECEASED")
    expect((await will(org.key, deceased, { succession_policy: "archive" })).body.code).toBe("ALREADY_DECEASED")

    // The transfer receipt: stored with the agents area's transfers, signed by a key of the JWKS,
    // naming the successor (its DID) as the holder of the deceased agent's identity.
    const [receipt] = await sql((s) => s<any>`SELECT * FROM agent_transfers WHERE transfer_receipt_id = ${issued.body.succession.transfer_receipt_id}`)
    expect(receipt.agent_slug).toBe(deceased)
    const jwks = await call(server.url, "GET", "/api/v1/.well-known/jwks.json")
    const jwk = jwks.body.keys.find((key: { kid: string }) => key.kid === receipt.public_key_id)
    const publicKey = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: jwk.x }, format: "jwk" })
    const bytes = Buffer.from(receipt.signed_payload, "utf8")
    expect(verify(null, bytes, publicKey, Buffer.from(receipt.signature.slice("ed25519:".length), "base64url"))).toBe(true)
    expect(receipt.payload_hash).toBe(`sha256:${createHash("sha256").update(bytes).digest("hex")}`)
    const payload = JSON.parse(receipt.signed_payload)
    expect(payload).toMatchObject({
      receipt_type: "agent_succession",
      agent_slug: deceased,
      previous_owner: org.orgUuid,
      new_owner: org.orgUuid,
      successor_slug: heir,
      certificate_id: issued.body.death_certificate.certificate_id
    })
    expect(payload.successor_did).toMatch(new RegExp(`:agents:${heir}$`))
    // Dated at the certificate's issue; the stored text is the JCS bytes the portable verifier accepts.
    expect(payload.transferred_at).toBe(issued.body.death_certificate.issued_at)
    expect(canonicalJson(payload)).toBe(receipt.signed_payload)
    expect(verifyReceipt({ signed_payload: payload, payload_hash: receipt.payload_hash, signature: receipt.signature, public_key: jwk }).errors).toEqual([])
    expect(payload.agent_did).toMatch(new RegExp(`:agents:${deceased}$`))

    // Told after commit: e-mail, webhook and Slack, each result audited.
    const mail = await inbox.waitFor((m) => m.to.includes("family@example.test"))
    expect(mail.subject).toContain(deceased)
    expect(mail.text).toContain(issued.body.succession.transfer_receipt_id)
    const hook = await waitFor(() => receiver.received.find((r) => r.path === "/hook" && r.body.data?.agent_slug === deceased))
    expect(hook.body).toMatchObject({ event: "agent.death_certificate_issued", data: { succession: { successor_slug: heir } } })
    // Signed with the platform key: verifiable with the JWKS, like the receipt.
    const hookKey = jwks.body.keys.find((key: { kid: string }) => key.kid === hook.headers["x-gateway-key-id"])
    const hookPublicKey = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: hookKey.x }, format: "jwk" })
    const hookSignature = String(hook.headers["x-gateway-signature"])
    expect(verify(null, hook.raw, hookPublicKey, Buffer.from(hookSignature.slice("ed25519:".length), "base64url"))).toBe(true)
    const slack = await waitFor(() => receiver.received.find((r) => r.path === "/slack" && String(r.body.text).includes(deceased)))
    expect(slack.body.text).toContain("transfer_to_successor")
    const notified = await (async () => {
      const deadline = Date.now() + 10_000
      for (;;) {
        const rows = await sql((s) => s<any>`SELECT details FROM audit_log WHERE target = ${deceased} AND event = 'agent.death_notified'`)
        if (rows.length > 0 || Date.now() > deadline) return rows
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    })()
    const results = (typeof notified[0].details === "string" ? JSON.parse(notified[0].details) : notified[0].details).results
    expect(results.map((r: any) => [r.type, r.status])).toEqual([
      ["email", "sent"],
      ["webhook", "sent"],
      ["slack", "sent"]
    ])
    const events = await sql((s) => s<any>`SELECT event FROM audit_log WHERE target = ${deceased} AND event IN ('agent.succeeded', 'agent.death_certificate_issued') ORDER BY event`)
    expect(events.map((e: any) => e.event)).toEqual(["agent.death_certificate_issued", "agent.succeeded"])
  })

  it("refuses a succession whose successor was decommissioned meanwhile (422, nothing issued), until the will changes", async () => {
    const deceased = await agent(org.key, "orphan")
    const heir = await agent(org.key, "wanderer")
    expect((await will(org.key, deceased, { successor_slug: heir, succession_policy: "transfer_to_successor" })).status).toBe(200)
    await decommission(org.key, heir)
    await decommission(org.key, deceased)
    const refused = await certify(org.key, deceased, { cause: "end_of_life" })
    expect(refused.status).toBe(422)
    expect(refused.body.details.issues[0].path).toBe("successor_slug")
    expect((await call(server.url, "GET", `/api/v1/estate/agents/${deceased}/death-certificate`, { token: org.key })).status).toBe(404)
    // The will can be changed, and then the certificate issues.
    expect((await will(org.key, deceased, { succession_policy: "archive" })).status).toBe(200)
    const issued = await certify(org.key, deceased, { cause: "end_of_life" })
    expect(issued.status).toBe(201)
    expect(issued.body.succession).toMatchObject({ triggered: true, succession_policy: "archive", successor_slug: null, transfer_receipt_id: null })
  })

  it("refuses notification targets at private addresses outside OUTBOUND_ALLOW_PRIVATE (the outbound client checks again at send)", async () => {
    const slug = await agent(org.key, "private")
    for (const target of ["http://10.0.0.1/hook", "https://10.0.0.1/hook", "https://[::1]/hook", "https://169.254.169.254/latest"]) {
      const reply = await will(org.key, slug, { succession_policy: "archive", notify_emails: [{ type: "webhook", target }] })
      expect([target, reply.status]).toEqual([target, 422])
    }
  })

  it("without a will: the certificate issues and no succession runs", async () => {
    const slug = await agent(org.key, "lonely")
    await decommission(org.key, slug)
    const issued = await certify(org.key, slug, { cause: "deprecated" })
    expect(issued.status).toBe(201)
    expect(issued.body.succession).toEqual({ triggered: false, successor_slug: null, succession_policy: null, transfer_receipt_id: null, purge_after: null, purged_at: null })
    // With an API key, issued_by is the key's id.
    expect(issued.body.death_certificate.issued_by).toBe(org.keyId)
  })

  it("delete: purges only after the retention, keeps the agent as a tombstone with its evidence", async () => {
    const kept = await agent(org.key, "keeper", { description: "personal notes", metadata: { owner: "alice" } })
    const gone = await agent(org.key, "forgotten", { description: "personal notes", metadata: { owner: "bob" }, capabilities: ["pay"] })
    expect((await will(org.key, kept, { succession_policy: "delete", data_retention_days: 30, instructions: "wipe later" })).status).toBe(200)
    expect((await will(org.key, gone, { succession_policy: "delete", data_retention_days: 0, notify_emails: ["dpo@example.test"] })).status).toBe(200)
    for (const slug of [kept, gone]) await decommission(org.key, slug)
    const later = await certify(org.key, kept, { cause: "end_of_life" })
    const now = await certify(org.key, gone, { cause: "end_of_life", notes: "bye" })
    expect(Date.parse(later.body.succession.purge_after) - Date.parse(later.body.death_certificate.issued_at)).toBe(30 * 86_400_000)
    expect(now.body.succession.purge_after).toBe(now.body.death_certificate.issued_at)

    // The layer's sweeper runs every minute; run it now, twice: a purge happens once.
    const sweep = () => server.run(Effect.flatMap(Estate, (estate) => estate.sweep))
    await sweep()
    await sweep()
    const purges = await sql((s) => s<any>`SELECT actor FROM audit_log WHERE target = ${gone} AND event = 'agent.data_purged'`)
    expect(purges).toEqual([{ actor: "system" }])

    const goneCertificate = await call(server.url, "GET", `/api/v1/estate/agents/${gone}/death-certificate`, { token: org.key })
    expect(goneCertificate.body.succession.purged_at).not.toBeNull()
    expect(goneCertificate.body.death_certificate.notes).toBeNull()
    const tombstone = await call(server.url, "GET", `/api/v1/agents/${gone}`, { token: org.key })
    expect(tombstone.status).toBe(200)
    expect(tombstone.body).toMatchObject({ agent_slug: gone, status: "decommissioned", description: null, metadata: {}, capabilities: [] })
    expect((await call(server.url, "GET", `/agents/${gone}/did.json`)).status).toBe(200)
    const goneWill = await call(server.url, "GET", `/api/v1/estate/agents/${gone}/will`, { token: org.key })
    expect(goneWill.body.will).toMatchObject({ notify_emails: [], instructions: null })

    const keptAgent = await call(server.url, "GET", `/api/v1/agents/${kept}`, { token: org.key })
    expect(keptAgent.body).toMatchObject({ description: "personal notes", metadata: { owner: "alice" } })
    const keptCertificate = await call(server.url, "GET", `/api/v1/estate/agents/${kept}/death-certificate`, { token: org.key })
    expect(keptCertificate.body.succession.purged_at).toBeNull()
  })
})

describe("wills", () => {
  it("checks the policy, the successor and the targets", async () => {
    const slug = await agent(org.key, "testator")
    const foreign = await agent(other.key, "foreign")
    const invalid = await will(org.key, slug, { succession_policy: "destroy" })
    expect(invalid.status).toBe(400)
    expect(invalid.body.code).toBe("INVALID_POLICY")
    expect((await will(org.key, slug, {})).status).toBe(422)
    for (const successor of [slug, "nobody-here", foreign]) {
      const reply = await will(org.key, slug, { successor_slug: successor, succession_policy: "transfer_to_successor" })
      expect([successor, reply.status, reply.body.code]).toEqual([successor, 404, "SUCCESSOR_NOT_FOUND"])
    }
    const missing = await will(org.key, slug, { succession_policy: "transfer_to_successor", notify_emails: ["not-an-address", { type: "webhook", target: "ftp://x" }] })
    expect(missing.status).toBe(422)
    expect(missing.body.details.issues.map((i: any) => i.path).sort()).toEqual(["notify_emails[0].target", "notify_emails[1].target", "successor_slug"])
    expect((await will(org.key, slug, { succession_policy: "archive", notify_emails: [{ type: "pager", target: "x" }] })).status).toBe(422)
    expect((await will(org.key, slug, { succession_policy: "delete", data_retention_days: -1 })).status).toBe(422)

    const unknown = await will(org.key, "no-such-agent-here", { succession_policy: "archive" })
    expect(unknown.status).toBe(404)
    expect(unknown.body.code).toBe("AGENT_NOT_FOUND")
    expect((await call(server.url, "GET", `/api/v1/estate/agents/${slug}/will`, { token: org.key })).status).toBe(404)

    // Replacing a will replaces every field.
    expect((await will(org.key, slug, { succession_policy: "archive", instructions: "keep all" })).status).toBe(200)
    const replaced = await will(org.key, slug, { succession_policy: "delete" })
    expect(replaced.body.will).toMatchObject({ succession_policy: "delete", instructions: null, data_retention_days: null, successor_slug: null, notify_emails: [] })
  })

  it("needs owner or admin to write, and the estate scope", async () => {
    const slug = await agent(org.key, "guarded")
    const member = await addMember(server.url, org, "member")
    expect((await will(member.key, slug, { succession_policy: "archive" })).status).toBe(403)
    expect((await call(server.url, "GET", `/api/v1/estate/agents/${slug}/will`, { token: member.key })).status).toBe(404)
    const scoped = await call(server.url, "POST", "/api/v1/api-keys", { token: org.token, body: { name: "agents only", scopes: ["agents:read"] } })
    expect((await call(server.url, "GET", `/api/v1/estate/compliance`, { token: scoped.body.key })).status).toBe(403)
  })

  it("normalizes plain strings to e-mail targets (property)", () => {
    const target = fc.oneof(fc.string({ minLength: 1 }), fc.record({ type: fc.constantFrom("email" as const, "webhook" as const, "slack" as const), target: fc.string({ minLength: 1 }) }))
    fc.assert(
      fc.property(fc.array(target), (entries) => {
        const normalized = normalizeTargets(entries)
        expect(normalized).toHaveLength(entries.length)
        normalized.forEach((n, i) => {
          const entry = entries[i]!
          expect(n).toEqual(typeof entry === "string" ? { type: "email", target: entry } : { type: entry.type, target: entry.target })
        })
      })
    )
  })
})

describe("death certificates", () => {
  it("needs a cause and a known agent", async () => {
    const slug = await agent(org.key, "causeless")
    await decommission(org.key, slug)
    expect((await certify(org.key, slug, { notes: "no cause" })).status).toBe(422)
    const unknown = await certify(org.key, "no-such-agent-here", { cause: "replaced" })
    expect(unknown.status).toBe(404)
    expect(unknown.body.code).toBe("AGENT_NOT_FOUND")
    const foreign = await certify(other.key, slug, { cause: "replaced" })
    expect(foreign.status).toBe(404)
  })

  it("issues once under concurrent requests", async () => {
    const slug = await agent(org.key, "racer")
    await decommission(org.key, slug)
    const replies = await Promise.all(Array.from({ length: 8 }, () => certify(org.key, slug, { cause: "replaced" })))
    expect(replies.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409])
  })
})

describe("compliance snapshots", () => {
  it("records a snapshot with computed counts, immutable, created by the caller", async () => {
    const slug = await agent(org.key, "audited")
    const reply = await snapshot(org.key, {
      framework: "eu_ai_act",
      agent_slug: slug,
      findings: [
        { requirement: "Art. 12 logging", status: "pass", evidence: "receipts" },
        { requirement: "Art. 14 oversight", status: "fail" },
        { requirement: "Art. 13 transparency", status: "partial", evidence: null }
      ],
      overall_status: "partial",
      notes: "quarterly",
      finding_count: 99
    })
    expect(reply.status).toBe(201)
    expect(reply.body).toMatchObject({
      snapshot_uuid: expect.any(String),
      framework: "eu_ai_act",
      agent_slug: slug,
      overall_status: "partial",
      finding_count: 3,
      pass_count: 1,
      fail_count: 1,
      partial_count: 1,
      created_by: org.keyId,
      notes: "quarterly"
    })
    expect(reply.body.findings[1]).toEqual({ requirement: "Art. 14 oversight", status: "fail", evidence: null })
    const byJwt = await snapshot(org.token, { framework: "gdpr", agent_slug: slug, findings: [{ requirement: "Art. 30", status: "pass" }], overall_status: "compliant" })
    expect(byJwt.body.created_by).toBe(org.email)
    // No route changes or deletes a snapshot.
    expect((await call(server.url, "PUT", "/api/v1/estate/compliance", { token: org.key, body: {} })).status).toBe(404)
    expect((await call(server.url, "DELETE", "/api/v1/estate/compliance", { token: org.key })).status).toBe(404)
  })

  it("refuses empty findings (400), a missing overall_status (422), bad findings (422), unknown agents (404)", async () => {
    const slug = await agent(org.key, "refused")
    const empty = await snapshot(org.key, { framework: "gdpr", agent_slug: slug, findings: [], overall_status: "compliant" })
    expect(empty.status).toBe(400)
    expect(empty.body.code).toBe("EMPTY_FINDINGS")
    const noStatus = await snapshot(org.key, { framework: "gdpr", agent_slug: slug, findings: [{ requirement: "x", status: "pass" }] })
    expect(noStatus.status).toBe(422)
    expect(noStatus.body.code).toBe("VALIDATION_ERROR")
    const badFinding = await snapshot(org.key, { framework: "gdpr", agent_slug: slug, findings: [{ requirement: "x", status: "maybe" }, { status: "pass" }], overall_status: "partial" })
    expect(badFinding.status).toBe(422)
    expect(badFinding.body.details.issues.length).toBeGreaterThanOrEqual(2)
    const unknown = await snapshot(org.key, { framework: "gdpr", agent_slug: "no-such-agent-here", findings: [{ requirement: "x", status: "pass" }], overall_status: "compliant" })
    expect(unknown.status).toBe(404)
    expect(unknown.body.code).toBe("AGENT_NOT_FOUND")
    const foreign = await agent(other.key, "foreign-audited")
    expect((await snapshot(org.key, { framework: "gdpr", agent_slug: foreign, findings: [{ requirement: "x", status: "pass" }], overall_status: "compliant" })).status).toBe(404)
  })

  it("lists newest first with framework and agent filters, paginated", async () => {
    const first = await agent(org.key, "listed-a")
    const second = await agent(org.key, "listed-b")
    const framework = `iso_42001_${counter}`
    for (const [slug, fw] of [[first, framework], [second, framework], [first, "sr_11_7"]] as const) {
      expect((await snapshot(org.key, { framework: fw, agent_slug: slug, findings: [{ requirement: "r", status: "pass" }], overall_status: "compliant" })).status).toBe(201)
    }
    const byFramework = await call(server.url, "GET", `/api/v1/estate/compliance?framework=${framework}`, { token: org.key })
    expect(byFramework.status).toBe(200)
    expect(byFramework.body.snapshots.map((s: any) => s.agent_slug)).toEqual([second, first])
    expect(byFramework.body.data).toEqual(byFramework.body.snapshots)
    expect(byFramework.body.pagination).toEqual({ page: 1, per_page: 20, total: 2, has_more: false })
    const byAgent = await call(server.url, "GET", `/api/v1/estate/compliance?agent_slug=${first}&per_page=1`, { token: org.key })
    expect(byAgent.body.snapshots.map((s: any) => s.framework)).toEqual(["sr_11_7"])
    expect(byAgent.body.pagination).toEqual({ page: 1, per_page: 1, total: 2, has_more: true })
    const both = await call(server.url, "GET", `/api/v1/estate/compliance?agent_slug=${first}&framework=${framework}`, { token: org.key })
    expect(both.body.pagination.total).toBe(1)
    expect((await call(server.url, "GET", "/api/v1/estate/compliance?per_page=101", { token: org.key })).status).toBe(422)
    expect((await call(server.url, "GET", "/api/v1/estate/compliance?per_page=0", { token: org.key })).status).toBe(422)
    const foreign = await call(server.url, "GET", `/api/v1/estate/compliance?agent_slug=${first}`, { token: other.key })
    expect(foreign.status).toBe(404)
    expect(foreign.body.code).toBe("AGENT_NOT_FOUND")
    const theirs = await call(server.url, "GET", `/api/v1/estate/compliance?framework=${framework}`, { token: other.key })
    expect(theirs.body.pagination.total).toBe(0)
  })

  it("counts are always computed from the findings (property, over HTTP)", async () => {
    const slug = await agent(org.key, "counted")
    const finding = fc.record({ requirement: fc.string({ minLength: 1, maxLength: 40 }), status: fc.constantFrom("pass" as const, "fail" as const, "partial" as const) })
    await fc.assert(
      fc.asyncProperty(fc.array(finding, { minLength: 1, maxLength: 30 }), async (findings) => {
        const reply = await snapshot(org.key, { framework: "prop", agent_slug: slug, findings, overall_status: "partial" })
        expect(reply.status).toBe(201)
        const expected = countFindings(findings)
        expect(reply.body).toMatchObject(expected)
        expect(reply.body.pass_count + reply.body.fail_count + reply.body.partial_count).toBe(reply.body.finding_count)
        expect(reply.body.findings.map((f: any) => f.status)).toEqual(findings.map((f) => f.status))
      }),
      { numRuns: 20 }
    )
  })
})

describe("account deletion", () => {
  it("removes the organization's wills, certificates, succession receipts and snapshots", async () => {
    const doomed = await registerOrg(server.url, "Doomed Estate")
    const deceased = await agent(doomed.key, "doomed")
    const heir = await agent(doomed.key, "doomed-heir")
    expect((await will(doomed.key, deceased, { successor_slug: heir, succession_policy: "transfer_to_successor" })).status).toBe(200)
    await decommission(doomed.key, deceased)
    expect((await certify(doomed.key, deceased, { cause: "end_of_life" })).status).toBe(201)
    expect((await snapshot(doomed.key, { framework: "gdpr", agent_slug: heir, findings: [{ requirement: "r", status: "pass" }], overall_status: "compliant" })).status).toBe(201)
    expect((await call(server.url, "DELETE", "/api/v1/auth/account", { token: doomed.token })).status).toBe(200)
    const left = await sql(
      (s) => s<any>`SELECT (SELECT count(*) FROM agent_wills WHERE org_uuid = ${doomed.orgUuid})::int AS wills,
                           (SELECT count(*) FROM agent_death_certificates WHERE org_uuid = ${doomed.orgUuid})::int AS certificates,
                           (SELECT count(*) FROM compliance_snapshots WHERE org_uuid = ${doomed.orgUuid})::int AS snapshots,
                           (SELECT count(*) FROM agent_transfers WHERE agent_slug = ${deceased})::int AS receipts`
    )
    expect(left).toEqual([{ wills: 0, certificates: 0, snapshots: 0, receipts: 0 }])
  })
})
