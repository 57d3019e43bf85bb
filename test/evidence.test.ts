/**
 * Evidence and discovery end to end (spec 001 "Evidence and discovery"): sealed packages whose
 * hash and signature a verifier recomputes offline (JCS + the JWKS key), each action with its
 * receipt and chain; the package's errors in order; time travel before and after a status change,
 * every query recorded; liability chains along parents (cycle-safe); other organizations' ids
 * answered 404; the status history every status change writes, and the migration that
 * reconstructs it for existing actions.
 */
import { createHash, createPublicKey, verify } from "node:crypto"
import canonicalize from "canonicalize"
import { Effect, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { databaseClientLayer, runMigrationsOf } from "../src/platform/db/index.js"
import { migrations } from "../src/platform/db/migrations/index.js"
import { parseInstant } from "../src/platform/instant.js"
import { call, type Org, registerOrg } from "./support/client.js"
import { freshDatabaseUrl, UNUSED_DATA_DIR } from "./support/database.js"
import { useFixture } from "./support/fixture.js"
import { useServer } from "./support/server.js"

const server = useServer()
const org = useFixture(() => registerOrg(server.url, "Evidence Org"))
const other = useFixture(() => registerOrg(server.url, "Other Evidence Org"))

const sha256 = (bytes: string | Uint8Array) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

let counter = 0
const uniqueType = (label: string) => `${label}.${process.pid}.${Date.now().toString(36)}.${++counter}`

const authorize = async (owner: Org, body: Record<string, unknown>) => {
  const reply = await call(server.url, "POST", "/api/v1/actions", { token: owner.key, body: { details: "evidence test", ...body } })
  expect(reply.status).toBe(201)
  return reply.body.action_uuid as string
}
const notarize = async (owner: Org, actionUuid: string) => {
  const reply = await call(server.url, "POST", `/api/v1/actions/${actionUuid}/notarize`, { token: owner.key, body: { outcome: "completed" } })
  expect(reply.status).toBe(200)
  return reply.body
}
const seal = (token: string, body: unknown) => call(server.url, "POST", "/api/v1/evidence/packages", { token, body })
const travel = (token: string, body: unknown) => call(server.url, "POST", "/api/v1/evidence/time-travel", { token, body })

/** What a regulator does with a package: recompute its hash from the answer and check the signature with the published key. */
const verifyOffline = async (pkg: Record<string, any>) => {
  const { package_hash, signature, public_key_id, timestamp_token: _token, request_id: _requestId, ...sealed } = pkg
  const bytes = Buffer.from(canonicalize(sealed)!, "utf8")
  const jwks = (await call(server.url, "GET", "/api/v1/.well-known/jwks.json")).body
  const jwk = jwks.keys.find((key: { kid: string }) => key.kid === public_key_id)
  const key = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, format: "jwk" })
  return {
    hashMatches: sha256(bytes) === package_hash,
    signatureValid: verify(null, bytes, key, Buffer.from(String(signature).replace(/^ed25519:/, ""), "base64url"))
  }
}

