/**
 * Compliance bundles end to end (CONTRACT-sdk-beyond §4): bundles sealed from real authorized and
 * notarized actions with the bodies the SDKs send, checked offline here with code of the test's own
 * (JCS, SHA-256, Ed25519 against the JWKS, the RFC 9162 tree and proofs of test/support/rfc9162.ts,
 * the root's RFC 3161 token by `openssl ts -verify`); every framework's summary; idempotent replays
 * and conflicts; BUNDLE_TOO_LARGE on a server with a small maximum; a tree spanning several tiles;
 * validation, roles, scopes, other organizations and the rate. Over the typed client; bodies outside
 * the contract go raw.
 */
import { execFile, spawnSync } from "node:child_process"
import { createHash, createPublicKey, verify } from "node:crypto"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { expect } from "@effect/vitest"
import canonicalize from "canonicalize"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql"
import type { AuthorizeRequest } from "../protocol/actions.js"
import type { ComplianceBundle, CreateBundleRequest } from "../protocol/compliance-bundles.js"
import { readTimestampImprint } from "../protocol/verifier/timestamp.js"
import { answer, client, member, raw, register } from "./support/api.js"
import type { Org } from "./support/client.js"
import { liveLayer } from "./support/effect.js"
import { leafHashOf, mth, verifyInclusionRfc } from "./support/rfc9162.js"
import { Gateway, type TestServer } from "./support/server.js"

/** A server whose bundles seal at most two receipts, with DORA off. */
class Capped extends Context.Service<Capped, TestServer>()("test/compliance-bundles/Capped") {}

const Setup = Layer.mergeAll(
  Gateway.layer(),
  Layer.effect(Capped, Effect.map(Gateway, (server) => server)).pipe(Layer.provide(Gateway.layer({ COMPLIANCE_MAX_BUNDLE_RECEIPTS: "2", ENABLE_DORA: "false" })))
)

/** The signed record's keys, written out here: a bundle verifies by keeping exactly these. */
const RECORD_KEYS = [
  "bundle_version",
  "bundle_uuid",
  "org_uuid",
  "framework",
  "title",
  "period_start",
  "period_end",
  "agent_filter",
  "receipt_count",
  "merkle_root",
  "framework_summary",
  "timestamp_token",
  "sealed_at"
]
const BUNDLE_KEYS = [...RECORD_KEYS, "id", "status", "bundle_hash", "signature", "public_key_id", "signing_key_id", "created_at", "created_by", "idempotency_key", "request_id"].sort()
const EMPTY_ROOT = `sha256:${createHash("sha256").digest("hex")}`

