/**
 * Estate end to end over HTTP (spec 001 "Estate (K)"): wills with their checks, death certificates
 * (decommissioned agents only, once) and the succession a will orders — a transfer receipt that
 * verifies with the JWKS, archive, delete after the retention through the sweeper — with the
 * will's targets told through a real SMTP server and local chat/webhook receivers; compliance
 * snapshots with computed counts and list filters. Over the typed client (HttpApiClient over
 * GatewayApi); bodies, queries and routes outside the contract go raw (`raw`).
 */
import { createHash, createPublicKey, verify } from "node:crypto"
import { createServer, type Server } from "node:http"
import { expect } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql"
import fc from "fast-check"
import type { ComplianceSnapshotRequest, DeathCertificateRequest, WillRequest } from "../protocol/estate.js"
import { canonicalJson, verifyReceipt } from "../protocol/verifier/index.js"
import { countFindings, Estate, normalizeTargets } from "../src/estate/service.js"
import { answer, client, member, raw, register } from "./support/api.js"
import type { Org } from "./support/client.js"
import { liveLayer } from "./support/effect.js"
import { eventuallyEffect } from "./support/eventually.js"
import { useFixture } from "./support/fixture.js"
import { useInbox } from "./support/mail.js"
import { Gateway } from "./support/server.js"

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

class Orgs extends Context.Service<Orgs, { readonly org: Org; readonly other: Org }>()("test/estate/Orgs") {}