describe("evidence packages", () => {
  it("seals the organization's actions with their receipts and chains; the hash and signature verify offline", async () => {
    const agent = `evidence-agent-${process.pid}-${Date.now().toString(36)}`
    const first = await authorize(org, { action_type: "payment.send", agent_id: agent })
    const firstReceipt = await notarize(org, first)
    const second = await authorize(org, { action_type: "payment.send", agent_id: agent, parent_action_uuid: first })
    const secondReceipt = await notarize(org, second)
    const pending = await authorize(org, { action_type: "payment.review", agent_id: agent, require_approval: true })

    const created = await seal(org.key, {
      action_uuids: [second, first, pending, second],
      title: "Q3 payments",
      purpose: "audit request 42",
      metadata: { case: "A-42", nested: { b: 1, a: [1, "x"] } },
      unknown_field: "ignored"
    })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ title: "Q3 payments", purpose: "audit request 42", status: "sealed", action_count: 3, created_by: org.userUuid })
    expect(created.body.package_hash).toMatch(/^sha256:[0-9a-f]{64}$/)
    expect(created.body.signature).toMatch(/^ed25519:/)
    expect(created.body.request_id).toEqual(expect.any(String))

    const read = await call(server.url, "GET", `/api/v1/evidence/packages/${created.body.package_uuid}`, { token: org.key })
    expect(read.status).toBe(200)
    const pkg = read.body
    expect(pkg).toMatchObject({
      package_uuid: created.body.package_uuid,
      org_uuid: org.orgUuid,
      package_hash: created.body.package_hash,
      signature: created.body.signature,
      public_key_id: created.body.public_key_id,
      sealed_at: created.body.sealed_at,
      metadata: { case: "A-42", nested: { b: 1, a: [1, "x"] } }
    })
    expect(pkg.actions.map((action: { action_uuid: string }) => action.action_uuid)).toEqual([second, first, pending])
    const [secondEntry, firstEntry, pendingEntry] = pkg.actions
    expect(firstEntry.receipt).toMatchObject({ receipt_uuid: firstReceipt.receipt_uuid, payload_hash: firstReceipt.payload_hash })
    // Each receipt verifies on its own: its signed bytes hash to its payload_hash.
    expect(sha256(firstEntry.receipt.signed_payload)).toBe(firstEntry.receipt.payload_hash)
    expect(secondEntry.receipt.receipt_uuid).toBe(secondReceipt.receipt_uuid)
    expect(secondEntry.chain).toEqual({
      chain_agent_id: agent,
      agent_sequence: firstEntry.chain.agent_sequence + 1,
      previous_payload_hash: firstEntry.receipt.payload_hash,
      previous_receipt_uuid: firstEntry.receipt.receipt_uuid,
      parent_action_uuid: first,
      parent_payload_hash: firstEntry.receipt.payload_hash
    })
    expect(pendingEntry).toMatchObject({ status: "pending_approval", receipt: null })
    expect(pendingEntry.chain).toMatchObject({ chain_agent_id: agent, agent_sequence: null, previous_receipt_uuid: null })

    expect(await verifyOffline(pkg)).toEqual({ hashMatches: true, signatureValid: true })
    // A changed byte no longer verifies.
    expect(await verifyOffline({ ...pkg, title: "Q4 payments" })).toEqual({ hashMatches: false, signatureValid: false })

    // Sealed: later changes of an action do not change the package.
    await call(server.url, "POST", `/api/v1/actions/${pending}/dashboard-approve`, { token: org.token })
    const again = await call(server.url, "GET", `/api/v1/evidence/packages/${created.body.package_uuid}`, { token: org.key })
    expect(again.body.actions[2].status).toBe("pending_approval")
    expect(await verifyOffline(again.body)).toEqual({ hashMatches: true, signatureValid: true })
  })

  it("whatever the metadata, the package hash is recomputable from the answer (property)", async () => {
    const action = await authorize(org, { action_type: uniqueType("property") })
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 6 }), async (metadata) => {
        const created = await seal(org.key, { action_uuids: [action], title: "property", metadata })
        expect(created.status).toBe(201)
        const read = await call(server.url, "GET", `/api/v1/evidence/packages/${created.body.package_uuid}`, { token: org.key })
        expect(read.body.package_hash).toBe(created.body.package_hash)
        expect(await verifyOffline(read.body)).toEqual({ hashMatches: true, signatureValid: true })
      }),
      { numRuns: 12 }
    )
  })

  it("lists the organization's packages, newest first, with the spec key and data", async () => {
    const action = await authorize(other, { action_type: uniqueType("list") })
    const one = await seal(other.key, { action_uuids: [action], title: "first" })
    const two = await seal(other.key, { action_uuids: [action], title: "second" })
    const page = await call(server.url, "GET", "/api/v1/evidence/packages?per_page=1", { token: other.key })
    expect(page.status).toBe(200)
    expect(page.body.packages).toEqual(page.body.data)
    expect(page.body.packages.map((p: { package_uuid: string }) => p.package_uuid)).toEqual([two.body.package_uuid])
    expect(page.body.pagination).toEqual({ page: 1, per_page: 1, total: 2, has_more: true })
    const all = await call(server.url, "GET", "/api/v1/evidence/packages", { token: other.key })
    expect(all.body.packages.map((p: { package_uuid: string }) => p.package_uuid)).toEqual([two.body.package_uuid, one.body.package_uuid])
    expect(all.body.packages[0]).toMatchObject({ title: "second", status: "sealed", action_count: 1 })
    expect((await call(server.url, "GET", "/api/v1/evidence/packages?per_page=101", { token: other.key })).status).toBe(422)
    expect((await call(server.url, "GET", "/api/v1/evidence/packages?page=0", { token: other.key })).status).toBe(422)
  })

  it("refuses an empty list (400), unknown actions (404), other organizations' actions (422) and too many (422)", async () => {
    const mine = await authorize(org, { action_type: uniqueType("mine") })
    const theirs = await authorize(other, { action_type: uniqueType("theirs") })

    const empty = await seal(org.key, { action_uuids: [], title: "t" })
    expect(empty.status).toBe(400)
    expect(empty.body.code).toBe("EMPTY_ACTION_LIST")

    const unknown = await seal(org.key, { action_uuids: [mine, "act_does_not_exist"], title: "t" })
    expect(unknown.status).toBe(404)
    expect(unknown.body).toMatchObject({ code: "ACTION_NOT_FOUND", details: { action_uuids: ["act_does_not_exist"] } })

    const foreign = await seal(org.key, { action_uuids: [mine, theirs], title: "t" })
    expect(foreign.status).toBe(422)
    expect(foreign.body).toMatchObject({ code: "CROSS_ORG_ACTIONS", details: { action_uuids: [theirs] } })
    // Nothing about the other organization's action is told.
    expect(foreign.text).not.toContain(other.orgUuid)
    expect(foreign.text).not.toContain("theirs")

    for (const body of [{ title: "t" }, { action_uuids: [mine] }, { action_uuids: [mine], title: "" }, { action_uuids: "x", title: "t" }]) {
      const reply = await seal(org.key, body)
      expect([JSON.stringify(body), reply.status, reply.body.code]).toEqual([JSON.stringify(body), 422, "VALIDATION_ERROR"])
    }
    const tooMany = await seal(org.key, { action_uuids: Array.from({ length: 1001 }, (_, i) => `act_${i}`), title: "t" })
    expect(tooMany.status).toBe(422)

    const readOnly = await call(server.url, "POST", "/api/v1/api-keys", { token: org.token, body: { name: "reader", scopes: ["evidence:read"] } })
    const refused = await seal(readOnly.body.key, { action_uuids: [mine], title: "t" })
    expect(refused.status).toBe(403)
    expect((await call(server.url, "GET", "/api/v1/evidence/packages", { token: readOnly.body.key })).status).toBe(200)
  })

  it("answers 404 for another organization's package and for ids that are not packages", async () => {
    const action = await authorize(org, { action_type: uniqueType("private") })
    const created = await seal(org.key, { action_uuids: [action], title: "private" })
    for (const token of [other.key, other.token]) {
      const reply = await call(server.url, "GET", `/api/v1/evidence/packages/${created.body.package_uuid}`, { token })
      expect(reply.status).toBe(404)
      expect(reply.body.code).toBe("NOT_FOUND")
    }
    for (const id of ["not-a-uuid", "00000000-0000-0000-0000-000000000000", "%27%3B--"]) {
      expect((await call(server.url, "GET", `/api/v1/evidence/packages/${id}`, { token: org.key })).status).toBe(404)
    }
    const listed = await call(server.url, "GET", "/api/v1/evidence/packages?per_page=100", { token: other.key })
    expect(listed.body.packages.map((p: { package_uuid: string }) => p.package_uuid)).not.toContain(created.body.package_uuid)
  })
})

