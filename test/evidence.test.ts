/**
 * Evidence and discovery end to end (spec 001 "Evidence and discovery"): sealed packages whose
 * hash and signature a verifier recomputes offline (JCS + the JWKS key), each action with its
 * receipt and chain; the package's errors in order; time travel before and after a status change,
 * every query recorded; liability chains along parents (cycle-safe); other organizations' ids
 * answered 404; the status history every status change writes, and the migration that
 * reconstructs it for existing actions. Over the typed client (HttpApiClient over GatewayApi);
 * bodies and queries outside the contract go raw (`raw`).
 */
import { createHash, createPublicKey, verify } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import canonicalize from "canonicalize"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql"
import fc from "fast-check"
import type { AuthorizeRequest } from "../protocol/actions.js"
import type { Jwks } from "../protocol/receipts.js"
import { databaseClientLayer, runMigrationsOf } from "../src/platform/db/index.js"
import { migrations } from "../src/platform/db/migrations/index.js"
import { parseInstant } from "../src/platform/instant.js"
import { answer, client, raw, register } from "./support/api.js"
import type { Org } from "./support/client.js"
import { freshDatabaseUrl, UNUSED_DATA_DIR } from "./support/database.js"
import { liveLayer } from "./support/effect.js"
import { Gateway } from "./support/server.js"

class Orgs extends Context.Service<Orgs, { readonly org: Org; readonly other: Org }>()("test/evidence/Orgs") {}

const Setup = Layer.effect(Orgs, Effect.all({ org: register("Evidence Org"), other: register("Other Evidence Org") })).pipe(Layer.provideMerge(Gateway.layer()))