const Setup = Layer.effect(Orgs, Effect.all({ org: register("Estate Org"), other: register("Other Estate Org") })).pipe(
  // Built after the inbox fixture above, whose address it reads.
  Layer.provideMerge(Layer.suspend(() => Gateway.layer({ SMTP_URL: inbox.url, OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8", OUTBOUND_ALLOW_HTTP: "true" })))
)

let counter = 0
const uniqueSlug = (label: string) => `${label}-${process.pid}-${Date.now().toString(36)}-${++counter}`

const estate = (token: string) => Effect.map(client(token), (api) => api.estate)
const agent = (token: string, label: string, extra: { description?: string; metadata?: Record<string, unknown>; capabilities?: Array<string> } = {}) =>
  Effect.gen(function* () {
    const slug = uniqueSlug(label)
    const reply = yield* (yield* client(token)).agents.register({ payload: { agent_slug: slug, name: `Agent ${label}`, ...extra }, responseMode: "response-only" })
    expect(reply.status).toBe(201)
    return slug
  })
/** A will as answered (status and JSON body). */
const will = (token: string, slug: string, payload: WillRequest) =>
  Effect.flatMap(estate(token), (api) => answer(api.putWill({ params: { agent_slug: slug }, payload, responseMode: "response-only" })))
/** A death certificate as answered (status and JSON body). */
const certify = (token: string, slug: string, payload: DeathCertificateRequest) =>
  Effect.flatMap(estate(token), (api) => answer(api.issueDeathCertificate({ params: { agent_slug: slug }, payload, responseMode: "response-only" })))
/** A death certificate issued (201), decoded. */
const issue = (token: string, slug: string, payload: DeathCertificateRequest) =>
  Effect.gen(function* () {
    const [issued, reply] = yield* (yield* estate(token)).issueDeathCertificate({ params: { agent_slug: slug }, payload, responseMode: "decoded-and-response" })
    expect(reply.status).toBe(201)
    return issued
  })
const decommission = (token: string, slug: string) =>
  Effect.gen(function* () {
    const reply = yield* (yield* client(token)).agents.decommission({ params: { agent_slug: slug }, payload: { reason: "retired" }, responseMode: "response-only" })
    expect(reply.status).toBe(200)
  })
/** A snapshot as answered (status and JSON body). */
const snapshot = (token: string, payload: ComplianceSnapshotRequest) =>
  Effect.flatMap(estate(token), (api) => answer(api.createSnapshot({ payload, responseMode: "response-only" })))


const waitFor = <T>(find: () => T | undefined) => eventuallyEffect(Effect.sync(() => find() ?? false), { timeoutMs: 10_000, intervalMs: 50 })

const sql = <A>(run: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  Effect.flatMap(Gateway, (server) => Effect.promise(() => server.run(Effect.flatMap(SqlClient.SqlClient, run))))

liveLayer(Setup)((it) => {
  it.describe("succession", () => {
    it.effect(
      "end to end: will, decommission, death certificate, the successor holds the agent's identity, the transfer receipt verifies, the will's targets are told",
      () =>
        Effect.gen(function* () {
          const { org } = yield* Orgs
          const api = yield* estate(org.key)
          const deceased = yield* agent(org.key, "elder")
          const heir = yield* agent(org.key, "heir")
          // Raw: a field outside the contract, which the server ignores.
          const put = yield* raw("PUT", `/api/v1/estate/agents/${deceased}/will`, { token: org.key, body: {
            successor_slug: heir,
            succession_policy: "transfer_to_successor",
            data_retention_days: 90,
            notify_emails: ["family@example.test", { type: "webhook", target: receiver.url("/hook") }, { type: "slack", target: receiver.url("/slack") }],
            instructions: "Hand over the open invoices",
            unknown: "ignored"
          } })
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
          const params = { agent_slug: deceased }
          const [read, readReply] = yield* api.getWill({ params, responseMode: "decoded-and-response" })
          expect(readReply.status).toBe(200)
          expect(read.will).toEqual(put.body.will)

          const early = yield* certify(org.key, deceased, { cause: "replaced" })
          expect(early.status).toBe(422)
          expect(early.body.code).toBe("NOT_DECOMMISSIONED")
          expect((yield* api.getDeathCertificate({ params, responseMode: "response-only" })).status).toBe(404)

          yield* decommission(org.key, deceased)
          // The published SDK sends `reason` for `cause`.
          const issued = yield* issue(org.token, deceased, { reason: "replaced", notes: "superseded by the heir" })
          expect(issued).toMatchObject({
            agent_slug: deceased,
            death_certificate: { certificate_id: expect.stringMatching(/^dc_/), cause: "replaced", notes: "superseded by the heir", issued_by: org.email },
            succession: {
              triggered: true,
              successor_slug: heir,
              succession_policy: "transfer_to_successor",
              transfer_receipt_id: expect.stringMatching(/^atr_/),
              purge_after: null
            }
          })
          const [shown, shownReply] = yield* api.getDeathCertificate({ params, responseMode: "decoded-and-response" })
          expect(shownReply.status).toBe(200)
          expect(shown.death_certificate).toEqual(issued.death_certificate)
          expect(shown.succession).toEqual(issued.succession)

          const again = yield* certify(org.key, deceased, { cause: "replaced" })
          expect(again.status).toBe(409)
          expect(again.body.code).toBe("ALREADY_DECEASED")
          expect((yield* will(org.key, deceased, { succession_policy: "archive" })).body.code).toBe("ALREADY_DECEASED")

          // The transfer receipt: stored with the agents area's transfers, signed by a key of the JWKS,
          // naming the successor (its DID) as the holder of the deceased agent's identity.
          const [receipt] = yield* sql((s) => s<any>`SELECT * FROM agent_transfers WHERE transfer_receipt_id = ${issued.succession.transfer_receipt_id}`)
          expect(receipt.agent_slug).toBe(deceased)
          const jwks = yield* (yield* client()).receiptsPublic.jwks({})
          const jwk = jwks.keys.find((key) => key.kid === receipt.public_key_id)!
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
            certificate_id: issued.death_certificate.certificate_id
          })
          expect(payload.successor_did).toMatch(new RegExp(`:agents:${heir}$`))
          // Dated at the certificate's issue; the stored text is the JCS bytes the portable verifier accepts.
          expect(payload.transferred_at).toBe(issued.death_certificate.issued_at)
          expect(canonicalJson(payload)).toBe(receipt.signed_payload)
          expect(verifyReceipt({ signed_payload: payload, payload_hash: receipt.payload_hash, signature: receipt.signature, public_key: jwk }).errors).toEqual([])
          expect(payload.agent_did).toMatch(new RegExp(`:agents:${deceased}$`))

          // Told after commit: e-mail, webhook and Slack, each result audited.
          const mail = yield* Effect.promise(() => inbox.waitFor((m) => m.to.includes("family@example.test")))
          expect(mail.subject).toContain(deceased)
          expect(mail.text).toContain(issued.succession.transfer_receipt_id)
          const hook = yield* waitFor(() => receiver.received.find((r) => r.path === "/hook" && r.body.data?.agent_slug === deceased))
          expect(hook.body).toMatchObject({ event: "agent.death_certificate_issued", data: { succession: { successor_slug: heir } } })
          // Signed with the platform key: verifiable with the JWKS, like the receipt.
          const hookKey = jwks.keys.find((key) => key.kid === hook.headers["x-gateway-key-id"])!
          const hookPublicKey = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: hookKey.x }, format: "jwk" })
          const hookSignature = String(hook.headers["x-gateway-signature"])
          expect(verify(null, hook.raw, hookPublicKey, Buffer.from(hookSignature.slice("ed25519:".length), "base64url"))).toBe(true)
          const slack = yield* waitFor(() => receiver.received.find((r) => r.path === "/slack" && String(r.body.text).includes(deceased)))
          expect(slack.body.text).toContain("transfer_to_successor")
          const notified = yield* eventuallyEffect(
            Effect.map(
              sql((s) => s<any>`SELECT details FROM audit_log WHERE target = ${deceased} AND event = 'agent.death_notified'`),
              (rows) => rows.length > 0 && rows
            ),
            { timeoutMs: 10_000, intervalMs: 50 }
          )
          const results = (typeof notified[0].details === "string" ? JSON.parse(notified[0].details) : notified[0].details).results
          expect(results.map((r: any) => [r.type, r.status])).toEqual([
            ["email", "sent"],
            ["webhook", "sent"],
            ["slack", "sent"]
          ])
          const events = yield* sql(
            (s) => s<any>`SELECT event FROM audit_log WHERE target = ${deceased} AND event IN ('agent.succeeded', 'agent.death_certificate_issued') ORDER BY event`
          )
          expect(events.map((e: any) => e.event)).toEqual(["agent.death_certificate_issued", "agent.succeeded"])
        })
    )

    it.effect("refuses a succession whose successor was decommissioned meanwhile (422, nothing issued), until the will changes", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const deceased = yield* agent(org.key, "orphan")
        const heir = yield* agent(org.key, "wanderer")
        expect((yield* will(org.key, deceased, { successor_slug: heir, succession_policy: "transfer_to_successor" })).status).toBe(200)
        yield* decommission(org.key, heir)
        yield* decommission(org.key, deceased)
        const refused = yield* certify(org.key, deceased, { cause: "end_of_life" })
        expect(refused.status).toBe(422)
        expect(refused.body.details.issues[0].path).toBe("successor_slug")
        expect((yield* (yield* estate(org.key)).getDeathCertificate({ params: { agent_slug: deceased }, responseMode: "response-only" })).status).toBe(404)
        // The will can be changed, and then the certificate issues.
        expect((yield* will(org.key, deceased, { succession_policy: "archive" })).status).toBe(200)
        const issued = yield* issue(org.key, deceased, { cause: "end_of_life" })
        expect(issued.succession).toMatchObject({ triggered: true, succession_policy: "archive", successor_slug: null, transfer_receipt_id: null })
      })
    )

    it.effect("refuses notification targets at private addresses outside OUTBOUND_ALLOW_PRIVATE (the outbound client checks again at send)", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const slug = yield* agent(org.key, "private")
        for (const target of ["http://10.0.0.1/hook", "https://10.0.0.1/hook", "https://[::1]/hook", "https://169.254.169.254/latest"]) {
          const reply = yield* will(org.key, slug, { succession_policy: "archive", notify_emails: [{ type: "webhook", target }] })
          expect([target, reply.status]).toEqual([target, 422])
        }
      })
    )

    it.effect("without a will: the certificate issues and no succession runs", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const slug = yield* agent(org.key, "lonely")
        yield* decommission(org.key, slug)
        const issued = yield* issue(org.key, slug, { cause: "deprecated" })
        expect(issued.succession).toEqual({ triggered: false, successor_slug: null, succession_policy: null, transfer_receipt_id: null, purge_after: null, purged_at: null })
        // With an API key, issued_by is the key's id.
        expect(issued.death_certificate.issued_by).toBe(org.keyId)
      })
    )

    it.effect("delete: purges only after the retention, keeps the agent as a tombstone with its evidence", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const { org } = yield* Orgs
        const api = yield* client(org.key)
        const kept = yield* agent(org.key, "keeper", { description: "personal notes", metadata: { owner: "alice" } })
        const gone = yield* agent(org.key, "forgotten", { description: "personal notes", metadata: { owner: "bob" }, capabilities: ["pay"] })
        expect((yield* will(org.key, kept, { succession_policy: "delete", data_retention_days: 30, instructions: "wipe later" })).status).toBe(200)
        expect((yield* will(org.key, gone, { succession_policy: "delete", data_retention_days: 0, notify_emails: ["dpo@example.test"] })).status).toBe(200)
        for (const slug of [kept, gone]) yield* decommission(org.key, slug)
        const later = yield* issue(org.key, kept, { cause: "end_of_life" })
        const now = yield* issue(org.key, gone, { cause: "end_of_life", notes: "bye" })
        expect(Date.parse(later.succession.purge_after!) - Date.parse(later.death_certificate.issued_at)).toBe(30 * 86_400_000)
        expect(now.succession.purge_after).toBe(now.death_certificate.issued_at)

        // The layer's sweeper runs every minute; run it now, twice: a purge happens once.
        const sweep = Effect.promise(() => server.run(Effect.flatMap(Estate, (estate) => estate.sweep)))
        yield* sweep
        yield* sweep
        const purges = yield* sql((s) => s<any>`SELECT actor FROM audit_log WHERE target = ${gone} AND event = 'agent.data_purged'`)
        expect(purges).toEqual([{ actor: "system" }])

        const goneCertificate = yield* api.estate.getDeathCertificate({ params: { agent_slug: gone } })
        expect(goneCertificate.succession.purged_at).not.toBeNull()
        expect(goneCertificate.death_certificate.notes).toBeNull()
        const [tombstone, tombstoneReply] = yield* api.agents.get({ params: { agent_slug: gone }, responseMode: "decoded-and-response" })
        expect(tombstoneReply.status).toBe(200)
        expect(tombstone).toMatchObject({ agent_slug: gone, status: "decommissioned", description: null, metadata: {}, capabilities: [] })
        expect((yield* (yield* client()).didsPublic.agentDidDocument({ params: { agent_slug: gone }, responseMode: "response-only" })).status).toBe(200)
        const goneWill = yield* api.estate.getWill({ params: { agent_slug: gone } })
        expect(goneWill.will).toMatchObject({ notify_emails: [], instructions: null })

        const keptAgent = yield* api.agents.get({ params: { agent_slug: kept } })
        expect(keptAgent).toMatchObject({ description: "personal notes", metadata: { owner: "alice" } })
        const keptCertificate = yield* api.estate.getDeathCertificate({ params: { agent_slug: kept } })
        expect(keptCertificate.succession.purged_at).toBeNull()
      })
    )
  })

  it.describe("wills", () => {
    it.effect("checks the policy, the successor and the targets", () =>
      Effect.gen(function* () {
        const { org, other } = yield* Orgs
        const slug = yield* agent(org.key, "testator")
        const foreign = yield* agent(other.key, "foreign")
        const invalid = yield* will(org.key, slug, { succession_policy: "destroy" })
        expect(invalid.status).toBe(400)
        expect(invalid.body.code).toBe("INVALID_POLICY")
        // Raw: a will without succession_policy is outside the contract.
        expect((yield* raw("PUT", `/api/v1/estate/agents/${slug}/will`, { token: org.key, body: {} })).status).toBe(422)
        for (const successor of [slug, "nobody-here", foreign]) {
          const reply = yield* will(org.key, slug, { successor_slug: successor, succession_policy: "transfer_to_successor" })
          expect([successor, reply.status, reply.body.code]).toEqual([successor, 404, "SUCCESSOR_NOT_FOUND"])
        }
        const missing = yield* will(org.key, slug, {
          succession_policy: "transfer_to_successor",
          notify_emails: ["not-an-address", { type: "webhook", target: "ftp://x" }]
        })
        expect(missing.status).toBe(422)
        expect(missing.body.details.issues.map((i: any) => i.path).sort()).toEqual(["notify_emails[0].target", "notify_emails[1].target", "successor_slug"])
        // Raw: an unknown target type and a negative retention are outside the contract.
        expect((yield* raw("PUT", `/api/v1/estate/agents/${slug}/will`, { token: org.key, body: { succession_policy: "archive", notify_emails: [{ type: "pager", target: "x" }] } })).status).toBe(422)
        expect((yield* raw("PUT", `/api/v1/estate/agents/${slug}/will`, { token: org.key, body: { succession_policy: "delete", data_retention_days: -1 } })).status).toBe(422)

        const unknown = yield* will(org.key, "no-such-agent-here", { succession_policy: "archive" })
        expect(unknown.status).toBe(404)
        expect(unknown.body.code).toBe("AGENT_NOT_FOUND")
        expect((yield* (yield* estate(org.key)).getWill({ params: { agent_slug: slug }, responseMode: "response-only" })).status).toBe(404)

        // Replacing a will replaces every field.
        expect((yield* will(org.key, slug, { succession_policy: "archive", instructions: "keep all" })).status).toBe(200)
        const replaced = yield* (yield* estate(org.key)).putWill({ params: { agent_slug: slug }, payload: { succession_policy: "delete" } })
        expect(replaced.will).toMatchObject({ succession_policy: "delete", instructions: null, data_retention_days: null, successor_slug: null, notify_emails: [] })
      })
    )

    it.effect("needs owner or admin to write, and the estate scope", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const slug = yield* agent(org.key, "guarded")
        const teammate = yield* member(org, "member")
        expect((yield* will(teammate.key, slug, { succession_policy: "archive" })).status).toBe(403)
        expect((yield* (yield* estate(teammate.key)).getWill({ params: { agent_slug: slug }, responseMode: "response-only" })).status).toBe(404)
        const scoped = yield* (yield* client(org.token)).apiKeys.create({ payload: { name: "agents only", scopes: ["agents:read"] } })
        expect((yield* (yield* estate(scoped.key)).listSnapshots({ query: {}, responseMode: "response-only" })).status).toBe(403)
      })
    )

    it.effect("normalizes plain strings to e-mail targets (property)", () =>
      Effect.sync(() => {
        const target = fc.oneof(
          fc.string({ minLength: 1 }),
          fc.record({ type: fc.constantFrom("email" as const, "webhook" as const, "slack" as const), target: fc.string({ minLength: 1 }) })
        )
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
    )
  })

  it.describe("death certificates", () => {
    it.effect("needs a cause and a known agent", () =>
      Effect.gen(function* () {
        const { org, other } = yield* Orgs
        const slug = yield* agent(org.key, "causeless")
        yield* decommission(org.key, slug)
        expect((yield* certify(org.key, slug, { notes: "no cause" })).status).toBe(422)
        const unknown = yield* certify(org.key, "no-such-agent-here", { cause: "replaced" })
        expect(unknown.status).toBe(404)
        expect(unknown.body.code).toBe("AGENT_NOT_FOUND")
        const foreign = yield* certify(other.key, slug, { cause: "replaced" })
        expect(foreign.status).toBe(404)
      })
    )

    it.effect("issues once under concurrent requests", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const slug = yield* agent(org.key, "racer")
        yield* decommission(org.key, slug)
        const replies = yield* Effect.all(
          Array.from({ length: 8 }, () => certify(org.key, slug, { cause: "replaced" })),
          { concurrency: "unbounded" }
        )
        expect(replies.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409])
      })
    )
  })

  it.describe("compliance snapshots", () => {
    it.effect("records a snapshot with computed counts, immutable, created by the caller", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const slug = yield* agent(org.key, "audited")
        // Raw: finding_count is outside the contract (the server computes it and ignores what is sent).
        const reply = yield* raw("POST", "/api/v1/estate/compliance", { token: org.key, body: {
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
        } })
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
        const byJwt = yield* (yield* estate(org.token)).createSnapshot({
          payload: { framework: "gdpr", agent_slug: slug, findings: [{ requirement: "Art. 30", status: "pass" }], overall_status: "compliant" }
        })
        expect(byJwt.created_by).toBe(org.email)
        // No route changes or deletes a snapshot (raw: routes the contract does not have).
        expect((yield* raw("PUT", "/api/v1/estate/compliance", { token: org.key, body: {} })).status).toBe(404)
        expect((yield* raw("DELETE", "/api/v1/estate/compliance", { token: org.key })).status).toBe(404)
      })
    )

    it.effect("refuses empty findings (400), a missing agent_slug (422), bad findings (422), unknown agents (404)", () =>
      Effect.gen(function* () {
        const { org, other } = yield* Orgs
        const slug = yield* agent(org.key, "refused")
        const empty = yield* snapshot(org.key, { framework: "gdpr", agent_slug: slug, findings: [], overall_status: "compliant" })
        expect(empty.status).toBe(400)
        expect(empty.body.code).toBe("EMPTY_FINDINGS")
        // Raw: no agent_slug, an unknown finding status and a finding without requirement are outside the contract
        // (no overall_status is accepted and computed: test/sdk-tolerance.test.ts).
        const noAgent = yield* raw("POST", "/api/v1/estate/compliance", { token: org.key, body: { framework: "gdpr", findings: [{ requirement: "x", status: "pass" }], overall_status: "compliant" } })
        expect(noAgent.status).toBe(422)
        expect(noAgent.body.code).toBe("VALIDATION_ERROR")
        const badFinding = yield* raw("POST", "/api/v1/estate/compliance", { token: org.key, body: {
          framework: "gdpr",
          agent_slug: slug,
          findings: [{ requirement: "x", status: "maybe" }, { status: "pass" }],
          overall_status: "partial"
        } })
        expect(badFinding.status).toBe(422)
        expect(badFinding.body.details.issues.length).toBeGreaterThanOrEqual(2)
        const unknown = yield* snapshot(org.key, {
          framework: "gdpr",
          agent_slug: "no-such-agent-here",
          findings: [{ requirement: "x", status: "pass" }],
          overall_status: "compliant"
        })
        expect(unknown.status).toBe(404)
        expect(unknown.body.code).toBe("AGENT_NOT_FOUND")
        const foreign = yield* agent(other.key, "foreign-audited")
        expect((yield* snapshot(org.key, { framework: "gdpr", agent_slug: foreign, findings: [{ requirement: "x", status: "pass" }], overall_status: "compliant" })).status).toBe(404)
      })
    )

    it.effect("lists newest first with framework and agent filters, paginated", () =>
      Effect.gen(function* () {
        const { org, other } = yield* Orgs
        const api = yield* estate(org.key)
        const first = yield* agent(org.key, "listed-a")
        const second = yield* agent(org.key, "listed-b")
        const framework = `iso_42001_${counter}`
        for (const [slug, fw] of [
          [first, framework],
          [second, framework],
          [first, "sr_11_7"]
        ] as const) {
          expect((yield* snapshot(org.key, { framework: fw, agent_slug: slug, findings: [{ requirement: "r", status: "pass" }], overall_status: "compliant" })).status).toBe(201)
        }
        const [byFramework, byFrameworkReply] = yield* api.listSnapshots({ query: { framework }, responseMode: "decoded-and-response" })
        expect(byFrameworkReply.status).toBe(200)
        expect(byFramework.snapshots.map((s) => s.agent_slug)).toEqual([second, first])
        expect(byFramework.data).toEqual(byFramework.snapshots)
        expect(byFramework.pagination).toEqual({ page: 1, per_page: 20, total: 2, has_more: false })
        const byAgent = yield* api.listSnapshots({ query: { agent_slug: first, per_page: 1 } })
        expect(byAgent.snapshots.map((s) => s.framework)).toEqual(["sr_11_7"])
        expect(byAgent.pagination).toEqual({ page: 1, per_page: 1, total: 2, has_more: true })
        const both = yield* api.listSnapshots({ query: { agent_slug: first, framework } })
        expect(both.pagination.total).toBe(1)
        // Raw: per_page outside 1-100 is outside the contract.
        expect((yield* raw("GET", "/api/v1/estate/compliance?per_page=101", { token: org.key })).status).toBe(422)
        expect((yield* raw("GET", "/api/v1/estate/compliance?per_page=0", { token: org.key })).status).toBe(422)
        const stranger = yield* estate(other.key)
        const foreign = yield* answer(stranger.listSnapshots({ query: { agent_slug: first }, responseMode: "response-only" }))
        expect(foreign.status).toBe(404)
        expect(foreign.body.code).toBe("AGENT_NOT_FOUND")
        const theirs = yield* stranger.listSnapshots({ query: { framework } })
        expect(theirs.pagination.total).toBe(0)
      })
    )

    it.effect("counts are always computed from the findings (property, over HTTP)", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* estate(org.key)
        const slug = yield* agent(org.key, "counted")
        const finding = fc.record({
          requirement: fc.string({ minLength: 1, maxLength: 40 }),
          status: fc.constantFrom("pass" as const, "fail" as const, "partial" as const)
        })
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(fc.array(finding, { minLength: 1, maxLength: 30 }), (findings) =>
              Effect.runPromise(
                Effect.gen(function* () {
                  const [created, reply] = yield* api.createSnapshot({
                    payload: { framework: "prop", agent_slug: slug, findings, overall_status: "partial" },
                    responseMode: "decoded-and-response"
                  })
                  expect(reply.status).toBe(201)
                  const expected = countFindings(findings)
                  expect(created).toMatchObject(expected)
                  expect(created.pass_count + created.fail_count + created.partial_count).toBe(created.finding_count)
                  expect(created.findings.map((f) => f.status)).toEqual(findings.map((f) => f.status))
                })
              )
            ),
            { numRuns: 20 }
          )
        )
      })
    )
  })

  it.describe("account deletion", () => {
    it.effect("removes the organization's wills, certificates, succession receipts and snapshots", () =>
      Effect.gen(function* () {
        const doomed = yield* register("Doomed Estate")
        const deceased = yield* agent(doomed.key, "doomed")
        const heir = yield* agent(doomed.key, "doomed-heir")
        expect((yield* will(doomed.key, deceased, { successor_slug: heir, succession_policy: "transfer_to_successor" })).status).toBe(200)
        yield* decommission(doomed.key, deceased)
        expect((yield* certify(doomed.key, deceased, { cause: "end_of_life" })).status).toBe(201)
        expect((yield* snapshot(doomed.key, { framework: "gdpr", agent_slug: heir, findings: [{ requirement: "r", status: "pass" }], overall_status: "compliant" })).status).toBe(
          201
        )
        expect((yield* (yield* client(doomed.token)).auth.deleteAccount({ responseMode: "response-only" })).status).toBe(200)
        const left = yield* sql(
          (s) => s<any>`SELECT (SELECT count(*) FROM agent_wills WHERE org_uuid = ${doomed.orgUuid})::int AS wills,
                               (SELECT count(*) FROM agent_death_certificates WHERE org_uuid = ${doomed.orgUuid})::int AS certificates,
                               (SELECT count(*) FROM compliance_snapshots WHERE org_uuid = ${doomed.orgUuid})::int AS snapshots,
                               (SELECT count(*) FROM agent_transfers WHERE agent_slug = ${deceased})::int AS receipts`
        )
        expect(left).toEqual([{ wills: 0, certificates: 0, snapshots: 0, receipts: 0 }])
      })
    )
  })
})