describe("time travel", () => {
  it("answers differently before and after a status change, and records every query", async () => {
    const type = uniqueType("travel")
    const before = new Date().toISOString()
    await sleep(15)
    const action = await authorize(org, { action_type: type, agent_id: "traveller" })
    await sleep(15)
    const whileAuthorized = new Date().toISOString()
    await sleep(15)
    const receipt = await notarize(org, action)
    await sleep(15)
    const afterwards = new Date().toISOString()

    const earlier = await travel(org.key, { query: { action_type: type }, point_in_time: whileAuthorized, reason: "regulator request 7" })
    expect(earlier.status).toBe(200)
    expect(earlier.body).toMatchObject({
      point_in_time: whileAuthorized,
      reason: "regulator request 7",
      query: { action_type: type, agent_id: null, date_from: null, date_to: null, status: null },
      result_count: 1,
      results_truncated: false,
      queried_by: org.userUuid
    })
    expect(earlier.body.discovery_query_uuid).toEqual(expect.any(String))
    expect(earlier.body.results).toEqual([
      expect.objectContaining({ action_uuid: action, action_type: type, agent_id: "traveller", status: "authorized", receipt_uuid: null })
    ])
    expect(earlier.body.results_hash).toBe(sha256(canonicalize(earlier.body.results)!))

    const later = await travel(org.key, { query: { action_type: type }, point_in_time: afterwards, reason: "regulator request 7" })
    expect(later.body.results).toEqual([expect.objectContaining({ action_uuid: action, status: "notarized", receipt_uuid: receipt.receipt_uuid })])
    expect(Date.parse(later.body.results[0].status_since)).toBeGreaterThan(Date.parse(earlier.body.results[0].status_since))

    const notYet = await travel(org.key, { query: { action_type: type }, point_in_time: before, reason: "before it existed" })
    expect(notYet.body).toMatchObject({ results: [], result_count: 0 })

    // The status filter is evaluated as of point_in_time; the SDK sends the query's fields at the top level.
    const sdkShape = await travel(org.key, { action_type: type, status: "authorized", point_in_time: whileAuthorized, reason: "sdk shape" })
    expect(sdkShape.body.results.map((r: { action_uuid: string }) => r.action_uuid)).toEqual([action])
    const notAuthorizedNow = await travel(org.key, { action_type: type, status: "authorized", point_in_time: afterwards, reason: "sdk shape" })
    expect(notAuthorizedNow.body.result_count).toBe(0)
    const window = await travel(org.key, {
      query: { action_type: type, agent_id: "traveller", date_from: before, date_to: before },
      point_in_time: afterwards,
      reason: "empty window"
    })
    expect(window.body.result_count).toBe(0)

    const records = await server.run(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ discovery_query_uuid: string; reason: string; result_count: number; point_in_time: Date; query: { action_type: string } }>`
          SELECT discovery_query_uuid, reason, result_count, point_in_time, query FROM discovery_queries
          WHERE org_uuid = ${org.orgUuid} AND query->>'action_type' = ${type} ORDER BY queried_at`
      )
    )
    expect(records.map((r) => r.reason)).toEqual(["regulator request 7", "regulator request 7", "before it existed", "sdk shape", "sdk shape", "empty window"])
    expect(records[0]).toMatchObject({ discovery_query_uuid: earlier.body.discovery_query_uuid, result_count: 1 })
    expect(records[0]!.point_in_time.toISOString()).toBe(whileAuthorized)
    const audited = await server.run(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ n: number }>`SELECT count(*)::int AS n FROM audit_log WHERE org_uuid = ${org.orgUuid} AND event = 'evidence.discovery.queried'
                           AND target = ${earlier.body.discovery_query_uuid}`
      )
    )
    expect(audited[0]!.n).toBe(1)
  })

  it("sees approvals in the history and only the caller's organization", async () => {
    const type = uniqueType("approval")
    const action = await authorize(org, { action_type: type, require_approval: true })
    await authorize(other, { action_type: type })
    await sleep(15)
    const pendingThen = new Date().toISOString()
    await sleep(15)
    expect((await call(server.url, "POST", `/api/v1/actions/${action}/dashboard-approve`, { token: org.token })).status).toBe(200)
    await sleep(15)
    const approvedThen = new Date().toISOString()
    const atPending = await travel(org.key, { query: { action_type: type }, point_in_time: pendingThen, reason: "r" })
    expect(atPending.body.results.map((r: { status: string }) => r.status)).toEqual(["pending_approval"])
    const atApproved = await travel(org.key, { query: { action_type: type }, point_in_time: approvedThen, reason: "r" })
    expect(atApproved.body.results.map((r: { action_uuid: string; status: string }) => [r.action_uuid, r.status])).toEqual([[action, "approved"]])
  })

  it("refuses a missing reason, a future point in time and malformed dates", async () => {
    const now = new Date().toISOString()
    for (const body of [{ point_in_time: now }, { point_in_time: now, reason: "  " }, { point_in_time: now, reason: null }]) {
      const reply = await travel(org.key, body)
      expect([reply.status, reply.body.code]).toEqual([400, "MISSING_REASON"])
    }
    const future = await travel(org.key, { point_in_time: new Date(Date.now() + 60_000).toISOString(), reason: "r" })
    expect([future.status, future.body.code]).toEqual([400, "FUTURE_TIMESTAMP"])
    for (const body of [
      { reason: "r" },
      { point_in_time: "yesterday", reason: "r" },
      { point_in_time: now, reason: "r", query: { date_from: "soon" } },
      { point_in_time: now, reason: "r", query: { date_from: "2026-02-01", date_to: "2026-01-01" } },
      { point_in_time: now, reason: "r", status: "sleeping" }
    ]) {
      const reply = await travel(org.key, body)
      expect([JSON.stringify(body), reply.status, reply.body.code]).toEqual([JSON.stringify(body), 422, "VALIDATION_ERROR"])
    }
    const dateOnly = await travel(org.key, { point_in_time: "2020-01-01", reason: "r", query: { date_to: "2020-01-01" } })
    expect(dateOnly.status).toBe(200)
    expect(dateOnly.body.query.date_to).toBe("2020-01-01T23:59:59.999Z")
  })
})