const jcs = (value: unknown) => Buffer.from(canonicalize(value)!, "utf8")
const tagged = (bytes: Uint8Array | string) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`
const digest = (hash: string) => Buffer.from(hash.replace(/^sha256:/, ""), "hex")
const recordOf = (bundle: Record<string, unknown>) => Object.fromEntries(RECORD_KEYS.map((key) => [key, bundle[key]]))
const ed25519 = (jwk: { x: string }, bytes: Uint8Array, signature: string) =>
  signature.startsWith("ed25519:") &&
  verify(null, bytes, createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: jwk.x }, format: "jwk" }), Buffer.from(signature.slice(8), "base64url"))

/** An ISO instant without its zone, as the SDK tests send them. */
const zoneless = (ms: number) => new Date(ms).toISOString().slice(0, 19)
const hourAround = () => ({ period_start: zoneless(Date.now() - 3_600_000), period_end: zoneless(Date.now() + 3_600_000) })

const bundles = (token: string) => Effect.map(client(token), (api) => api.complianceBundles)

/** A creation as answered: status, decoded bundle when 2xx, and the body as sent. */
const createBundle = (token: string, payload: CreateBundleRequest, headers: { "idempotency-key"?: string } = {}) =>
  Effect.gen(function* () {
    const reply = yield* (yield* bundles(token)).create({ headers, payload, responseMode: "response-only" })
    const body = (yield* reply.json) as any
    return { status: reply.status, body, headers: reply.headers }
  })
const sealed = (token: string, payload: CreateBundleRequest, headers: { "idempotency-key"?: string } = {}) =>
  Effect.map(createBundle(token, payload, headers), (reply) => {
    expect(reply.status, JSON.stringify(reply.body)).toBe(201)
    return reply.body as ComplianceBundle & { request_id: string }
  })

/** Authorizes an action and, when authorized and `outcome` is given, notarizes it; answers its uuid. */
const act = (owner: Org, body: Omit<AuthorizeRequest, "details">, outcome?: { outcome: "completed" | "failed"; outcome_details?: string }) =>
  Effect.gen(function* () {
    const api = yield* client(owner.key)
    const created = yield* answer(api.actions.authorize({ headers: {}, payload: { details: "do it", ...body }, responseMode: "response-only" }))
    if (created.status !== 201) return created.body.details?.action_uuid as string
    if (created.body.status === "authorized" && outcome !== undefined) {
      const done = yield* api.actions.notarize({ params: { action_uuid: created.body.action_uuid }, payload: outcome, responseMode: "response-only" })
      expect(done.status).toBe(200)
    }
    return created.body.action_uuid as string
  })

const sql = <A>(run: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>, server: Effect.Effect<TestServer, never, any> = Gateway) =>
  Effect.flatMap(server, (running) => Effect.promise(() => running.run(Effect.flatMap(SqlClient.SqlClient, run))))
const usageOf = (org: Org, server?: Effect.Effect<TestServer, never, any>) =>
  sql((db) => db<{ subject: string }>`SELECT subject FROM usage_events WHERE org_uuid = ${org.orgUuid} AND event_type = 'compliance_bundle' ORDER BY id`, server)

const jwks = Effect.flatMap(client(), (api) => api.receiptsPublic.jwks({}))

/** The export document as sent (it is streamed), parsed. */
const exported = (token: string, id: string) =>
  Effect.gen(function* () {
    const reply = yield* (yield* bundles(token)).export({ params: { bundle_uuid: id }, responseMode: "response-only" })
    return { status: reply.status, contentType: reply.headers["content-type"], text: yield* reply.text }
  })

const openssl = (args: ReadonlyArray<string>) => spawnSync("openssl", args, { encoding: "utf8" })

/** `npm run verify` on the given arguments: its exit code and output. */
const cli = (...args: string[]) =>
  promisify(execFile)("npx", ["tsx", "scripts/verify.ts", ...args], { cwd: join(__dirname, "..") }).then(
    ({ stdout }) => ({ code: 0, stdout }),
    (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout })
  )
/** The check lines of the CLI's output, as `[check, passed]`. */
const checkLines = (stdout: string) => stdout.split("\n").flatMap((line) => (/^(ok {2}|FAIL) /.test(line) ? [[line.slice(5).split(":")[0]!, line.startsWith("ok")] as const] : []))
/** The text with its character at `at` changed (a hex digit stays a hex digit). */
const oneByte = (text: string, at: number) => text.slice(0, at) + (text[at] === "0" ? "1" : "0") + text.slice(at + 1)
const hasOpenssl = openssl(["version"]).status === 0

liveLayer(Setup)((it) => {
  it.describe("compliance bundles", () => {
    it.effect(
      "seal the period's receipts into a signed, timestamped tree that the streamed export proves offline",
      () =>
        Effect.gen(function* () {
          const server = yield* Gateway
          const owner = yield* register("Sealing Org")
          const other = yield* register("Other Org")
          for (let i = 0; i < 6; i++) yield* act(owner, { action_type: "payment", agent_id: i % 2 === 0 ? "payer" : "lender" }, { outcome: "completed" })
          yield* act(owner, { action_type: "payment", agent_id: "payer" }, { outcome: "failed" })
          yield* act(other, { action_type: "payment", agent_id: "payer" }, { outcome: "completed" })

          // The body both SDKs send (buildBody drops absent fields).
          const period = hourAround()
          const bundle = yield* sealed(owner.key, { framework: "iso_42001", ...period, title: "ISO 42001 evidence", idempotency_key: "bundle-run-1" })
          expect(Object.keys(bundle).sort()).toEqual(BUNDLE_KEYS)
          expect(bundle).toMatchObject({
            bundle_version: "1.0",
            id: bundle.bundle_uuid,
            status: "sealed",
            org_uuid: owner.orgUuid,
            framework: "iso_42001",
            title: "ISO 42001 evidence",
            period_start: `${period.period_start}.000Z`,
            period_end: `${period.period_end}.000Z`,
            agent_filter: null,
            receipt_count: 7,
            created_at: bundle.sealed_at,
            created_by: owner.userUuid,
            idempotency_key: "bundle-run-1",
            signing_key_id: bundle.public_key_id
          })
          expect(bundle.request_id).toMatch(/^req_/)

          // The record: hash and signature by the key the JWKS publishes.
          const keys = (yield* jwks).keys
          const key = keys.find((candidate) => candidate.kid === bundle.public_key_id)!
          const recordBytes = jcs(recordOf(bundle))
          expect(tagged(recordBytes)).toBe(bundle.bundle_hash)
          expect(ed25519(key, recordBytes, bundle.signature)).toBe(true)
          expect(tagged(jcs({ ...recordOf(bundle), receipt_count: 8 }))).not.toBe(bundle.bundle_hash)
          // The token's imprint is the root itself.
          expect(Buffer.from(readTimestampImprint(bundle.timestamp_token!).hashedMessage).toString("hex")).toBe(bundle.merkle_root.slice(7))

          // Get and list answer the same bundle.
          const api = yield* bundles(owner.key)
          const [got, gotReply] = yield* api.get({ params: { bundle_uuid: bundle.id }, responseMode: "decoded-and-response" })
          expect(gotReply.status).toBe(200)
          const { request_id: _, ...stored } = bundle
          expect(got).toEqual(stored)
          const [listed, listedReply] = yield* api.list({ query: { page: 1, per_page: 20 }, responseMode: "decoded-and-response" })
          expect(listedReply.status).toBe(200)
          expect(listed.bundles).toEqual([stored])
          expect(listed.data).toEqual(listed.bundles)
          expect(listed.pagination).toEqual({ page: 1, per_page: 20, total: 1, has_more: false })
          expect((yield* api.list({ query: { framework: "raw" } })).pagination.total).toBe(0)

          // The export, streamed as one JSON document.
          const document = yield* exported(owner.key, bundle.id)
          expect(document.status).toBe(200)
          expect(document.contentType).toMatch(/^application\/json/)
          const doc = JSON.parse(document.text)
          expect(Object.keys(doc)).toEqual([
            "export_version",
            "bundle_uuid",
            "framework",
            "title",
            "period",
            "agent_filter",
            "receipt_count",
            "merkle_root",
            "bundle",
            "bundle_hash",
            "signature",
            "public_key_id",
            "timestamp_token",
            "framework_summary",
            "receipts",
            "signing",
            "verification",
            "exported_at",
            "request_id"
          ])
          expect(doc).toMatchObject({
            export_version: "1.0",
            bundle_uuid: bundle.id,
            framework: "iso_42001",
            title: "ISO 42001 evidence",
            period: { start: bundle.period_start, end: bundle.period_end },
            agent_filter: null,
            receipt_count: 7,
            merkle_root: bundle.merkle_root,
            bundle: recordOf(bundle),
            bundle_hash: bundle.bundle_hash,
            signature: bundle.signature,
            public_key_id: bundle.public_key_id,
            timestamp_token: bundle.timestamp_token,
            framework_summary: bundle.framework_summary
          })
          expect(doc.request_id).toMatch(/^req_/)
          expect(doc.signing).toMatchObject({
            algorithm: "Ed25519",
            canonicalization: "RFC 8785",
            hash: "SHA-256",
            merkle_tree: "RFC 9162",
            jwks_url: `${server.url}/api/v1/.well-known/jwks.json`,
            platform_did: expect.stringMatching(/^did:web:127\.0\.0\.1%3A\d+$/),
            tsa_certificate: expect.stringContaining("-----BEGIN CERTIFICATE-----")
          })
          expect(doc.verification.length).toBeGreaterThanOrEqual(5)
          expect(doc.verification.every((step: unknown) => typeof step === "string")).toBe(true)

          // Offline, from the document alone: record, signature, every receipt, the tree, the token.
          const published = new Map<string, { x: string }>(doc.signing.public_keys.map((jwk: { kid: string; x: string }) => [jwk.kid, jwk]))
          expect([...published.keys()]).toEqual([bundle.public_key_id])
          const docBytes = jcs(doc.bundle)
          expect(tagged(docBytes)).toBe(doc.bundle_hash)
          expect(ed25519(published.get(doc.public_key_id)!, docBytes, doc.signature)).toBe(true)
          expect(doc.receipts.map((receipt: { index: number }) => receipt.index)).toEqual([0, 1, 2, 3, 4, 5, 6])
          const order = [...doc.receipts].sort((a, b) => (a.created_at === b.created_at ? (a.receipt_uuid < b.receipt_uuid ? -1 : 1) : a.created_at < b.created_at ? -1 : 1))
          expect(order.map((receipt) => receipt.receipt_uuid)).toEqual(doc.receipts.map((receipt: { receipt_uuid: string }) => receipt.receipt_uuid))
          for (const receipt of doc.receipts) {
            const bytes = Buffer.from(receipt.signed_payload, "utf8")
            expect(tagged(bytes)).toBe(receipt.payload_hash)
            expect(ed25519(published.get(receipt.public_key_id)!, bytes, receipt.signature)).toBe(true)
            expect(JSON.parse(receipt.signed_payload)).toMatchObject({ receipt_uuid: receipt.receipt_uuid, action_uuid: receipt.action_uuid, org_uuid: owner.orgUuid })
          }
          const leaves = doc.receipts.map((receipt: { payload_hash: string }) => digest(receipt.payload_hash))
          expect(`sha256:${mth(leaves).toString("hex")}`).toBe(doc.merkle_root)
          if (hasOpenssl) {
            const dir = mkdtempSync(join(tmpdir(), "bundle-"))
            writeFileSync(join(dir, "token.der"), Buffer.from(doc.timestamp_token, "base64"))
            writeFileSync(join(dir, "tsa.pem"), doc.signing.tsa_certificate)
            const checked = openssl(["ts", "-verify", "-digest", doc.merkle_root.slice(7), "-sha256", "-token_in", "-in", join(dir, "token.der"), "-CAfile", join(dir, "tsa.pem")])
            expect(checked.status, checked.stderr).toBe(0)
          }

          // Each receipt's inclusion proof, checked by the RFC written out in the test.
          for (const receipt of doc.receipts) {
            const [proof, proofReply] = yield* api.inclusionProof({ params: { bundle_uuid: bundle.id, receipt_uuid: receipt.receipt_uuid }, responseMode: "decoded-and-response" })
            expect(proofReply.status).toBe(200)
            expect(Object.keys((yield* proofReply.json) as object).sort()).toEqual(
              ["bundle_uuid", "receipt_uuid", "payload_hash", "leaf_hash", "index", "leaf_count", "siblings", "merkle_root", "request_id"].sort()
            )
            const leaf = leafHashOf(digest(receipt.payload_hash))
            expect(proof).toMatchObject({ bundle_uuid: bundle.id, receipt_uuid: receipt.receipt_uuid, payload_hash: receipt.payload_hash, index: receipt.index, leaf_count: 7, merkle_root: bundle.merkle_root })
            expect(proof.leaf_hash).toBe(`sha256:${leaf.toString("hex")}`)
            expect(verifyInclusionRfc(leaf, proof.index, proof.leaf_count, proof.siblings.map(digest), digest(bundle.merkle_root))).toBe(true)
            expect(verifyInclusionRfc(leaf, (proof.index + 1) % 7, proof.leaf_count, proof.siblings.map(digest), digest(bundle.merkle_root))).toBe(false)
          }
          // Another organization's receipt is not a leaf; an unknown bundle is 404.
          const foreign = yield* sealed(other.key, { framework: "raw", ...period })
          const foreignReceipt = (JSON.parse((yield* exported(other.key, foreign.id)).text) as { receipts: Array<{ receipt_uuid: string }> }).receipts[0]!.receipt_uuid
          const missing = yield* answer(api.inclusionProof({ params: { bundle_uuid: bundle.id, receipt_uuid: foreignReceipt }, responseMode: "response-only" }))
          expect(missing.status).toBe(404)
          expect(missing.body).toMatchObject({ code: "NOT_FOUND", details: { bundle_uuid: bundle.id, receipt_uuid: foreignReceipt } })
          const unknown = yield* answer(api.get({ params: { bundle_uuid: "00000000-0000-0000-0000-000000000000" }, responseMode: "response-only" }))
          expect(unknown.status).toBe(404)
          expect(unknown.body.code).toBe("NOT_FOUND")
        }),
      120_000
    )

    it.effect(
      "count each framework's summary as the contract tables it",
      () =>
        Effect.gen(function* () {
          const owner = yield* register("Summary Org")
          const api = yield* client(owner.key)
          const dashboard = yield* client(owner.token)
          // Receipts: three notarized (one flagged by the output scan, one approved by a human), one failed,
          // one denied by policy, one denied by a human; actions also: one still pending, one only authorized.
          const flagged = yield* act(owner, { action_type: "mail", agent_id: "alpha", agent_version: "1.0", model_id: "m1" }, {
            outcome: "completed",
            outcome_details: "Sent to alice@example.com, card 4111 1111 1111 1111"
          })
          yield* act(owner, { action_type: "mail", agent_id: "alpha", agent_version: "1.1", model_id: "m2" }, { outcome: "completed", outcome_details: "all good" })
          yield* act(owner, { action_type: "lookup", agent_id: "beta", model_id: "m1" }, { outcome: "failed" })
          const policy = yield* api.policies.create({
            payload: { name: "no wires", mode: "rules", decision: "deny", conditions: [{ field: "action_type", op: "eq", value: "wire" }], activate: true },
            responseMode: "response-only"
          })
          expect(policy.status).toBe(201)
          yield* act(owner, { action_type: "wire", agent_id: "beta" })
          const approved = yield* act(owner, { action_type: "refund", agent_id: "gamma", require_approval: true })
          expect((yield* dashboard.actions.dashboardApprove({ params: { action_uuid: approved }, responseMode: "response-only" })).status).toBe(200)
          expect((yield* api.actions.notarize({ params: { action_uuid: approved }, payload: { outcome: "completed" }, responseMode: "response-only" })).status).toBe(200)
          const denied = yield* act(owner, { action_type: "refund", agent_id: "gamma", require_approval: true })
          expect((yield* dashboard.actions.dashboardDeny({ params: { action_uuid: denied }, query: { reason: "no" }, responseMode: "response-only" })).status).toBe(200)
          yield* act(owner, { action_type: "refund", agent_id: "gamma", require_approval: true })
          yield* act(owner, { action_type: "lookup", agent_id: "delta" })
          expect((yield* dashboard.actions.cosign({ params: { action_uuid: flagged }, responseMode: "response-only" })).status).toBe(200)
          // Drift: one check of alpha against a synthetic baseline it falls far short of, its alert acknowledged.
          const driftApi = api.drift
          expect((yield* driftApi.syntheticBaseline({ params: { agent_id: "alpha" }, payload: { expected_distribution: { mail: 1 }, expected_actions_per_day: 400 }, responseMode: "response-only" })).status).toBe(201)
          const alert = yield* driftApi.check({ params: { agent_id: "alpha" }, query: {} })
          expect(alert).not.toBeNull()
          expect((yield* dashboard.drift.acknowledge({ params: { agent_id: "alpha", alert_id: alert!.id }, responseMode: "response-only" })).status).toBe(200)
          // DORA: one incident opened and resolved in the period.
          const incident = yield* api.dora.createIncident({ payload: { title: "Outage", description: "Payments failed", detected_at: new Date(Date.now() - 60_000).toISOString() } })
          expect((yield* api.dora.classifyIncident({ params: { uuid: incident.uuid }, payload: { severity: "low", category: "other" }, responseMode: "response-only" })).status).toBe(200)
          expect((yield* api.dora.resolveIncident({ params: { uuid: incident.uuid }, payload: { resolution_summary: "Restarted" }, responseMode: "response-only" })).status).toBe(200)

          const period = hourAround()
          const common = { receipt_count: 6, by_receipt_status: { notarized: 3, failed: 1, denied: 1, denied_by_human: 1 }, distinct_agents: 3 }
          const summaryOf = (framework: CreateBundleRequest["framework"]) => Effect.map(sealed(owner.key, { framework, ...period }), (bundle) => bundle.framework_summary)
          expect(yield* summaryOf("raw")).toEqual(common)
          expect(yield* summaryOf("eu_ai_act_art12")).toEqual({
            ...common,
            article: "12",
            total_actions: 8,
            status_breakdown: { authorized: 1, pending_approval: 1, denied_by_policy: 1, approved: 0, denied_by_human: 1, notarized: 3, failed: 1 },
            distinct_models: 2,
            human_approvals: 1,
            timestamped_receipts: 6
          })
          expect(yield* summaryOf("iso_42001")).toEqual({
            ...common,
            standard: "ISO/IEC 42001:2023",
            controls: ["A.6.2.6", "A.6.2.8"],
            distinct_agent_versions: 2,
            policy_denials: 1,
            human_reviews: 2,
            output_scan_flagged: 1
          })
          expect(yield* summaryOf("aiuc_1")).toEqual({
            ...common,
            standard: "AIUC-1",
            requirements: ["E015"],
            reliability: { notarized: 3, failed: 1 },
            safety: { policy_denials: 1, human_denials: 1, output_scan_flagged: 1 },
            accountability: { timestamped_receipts: 6, human_approvals: 1, cosignatures: 1 }
          })
          expect(yield* summaryOf("soc_2_cc7")).toEqual({
            ...common,
            criteria: "CC7",
            cc7_2_monitoring: { actions_monitored: 8, output_scanned: 2, drift_checks: 1, drift_alerts: 1 },
            cc7_3_evaluation: { policy_denials: 1, approvals_requested: 3, human_denials: 1, drift_alerts_acknowledged: 1 },
            cc7_4_response: { dora_incidents_opened: 1, dora_incidents_resolved: 1 }
          })
          // One usage row per bundle, its subject the framework.
          expect((yield* usageOf(owner)).map((row) => row.subject)).toEqual(["raw", "eu_ai_act_art12", "iso_42001", "aiuc_1", "soc_2_cc7"])
          // The agent filter narrows every count (duplicates dropped); the sixth creation this minute is 429.
          const limited = yield* createBundle(owner.key, { framework: "raw", ...period, agent_filter: ["gamma", "gamma"] })
          expect(limited.status).toBe(429)
          expect(limited.body.code).toBe("RATE_LIMIT_EXCEEDED")
          expect(Number(limited.headers["retry-after"])).toBeGreaterThan(0)
          expect((yield* usageOf(owner)).length).toBe(5)
        }),
      120_000
    )

    it.effect(
      "narrow to agents and read an empty period as SHA-256 of nothing",
      () =>
        Effect.gen(function* () {
          const owner = yield* register("Filter Org")
          yield* act(owner, { action_type: "a", agent_id: "one" }, { outcome: "completed" })
          yield* act(owner, { action_type: "a", agent_id: "two" }, { outcome: "completed" })
          yield* act(owner, { action_type: "a", agent_id: "three" }, { outcome: "failed" })
          const period = hourAround()
          const narrowed = yield* sealed(owner.key, { framework: "raw", ...period, agent_filter: ["three", "one", "three"] })
          expect(narrowed.agent_filter).toEqual(["three", "one"])
          expect(narrowed.framework_summary).toEqual({ receipt_count: 2, by_receipt_status: { notarized: 1, failed: 1, denied: 0, denied_by_human: 0 }, distinct_agents: 2 })
          const doc = JSON.parse((yield* exported(owner.key, narrowed.id)).text)
          expect(doc.agent_filter).toEqual(["three", "one"])
          expect(doc.receipts.map((receipt: { signed_payload: string }) => JSON.parse(receipt.signed_payload).agent_id).sort()).toEqual(["one", "three"])

          // No receipt in the period: an empty tree, a token over its root, an export with no receipts, no proofs.
          const empty = yield* sealed(owner.key, { framework: "eu_ai_act_art12", period_start: "2020-01-01", period_end: "2020-01-31" })
          expect(empty).toMatchObject({
            receipt_count: 0,
            merkle_root: EMPTY_ROOT,
            period_start: "2020-01-01T00:00:00.000Z",
            period_end: "2020-01-31T23:59:59.999Z",
            title: "eu_ai_act_art12 2020-01-01T00:00:00.000Z/2020-01-31T23:59:59.999Z"
          })
          expect(empty.framework_summary).toMatchObject({ receipt_count: 0, total_actions: 0, distinct_models: 0 })
          expect(Buffer.from(readTimestampImprint(empty.timestamp_token!).hashedMessage).toString("hex")).toBe(EMPTY_ROOT.slice(7))
          const emptyDoc = JSON.parse((yield* exported(owner.key, empty.id)).text)
          expect(emptyDoc.receipts).toEqual([])
          expect(tagged(jcs(emptyDoc.bundle))).toBe(empty.bundle_hash)
          const receipt = doc.receipts[0].receipt_uuid
          const none = yield* answer((yield* bundles(owner.key)).inclusionProof({ params: { bundle_uuid: empty.id, receipt_uuid: receipt }, responseMode: "response-only" }))
          expect(none.status).toBe(404)
        }),
      60_000
    )

    it.effect(
      "answer a replay with the stored bundle and refuse a reused key with another body or while sealing",
      () =>
        Effect.gen(function* () {
          const owner = yield* register("Replay Org")
          yield* act(owner, { action_type: "a", agent_id: "one" }, { outcome: "completed" })
          const period = hourAround()
          const body: CreateBundleRequest = { framework: "aiuc_1", ...period, idempotency_key: "nightly-2026-04-01" }
          const first = yield* sealed(owner.key, body)
          // Same key and body: 200, the stored bundle, no second usage row.
          const again = yield* createBundle(owner.key, body)
          expect(again.status).toBe(200)
          const { request_id: _a, ...firstStored } = first
          const { request_id: _b, ...againStored } = again.body
          expect(againStored).toEqual(firstStored)
          // The typed client reads the 200 with the contract's schema too.
          const [decoded, decodedReply] = yield* (yield* bundles(owner.key)).create({ headers: {}, payload: body, responseMode: "decoded-and-response" })
          expect(decodedReply.status).toBe(200)
          expect(decoded).toEqual(firstStored)
          // The key in the header instead (the TypeScript SDK's actions send it there): the same replay.
          const { idempotency_key: _key, ...withoutKey } = body
          const viaHeader = yield* createBundle(owner.key, withoutKey, { "idempotency-key": "nightly-2026-04-01" })
          expect(viaHeader.status).toBe(200)
          expect(viaHeader.body.id).toBe(first.id)
          expect((yield* usageOf(owner)).length).toBe(1)
          // Another body under the key: 409, whatever differs (the fields as sent, absent = null).
          const otherTitle = yield* createBundle(owner.key, { ...body, title: "another" })
          expect(otherTitle.status).toBe(409)
          expect(otherTitle.body).toMatchObject({ code: "DUPLICATE_REQUEST", details: { idempotency_key: "nightly-2026-04-01" } })
          const sameInstantOtherText = yield* createBundle(owner.key, { ...body, period_start: `${body.period_start}Z` })
          expect(sameInstantOtherText.status).toBe(409)
          // Body and header naming different keys: 422.
          const both = yield* createBundle(owner.key, body, { "idempotency-key": "other" })
          expect(both.status).toBe(422)
          expect(both.body.code).toBe("VALIDATION_ERROR")

          // A first request still sealing: 409. Its claim is made here as the service makes it.
          const running = yield* sealed(owner.key, { ...body, idempotency_key: "template" })
          const claimRow = (claimedAt: string, key: string) =>
            sql(
              (db) => db`INSERT INTO compliance_bundles (bundle_uuid, org_uuid, status, framework, idempotency_key, request_hash, created_by, claimed_at)
                   SELECT ${`claim-${key}`}, org_uuid, 'sealing', framework, ${key}, request_hash, created_by, ${claimedAt}
                   FROM compliance_bundles WHERE bundle_uuid = ${running.id}`
            )
          yield* claimRow(new Date().toISOString(), "in-flight")
          const busy = yield* createBundle(owner.key, { ...body, idempotency_key: "in-flight" })
          expect(busy.status).toBe(409)
          expect(busy.body.message).toContain("still being sealed")
          // Nothing of a running claim is listed or readable.
          expect((yield* answer((yield* bundles(owner.key)).get({ params: { bundle_uuid: "claim-in-flight" }, responseMode: "response-only" }))).status).toBe(404)
          expect((yield* (yield* bundles(owner.key)).list({ query: {} })).pagination.total).toBe(2)
          // A claim left by a request that died (older than ten minutes) no longer holds its key.
          yield* claimRow(new Date(Date.now() - 11 * 60_000).toISOString(), "abandoned")
          const revived = yield* createBundle(owner.key, { ...body, idempotency_key: "abandoned" })
          expect(revived.status).toBe(201)
          expect(revived.body.id).not.toBe("claim-abandoned")
          expect((yield* usageOf(owner)).length).toBe(3)
        }),
      60_000
    )

    it.effect(
      "seal once when requests with the same key run at the same time",
      () =>
        Effect.gen(function* () {
          const owner = yield* register("Racing Org")
          for (let i = 0; i < 3; i++) yield* act(owner, { action_type: "a", agent_id: "one" }, { outcome: "completed" })
          const body: CreateBundleRequest = { framework: "raw", ...hourAround(), idempotency_key: "race" }
          const replies = yield* Effect.all(
            Array.from({ length: 4 }, () => createBundle(owner.key, body)),
            { concurrency: "unbounded" }
          )
          const statuses = replies.map((reply) => reply.status)
          expect(statuses.filter((status) => status === 201)).toHaveLength(1)
          expect(statuses.every((status) => status === 201 || status === 200 || status === 409)).toBe(true)
          const id = replies.find((reply) => reply.status === 201)!.body.id
          for (const reply of replies) if (reply.status === 200) expect(reply.body.id).toBe(id)
          expect((yield* usageOf(owner)).length).toBe(1)
          expect(yield* sql((db) => db<{ n: number }>`SELECT count(*)::int AS n FROM compliance_bundles WHERE org_uuid = ${owner.orgUuid}`)).toEqual([{ n: 1 }])
          // Once sealed, the key replays.
          expect((yield* createBundle(owner.key, body)).status).toBe(200)
        }),
      60_000
    )

    it.effect(
      "refuse a period over COMPLIANCE_MAX_BUNDLE_RECEIPTS with BUNDLE_TOO_LARGE and store nothing",
      () =>
        Effect.gen(function* () {
          const capped = yield* Capped
          const cappedGateway = Effect.succeed(capped)
          const owner = yield* register("Big Org").pipe(Effect.provideService(Gateway, capped))
          const inCapped = <A, E>(effect: Effect.Effect<A, E, Gateway>) => Effect.provideService(effect, Gateway, capped)
          for (let i = 0; i < 3; i++) yield* inCapped(act(owner, { action_type: "a", agent_id: i === 0 ? "solo" : "pair" }, { outcome: "completed" }))
          const period = hourAround()
          const body: CreateBundleRequest = { framework: "soc_2_cc7", ...period, idempotency_key: "too-big" }
          const refused = yield* inCapped(createBundle(owner.key, body))
          expect(refused.status).toBe(422)
          expect(refused.body).toMatchObject({ code: "BUNDLE_TOO_LARGE", details: { receipt_count: 3, max: 2 } })
          expect(refused.body.message).toContain("3")
          // Nothing stored: no bundle, no claim, no usage row; the key is free, so the same request is refused again, not 409.
          expect(yield* sql((db) => db<{ n: number }>`SELECT count(*)::int AS n FROM compliance_bundles WHERE org_uuid = ${owner.orgUuid}`, cappedGateway)).toEqual([{ n: 0 }])
          expect(yield* sql((db) => db<{ n: number }>`SELECT count(*)::int AS n FROM compliance_bundle_leaves WHERE org_uuid = ${owner.orgUuid}`, cappedGateway)).toEqual([{ n: 0 }])
          expect((yield* usageOf(owner, cappedGateway)).length).toBe(0)
          expect((yield* inCapped(createBundle(owner.key, body))).status).toBe(422)
          // Narrowed to two receipts it seals; with DORA off, CC7.4 is null.
          const narrowed = yield* inCapped(sealed(owner.key, { ...body, agent_filter: ["pair"], idempotency_key: "fits" }))
          expect(narrowed.receipt_count).toBe(2)
          expect(narrowed.framework_summary).toMatchObject({ criteria: "CC7", cc7_4_response: null })
        }),
      60_000
    )

    it.effect(
      "prove every leaf of a tree that spans several tiles",
      () =>
        Effect.gen(function* () {
          const owner = yield* register("Tiles Org")
          const size = 600
          // Receipts straight in the database: only their payload hashes and order matter to the tree.
          yield* sql(
            (db) => db`INSERT INTO receipts (receipt_uuid, action_uuid, org_uuid, agent_id, agent_sequence, receipt_status, receipt_version,
                         signed_payload, payload_hash, signature, public_key_id, timestamp_token, created_at)
                       SELECT 'rct_tiles_' || lpad(g::text, 4, '0'), 'act_tiles_' || g, ${owner.orgUuid}, 'bulk', g, 'notarized', '1.1', '{}',
                         'sha256:' || encode(sha256(convert_to('leaf ' || g, 'UTF8')), 'hex'), 'ed25519:none', 'rk_none', NULL,
                         now() - interval '10 minutes' + (g / 3) * interval '1 millisecond'
                       FROM generate_series(1, ${size}::int) AS g`
          )
          const bundle = yield* sealed(owner.key, { framework: "raw", ...hourAround() })
          expect(bundle.receipt_count).toBe(size)
          const rows = yield* sql(
            (db) => db<{ receipt_uuid: string; payload_hash: string }>`SELECT receipt_uuid, payload_hash FROM receipts WHERE org_uuid = ${owner.orgUuid} ORDER BY created_at, receipt_uuid`
          )
          expect(bundle.merkle_root).toBe(`sha256:${mth(rows.map((row) => digest(row.payload_hash))).toString("hex")}`)
          const api = yield* bundles(owner.key)
          const indexes = [0, 1, 254, 255, 256, 257, 300, 511, 512, 513, 598, 599]
          for (const index of indexes) {
            const row = rows[index]!
            const proof = yield* api.inclusionProof({ params: { bundle_uuid: bundle.id, receipt_uuid: row.receipt_uuid } })
            expect(proof.index).toBe(index)
            expect(verifyInclusionRfc(leafHashOf(digest(row.payload_hash)), index, size, proof.siblings.map(digest), digest(bundle.merkle_root))).toBe(true)
          }
          // The export streams all of them in leaf order.
          const doc = JSON.parse((yield* exported(owner.key, bundle.id)).text)
          expect(doc.receipts.map((receipt: { receipt_uuid: string }) => receipt.receipt_uuid)).toEqual(rows.map((row) => row.receipt_uuid))
          expect(doc.signing.public_keys.map((jwk: { kid: string }) => jwk.kid)).toEqual([bundle.public_key_id])
        }),
      60_000
    )

    it.effect(
      "pass `npm run verify` offline against the JWKS alone, and fail it when one byte changes",
      () =>
        Effect.gen(function* () {
          const server = yield* Gateway
          const owner = yield* register("Verify CLI Org")
          for (let i = 0; i < 3; i++) yield* act(owner, { action_type: "payment", agent_id: "payer" }, { outcome: i === 2 ? "failed" : "completed" })
          const bundle = yield* sealed(owner.key, { framework: "aiuc_1", ...hourAround() })
          const empty = yield* sealed(owner.key, { framework: "raw", period_start: "2020-01-01", period_end: "2020-01-31" })
          // The answers exactly as sent.
          const text = (yield* exported(owner.key, bundle.id)).text
          const emptyText = (yield* exported(owner.key, empty.id)).text
          const doc = JSON.parse(text)
          expect(doc.receipts.length).toBe(3)
          const receipt = doc.receipts[1]
          const proof = yield* raw("GET", `/api/v1/compliance/bundles/${bundle.id}/inclusion-proof/${receipt.receipt_uuid}`, { token: owner.key })
          expect(proof.status).toBe(200)

          const dir = mkdtempSync(join(tmpdir(), "bundle-cli-"))
          const file = (name: string, value: unknown) => {
            const path = join(dir, `${name}.json`)
            writeFileSync(path, typeof value === "string" ? value : JSON.stringify(value))
            return path
          }
          const jwksFile = file("jwks", yield* jwks)
          const jwksUrl = `${server.url}/api/v1/.well-known/jwks.json`
          const exportFile = file("export", text)
          const changed = (edit: (copy: any) => void) => {
            const copy = JSON.parse(text)
            edit(copy)
            return copy
          }
          const results = yield* Effect.promise(() =>
            Promise.all([
              cli(exportFile, "--jwks", jwksFile),
              cli(file("empty", emptyText), "--jwks", jwksUrl),
              cli(file("bundle", bundle), "--jwks", jwksUrl),
              cli(file("proof", proof.body), "--bundle", exportFile, "--jwks", jwksUrl),
              // One byte changed: a receipt's signed payload, the export's root, the signed record's root, a payload hash.
              cli(file("payload", changed((copy) => (copy.receipts[1].signed_payload = copy.receipts[1].signed_payload.replace(receipt.receipt_uuid, oneByte(receipt.receipt_uuid, receipt.receipt_uuid.length - 1))))), "--jwks", jwksFile),
              cli(file("root", changed((copy) => (copy.merkle_root = oneByte(copy.merkle_root, 10)))), "--jwks", jwksFile),
              cli(file("record-root", changed((copy) => (copy.bundle.merkle_root = oneByte(copy.bundle.merkle_root, 10)))), "--jwks", jwksFile),
              cli(file("leaf", changed((copy) => (copy.receipts[0].payload_hash = oneByte(copy.receipts[0].payload_hash, 10)))), "--jwks", jwksFile),
              cli(file("dropped", changed((copy) => copy.receipts.pop())), "--jwks", jwksFile),
              cli(file("proof-root", { ...proof.body, merkle_root: oneByte(proof.body.merkle_root, 10) }), "--bundle", exportFile, "--jwks", jwksUrl)
            ])
          )
          expect(results.map((result) => result.code)).toEqual([0, 0, 0, 0, 1, 1, 1, 1, 1, 1])
          // Receipts timestamped by the TSA carry a token over their signed bytes, checked too.
          const stamped = doc.receipts.some((item: { timestamp_token: string | null }) => item.timestamp_token !== null)
          const passed = (stdout: string) => checkLines(stdout).filter(([, ok]) => ok).map(([check]) => check)
          const failed = (stdout: string) => checkLines(stdout).filter(([, ok]) => !ok).map(([check]) => check)
          for (const result of results.slice(0, 4)) {
            expect(failed(result.stdout), result.stdout).toEqual([])
            expect(result.stdout).toContain("\nvalid")
          }
          expect(passed(results[0]!.stdout)).toEqual([
            "bundle_hash",
            "signature",
            "timestamp_imprint",
            "header_matches_record",
            "receipt_indexes",
            "receipt_payload_hashes",
            "receipt_signatures",
            ...(stamped ? ["receipt_timestamp_imprints"] : []),
            "merkle_root",
            "record_merkle_root",
            "receipt_count"
          ])
          expect(results[1]!.stdout).toContain("ok   merkle_root")
          expect(passed(results[2]!.stdout)).toEqual(["bundle_hash", "signature", "timestamp_imprint"])
          expect(passed(results[3]!.stdout)).toEqual([
            "inclusion of the proof's payload_hash",
            "root is the bundle's merkle_root",
            "bundle bundle_hash",
            "bundle signature",
            "bundle timestamp_imprint"
          ])
          expect(failed(results[4]!.stdout)).toEqual(["receipt_payload_hashes", "receipt_signatures", ...(stamped ? ["receipt_timestamp_imprints"] : [])])
          expect(failed(results[5]!.stdout)).toEqual(["merkle_root"])
          expect(failed(results[6]!.stdout)).toEqual(["bundle_hash", "signature", "timestamp_imprint", "record_merkle_root"])
          expect(failed(results[7]!.stdout)).toEqual(["receipt_payload_hashes", "merkle_root", "record_merkle_root"])
          expect(failed(results[8]!.stdout)).toEqual(["merkle_root", "record_merkle_root", "receipt_count"])
          expect(failed(results[9]!.stdout)).toEqual(["inclusion of the proof's payload_hash", "root is the bundle's merkle_root"])
        }),
      120_000
    )

    it.effect(
      "validate the request and refuse other roles, scopes and organizations",
      () =>
        Effect.gen(function* () {
          const owner = yield* register("Rules Org")
          const other = yield* register("Nosy Org")
          yield* act(owner, { action_type: "a", agent_id: "one" }, { outcome: "completed" })
          const period = hourAround()
          const refused = (payload: unknown) => raw("POST", "/api/v1/compliance/bundles", { token: owner.key, body: payload })
          const codes = yield* Effect.all([
            refused({ ...period }),
            refused({ framework: "gdpr", ...period }),
            refused({ framework: "raw", period_start: period.period_start }),
            refused({ framework: "raw", ...period, title: "" }),
            refused({ framework: "raw", ...period, title: "t".repeat(201) }),
            refused({ framework: "raw", ...period, agent_filter: [] }),
            refused({ framework: "raw", ...period, agent_filter: Array.from({ length: 101 }, (_, i) => `a${i}`) }),
            refused({ framework: "raw", ...period, idempotency_key: "k".repeat(256) })
          ])
          expect(codes.map((reply) => [reply.status, reply.body.code])).toEqual(Array.from({ length: 8 }, () => [422, "VALIDATION_ERROR"]))
          const dates = yield* createBundle(owner.key, { framework: "raw", period_start: "yesterday", period_end: "2026-01-01" })
          expect(dates.status).toBe(422)
          expect(dates.body.details.issues.map((issue: { path: string }) => issue.path)).toEqual(["period_start"])
          const backwards = yield* createBundle(owner.key, { framework: "raw", period_start: "2026-02-01", period_end: "2026-01-31" })
          expect(backwards.body.details.issues).toEqual([{ path: "period_end", message: "must not be before period_start" }])
          const long = yield* createBundle(owner.key, { framework: "raw", period_start: "2025-01-01", period_end: "2026-01-02" })
          expect(long.body.details.issues).toEqual([{ path: "period_end", message: "a period spans at most 366 days" }])
          // Refusals stored nothing and used none of the five creations a minute.
          expect((yield* usageOf(owner)).length).toBe(0)

          const bundle = yield* sealed(owner.key, { framework: "raw", ...period })
          // Members read but do not create; a key needs compliance:write to create, compliance:read to read.
          const teammate = yield* member(owner, "member")
          expect((yield* createBundle(teammate.key, { framework: "raw", ...period })).status).toBe(403)
          expect((yield* (yield* bundles(teammate.key)).get({ params: { bundle_uuid: bundle.id }, responseMode: "response-only" })).status).toBe(200)
          const admin = yield* member(owner, "admin")
          expect((yield* createBundle(admin.key, { framework: "raw", ...period })).status).toBe(201)
          const dashboard = yield* client(owner.token)
          const reader = yield* dashboard.apiKeys.create({ payload: { name: "reader", scopes: ["compliance:read"] } })
          expect((yield* createBundle(reader.key, { framework: "raw", ...period })).status).toBe(403)
          expect((yield* exported(reader.key, bundle.id)).status).toBe(200)
          const unrelated = yield* dashboard.apiKeys.create({ payload: { name: "unrelated", scopes: ["actions:read"] } })
          expect((yield* (yield* bundles(unrelated.key)).list({ query: {}, responseMode: "response-only" })).status).toBe(403)
          // Another organization: 404 on every route that takes the id.
          const nosy = yield* bundles(other.key)
          const receipt = JSON.parse((yield* exported(owner.key, bundle.id)).text).receipts[0].receipt_uuid
          expect((yield* nosy.get({ params: { bundle_uuid: bundle.id }, responseMode: "response-only" })).status).toBe(404)
          expect((yield* exported(other.key, bundle.id)).status).toBe(404)
          expect((yield* nosy.inclusionProof({ params: { bundle_uuid: bundle.id, receipt_uuid: receipt }, responseMode: "response-only" })).status).toBe(404)
          expect((yield* nosy.list({ query: {} })).pagination.total).toBe(0)
        }),
      60_000
    )
  })
})
