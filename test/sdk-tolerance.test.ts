/**
 * The published SDKs work unchanged (CONTRACT-sdk-beyond §8): each request is sent as the
 * TypeScript `aira-sdk` 3.4.0 and Python `aira-sdk` 3.2.0 send it, and each answer carries the keys
 * their types read, with their values. Agents (register, get, update, list, decommission with `{}`,
 * versions without `instruction_hash`, the bare versions array, transfer with `to_org_uuid`),
 * evidence packages (`description`, the added keys, the offline check and `npm run verify`), time
 * travel by `agent_slug`, escrow accounts, transactions and disputes, compliance snapshots (a
 * findings map in the order sent, a computed `overall_status`, signed like a receipt and checked by
 * `npm run verify`), credential revocation without a reason and verification of the wrapped
 * credential; and the requests that stay refused. Over the typed client where the contract
 * expresses the request; raw where the body is the SDKs' own text.
 */
import { execFile } from "node:child_process"
import { createHmac } from "node:crypto"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql"
import fc from "fast-check"
import type { Jwks } from "../protocol/receipts.js"
import { SEALED_PACKAGE_KEYS, SNAPSHOT_SIGNED_KEYS, verifyEvidencePackage, verifySnapshot } from "../protocol/verifier/index.js"
import { findingKeysAsSent, normalizeFindings } from "../src/estate/findings.js"
import { databaseClientLayer, runMigrationsOf } from "../src/platform/db/index.js"
import { migrations } from "../src/platform/db/migrations/index.js"
import { client, raw, register } from "./support/api.js"
import type { Org } from "./support/client.js"
import { freshDatabaseUrl, UNUSED_DATA_DIR } from "./support/database.js"
import { liveLayer } from "./support/effect.js"
import { Gateway } from "./support/server.js"

class Orgs extends Context.Service<Orgs, { readonly org: Org; readonly other: Org }>()("test/sdk-tolerance/Orgs") {}

const Setup = Layer.effect(Orgs, Effect.all({ org: register("SDK Org"), other: register("Other SDK Org") })).pipe(Layer.provideMerge(Gateway.layer()))

let counter = 0
const uniqueSlug = (label: string) => `${label}-${process.pid}-${Date.now().toString(36)}-${++counter}`
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/** A POST or PUT as the SDKs send it (JSON of exactly this body), answered as sent. */
const send = (method: string, path: string, token: string, body: unknown) => raw(method, `/api/v1${path}`, { token, body })

const jwks = Effect.flatMap(client(), (api) => api.receiptsPublic.jwks({}))
const keyOf = (keys: Jwks, kid: string) => keys.keys.find((key) => key.kid === kid)!