describe("dates of a discovery query", () => {
  it("reads an instant however ISO 8601 writes it, and a date alone as its day (property)", () => {
    const instants = fc.date({ min: new Date("1971-01-01T00:00:00Z"), max: new Date("2999-12-31T23:59:59Z"), noInvalidDate: true })
    fc.assert(
      fc.property(instants, fc.integer({ min: -14 * 60, max: 14 * 60 }), (date, offsetMinutes) => {
        const at = date.getTime()
        expect(parseInstant(date.toISOString())).toBe(at)
        expect(parseInstant(date.toISOString().replace("Z", ""))).toBe(at)
        // The same instant written in another zone, with and without the colon.
        const local = new Date(at + offsetMinutes * 60_000).toISOString().slice(0, 23)
        const sign = offsetMinutes < 0 ? "-" : "+"
        const hh = String(Math.floor(Math.abs(offsetMinutes) / 60)).padStart(2, "0")
        const mm = String(Math.abs(offsetMinutes) % 60).padStart(2, "0")
        expect(parseInstant(`${local}${sign}${hh}:${mm}`)).toBe(at)
        expect(parseInstant(`${local}${sign}${hh}${mm}`)).toBe(at)
        const day = date.toISOString().slice(0, 10)
        expect(parseInstant(day)).toBe(Date.parse(`${day}T00:00:00Z`))
        expect(parseInstant(day, true)).toBe(Date.parse(`${day}T00:00:00Z`) + 86_400_000 - 1)
      })
    )
    for (const text of ["", "yesterday", "2026", "2026-13-01", "2026-01-01T25:00:00Z", "1e3", "2026-01-01T00:00:00+99"]) {
      expect([text, parseInstant(text)]).toEqual([text, undefined])
    }
  })
})