const sha256 = (bytes: string | Uint8Array) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`
const sleep = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

let counter = 0
const uniqueType = (label: string) => `${label}.${process.pid}.${Date.now().toString(36)}.${++counter}`

const authorize = (owner: Org, body: Omit<AuthorizeRequest, "details">) =>
  Effect.gen(function* () {
    const [created, reply] = yield* (yield* client(owner.key)).actions.authorize({
      headers: {},
      payload: { details: "evidence test", ...body },
      responseMode: "decoded-and-response"
    })
    expect(reply.status).toBe(201)
    return created.action_uuid
  })
const notarize = (owner: Org, actionUuid: string) =>
  Effect.gen(function* () {
    const [receipt, reply] = yield* (yield* client(owner.key)).actions.notarize({
      params: { action_uuid: actionUuid },
      payload: { outcome: "completed" },
      responseMode: "decoded-and-response"
    })
    expect(reply.status).toBe(200)
    return receipt
  })

const evidence = (token: string) => Effect.map(client(token), (api) => api.evidence)
/** A package as read, decoded, with the answer's body as sent (what a regulator recomputes the hash from). */
const readPackage = (token: string, packageUuid: string) =>
  Effect.gen(function* () {
    const [pkg, reply] = yield* (yield* evidence(token)).getPackage({ params: { package_uuid: packageUuid }, responseMode: "decoded-and-response" })
    expect(reply.status).toBe(200)
    return { pkg, sent: (yield* reply.json) as Record<string, any> }
  })
const jwks = Effect.flatMap(client(), (api) => api.receiptsPublic.jwks({}))

/** The keys a package seals; every other key of the answer (the seal, the SDKs' aliases, request_id) is outside. */
const SEALED_KEYS = ["package_uuid", "org_uuid", "title", "purpose", "status", "action_count", "actions", "metadata", "sealed_at", "created_by"]

/** What a regulator does with a package: recompute its hash from exactly the sealed keys and check the signature with the published key. */
const verifyOffline = (pkg: Record<string, any>, keys: Jwks) => {
  const { package_hash, signature, public_key_id } = pkg
  const sealed = Object.fromEntries(SEALED_KEYS.filter((key) => key in pkg).map((key) => [key, pkg[key]]))
  const bytes = Buffer.from(canonicalize(sealed)!, "utf8")
  const jwk = keys.keys.find((key) => key.kid === public_key_id)!
  const key = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, format: "jwk" })
  return {
    hashMatches: sha256(bytes) === package_hash,
    signatureValid: verify(null, bytes, key, Buffer.from(String(signature).replace(/^ed25519:/, ""), "base64url"))
  }
}

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

liveLayer(Setup)((it) => {
  it.describe("evidence packages", () => {
    it.effect("seals the organization's actions with their receipts and chains; the hash and signature verify offline", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const agent = `evidence-agent-${process.pid}-${Date.now().toString(36)}`
        const first = yield* authorize(org, { action_type: "payment.send", agent_id: agent })
        const firstReceipt = yield* notarize(org, first)
        const second = yield* authorize(org, { action_type: "payment.send", agent_id: agent, parent_action_uuid: first })
        const secondReceipt = yield* notarize(org, second)
        const pending = yield* authorize(org, { action_type: "payment.review", agent_id: agent, require_approval: true })

        // Raw: a field outside the contract (ignored by the server), and request_id, which the decoder drops.
        const created = yield* raw("POST", "/api/v1/evidence/packages", { token: org.key, body: {
          action_uuids: [second, first, pending, second],
          title: "Q3 payments",
          purpose: "audit request 42",
          metadata: { case: "A-42", nested: { b: 1, a: [1, "x"] } },
          unknown_field: "ignored"
        } })
        expect(created.status).toBe(201)
        expect(created.body).toMatchObject({ title: "Q3 payments", purpose: "audit request 42", status: "sealed", action_count: 3, created_by: org.userUuid })
        expect(created.body.package_hash).toMatch(/^sha256:[0-9a-f]{64}$/)
        expect(created.body.signature).toMatch(/^ed25519:/)
        expect(created.body.request_id).toEqual(expect.any(String))

        const { pkg, sent } = yield* readPackage(org.key, created.body.package_uuid)
        expect(pkg).toMatchObject({
          package_uuid: created.body.package_uuid,
          org_uuid: org.orgUuid,
          package_hash: created.body.package_hash,
          signature: created.body.signature,
          public_key_id: created.body.public_key_id,
          sealed_at: created.body.sealed_at,
          metadata: { case: "A-42", nested: { b: 1, a: [1, "x"] } }
        })
        expect(pkg.actions.map((action) => action.action_uuid)).toEqual([second, first, pending])
        const [secondEntry, firstEntry, pendingEntry] = pkg.actions
        expect(firstEntry!.receipt).toMatchObject({ receipt_uuid: firstReceipt.receipt_uuid, payload_hash: firstReceipt.payload_hash })
        // Each receipt verifies on its own: its signed bytes hash to its payload_hash.
        expect(sha256(firstEntry!.receipt!.signed_payload)).toBe(firstEntry!.receipt!.payload_hash)
        expect(secondEntry!.receipt!.receipt_uuid).toBe(secondReceipt.receipt_uuid)
        expect(secondEntry!.chain).toEqual({
          chain_agent_id: agent,
          agent_sequence: firstEntry!.chain.agent_sequence! + 1,
          previous_payload_hash: firstEntry!.receipt!.payload_hash,
          previous_receipt_uuid: firstEntry!.receipt!.receipt_uuid,
          parent_action_uuid: first,
          parent_payload_hash: firstEntry!.receipt!.payload_hash
        })
        expect(pendingEntry).toMatchObject({ status: "pending_approval", receipt: null })
        expect(pendingEntry!.chain).toMatchObject({ chain_agent_id: agent, agent_sequence: null, previous_receipt_uuid: null })

        const keys = yield* jwks
        expect(verifyOffline(sent, keys)).toEqual({ hashMatches: true, signatureValid: true })
        // A changed byte no longer verifies.
        expect(verifyOffline({ ...sent, title: "Q4 payments" }, keys)).toEqual({ hashMatches: false, signatureValid: false })

        // Sealed: later changes of an action do not change the package.
        yield* (yield* client(org.token)).actions.dashboardApprove({ params: { action_uuid: pending }, responseMode: "response-only" })
        const again = yield* readPackage(org.key, created.body.package_uuid)
        expect(again.pkg.actions[2]!.status).toBe("pending_approval")
        expect(verifyOffline(again.sent, keys)).toEqual({ hashMatches: true, signatureValid: true })
      })
    )

    it.effect("whatever the metadata, the package hash is recomputable from the answer (property)", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* evidence(org.key)
        const keys = yield* jwks
        const action = yield* authorize(org, { action_type: uniqueType("property") })
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 6 }), (metadata) =>
              Effect.runPromise(
                Effect.gen(function* () {
                  const [created, createdReply] = yield* api.createPackage({ payload: { action_uuids: [action], title: "property", metadata }, responseMode: "decoded-and-response" })
                  expect(createdReply.status).toBe(201)
                  const [read, readReply] = yield* api.getPackage({ params: { package_uuid: created.package_uuid }, responseMode: "decoded-and-response" })
                  expect(read.package_hash).toBe(created.package_hash)
                  expect(verifyOffline((yield* readReply.json) as Record<string, any>, keys)).toEqual({ hashMatches: true, signatureValid: true })
                })
              )
            ),
            { numRuns: 12 }
          )
        )
      })
    )

    it.effect("lists the organization's packages, newest first, with the spec key and data", () =>
      Effect.gen(function* () {
        const { other } = yield* Orgs
        const api = yield* evidence(other.key)
        const action = yield* authorize(other, { action_type: uniqueType("list") })
        const one = yield* api.createPackage({ payload: { action_uuids: [action], title: "first" } })
        const two = yield* api.createPackage({ payload: { action_uuids: [action], title: "second" } })
        const [page, pageReply] = yield* api.listPackages({ query: { per_page: 1 }, responseMode: "decoded-and-response" })
        expect(pageReply.status).toBe(200)
        expect(page.packages).toEqual(page.data)
        expect(page.packages.map((p) => p.package_uuid)).toEqual([two.package_uuid])
        expect(page.pagination).toEqual({ page: 1, per_page: 1, total: 2, has_more: true })
        const all = yield* api.listPackages({ query: {} })
        expect(all.packages.map((p) => p.package_uuid)).toEqual([two.package_uuid, one.package_uuid])
        expect(all.packages[0]).toMatchObject({ title: "second", status: "sealed", action_count: 1 })
        // Raw: per_page above 100 and page 0 are outside the contract.
        expect((yield* raw("GET", "/api/v1/evidence/packages?per_page=101", { token: other.key })).status).toBe(422)
        expect((yield* raw("GET", "/api/v1/evidence/packages?page=0", { token: other.key })).status).toBe(422)
      })
    )

    it.effect("refuses an empty list (400), unknown actions (404), other organizations' actions (422) and too many (422)", () =>
      Effect.gen(function* () {
        const { org, other } = yield* Orgs
        const api = yield* evidence(org.key)
        const mine = yield* authorize(org, { action_type: uniqueType("mine") })
        const theirs = yield* authorize(other, { action_type: uniqueType("theirs") })

        const empty = yield* answer(api.createPackage({ payload: { action_uuids: [], title: "t" }, responseMode: "response-only" }))
        expect(empty.status).toBe(400)
        expect(empty.body.code).toBe("EMPTY_ACTION_LIST")

        const unknown = yield* answer(api.createPackage({ payload: { action_uuids: [mine, "act_does_not_exist"], title: "t" }, responseMode: "response-only" }))
        expect(unknown.status).toBe(404)
        expect(unknown.body).toMatchObject({ code: "ACTION_NOT_FOUND", details: { action_uuids: ["act_does_not_exist"] } })

        const foreignReply = yield* api.createPackage({ payload: { action_uuids: [mine, theirs], title: "t" }, responseMode: "response-only" })
        const foreignText = yield* foreignReply.text
        expect(foreignReply.status).toBe(422)
        expect(JSON.parse(foreignText)).toMatchObject({ code: "CROSS_ORG_ACTIONS", details: { action_uuids: [theirs] } })
        // Nothing about the other organization's action is told.
        expect(foreignText).not.toContain(other.orgUuid)
        expect(foreignText).not.toContain("theirs")

        // Raw: bodies outside the contract (no action_uuids, no title, an empty title, action_uuids not a list, more than 1,000).
        for (const body of [{ title: "t" }, { action_uuids: [mine] }, { action_uuids: [mine], title: "" }, { action_uuids: "x", title: "t" }]) {
          const reply = yield* raw("POST", "/api/v1/evidence/packages", { token: org.key, body })
          expect([JSON.stringify(body), reply.status, reply.body.code]).toEqual([JSON.stringify(body), 422, "VALIDATION_ERROR"])
        }
        const tooMany = yield* raw("POST", "/api/v1/evidence/packages", { token: org.key, body: { action_uuids: Array.from({ length: 1001 }, (_, i) => `act_${i}`), title: "t" } })
        expect(tooMany.status).toBe(422)

        const readOnly = yield* (yield* client(org.token)).apiKeys.create({ payload: { name: "reader", scopes: ["evidence:read"] } })
        const reader = yield* evidence(readOnly.key)
        const refused = yield* reader.createPackage({ payload: { action_uuids: [mine], title: "t" }, responseMode: "response-only" })
        expect(refused.status).toBe(403)
        expect((yield* reader.listPackages({ query: {}, responseMode: "response-only" })).status).toBe(200)
      })
    )

    it.effect("answers 404 for another organization's package and for ids that are not packages", () =>
      Effect.gen(function* () {
        const { org, other } = yield* Orgs
        const api = yield* evidence(org.key)
        const action = yield* authorize(org, { action_type: uniqueType("private") })
        const created = yield* api.createPackage({ payload: { action_uuids: [action], title: "private" } })
        for (const token of [other.key, other.token]) {
          const reply = yield* answer((yield* evidence(token)).getPackage({ params: { package_uuid: created.package_uuid }, responseMode: "response-only" }))
          expect(reply.status).toBe(404)
          expect(reply.body.code).toBe("NOT_FOUND")
        }
        // "';--" is what `%27%3B--` decodes to; the client encodes it into the path.
        for (const id of ["not-a-uuid", "00000000-0000-0000-0000-000000000000", "';--"]) {
          expect((yield* api.getPackage({ params: { package_uuid: id }, responseMode: "response-only" })).status).toBe(404)
        }
        const listed = yield* (yield* evidence(other.key)).listPackages({ query: { per_page: 100 } })
        expect(listed.packages.map((p) => p.package_uuid)).not.toContain(created.package_uuid)
      })
    )
  })

  it.describe("time travel", () => {
    it.effect("answers differently before and after a status change, and records every query", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const { org } = yield* Orgs
        const api = yield* evidence(org.key)
        const type = uniqueType("travel")
        const before = new Date().toISOString()
        yield* sleep(15)
        const action = yield* authorize(org, { action_type: type, agent_id: "traveller" })
        yield* sleep(15)
        const whileAuthorized = new Date().toISOString()
        yield* sleep(15)
        const receipt = yield* notarize(org, action)
        yield* sleep(15)
        const afterwards = new Date().toISOString()

        const [earlier, earlierReply] = yield* api.timeTravel({
          payload: { query: { action_type: type }, point_in_time: whileAuthorized, reason: "regulator request 7" },
          responseMode: "decoded-and-response"
        })
        expect(earlierReply.status).toBe(200)
        expect(earlier).toMatchObject({
          point_in_time: whileAuthorized,
          reason: "regulator request 7",
          query: { action_type: type, agent_id: null, date_from: null, date_to: null, status: null },
          result_count: 1,
          results_truncated: false,
          queried_by: org.userUuid
        })
        expect(earlier.discovery_query_uuid).toEqual(expect.any(String))
        expect(earlier.results).toEqual([
          expect.objectContaining({ action_uuid: action, action_type: type, agent_id: "traveller", status: "authorized", receipt_uuid: null })
        ])
        // The hash is over the results as sent.
        expect(earlier.results_hash).toBe(sha256(canonicalize(((yield* earlierReply.json) as { results: unknown }).results)!))

        const later = yield* api.timeTravel({ payload: { query: { action_type: type }, point_in_time: afterwards, reason: "regulator request 7" } })
        expect(later.results).toEqual([expect.objectContaining({ action_uuid: action, status: "notarized", receipt_uuid: receipt.receipt_uuid })])
        expect(Date.parse(later.results[0]!.status_since)).toBeGreaterThan(Date.parse(earlier.results[0]!.status_since))

        const notYet = yield* api.timeTravel({ payload: { query: { action_type: type }, point_in_time: before, reason: "before it existed" } })
        expect(notYet).toMatchObject({ results: [], result_count: 0 })

        // The status filter is evaluated as of point_in_time; the SDK sends the query's fields at the top level.
        const sdkShape = yield* api.timeTravel({ payload: { action_type: type, status: "authorized", point_in_time: whileAuthorized, reason: "sdk shape" } })
        expect(sdkShape.results.map((r) => r.action_uuid)).toEqual([action])
        const notAuthorizedNow = yield* api.timeTravel({ payload: { action_type: type, status: "authorized", point_in_time: afterwards, reason: "sdk shape" } })
        expect(notAuthorizedNow.result_count).toBe(0)
        const window = yield* api.timeTravel({
          payload: {
            query: { action_type: type, agent_id: "traveller", date_from: before, date_to: before },
            point_in_time: afterwards,
            reason: "empty window"
          }
        })
        expect(window.result_count).toBe(0)

        const records = yield* Effect.promise(() =>
          server.run(
            Effect.flatMap(SqlClient.SqlClient, (sql) =>
              sql<{ discovery_query_uuid: string; reason: string; result_count: number; point_in_time: Date; query: { action_type: string } }>`
                SELECT discovery_query_uuid, reason, result_count, point_in_time, query FROM discovery_queries
                WHERE org_uuid = ${org.orgUuid} AND query->>'action_type' = ${type} ORDER BY queried_at`
            )
          )
        )
        expect(records.map((r) => r.reason)).toEqual(["regulator request 7", "regulator request 7", "before it existed", "sdk shape", "sdk shape", "empty window"])
        expect(records[0]).toMatchObject({ discovery_query_uuid: earlier.discovery_query_uuid, result_count: 1 })
        expect(records[0]!.point_in_time.toISOString()).toBe(whileAuthorized)
        const audited = yield* Effect.promise(() =>
          server.run(
            Effect.flatMap(SqlClient.SqlClient, (sql) =>
              sql<{ n: number }>`SELECT count(*)::int AS n FROM audit_log WHERE org_uuid = ${org.orgUuid} AND event = 'evidence.discovery.queried'
                                 AND target = ${earlier.discovery_query_uuid}`
            )
          )
        )
        expect(audited[0]!.n).toBe(1)
      })
    )

    it.effect("sees approvals in the history and only the caller's organization", () =>
      Effect.gen(function* () {
        const { org, other } = yield* Orgs
        const api = yield* evidence(org.key)
        const type = uniqueType("approval")
        const action = yield* authorize(org, { action_type: type, require_approval: true })
        yield* authorize(other, { action_type: type })
        yield* sleep(15)
        const pendingThen = new Date().toISOString()
        yield* sleep(15)
        expect((yield* (yield* client(org.token)).actions.dashboardApprove({ params: { action_uuid: action }, responseMode: "response-only" })).status).toBe(200)
        yield* sleep(15)
        const approvedThen = new Date().toISOString()
        const atPending = yield* api.timeTravel({ payload: { query: { action_type: type }, point_in_time: pendingThen, reason: "r" } })
        expect(atPending.results.map((r) => r.status)).toEqual(["pending_approval"])
        const atApproved = yield* api.timeTravel({ payload: { query: { action_type: type }, point_in_time: approvedThen, reason: "r" } })
        expect(atApproved.results.map((r) => [r.action_uuid, r.status])).toEqual([[action, "approved"]])
      })
    )

    it.effect("refuses a missing reason, a future point in time and malformed dates", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* evidence(org.key)
        const now = new Date().toISOString()
        for (const payload of [{ point_in_time: now }, { point_in_time: now, reason: "  " }, { point_in_time: now, reason: null }]) {
          const reply = yield* answer(api.timeTravel({ payload, responseMode: "response-only" }))
          expect([reply.status, reply.body.code]).toEqual([400, "MISSING_REASON"])
        }
        const future = yield* answer(api.timeTravel({ payload: { point_in_time: new Date(Date.now() + 60_000).toISOString(), reason: "r" }, responseMode: "response-only" }))
        expect([future.status, future.body.code]).toEqual([400, "FUTURE_TIMESTAMP"])
        const invalid = [
          // Raw: no point_in_time is outside the contract.
          [{ reason: "r" }, raw("POST", "/api/v1/evidence/time-travel", { token: org.key, body: { reason: "r" } })],
          [{ point_in_time: "yesterday", reason: "r" }, answer(api.timeTravel({ payload: { point_in_time: "yesterday", reason: "r" }, responseMode: "response-only" }))],
          [
            { point_in_time: now, reason: "r", query: { date_from: "soon" } },
            answer(api.timeTravel({ payload: { point_in_time: now, reason: "r", query: { date_from: "soon" } }, responseMode: "response-only" }))
          ],
          [
            { point_in_time: now, reason: "r", query: { date_from: "2026-02-01", date_to: "2026-01-01" } },
            answer(api.timeTravel({ payload: { point_in_time: now, reason: "r", query: { date_from: "2026-02-01", date_to: "2026-01-01" } }, responseMode: "response-only" }))
          ],
          // Raw: an unknown status is outside the contract.
          [{ point_in_time: now, reason: "r", status: "sleeping" }, raw("POST", "/api/v1/evidence/time-travel", { token: org.key, body: { point_in_time: now, reason: "r", status: "sleeping" } })]
        ] as const
        for (const [body, request] of invalid) {
          const reply = yield* request
          expect([JSON.stringify(body), reply.status, reply.body.code]).toEqual([JSON.stringify(body), 422, "VALIDATION_ERROR"])
        }
        const [dateOnly, dateOnlyReply] = yield* api.timeTravel({
          payload: { point_in_time: "2020-01-01", reason: "r", query: { date_to: "2020-01-01" } },
          responseMode: "decoded-and-response"
        })
        expect(dateOnlyReply.status).toBe(200)
        expect(dateOnly.query.date_to).toBe("2020-01-01T23:59:59.999Z")
      })
    )
  })

  it.describe("liability chain", () => {
    it.effect("walks parent actions to the root; hop 0 is the action; authorized_by names the approver or the policy", () =>
      Effect.gen(function* () {
        const { org, other } = yield* Orgs
        const api = yield* evidence(org.key)
        const root = yield* authorize(org, { action_type: "plan", agent_id: "planner", require_approval: true, model_id: "m-1" })
        expect((yield* (yield* client(org.token)).actions.dashboardApprove({ params: { action_uuid: root }, responseMode: "response-only" })).status).toBe(200)
        yield* notarize(org, root)
        const child = yield* authorize(org, { action_type: "execute", agent_id: "executor", parent_action_uuid: root })
        const grandchild = yield* authorize(org, { action_type: "pay", agent_id: "payer", parent_action_uuid: child, require_approval: true })

        const [chain, reply] = yield* api.liabilityChain({ params: { action_uuid: grandchild }, responseMode: "decoded-and-response" })
        expect(reply.status).toBe(200)
        expect(chain).toMatchObject({ action_uuid: grandchild, total_hops: 3, root_action_id: root, truncated: false })
        expect(chain.chain).toEqual(chain.liability_chain)
        expect(chain.liability_chain.map((hop) => [hop.hop, hop.action_uuid, hop.authorized_by])).toEqual([
          [0, grandchild, null],
          [1, child, "policy"],
          [2, root, org.email]
        ])
        expect(chain.liability_chain[2]).toMatchObject({ action_type: "plan", agent_id: "planner", model_id: "m-1", parent_action_uuid: null })

        const alone = yield* api.liabilityChain({ params: { action_uuid: root } })
        expect(alone).toMatchObject({ total_hops: 1, root_action_id: root, liability_chain: [expect.objectContaining({ hop: 0, action_uuid: root })] })

        for (const token of [other.key, other.token]) {
          const foreign = yield* (yield* evidence(token)).liabilityChain({ params: { action_uuid: grandchild }, responseMode: "response-only" })
          expect(foreign.status).toBe(404)
        }
        expect((yield* api.liabilityChain({ params: { action_uuid: "act_nothing" }, responseMode: "response-only" })).status).toBe(404)
      })
    )

    it.effect("stops at a cycle and at the depth bound, and never follows a parent of another organization", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const { org, other } = yield* Orgs
        const api = yield* evidence(org.key)
        const a = yield* authorize(org, { action_type: "cycle" })
        const b = yield* authorize(org, { action_type: "cycle", parent_action_uuid: a })
        const foreign = yield* authorize(other, { action_type: "foreign" })
        const chainOf = Array.from({ length: 120 }, (_, i) => `act_deep_${process.pid}_${i}`)
        yield* Effect.promise(() =>
          server.run(
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
        )
        const [cycle, cycleReply] = yield* api.liabilityChain({ params: { action_uuid: b }, responseMode: "decoded-and-response" })
        expect(cycleReply.status).toBe(200)
        expect(cycle.liability_chain.map((hop) => hop.action_uuid)).toEqual([b, a])
        expect(cycle).toMatchObject({ total_hops: 2, root_action_id: a, truncated: false })

        const deep = yield* api.liabilityChain({ params: { action_uuid: chainOf[119]! } })
        expect(deep).toMatchObject({ total_hops: 100, truncated: true, root_action_id: chainOf[20] })
        const [shallow, shallowReply] = yield* api.liabilityChain({ params: { action_uuid: chainOf[5]! }, responseMode: "decoded-and-response" })
        expect(shallow).toMatchObject({ total_hops: 6, truncated: false, root_action_id: chainOf[0] })
        // Read in the body as sent: the decoder would drop keys that could carry it.
        expect(yield* shallowReply.text).not.toContain(foreign)
      })
    )
  })

  it.describe("status history", () => {
    it.effect("gets one row for every status an action enters, from the statement that changes it", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const { org } = yield* Orgs
        const api = yield* client(org.key)
        const dashboard = yield* client(org.token)
        const forbidden = uniqueType("forbidden")
        const policy = yield* api.policies.create({
          payload: { name: "deny forbidden", mode: "rules", decision: "deny", conditions: [{ field: "action_type", op: "eq", value: forbidden }], activate: true },
          responseMode: "response-only"
        })
        expect(policy.status).toBe(201)
        const denied = yield* answer(api.actions.authorize({ headers: {}, payload: { action_type: forbidden, details: "x" }, responseMode: "response-only" }))
        expect(denied.status).toBe(403)
        const deniedUuid = denied.body.details.action_uuid as string
        const byHuman = yield* authorize(org, { action_type: uniqueType("human"), require_approval: true })
        expect((yield* dashboard.actions.dashboardDeny({ params: { action_uuid: byHuman }, query: { reason: "no" }, responseMode: "response-only" })).status).toBe(200)
        const failed = yield* authorize(org, { action_type: uniqueType("failed") })
        expect((yield* api.actions.notarize({ params: { action_uuid: failed }, payload: { outcome: "failed" }, responseMode: "response-only" })).status).toBe(200)
        const approved = yield* authorize(org, { action_type: uniqueType("approved"), require_approval: true })
        yield* dashboard.actions.dashboardApprove({ params: { action_uuid: approved }, responseMode: "response-only" })
        yield* notarize(org, approved)

        const rows = yield* Effect.promise(() =>
          server.run(
            Effect.flatMap(SqlClient.SqlClient, (sql) =>
              sql<{ action_uuid: string; status: string; org_uuid: string }>`
                SELECT action_uuid, status, org_uuid FROM action_status_history
                WHERE action_uuid IN (${deniedUuid}, ${byHuman}, ${failed}, ${approved}) ORDER BY changed_at, status`
            )
          )
        )
        const of = (id: string) => rows.filter((row) => row.action_uuid === id).map((row) => row.status)
        expect(of(deniedUuid)).toEqual(["denied_by_policy"])
        expect(of(byHuman)).toEqual(["pending_approval", "denied_by_human"])
        expect(of(failed)).toEqual(["authorized", "failed"])
        expect(of(approved)).toEqual(["pending_approval", "approved", "notarized"])
        expect(new Set(rows.map((row) => row.org_uuid))).toEqual(new Set([org.orgUuid]))
      })
    )

    it.effect("is reconstructed by the migration from what the rows kept", () =>
      Effect.gen(function* () {
        const database = yield* Effect.acquireRelease(
          Effect.promise(() => freshDatabaseUrl()),
          (fresh) => Effect.promise(() => fresh.drop())
        )
        const before = Object.fromEntries(Object.entries(migrations).filter(([key]) => key <= "0017_cases"))
        const history = yield* Effect.gen(function* () {
          yield* runMigrationsOf(before)
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
        }).pipe(Effect.provide(databaseClientLayer({ url: database.url, dataDir: UNUSED_DATA_DIR, maxConnections: 2 })))
        expect(history.map((row) => [row.action_uuid, row.status, row.changed_at.toISOString().slice(0, 10)])).toEqual([
          ["act_approved_done", "pending_approval", "2026-01-01"],
          ["act_approved_done", "approved", "2026-01-02"],
          ["act_approved_done", "notarized", "2026-01-04"],
          ["act_authorized", "authorized", "2026-01-01"],
          ["act_denied", "pending_approval", "2026-01-01"],
          ["act_denied", "denied_by_human", "2026-01-03"],
          ["act_pending", "pending_approval", "2026-01-01"]
        ])
      })
    )
  })
})