const sql = <A>(run: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  Effect.flatMap(Gateway, (server) => Effect.promise(() => server.run(Effect.flatMap(SqlClient.SqlClient, run))))

const workDir = mkdtempSync(join(tmpdir(), "sdk-tolerance-"))
/** `npm run verify` on a document, against the test server's JWKS. */
const verifyCli = (name: string, document: unknown) =>
  Effect.gen(function* () {
    const server = yield* Gateway
    const file = join(workDir, `${++counter}-${name}`)
    writeFileSync(file, JSON.stringify(document))
    // Asynchronous: the server runs in this process and must keep answering the CLI's JWKS fetch.
    return yield* Effect.promise(() =>
      promisify(execFile)("npx", ["tsx", "scripts/verify.ts", file, "--jwks", `${server.url}/api/v1/.well-known/jwks.json`], { cwd: join(__dirname, "..") }).then(
        (result) => ({ code: 0, output: result.stdout + result.stderr }),
        (error: { code?: number; stdout?: string; stderr?: string }) => ({ code: error.code ?? 1, output: `${error.stdout}${error.stderr}` })
      )
    )
  })

const authorize = (owner: Org, agentId: string, actionType = "sdk.call") =>
  Effect.gen(function* () {
    const [created, reply] = yield* (yield* client(owner.key)).actions.authorize({
      headers: {},
      payload: { action_type: actionType, details: "sdk tolerance", agent_id: agentId },
      responseMode: "decoded-and-response"
    })
    expect(reply.status).toBe(201)
    return created.action_uuid
  })

describe("a findings map in the order it was sent", () => {
  it("reads the keys as the body wrote them, integer-like ones included, and the last `findings` as JSON.parse does", () => {
    const body = '{"framework":"x","findings":{"b":"pass","2":"fail","a\\"q":{"status":"partial","evidence":"e"},"1":"pass"},"agent_slug":"s"}'
    expect(findingKeysAsSent(body)).toEqual(["b", "2", 'a"q', "1"])
    const parsed = JSON.parse(body).findings
    expect(Object.keys(parsed)).toEqual(["1", "2", "b", 'a"q'])
    expect(normalizeFindings(parsed, findingKeysAsSent(body))).toEqual([
      { requirement: "b", status: "pass", evidence: null },
      { requirement: "2", status: "fail", evidence: null },
      { requirement: 'a"q', status: "partial", evidence: "e" },
      { requirement: "1", status: "pass", evidence: null }
    ])
    expect(findingKeysAsSent('{"findings":{"x":"pass"}, "nested": {"findings": {"y": 1}}, "findings": {"z": "fail"}}')).toEqual(["z"])
    expect(findingKeysAsSent('{"findings":[{"requirement":"x"}]}')).toBeUndefined()
    expect(findingKeysAsSent(' { "findings" : { } } ')).toEqual([])
  })

  it("finds the sent order of any map, whatever the keys, values, spacing and surrounding keys", () => {
    const space = fc.constantFrom("", " ", "\n", "\t ", "\r\n  ")
    const json = fc.jsonValue({ maxDepth: 3 })
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.oneof(fc.string(), fc.integer({ min: 0, max: 10_000 }).map(String)), { maxLength: 12 }),
        fc.array(json, { minLength: 12, maxLength: 12 }),
        fc.array(fc.tuple(fc.string().filter((key) => key !== "findings"), json), { maxLength: 3 }),
        space,
        space,
        (keys, values, around, before, after) => {
          const entries = keys.map((key, index) => `${before}${JSON.stringify(key)}${after}:${before}${JSON.stringify(values[index])}${after}`)
          const others = around.map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`)
          const body = `${before}{${[...others, `"findings"${after}:${before}{${entries.join(",")}}`].join(`,${after}`)}}${after}`
          expect(JSON.parse(body).findings).toBeTypeOf("object")
          expect(findingKeysAsSent(body)).toEqual(keys)
        }
      )
    )
  })
})

liveLayer(Setup)((it) => {
  it.describe("agents", () => {
    it.effect("register, get, update and list answer the Agent keys the SDKs read; `public` is stored", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const slug = uniqueSlug("sdk-agent")
        // TypeScript registerAgent({agentSlug, displayName, description, capabilities, public}).
        const registered = yield* send("POST", "/agents", org.key, {
          agent_slug: slug,
          display_name: "SDK Agent",
          description: "registered by the SDK",
          capabilities: ["email.send"],
          public: true
        })
        expect(registered.status).toBe(201)
        expect(registered.body).toMatchObject({
          id: slug,
          agent_slug: slug,
          display_name: "SDK Agent",
          name: "SDK Agent",
          description: "registered by the SDK",
          capabilities: ["email.send"],
          status: "active",
          public: true,
          registered_at: registered.body.created_at,
          metadata: {},
          versions: [],
          request_id: expect.any(String)
        })
        expect(registered.body.registered_at).toMatch(ISO)

        // Python register_agent sends public=False by default and no description or capabilities.
        const quiet = uniqueSlug("sdk-quiet")
        const python = yield* send("POST", "/agents", org.key, { agent_slug: quiet, display_name: "Quiet", public: false })
        expect(python.status).toBe(201)
        expect(python.body).toMatchObject({ id: quiet, public: false, description: null, capabilities: [], metadata: {}, versions: [] })

        const api = yield* client(org.key)
        yield* api.agents.publishVersion({ params: { agent_slug: slug }, payload: { version: "1.0.0", model_id: "gpt-4o" } })
        const got = yield* send("GET", `/agents/${slug}`, org.key, undefined)
        expect(got.status).toBe(200)
        expect(got.body).toMatchObject({ id: slug, display_name: "SDK Agent", public: true, registered_at: registered.body.created_at, metadata: {} })
        expect(got.body.versions).toEqual([expect.objectContaining({ id: `${slug}@1.0.0`, version: "1.0.0", status: "published", model_id: "gpt-4o" })])

        // TypeScript updateAgent(slug, {displayName, public}); Python update_agent(slug, public=False).
        const updated = yield* send("PUT", `/agents/${slug}`, org.key, { display_name: "Renamed", public: false })
        expect(updated.status).toBe(200)
        expect(updated.body).toMatchObject({ id: slug, display_name: "Renamed", name: "Renamed", public: false, description: "registered by the SDK" })
        expect(updated.body.versions).toHaveLength(1)
        expect((yield* api.agents.get({ params: { agent_slug: slug } })).public).toBe(false)
        const republished = yield* send("PUT", `/agents/${slug}`, org.key, { public: true })
        expect(republished.body.public).toBe(true)
        // Public hides nothing: the public page answers for any agent.
        expect((yield* raw("GET", `/api/v1/agents/public/${quiet}`)).status).toBe(200)

        // listAgents({page}) reads data + pagination; each item is an Agent.
        const listed = yield* send("GET", "/agents?page=1", org.key, undefined)
        expect(listed.status).toBe(200)
        expect(listed.body.pagination).toMatchObject({ page: 1 })
        const item = listed.body.data.find((agent: { agent_slug: string }) => agent.agent_slug === slug)
        expect(item).toMatchObject({
          id: slug,
          display_name: "Renamed",
          public: true,
          registered_at: registered.body.created_at,
          metadata: {},
          description: "registered by the SDK",
          capabilities: ["email.send"],
          status: "active"
        })
        expect(item.versions.map((version: { id: string }) => version.id)).toEqual([`${slug}@1.0.0`])
        const quietItem = listed.body.data.find((agent: { agent_slug: string }) => agent.agent_slug === quiet)
        expect(quietItem).toMatchObject({ public: false, description: null, capabilities: [], versions: [] })
      })
    )

    it.effect("versions: published without instruction_hash, with model_id and config_hash; the list is a bare array; an agent shows its newest 20", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* client(org.key)
        const slug = uniqueSlug("sdk-versions")
        yield* api.agents.register({ payload: { agent_slug: slug, display_name: "Versioned" } })
        const before = yield* (yield* client()).credentialsPublic.current({ params: { agent_slug: slug } })

        // publishVersion(slug, {version, changelog, modelId, configHash}): no instruction_hash.
        const published = yield* send("POST", `/agents/${slug}/versions`, org.key, {
          version: "1.0.0",
          changelog: "first",
          model_id: "claude-sonnet-4",
          config_hash: "sha256:abc"
        })
        expect(published.status).toBe(201)
        expect(published.body).toMatchObject({
          id: `${slug}@1.0.0`,
          agent_slug: slug,
          version: "1.0.0",
          status: "published",
          model_id: "claude-sonnet-4",
          config_hash: "sha256:abc",
          instruction_hash: null,
          changelog: "first",
          created_at: published.body.published_at
        })
        expect(published.body.published_at).toMatch(ISO)
        // The credential is reissued as for any version.
        const after = yield* (yield* client()).credentialsPublic.current({ params: { agent_slug: slug } })
        expect((after.credential as any).id).not.toBe((before.credential as any).id)
        expect((after.credential as any).credentialSubject.version).toBe("1.0.0")
        const withHash = yield* send("POST", `/agents/${slug}/versions`, org.key, { version: "1.1.0", instruction_hash: "sha256:def" })
        expect(withHash.body).toMatchObject({ instruction_hash: "sha256:def", model_id: null, config_hash: null })
        expect((yield* send("POST", `/agents/${slug}/versions`, org.key, { version: "1.2.0", model_id: "m".repeat(201) })).status).toBe(422)

        // listVersions(slug): a bare array, newest first; request_id only in X-Request-Id.
        const listed = yield* send("GET", `/agents/${slug}/versions`, org.key, undefined)
        expect(listed.status).toBe(200)
        expect(Array.isArray(listed.body)).toBe(true)
        expect(listed.body.map((version: { id: string }) => version.id)).toEqual([`${slug}@1.1.0`, `${slug}@1.0.0`])
        expect(listed.body[1]).toMatchObject({ model_id: "claude-sonnet-4", config_hash: "sha256:abc", status: "published" })
        expect(listed.headers.get("x-request-id")).toMatch(/^req_/)
        expect(listed.text).not.toContain("request_id")
        const missing = yield* send("GET", `/agents/${uniqueSlug("nobody")}/versions`, org.key, undefined)
        expect(missing.status).toBe(404)
        expect(missing.body).toMatchObject({ code: "NOT_FOUND", request_id: expect.any(String) })

        for (let minor = 2; minor <= 21; minor++) yield* api.agents.publishVersion({ params: { agent_slug: slug }, payload: { version: `1.${minor}.0` } })
        const agent = yield* api.agents.get({ params: { agent_slug: slug } })
        expect(agent.versions).toHaveLength(20)
        expect(agent.versions[0]!.version).toBe("1.21.0")
        expect(agent.current_version).toBe("1.21.0")
        expect(yield* api.agents.versions({ params: { agent_slug: slug } })).toHaveLength(22)
      })
    )

    it.effect("decommission with `{}` answers the whole agent with decommissioned_at and a null reason, stored and audited as none given", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* client(org.key)
        const slug = uniqueSlug("sdk-retire")
        yield* api.agents.register({ payload: { agent_slug: slug, display_name: "Retiring", capabilities: ["x"], metadata: { team: "ops" } } })
        yield* api.agents.publishVersion({ params: { agent_slug: slug }, payload: { version: "1.0.0" } })

        // decommissionAgent(slug) / decommission_agent(slug): POST {}.
        const retired = yield* send("POST", `/agents/${slug}/decommission`, org.key, {})
        expect(retired.status).toBe(200)
        expect(retired.body).toMatchObject({
          id: slug,
          agent_slug: slug,
          display_name: "Retiring",
          status: "decommissioned",
          reason: null,
          public: false,
          capabilities: ["x"],
          metadata: { team: "ops" },
          owner_id: org.orgUuid,
          current_version: "1.0.0",
          request_id: expect.any(String)
        })
        expect(retired.body.decommissioned_at).toMatch(ISO)
        expect(retired.body.versions.map((version: { id: string }) => version.id)).toEqual([`${slug}@1.0.0`])
        const stored = yield* sql((db) =>
          Effect.all({
            agent: db<{ decommission_reason: string | null }>`SELECT decommission_reason FROM agents WHERE agent_slug = ${slug}`,
            audit: db<{ details: Record<string, unknown> }>`SELECT details FROM audit_log WHERE target = ${slug} AND event = 'agent.decommissioned'`
          })
        )
        expect(stored.agent).toEqual([{ decommission_reason: null }])
        expect(stored.audit.map((row) => (typeof row.details === "string" ? JSON.parse(row.details) : row.details))).toEqual([{ reason: null }])
        const got = yield* api.agents.get({ params: { agent_slug: slug } })
        expect(got.decommissioned_at).toBe(retired.body.decommissioned_at)

        // A reason, when given, is answered as given.
        const other = uniqueSlug("sdk-retire-reason")
        yield* api.agents.register({ payload: { agent_slug: other, name: "Other" } })
        const [withReason] = yield* api.agents.decommission({ params: { agent_slug: other }, payload: { reason: "replaced" }, responseMode: "decoded-and-response" })
        expect(withReason).toMatchObject({ id: other, reason: "replaced", status: "decommissioned" })
      })
    )

    it.effect("transfer with `to_org_uuid` moves the agent when signed; without a signature it stays a 422", () =>
      Effect.gen(function* () {
        const { org, other } = yield* Orgs
        const api = yield* client(org.key)
        const slug = uniqueSlug("sdk-move")
        yield* api.agents.register({ payload: { agent_slug: slug, name: "Mover" } })

        // transferAgent(slug, toOrgId, reason): the SDKs never sign, so it is refused.
        const unsigned = yield* send("POST", `/agents/${slug}/transfer`, org.key, { to_org_uuid: other.orgUuid, reason: "sold" })
        expect(unsigned.status).toBe(422)
        expect(unsigned.body.code).toBe("VALIDATION_ERROR")
        expect(unsigned.body.details.issues.map((issue: { path: string }) => issue.path)).toContain("signature")

        const terms = JSON.stringify({ agent_slug: slug, from_org: org.orgUuid, to_org: other.orgUuid })
        const signature = `hmac-sha256:${createHmac("sha256", org.key).update(terms).digest("hex")}`
        const clash = yield* send("POST", `/agents/${slug}/transfer`, org.key, { to_org_uuid: other.orgUuid, target_org_id: org.orgUuid, signature })
        expect(clash.status).toBe(422)
        expect(clash.body.details.issues).toEqual([{ path: "to_org_uuid", message: expect.any(String) }])
        const neither = yield* send("POST", `/agents/${slug}/transfer`, org.key, { signature })
        expect(neither.status).toBe(422)

        const moved = yield* send("POST", `/agents/${slug}/transfer`, org.key, { to_org_uuid: other.orgUuid, reason: "sold", signature })
        expect(moved.status).toBe(200)
        expect(moved.body).toMatchObject({ agent_slug: slug, previous_owner: org.orgUuid, new_owner: other.orgUuid })
        expect((yield* (yield* client(other.key)).agents.get({ params: { agent_slug: slug } })).owner_id).toBe(other.orgUuid)
      })
    )
  })

  it.describe("credentials", () => {
    it.effect("revocation with reason \"\" or none answers and stores a null reason", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* client(org.key)
        const slug = uniqueSlug("sdk-revoke")
        yield* api.agents.register({ payload: { agent_slug: slug, name: "Revoked", capabilities: ["a"] } })

        // revokeCredential(slug) / revoke_credential(slug): {reason: ""}.
        const empty = yield* send("POST", `/agents/${slug}/credentials/revoke`, org.key, { reason: "" })
        expect(empty.status).toBe(200)
        expect(empty.body).toMatchObject({ vc_id: expect.stringMatching(/^urn:uuid:/), reason: null })
        expect(empty.body.revoked_at).toMatch(ISO)

        // Reissued by a capability change, then revoked with no body key at all.
        yield* api.agents.update({ params: { agent_slug: slug }, payload: { capabilities: ["a", "b"] } })
        const absent = yield* send("POST", `/agents/${slug}/credentials/revoke`, org.key, {})
        expect(absent.status).toBe(200)
        expect(absent.body.reason).toBeNull()
        const stored = yield* sql((db) => db<{ revocation_reason: string | null }>`SELECT revocation_reason FROM agent_credentials WHERE vc_id IN (${empty.body.vc_id}, ${absent.body.vc_id})`)
        expect(stored).toEqual([{ revocation_reason: null }, { revocation_reason: null }])
      })
    )

    it.effect("verify takes the GET …/credential answer as the SDKs pass it, and verifies the credential inside", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const slug = uniqueSlug("sdk-verify")
        yield* (yield* client(org.key)).agents.register({ payload: { agent_slug: slug, name: "Verified", capabilities: ["a"] } })

        // getAgentCredential(slug), then verifyCredential(that answer): {credential: {credential, message, request_id}}.
        const current = yield* raw("GET", `/api/v1/agents/${slug}/credential`)
        expect(current.body).toMatchObject({ credential: expect.any(Object), message: null, request_id: expect.any(String) })
        const wrapped = yield* raw("POST", "/api/v1/credentials/verify", { body: { credential: current.body } })
        expect(wrapped.status).toBe(200)
        expect(wrapped.body).toMatchObject({
          valid: true,
          checks: { signature: true, not_expired: true, not_revoked: true, issuer_valid: true, structure_valid: true }
        })
        // The bare credential still verifies the same.
        expect((yield* raw("POST", "/api/v1/credentials/verify", { body: { credential: current.body.credential } })).body.valid).toBe(true)

        // Revoked: the answer's credential is null, and verifying it says not valid (extras/trust blocks on that).
        yield* send("POST", `/agents/${slug}/credentials/revoke`, org.key, { reason: "" })
        const none = yield* raw("GET", `/api/v1/agents/${slug}/credential`)
        expect(none.body.credential).toBeNull()
        const invalid = yield* raw("POST", "/api/v1/credentials/verify", { body: { credential: none.body } })
        expect(invalid.status).toBe(200)
        expect(invalid.body.valid).toBe(false)
        expect(invalid.body.checks.structure_valid).toBe(false)
        const revokedInside = yield* raw("POST", "/api/v1/credentials/verify", { body: { credential: { credential: current.body.credential, message: null } } })
        expect(revokedInside.body).toMatchObject({ valid: false, checks: { not_revoked: false, signature: true } })
      })
    )
  })

  it.describe("evidence", () => {
    it.effect("a package from the SDKs' body answers its added keys everywhere; the offline check keeps exactly the sealed keys, and npm run verify agrees", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const zeta = `zeta-${uniqueSlug("ev")}`
        const alpha = `alpha-${uniqueSlug("ev")}`
        const first = yield* authorize(org, zeta)
        const second = yield* authorize(org, alpha)
        const third = yield* authorize(org, zeta)

        // createEvidencePackage({title, actionIds, description, agentSlugs}).
        const created = yield* send("POST", "/evidence/packages", org.key, {
          title: "SDK package",
          action_uuids: [third, first, second],
          description: "regulator request",
          agent_slugs: ["ignored-agent"]
        })
        expect(created.status).toBe(201)
        const expected = {
          id: created.body.package_uuid,
          action_uuids: [third, first, second],
          created_at: created.body.sealed_at,
          description: "regulator request",
          purpose: "regulator request",
          agent_slugs: [alpha, zeta],
          status: "sealed",
          title: "SDK package"
        }
        expect(created.body).toMatchObject({ ...expected, package_hash: expect.stringMatching(/^sha256:/), signature: expect.stringMatching(/^ed25519:/) })

        const got = yield* send("GET", `/evidence/packages/${created.body.package_uuid}`, org.key, undefined)
        expect(got.body).toMatchObject(expected)
        const listed = yield* send("GET", "/evidence/packages?page=1", org.key, undefined)
        expect(listed.body.data.find((item: { id: string }) => item.id === created.body.package_uuid)).toMatchObject(expected)
        // `purpose` wins over `description` when both are sent.
        const both = yield* send("POST", "/evidence/packages", org.key, { title: "both", action_uuids: [first], purpose: "p", description: "d" })
        expect(both.body).toMatchObject({ purpose: "p", description: "p", agent_slugs: [zeta] })

        // The offline check: exactly the sealed keys, whatever else the answer carries.
        const keys = yield* jwks
        const check = verifyEvidencePackage(got.body, keyOf(keys, got.body.public_key_id))
        expect(check.errors).toEqual([])
        expect(check.checks).toEqual({ payload_hash: true, signature: true, timestamp_imprint: true })
        expect(SEALED_PACKAGE_KEYS.every((key) => key in got.body)).toBe(true)
        expect(verifyEvidencePackage({ ...got.body, title: "changed" }, keyOf(keys, got.body.public_key_id)).valid).toBe(false)
        // Keys outside the seal change nothing.
        expect(verifyEvidencePackage({ ...got.body, description: "changed", agent_slugs: [] }, keyOf(keys, got.body.public_key_id)).valid).toBe(true)

        const good = yield* verifyCli("package.json", got.body)
        expect(good.code, good.output).toBe(0)
        expect(good.output).toMatch(/ok {3}timestamp_imprint/)
        const bad = yield* verifyCli("package-tampered.json", { ...got.body, purpose: "changed" })
        expect(bad.code).not.toBe(0)
        expect(bad.output).toMatch(/FAIL payload_hash/)
      }),
      60_000
    )

    it.effect("time travel reads `agent_slug` as the agent filter; without a reason it stays 400 MISSING_REASON", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const mine = uniqueSlug("tt-mine")
        const theirs = uniqueSlug("tt-theirs")
        const actionType = `sdk.tt.${uniqueSlug("t")}`
        const wanted = yield* authorize(org, mine, actionType)
        yield* authorize(org, theirs, actionType)
        const pointInTime = new Date().toISOString()

        // timeTravel({pointInTime, agentSlug, actionType}): no reason, so refused.
        const sdkBody = { point_in_time: pointInTime, agent_slug: mine, action_type: actionType }
        const refused = yield* send("POST", "/evidence/time-travel", org.key, sdkBody)
        expect(refused.status).toBe(400)
        expect(refused.body.code).toBe("MISSING_REASON")

        const answered = yield* send("POST", "/evidence/time-travel", org.key, { ...sdkBody, reason: "audit 7" })
        expect(answered.status).toBe(200)
        expect(answered.body.query).toMatchObject({ agent_id: mine, action_type: actionType })
        expect(answered.body.results.map((result: { action_uuid: string }) => result.action_uuid)).toEqual([wanted])
        // `agent_id` wins over `agent_slug`, and `query` over both.
        const byId = yield* send("POST", "/evidence/time-travel", org.key, { ...sdkBody, agent_id: theirs, reason: "audit 7" })
        expect(byId.body.query.agent_id).toBe(theirs)
        const byQuery = yield* send("POST", "/evidence/time-travel", org.key, { ...sdkBody, query: { action_type: actionType }, reason: "audit 7" })
        expect(byQuery.body.query.agent_id).toBeNull()
        expect(byQuery.body.result_count).toBe(2)
      })
    )
  })

  it.describe("escrow", () => {
    it.effect("accounts, transactions and disputes answer the SDKs' keys with their values", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        // createEscrowAccount({purpose}) sends currency "EUR".
        const account = yield* send("POST", "/escrow/accounts", org.key, { purpose: "SDK escrow", currency: "EUR" })
        expect(account.status).toBe(201)
        const id = account.body.account_uuid
        expect(account.body).toMatchObject({ id, currency: "EUR", balance: "0.00", status: "active", purpose: "SDK escrow" })

        // escrowDeposit(id, 100.5, description): amount as a JSON number.
        const deposit = yield* send("POST", `/escrow/accounts/${id}/deposit`, org.key, { amount: 100.5, description: "stake" })
        expect(deposit.status).toBe(201)
        expect(deposit.body).toMatchObject({
          id: deposit.body.transaction_id,
          transaction_type: "deposit",
          type: "deposit",
          amount: "100.50",
          currency: "EUR",
          transaction_hash: deposit.body.receipt.payload_hash,
          signature: deposit.body.receipt.signature,
          status: "completed",
          description: "stake"
        })
        expect(deposit.body.transaction_hash).toMatch(/^sha256:/)
        const release = yield* send("POST", `/escrow/accounts/${id}/release`, org.key, { amount: 20, description: "paid" })
        expect(release.status).toBe(200)
        expect(release.body).toMatchObject({
          id: release.body.transaction_id,
          transaction_type: "release",
          amount: "20.00",
          transaction_hash: release.body.receipt.payload_hash,
          signature: release.body.receipt.signature,
          status: "completed"
        })

        // escrowDispute(id, amount, description).
        const dispute = yield* send("POST", `/escrow/accounts/${id}/dispute`, org.key, { amount: 10, description: "late delivery" })
        expect(dispute.status).toBe(200)
        expect(dispute.body).toMatchObject({
          id: dispute.body.dispute_id,
          transaction_type: "dispute",
          transaction_hash: dispute.body.receipt.payload_hash,
          signature: dispute.body.receipt.signature,
          created_at: dispute.body.opened_at,
          amount: "10.00",
          currency: "EUR",
          status: "open",
          description: "late delivery"
        })

        const got = yield* send("GET", `/escrow/accounts/${id}`, org.key, undefined)
        expect(got.body).toMatchObject({ id, balance: "80.50", status: "frozen" })
        expect(got.body.transactions.map((t: { id: string; transaction_type: string }) => [t.id, t.transaction_type])).toEqual([
          [release.body.transaction_id, "release"],
          [deposit.body.transaction_id, "deposit"]
        ])
        expect(got.body.transactions[0]).toMatchObject({ transaction_hash: release.body.receipt.payload_hash, status: "completed" })
        expect(got.body.disputes[0]).toMatchObject({ id: dispute.body.dispute_id, transaction_type: "dispute", created_at: dispute.body.opened_at })
        const listed = yield* send("GET", "/escrow/accounts?page=1", org.key, undefined)
        expect(listed.body.data.find((item: { id: string }) => item.id === id)).toMatchObject({ account_uuid: id, balance: "80.50" })
        const page = yield* send("GET", `/escrow/accounts/${id}/transactions`, org.key, undefined)
        expect(page.body.data[1]).toMatchObject({ id: deposit.body.transaction_id, transaction_type: "deposit", signature: deposit.body.receipt.signature })

        const resolved = yield* (yield* client(org.token)).escrow.resolveDispute({ params: { account_uuid: id }, payload: { resolution: "dismissed" } })
        expect(resolved).toMatchObject({ id: dispute.body.dispute_id, transaction_type: "dispute", transaction_hash: dispute.body.receipt.payload_hash })
      })
    )
  })

  it.describe("compliance snapshots", () => {
    it.effect("a findings map is taken in the order sent, overall_status computed, and the snapshot is signed like a receipt (npm run verify)", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const slug = uniqueSlug("sdk-audited")
        yield* (yield* client(org.key)).agents.register({ payload: { agent_slug: slug, name: "Audited" } })

        // create_compliance_snapshot(framework, agent_slug, findings={...}) as Python sends a dict: its order, integer-like keys included.
        const body = `{"framework":"eu_ai_act","agent_slug":"${slug}","findings":{"Art. 12 logging":"pass","9":{"status":"fail","evidence":"no risk file"},"Art. 14 oversight":"partial","1":"pass"}}`
        const created = yield* raw("POST", "/api/v1/estate/compliance", { token: org.key, raw: body })
        expect(created.status, JSON.stringify(created.body)).toBe(201)
        expect(created.body.findings).toEqual([
          { requirement: "Art. 12 logging", status: "pass", evidence: null },
          { requirement: "9", status: "fail", evidence: "no risk file" },
          { requirement: "Art. 14 oversight", status: "partial", evidence: null },
          { requirement: "1", status: "pass", evidence: null }
        ])
        expect(created.body).toMatchObject({
          id: created.body.snapshot_uuid,
          framework: "eu_ai_act",
          overall_status: "partial",
          status: "partial",
          agent_slug: slug,
          agent_id: slug,
          snapshot_at: created.body.created_at,
          finding_count: 4,
          pass_count: 2,
          fail_count: 1,
          partial_count: 1,
          snapshot_hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
          signature: expect.stringMatching(/^ed25519:/),
          public_key_id: expect.stringMatching(/^rk_/),
          timestamp_token: expect.any(String)
        })
        expect(created.body.created_at).toMatch(ISO)

        const keys = yield* jwks
        const check = verifySnapshot(created.body, keyOf(keys, created.body.public_key_id))
        expect(check.errors).toEqual([])
        expect(check.checks).toEqual({ payload_hash: true, signature: true, timestamp_imprint: true })
        expect(SNAPSHOT_SIGNED_KEYS.every((key) => key in created.body)).toBe(true)
        expect(verifySnapshot({ ...created.body, overall_status: "compliant" }, keyOf(keys, created.body.public_key_id)).valid).toBe(false)

        // The list answers the same keys, and its item verifies too.
        const listed = yield* (yield* client(org.key)).estate.listSnapshots({ query: { agent_slug: slug } })
        expect(listed.data[0]).toMatchObject({ id: created.body.snapshot_uuid, status: "partial", agent_id: slug, snapshot_hash: created.body.snapshot_hash })
        const good = yield* verifyCli("snapshot.json", listed.data[0])
        expect(good.code, good.output).toBe(0)
        const bad = yield* verifyCli("snapshot-tampered.json", { ...created.body, findings: created.body.findings.slice(1) })
        expect(bad.code).not.toBe(0)
        expect(bad.output).toMatch(/FAIL payload_hash/)
      }),
      60_000
    )

    it.effect("overall_status computed: all pass compliant, all fail non_compliant, else partial; map values other than a status are 422 naming findings.<key>", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const slug = uniqueSlug("sdk-status")
        yield* (yield* client(org.key)).agents.register({ payload: { agent_slug: slug, name: "Status" } })
        const snapshot = (findings: unknown) => send("POST", "/estate/compliance", org.key, { framework: "gdpr", agent_slug: slug, findings })
        expect((yield* snapshot({ a: "pass", b: "pass" })).body.overall_status).toBe("compliant")
        expect((yield* snapshot({ a: "fail", b: { status: "fail" } })).body.overall_status).toBe("non_compliant")
        expect((yield* snapshot({ a: "pass", b: "fail" })).body.status).toBe("partial")
        expect((yield* snapshot([{ requirement: "a", status: "fail" }])).body.status).toBe("non_compliant")
        // A given overall_status stands.
        expect((yield* send("POST", "/estate/compliance", org.key, { framework: "gdpr", agent_slug: slug, findings: { a: "fail" }, overall_status: "partial" })).body.status).toBe("partial")

        const bad = yield* snapshot({ ok: "pass", "Art. 5": "maybe", other: { status: "unknown" }, number: 3 })
        expect(bad.status).toBe(422)
        expect(bad.body.code).toBe("VALIDATION_ERROR")
        expect(bad.body.details.issues.map((issue: { path: string }) => issue.path).sort()).toEqual(["findings.Art. 5", "findings.number", "findings.other.status"])
        const blankKey = yield* snapshot({ "": "pass" })
        expect(blankKey.status).toBe(422)
        expect(blankKey.body.details.issues).toEqual([{ path: "findings.", message: expect.any(String) }])
        const empty = yield* snapshot({})
        expect(empty.status).toBe(400)
        expect(empty.body.code).toBe("EMPTY_FINDINGS")
        const tooMany = yield* snapshot(Object.fromEntries(Array.from({ length: 501 }, (_, index) => [`r${index}`, "pass"])))
        expect(tooMany.status).toBe(422)
      })
    )

    it.effect("a snapshot without agent_slug stays 422; one recorded before signing answers its four seal keys null", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const slug = uniqueSlug("sdk-old")
        yield* (yield* client(org.key)).agents.register({ payload: { agent_slug: slug, name: "Old" } })
        // createComplianceSnapshot({framework, findings}): no agent_slug.
        const orphan = yield* send("POST", "/estate/compliance", org.key, { framework: "gdpr", findings: { a: "pass" } })
        expect(orphan.status).toBe(422)
        expect(orphan.body.details.issues.map((issue: { path: string }) => issue.path)).toEqual(["agent_slug"])

        yield* sql(
          (db) =>
            db`INSERT INTO compliance_snapshots (snapshot_uuid, org_uuid, agent_slug, framework, overall_status, findings, notes, finding_count, pass_count, fail_count, partial_count, created_by)
               VALUES (${`old-${slug}`}, ${org.orgUuid}, ${slug}, 'gdpr', 'compliant', '[{"requirement":"a","status":"pass","evidence":null}]', NULL, 1, 1, 0, 0, 'someone')`
        )
        const listed = yield* (yield* client(org.key)).estate.listSnapshots({ query: { agent_slug: slug } })
        expect(listed.data[0]).toMatchObject({
          id: `old-${slug}`,
          status: "compliant",
          agent_id: slug,
          snapshot_hash: null,
          signature: null,
          public_key_id: null,
          timestamp_token: null
        })
        const cli = yield* verifyCli("old-snapshot.json", listed.data[0])
        expect(cli.code).toBe(2)
        expect(cli.output).toMatch(/before snapshots were signed/)
      }),
      60_000
    )
  })

  it.describe("still refused", () => {
    it.effect("cosign and drift-alert acknowledgement with an API key are 401 UNAUTHORIZED", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const action = yield* authorize(org, uniqueSlug("cosigned"))
        // cosign({actionId}) and acknowledgeDriftAlert(agentId, alertId) post {} with the API key.
        const cosign = yield* send("POST", `/actions/${action}/cosign`, org.key, {})
        expect(cosign.status).toBe(401)
        expect(cosign.body.code).toBe("UNAUTHORIZED")
        const acknowledge = yield* send("POST", `/agents/${uniqueSlug("drifting")}/drift/alerts/alert_x/acknowledge`, org.key, {})
        expect(acknowledge.status).toBe(401)
        expect(acknowledge.body.code).toBe("UNAUTHORIZED")
      })
    )
  })
})

describe("migration 0040", () => {
  it.live(
    "gives existing packages their action uuids (package order) and agent ids from the sealed document",
    () =>
      Effect.gen(function* () {
        const database = yield* Effect.acquireRelease(
          Effect.promise(() => freshDatabaseUrl()),
          (fresh) => Effect.promise(() => fresh.drop())
        )
        const rows = yield* Effect.gen(function* () {
          yield* runMigrationsOf(Object.fromEntries(Object.entries(migrations).filter(([key]) => key < "0040")))
          const db = yield* SqlClient.SqlClient
          const sealed = JSON.stringify({ actions: [{ action_uuid: "b", agent_id: "z" }, { action_uuid: "a", agent_id: null }, { action_uuid: "c", agent_id: "y" }, { action_uuid: "d", agent_id: "z" }] })
          yield* db`INSERT INTO evidence_packages (package_uuid, org_uuid, title, purpose, action_count, signed_payload, package_hash, signature, public_key_id, created_by, sealed_at)
                    VALUES ('00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002', 't', NULL, 4, ${sealed}, 'sha256:00', 'ed25519:x', 'rk_x', 'u', now())`
          yield* runMigrationsOf(migrations)
          return yield* db<{ action_uuids: unknown; agent_ids: unknown }>`SELECT action_uuids, agent_ids FROM evidence_packages`
        }).pipe(Effect.provide(databaseClientLayer({ url: database.url, dataDir: UNUSED_DATA_DIR, maxConnections: 2 })))
        expect(rows).toHaveLength(1)
        expect(rows[0]!.action_uuids).toEqual(["b", "a", "c", "d"])
        expect([...(rows[0]!.agent_ids as Array<string>)].sort()).toEqual(["y", "z"])
      }).pipe(Effect.scoped),
    60_000
  )
})