describe("liability chain", () => {
  it("walks parent actions to the root; hop 0 is the action; authorized_by names the approver or the policy", async () => {
    const root = await authorize(org, { action_type: "plan", agent_id: "planner", require_approval: true, model_id: "m-1" })
    expect((await call(server.url, "POST", `/api/v1/actions/${root}/dashboard-approve`, { token: org.token })).status).toBe(200)
    await notarize(org, root)
    const child = await authorize(org, { action_type: "execute", agent_id: "executor", parent_action_uuid: root })
    const grandchild = await authorize(org, { action_type: "pay", agent_id: "payer", parent_action_uuid: child, require_approval: true })

    const reply = await call(server.url, "GET", `/api/v1/evidence/liability-chain/${grandchild}`, { token: org.key })
    expect(reply.status).toBe(200)
    expect(reply.body).toMatchObject({ action_uuid: grandchild, total_hops: 3, root_action_id: root, truncated: false })
    expect(reply.body.chain).toEqual(reply.body.liability_chain)
    expect(reply.body.liability_chain.map((hop: any) => [hop.hop, hop.action_uuid, hop.authorized_by])).toEqual([
      [0, grandchild, null],
      [1, child, "policy"],
      [2, root, org.email]
    ])
    expect(reply.body.liability_chain[2]).toMatchObject({ action_type: "plan", agent_id: "planner", model_id: "m-1", parent_action_uuid: null })

    const alone = await call(server.url, "GET", `/api/v1/evidence/liability-chain/${root}`, { token: org.key })
    expect(alone.body).toMatchObject({ total_hops: 1, root_action_id: root, liability_chain: [expect.objectContaining({ hop: 0, action_uuid: root })] })

    for (const token of [other.key, other.token]) {
      const foreign = await call(server.url, "GET", `/api/v1/evidence/liability-chain/${grandchild}`, { token })
      expect(foreign.status).toBe(404)
    }
    expect((await call(server.url, "GET", "/api/v1/evidence/liability-chain/act_nothing", { token: org.key })).status).toBe(404)
  })

  it("stops at a cycle and at the depth bound, and never follows a parent of another organization", async () => {
    const a = await authorize(org, { action_type: "cycle" })
    const b = await authorize(org, { action_type: "cycle", parent_action_uuid: a })
    const foreign = await authorize(other, { action_type: "foreign" })
    const chainOf = Array.from({ length: 120 }, (_, i) => `act_deep_${process.pid}_${i}`)
    await server.run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        // Rows the API cannot make: a parent loop, a parent in another organization, a very deep chain.
        yield* sql`UPDATE actions SET parent_action_uuid = ${b} WHERE action_uuid = ${a}`
        for (const [i, id] of chainOf.entries()) {
          yield* sql`INSERT INTO actions (action_uuid, org_uuid, action_type, action_details_hash, status, parent_action_uuid)
                     VALUES (${id}, ${org.orgUuid}, 'deep', 'sha256:00', 'authorized', ${i === 0 ? foreign : chainOf[i - 1]!})`
        }
      })
    )
    const cycle = await call(server.url, "GET", `/api/v1/evidence/liability-chain/${b}`, { token: org.key })
    expect(cycle.status).toBe(200)
    expect(cycle.body.liability_chain.map((hop: any) => hop.action_uuid)).toEqual([b, a])
    expect(cycle.body).toMatchObject({ total_hops: 2, root_action_id: a, truncated: false })

    const deep = await call(server.url, "GET", `/api/v1/evidence/liability-chain/${chainOf[119]}`, { token: org.key })
    expect(deep.body).toMatchObject({ total_hops: 100, truncated: true, root_action_id: chainOf[20] })
    const shallow = await call(server.url, "GET", `/api/v1/evidence/liability-chain/${chainOf[5]}`, { token: org.key })
    expect(shallow.body).toMatchObject({ total_hops: 6, truncated: false, root_action_id: chainOf[0] })
    expect(JSON.stringify(shallow.body)).not.toContain(foreign)
  })
})

describe("status history", () => {
  it("gets one row for every status an action enters, from the statement that changes it", async () => {
    const forbidden = uniqueType("forbidden")
    const policy = await call(server.url, "POST", "/api/v1/policies", {
      token: org.key,
      body: { name: "deny forbidden", mode: "rules", decision: "deny", conditions: [{ field: "action_type", op: "eq", value: forbidden }], activate: true }
    })
    expect(policy.status).toBe(201)
    const denied = await call(server.url, "POST", "/api/v1/actions", { token: org.key, body: { action_type: forbidden, details: "x" } })
    expect(denied.status).toBe(403)
    const deniedUuid = denied.body.details.action_uuid as string
    const byHuman = await authorize(org, { action_type: uniqueType("human"), require_approval: true })
    expect((await call(server.url, "POST", `/api/v1/actions/${byHuman}/dashboard-deny`, { token: org.token, body: { reason: "no" } })).status).toBe(200)
    const failed = await authorize(org, { action_type: uniqueType("failed") })
    expect((await call(server.url, "POST", `/api/v1/actions/${failed}/notarize`, { token: org.key, body: { outcome: "failed" } })).status).toBe(200)
    const approved = await authorize(org, { action_type: uniqueType("approved"), require_approval: true })
    await call(server.url, "POST", `/api/v1/actions/${approved}/dashboard-approve`, { token: org.token })
    await notarize(org, approved)

    const rows = await server.run(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ action_uuid: string; status: string; org_uuid: string }>`
          SELECT action_uuid, status, org_uuid FROM action_status_history
          WHERE action_uuid IN (${deniedUuid}, ${byHuman}, ${failed}, ${approved}) ORDER BY changed_at, status`
      )
    )
    const of = (id: string) => rows.filter((row) => row.action_uuid === id).map((row) => row.status)
    expect(of(deniedUuid)).toEqual(["denied_by_policy"])
    expect(of(byHuman)).toEqual(["pending_approval", "denied_by_human"])
    expect(of(failed)).toEqual(["authorized", "failed"])
    expect(of(approved)).toEqual(["pending_approval", "approved", "notarized"])
    expect(new Set(rows.map((row) => row.org_uuid))).toEqual(new Set([org.orgUuid]))
  })

  it("is reconstructed by the migration from what the rows kept", async () => {
    const database = await freshDatabaseUrl()
    const runtime = ManagedRuntime.make(databaseClientLayer({ url: database.url, dataDir: UNUSED_DATA_DIR, maxConnections: 2 }))
    try {
      const before = Object.fromEntries(Object.entries(migrations).filter(([key]) => key <= "0017_cases"))
      await runtime.runPromise(runMigrationsOf(before))
      const history = await runtime.runPromise(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const insert = (id: string, status: string, extra: { approved_at?: string; receipt_uuid?: string } = {}) =>
            sql`INSERT INTO actions (action_uuid, org_uuid, action_type, action_details_hash, status, approved_by, approved_at, receipt_uuid, created_at, updated_at)
                VALUES (${id}, 'org-old', 't', 'sha256:00', ${status}, ${extra.approved_at ? "a@x.test" : null}, ${extra.approved_at ?? null},
                  ${extra.receipt_uuid ?? null}, '2026-01-01T00:00:00Z', '2026-01-05T00:00:00Z')`
          yield* insert("act_authorized", "authorized")
          yield* insert("act_pending", "pending_approval")
          yield* insert("act_approved_done", "notarized", { approved_at: "2026-01-02T00:00:00Z", receipt_uuid: "rct_1" })
          yield* insert("act_denied", "denied_by_human", { approved_at: "2026-01-03T00:00:00Z" })
          yield* sql`INSERT INTO receipts (receipt_uuid, action_uuid, org_uuid, agent_sequence, receipt_status, receipt_version, signed_payload, payload_hash, signature, public_key_id, created_at)
                     VALUES ('rct_1', 'act_approved_done', 'org-old', 1, 'notarized', '1.1', '{}', 'sha256:00', 'ed25519:x', 'rk_x', '2026-01-04T00:00:00Z')`
          yield* runMigrationsOf(migrations)
          return yield* sql<{ action_uuid: string; status: string; changed_at: Date }>`
            SELECT action_uuid, status, changed_at FROM action_status_history ORDER BY action_uuid, changed_at`
        })
      )
      expect(history.map((row) => [row.action_uuid, row.status, row.changed_at.toISOString().slice(0, 10)])).toEqual([
        ["act_approved_done", "pending_approval", "2026-01-01"],
        ["act_approved_done", "approved", "2026-01-02"],
        ["act_approved_done", "notarized", "2026-01-04"],
        ["act_authorized", "authorized", "2026-01-01"],
        ["act_denied", "pending_approval", "2026-01-01"],
        ["act_denied", "denied_by_human", "2026-01-03"],
        ["act_pending", "pending_approval", "2026-01-01"]
      ])
    } finally {
      await runtime.dispose()
      await database.drop()
    }
  })
})
