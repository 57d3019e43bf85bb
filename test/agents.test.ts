/**
 * The agent registry end to end over HTTP (spec 001 "Agents"): registration with its slug rules
 * and the SDK's `display_name`, lists with action counts, updates, semantic versions,
 * decommissioning (irreversible, then notarize, versions answer 422), the agent's actions, the
 * public page, and decommission racing 50 in-flight notarizes of the same agent. Over the typed
 * client (HttpApiClient over GatewayApi); bodies and queries outside the contract go raw (`raw`).
 */
import { createHash, createHmac, createPublicKey, verify } from "node:crypto"
import { expect } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql"
import type { RegisterAgentRequest } from "../protocol/agents.js"
import { canonicalJson, verifyReceipt } from "../protocol/verifier/index.js"
import { answer, client, member, raw, register } from "./support/api.js"
import type { Org } from "./support/client.js"
import { liveLayer } from "./support/effect.js"
import { Gateway } from "./support/server.js"

class Orgs extends Context.Service<Orgs, { readonly org: Org; readonly other: Org }>()("test/agents/Orgs") {}

const Setup = Layer.effect(Orgs, Effect.all({ org: register("Agents Org"), other: register("Other Agents Org") })).pipe(Layer.provideMerge(Gateway.layer()))

let slugCounter = 0
const uniqueSlug = (label: string) => `${label}-${process.pid}-${Date.now().toString(36)}-${++slugCounter}`
const hash = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`


/** A registration as answered (status and JSON body). */
const registerAgent = (token: string, payload: RegisterAgentRequest) =>
  Effect.flatMap(client(token), (api) => answer(api.agents.register({ payload, responseMode: "response-only" })))
const authorize = (token: string, agentId: string) =>
  Effect.flatMap(client(token), (api) =>
    answer(api.actions.authorize({ headers: {}, payload: { action_type: "email.send", details: "send the report", agent_id: agentId }, responseMode: "response-only" }))
  )
const notarize = (token: string, actionUuid: string) =>
  Effect.flatMap(client(token), (api) =>
    answer(api.actions.notarize({ params: { action_uuid: actionUuid }, payload: { outcome: "completed" }, responseMode: "response-only" }))
  )
/** The agent's current credential; the credential is a JSON-LD document, read loosely. */
const currentCredential = (slug: string) =>
  Effect.flatMap(client(), (api) => Effect.map(api.credentialsPublic.current({ params: { agent_slug: slug } }), (current) => current.credential as any))

liveLayer(Setup)((it) => {
  it.describe("registration", () => {
    it.effect("registers an agent and answers the spec's fields, owner_id being the organization", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const slug = uniqueSlug("mailer")
        // Raw: a field outside the contract (ignored by the server), and request_id, which the decoder strips.
        const reply = yield* raw("POST", "/api/v1/agents", { token: org.key, body: {
          agent_slug: slug,
          name: "Mailer",
          description: "Sends the weekly report",
          capabilities: ["email.send", "email.send", "files.read"],
          metadata: { team: "ops" },
          unknown_field: "ignored"
        } })
        expect(reply.status).toBe(201)
        expect(reply.body).toMatchObject({
          agent_slug: slug,
          name: "Mailer",
          description: "Sends the weekly report",
          capabilities: ["email.send", "files.read"],
          status: "active",
          owner_id: org.orgUuid
        })
        expect(typeof reply.body.request_id).toBe("string")
        expect(Date.parse(reply.body.created_at)).not.toBeNaN()

        const [got, gotReply] = yield* (yield* client(org.key)).agents.get({ params: { agent_slug: slug }, responseMode: "decoded-and-response" })
        expect(gotReply.status).toBe(200)
        expect(got).toMatchObject({ agent_slug: slug, metadata: { team: "ops" }, versions: [], current_version: null, action_count: 0 })
      })
    )

    it.effect("accepts the published SDK's display_name for name", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* client(org.key)
        const slug = uniqueSlug("sdk")
        const [registered, reply] = yield* api.agents.register({ payload: { agent_slug: slug, display_name: "From the SDK" }, responseMode: "decoded-and-response" })
        expect(reply.status).toBe(201)
        expect(registered.name).toBe("From the SDK")
        const [renamed, renamedReply] = yield* api.agents.update({
          params: { agent_slug: slug },
          payload: { display_name: "Renamed" },
          responseMode: "decoded-and-response"
        })
        expect(renamedReply.status).toBe(200)
        expect(renamed.name).toBe("Renamed")
      })
    )

    it.effect("refuses malformed slugs with 400 INVALID_SLUG and a missing name with 422", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        for (const slug of ["ab", "Upper-Case", "under_score", "x".repeat(65), "with space", "public"]) {
          const reply = yield* registerAgent(org.key, { agent_slug: slug, name: "Bad" })
          expect(reply.status, slug).toBe(400)
          expect(reply.body.code, slug).toBe("INVALID_SLUG")
        }
        const noName = yield* registerAgent(org.key, { agent_slug: uniqueSlug("noname") })
        expect(noName.status).toBe(422)
        expect(noName.body.code).toBe("VALIDATION_ERROR")
        const tooMuch = yield* registerAgent(org.key, { agent_slug: uniqueSlug("big"), name: "Big", metadata: { blob: "x".repeat(20_000) } })
        expect(tooMuch.status).toBe(422)
      })
    )

    it.effect("slugs are unique across organizations: 409 SLUG_TAKEN", () =>
      Effect.gen(function* () {
        const { org, other } = yield* Orgs
        const slug = uniqueSlug("taken")
        expect((yield* registerAgent(org.key, { agent_slug: slug, name: "First" })).status).toBe(201)
        const again = yield* registerAgent(org.key, { agent_slug: slug, name: "Again" })
        expect(again.status).toBe(409)
        expect(again.body.code).toBe("SLUG_TAKEN")
        const elsewhere = yield* registerAgent(other.key, { agent_slug: slug, name: "Elsewhere" })
        expect(elsewhere.status).toBe(409)
        expect(elsewhere.body.code).toBe("SLUG_TAKEN")
      })
    )
  })

  it.describe("lists, updates and versions", () => {
    it.effect("lists the organization's agents with action counts, under agents and data", () =>
      Effect.gen(function* () {
        const { other } = yield* Orgs
        const fresh = yield* register("List Org")
        const api = yield* client(fresh.key)
        const slugs = [uniqueSlug("list-a"), uniqueSlug("list-b"), uniqueSlug("list-c")]
        for (const slug of slugs) expect((yield* registerAgent(fresh.key, { agent_slug: slug, name: slug })).status).toBe(201)
        for (let i = 0; i < 2; i++) expect((yield* authorize(fresh.key, slugs[0]!)).status).toBe(201)

        const [page, pageReply] = yield* api.agents.list({ query: { per_page: 2 }, responseMode: "decoded-and-response" })
        expect(pageReply.status).toBe(200)
        expect(page.pagination).toEqual({ page: 1, per_page: 2, total: 3, has_more: true })
        expect(page.agents).toEqual(page.data)
        expect(page.agents.map((agent) => agent.agent_slug)).toEqual([slugs[2], slugs[1]])
        const second = yield* api.agents.list({ query: { page: 2, per_page: 2 } })
        expect(second.agents).toEqual([expect.objectContaining({ agent_slug: slugs[0], action_count: 2, status: "active", current_version: null })])
        // Raw: per_page above the contract's 100 is refused by the typed client before sending.
        expect((yield* raw("GET", "/api/v1/agents?per_page=101", { token: fresh.key })).status).toBe(422)
        // Filtered by status (the dashboard's filter): counted and paged among those agents only.
        yield* api.agents.decommission({ params: { agent_slug: slugs[1]! }, payload: { reason: "filtered" } })
        const retired = yield* api.agents.list({ query: { status: "decommissioned" } })
        expect(retired.agents.map((agent) => agent.agent_slug)).toEqual([slugs[1]])
        expect(retired.pagination).toEqual({ page: 1, per_page: 20, total: 1, has_more: false })
        const active = yield* api.agents.list({ query: { status: "active", per_page: 1 } })
        expect(active.agents.map((agent) => agent.agent_slug)).toEqual([slugs[2]])
        expect(active.pagination).toEqual({ page: 1, per_page: 1, total: 2, has_more: true })
        expect((yield* raw("GET", "/api/v1/agents?status=sleeping", { token: fresh.key })).status).toBe(422)
        // Another organization sees none of them.
        const foreign = yield* (yield* client(other.key)).agents.list({ query: {} })
        expect(foreign.agents.map((agent) => agent.agent_slug)).not.toContain(slugs[0])
      })
    )

    it.effect("updates: metadata replaces, omitted fields stay", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* client(org.key)
        const slug = uniqueSlug("update")
        yield* api.agents.register({ payload: { agent_slug: slug, name: "Before", description: "kept", capabilities: ["a"], metadata: { one: 1, two: 2 } } })
        const [updated, updatedReply] = yield* api.agents.update({
          params: { agent_slug: slug },
          payload: { capabilities: ["b", "c"], metadata: { three: 3 } },
          responseMode: "decoded-and-response"
        })
        expect(updatedReply.status).toBe(200)
        expect(updated).toMatchObject({ name: "Before", description: "kept", capabilities: ["b", "c"], metadata: { three: 3 } })
        const missing = yield* answer(api.agents.update({ params: { agent_slug: uniqueSlug("nobody") }, payload: { name: "x" }, responseMode: "response-only" }))
        expect(missing.status).toBe(404)
        expect(missing.body.code).toBe("NOT_FOUND")
      })
    )

    it.effect("publishes semantic versions, newest first; a repeated version is 409 VERSION_EXISTS", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* client(org.key)
        const slug = uniqueSlug("versions")
        const params = { agent_slug: slug }
        yield* api.agents.register({ payload: { agent_slug: slug, name: "Versioned" } })
        const [first, firstReply] = yield* api.agents.publishVersion({
          params,
          payload: { version: "1.0.0", instruction_hash: hash("v1"), changelog: "first" },
          responseMode: "decoded-and-response"
        })
        expect(firstReply.status).toBe(201)
        expect(first).toMatchObject({ agent_slug: slug, version: "1.0.0", instruction_hash: hash("v1"), changelog: "first" })
        const [second, secondReply] = yield* api.agents.publishVersion({
          params,
          payload: { version: "1.1.0-beta.1", instruction_hash: hash("v2") },
          responseMode: "decoded-and-response"
        })
        expect(secondReply.status).toBe(201)
        expect(second.changelog).toBeNull()

        const again = yield* answer(api.agents.publishVersion({ params, payload: { version: "1.0.0", instruction_hash: hash("v3") }, responseMode: "response-only" }))
        expect(again.status).toBe(409)
        expect(again.body.code).toBe("VERSION_EXISTS")
        // Raw: versions that are not semantic are outside the contract (no instruction_hash is accepted: test/sdk-tolerance.test.ts).
        for (const body of [{ version: "1.0", instruction_hash: hash("x") }, { version: "01.0.0", instruction_hash: hash("x") }]) {
          const bad = yield* raw("POST", `/api/v1/agents/${slug}/versions`, { token: org.key, body })
          expect(bad.status, JSON.stringify(body)).toBe(422)
        }

        const [list, listReply] = yield* api.agents.versions({ params, responseMode: "decoded-and-response" })
        expect(listReply.status).toBe(200)
        expect(list.map((v) => v.version)).toEqual(["1.1.0-beta.1", "1.0.0"])
        const agent = yield* api.agents.get({ params })
        expect(agent.current_version).toBe("1.1.0-beta.1")
        expect(agent.versions).toHaveLength(2)
      })
    )
  })

  it.describe("decommission", () => {
    it.effect("needs an owner or admin (403), and is irreversible; afterwards notarize and versions answer 422", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* client(org.key)
        const slug = uniqueSlug("retire")
        const params = { agent_slug: slug }
        yield* api.agents.register({ payload: { agent_slug: slug, name: "Retiring" } })
        const pending = yield* authorize(org.key, slug)
        expect(pending.status).toBe(201)

        // A reason too long is refused; none at all is accepted (the published SDKs send {}: test/sdk-tolerance.test.ts).
        expect((yield* raw("POST", `/api/v1/agents/${slug}/decommission`, { token: org.key, body: { reason: "x".repeat(1001) } })).status).toBe(422)
        const teammate = yield* client((yield* member(org, "member")).token)
        const byMember = yield* teammate.agents.decommission({ params, payload: { reason: "no" }, responseMode: "response-only" })
        expect(byMember.status).toBe(403)

        const [done, doneReply] = yield* api.agents.decommission({ params, payload: { reason: "replaced by v2" }, responseMode: "decoded-and-response" })
        expect(doneReply.status).toBe(200)
        expect(done).toMatchObject({ agent_slug: slug, status: "decommissioned", reason: "replaced by v2" })
        expect(Date.parse(done.decommissioned_at)).not.toBeNaN()

        const twice = yield* answer(api.agents.decommission({ params, payload: { reason: "again" }, responseMode: "response-only" }))
        expect(twice.status).toBe(422)
        expect(twice.body.code).toBe("AGENT_DECOMMISSIONED")

        const late = yield* notarize(org.key, pending.body.action_uuid)
        expect(late.status).toBe(422)
        expect(late.body.code).toBe("AGENT_DECOMMISSIONED")
        const version = yield* answer(api.agents.publishVersion({ params, payload: { version: "2.0.0", instruction_hash: hash("late") }, responseMode: "response-only" }))
        expect(version.status).toBe(422)
        expect(version.body.code).toBe("AGENT_DECOMMISSIONED")

        const agent = yield* api.agents.get({ params })
        expect(agent).toMatchObject({ status: "decommissioned", decommissioned_at: done.decommissioned_at })
      })
    )

    it.effect(
      "racing 50 in-flight notarizes: each succeeded before the decommission or answered 422, and the chain has no gap",
      () =>
        Effect.gen(function* () {
          const { org } = yield* Orgs
          const api = yield* client(org.key)
          const slug = uniqueSlug("race")
          yield* api.agents.register({ payload: { agent_slug: slug, name: "Racer" } })
          const ids: Array<string> = []
          for (let i = 0; i < 50; i++) {
            const reply = yield* authorize(org.key, slug)
            expect(reply.status).toBe(201)
            ids.push(reply.body.action_uuid)
          }
          // Half in flight, then the decommission together with the other half, so both orders occur.
          const early = yield* Effect.forEach(ids.slice(0, 25), (id) => Effect.forkChild(notarize(org.key, id)))
          yield* Effect.raceAllFirst(early.map((fiber) => Fiber.await(fiber)))
          const decommission = api.agents.decommission({ params: { agent_slug: slug }, payload: { reason: "race" }, responseMode: "decoded-and-response" })
          const notarizes = [...early.map((fiber) => Fiber.join(fiber)), ...ids.slice(25).map((id) => notarize(org.key, id))]
          const [answers, [retired, retiredReply]] = yield* Effect.all([Effect.all(notarizes, { concurrency: "unbounded" }), decommission], {
            concurrency: "unbounded"
          })
          expect(retiredReply.status).toBe(200)
          const decommissionedAt = Date.parse(retired.decommissioned_at)

          const succeeded = answers.filter((reply) => reply.status === 200)
          const refused = answers.filter((reply) => reply.status === 422)
          expect(succeeded.length + refused.length).toBe(50)
          for (const reply of refused) expect(reply.body.code).toBe("AGENT_DECOMMISSIONED")

          // Every receipt was minted before the decommission took effect, and the agent's chain is 1..n without a gap.
          const sequences: Array<number> = []
          for (const reply of succeeded) {
            const action = yield* api.actions.get({ params: { action_uuid: reply.body.action_uuid } })
            expect(Date.parse(action.receipt!.created_at)).toBeLessThanOrEqual(decommissionedAt)
            sequences.push(action.agent_sequence!)
          }
          sequences.sort((a, b) => a - b)
          expect(sequences).toEqual(sequences.map((_, index) => index + 1))
          // The refused ones are still authorized: nothing was half-written.
          for (const reply of refused.slice(0, 5)) {
            const uuid = ids[answers.indexOf(reply)]!
            const action = yield* api.actions.get({ params: { action_uuid: uuid } })
            expect(action.status).toBe("authorized")
          }
        }),
      60_000
    )
  })

  it.describe("the agent's actions and its public page", () => {
    it.effect("lists the agent's actions with filters, and counts them on the public page", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* client(org.key)
        const anonymous = yield* client()
        const slug = uniqueSlug("worker")
        yield* api.agents.register({ payload: { agent_slug: slug, name: "Worker", description: "does work", capabilities: ["work"] } })
        const first = yield* authorize(org.key, slug)
        yield* authorize(org.key, slug)
        yield* authorize(org.key, uniqueSlug("someone-else"))
        expect((yield* notarize(org.key, first.body.action_uuid)).status).toBe(200)

        const params = { agent_slug: slug }
        const [actions, actionsReply] = yield* api.agents.actions({ params, query: {}, responseMode: "decoded-and-response" })
        expect(actionsReply.status).toBe(200)
        expect(actions.pagination.total).toBe(2)
        expect(actions.actions).toEqual(actions.data)
        expect(actions.actions.every((action) => action.agent_id === slug)).toBe(true)
        const notarized = yield* api.agents.actions({ params, query: { status: "notarized" } })
        expect(notarized.actions.map((action) => action.action_uuid)).toEqual([first.body.action_uuid])

        const [page, pageReply] = yield* anonymous.agentsPublic.publicAgent({ params, responseMode: "decoded-and-response" })
        expect(pageReply.status).toBe(200)
        expect(page).toMatchObject({
          agent_slug: slug,
          name: "Worker",
          description: "does work",
          capabilities: ["work"],
          status: "active",
          current_version: null,
          owner_verified: true,
          action_count: 2
        })
        // The body as sent: the decoder would drop these keys, so their absence is read there.
        const sent = (yield* pageReply.json) as Record<string, unknown>
        expect(sent.metadata).toBeUndefined()
        expect(sent.owner_id).toBeUndefined()
        expect((yield* anonymous.agentsPublic.publicAgent({ params: { agent_slug: uniqueSlug("ghost") }, responseMode: "response-only" })).status).toBe(404)
      })
    )

    it.effect("another organization gets 404 for the agent and everything under it", () =>
      Effect.gen(function* () {
        const { org, other } = yield* Orgs
        const api = yield* client(org.key)
        const stranger = yield* client(other.token)
        const slug = uniqueSlug("private")
        const params = { agent_slug: slug }
        yield* api.agents.register({ payload: { agent_slug: slug, name: "Private" } })
        const probes = [
          ["GET", stranger.agents.get({ params, responseMode: "response-only" })],
          ["PUT", stranger.agents.update({ params, payload: { name: "Mine now" }, responseMode: "response-only" })],
          ["GET versions", stranger.agents.versions({ params, responseMode: "response-only" })],
          ["POST versions", stranger.agents.publishVersion({ params, payload: { version: "9.9.9", instruction_hash: hash("x") }, responseMode: "response-only" })],
          ["GET actions", stranger.agents.actions({ params, query: {}, responseMode: "response-only" })],
          ["POST decommission", stranger.agents.decommission({ params, payload: { reason: "hostile" }, responseMode: "response-only" })]
        ] as const
        for (const [label, probe] of probes) {
          const reply = yield* probe
          expect(reply.status, `${label} /api/v1/agents/${slug}`).toBe(404)
        }
        const still = yield* api.agents.get({ params })
        expect(still).toMatchObject({ name: "Private", status: "active", versions: [] })
      })
    )

    it.effect("keys without the agents scopes are refused", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const [key, keyReply] = yield* (yield* client(org.token)).apiKeys.create({
          payload: { name: "actions only", scopes: ["actions:read"] },
          responseMode: "decoded-and-response"
        })
        expect(keyReply.status).toBe(201)
        expect((yield* (yield* client(key.key)).agents.list({ query: {}, responseMode: "response-only" })).status).toBe(403)
        expect((yield* registerAgent(key.key, { agent_slug: uniqueSlug("scoped"), name: "No" })).status).toBe(403)
      })
    )
  })

  it.describe("transfer", () => {
    const sign = (credential: string, slug: string, from: string, to: string) =>
      `hmac-sha256:${createHmac("sha256", credential).update(JSON.stringify({ agent_slug: slug, from_org: from, to_org: to })).digest("hex")}`
    /** A transfer as answered (status and JSON body). */
    const transfer = (token: string, slug: string, payload: { readonly target_org_id: string; readonly signature: string }) =>
      Effect.flatMap(client(token), (api) => answer(api.agents.transfer({ params: { agent_slug: slug }, payload, responseMode: "response-only" })))

    it.effect("moves the agent with the owner's signature: new owner, reissued credential, signed receipt, audited on both sides", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const { org, other } = yield* Orgs
        const api = yield* client(org.key)
        const slug = uniqueSlug("moving")
        yield* api.agents.register({ payload: { agent_slug: slug, name: "Mover", capabilities: ["pay"] } })
        const before = yield* currentCredential(slug)

        // Raw: a transfer without a signature is outside the contract.
        expect((yield* raw("POST", `/api/v1/agents/${slug}/transfer`, { token: org.key, body: { target_org_id: other.orgUuid } })).status).toBe(422)
        const forged = yield* transfer(org.key, slug, { target_org_id: other.orgUuid, signature: sign("not-my-key", slug, org.orgUuid, other.orgUuid) })
        expect(forged.status).toBe(400)
        expect(forged.body.code).toBe("INVALID_SIGNATURE")
        // A signature over other terms (another target) does not transfer to this one.
        const wrongTerms = yield* transfer(org.key, slug, { target_org_id: other.orgUuid, signature: sign(org.key, slug, org.orgUuid, "org_elsewhere") })
        expect(wrongTerms.body.code).toBe("INVALID_SIGNATURE")
        const nowhere = yield* transfer(org.key, slug, { target_org_id: "org_nowhere", signature: sign(org.key, slug, org.orgUuid, "org_nowhere") })
        expect(nowhere.status).toBe(404)
        expect(nowhere.body.code).toBe("TARGET_ORG_NOT_FOUND")
        const teammate = yield* member(org, "member")
        expect((yield* transfer(teammate.key, slug, { target_org_id: other.orgUuid, signature: sign(teammate.key, slug, org.orgUuid, other.orgUuid) })).status).toBe(403)

        const [moved, movedReply] = yield* api.agents.transfer({
          params: { agent_slug: slug },
          payload: { target_org_id: other.orgUuid, signature: sign(org.key, slug, org.orgUuid, other.orgUuid) },
          responseMode: "decoded-and-response"
        })
        expect(movedReply.status).toBe(200)
        expect(moved).toMatchObject({ agent_slug: slug, previous_owner: org.orgUuid, new_owner: other.orgUuid, transfer_receipt_id: expect.stringMatching(/^atr_/) })
        expect(Date.parse(moved.transferred_at)).not.toBeNaN()

        expect((yield* api.agents.get({ params: { agent_slug: slug }, responseMode: "response-only" })).status).toBe(404)
        const theirs = yield* (yield* client(other.key)).agents.get({ params: { agent_slug: slug } })
        expect(theirs).toMatchObject({ owner_id: other.orgUuid, status: "active" })
        const after = yield* currentCredential(slug)
        expect(after.id).not.toBe(before.id)
        expect(after.credentialSubject.ownerOrganization).toBe(other.orgUuid)

        // The receipt verifies offline with the platform key from the JWKS; both organizations' audit logs name it.
        const stored = yield* Effect.promise(() =>
          server.run(
            Effect.gen(function* () {
              const sql = yield* SqlClient.SqlClient
              const [receipt] = yield* sql`SELECT signed_payload, payload_hash, signature, public_key_id FROM agent_transfers WHERE transfer_receipt_id = ${moved.transfer_receipt_id}`
              const audits = yield* sql`SELECT org_uuid, event FROM audit_log WHERE target = ${slug} AND event LIKE 'agent.transferred%' ORDER BY event`
              return { receipt: receipt as any, audits }
            })
          )
        )
        const jwks = yield* (yield* client()).receiptsPublic.jwks({})
        const jwk = jwks.keys.find((key) => key.kid === stored.receipt.public_key_id)!
        const publicKey = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: jwk.x }, format: "jwk" })
        const bytes = Buffer.from(stored.receipt.signed_payload, "utf8")
        expect(verify(null, bytes, publicKey, Buffer.from(stored.receipt.signature.slice(8), "base64url"))).toBe(true)
        expect(stored.receipt.payload_hash).toBe(`sha256:${createHash("sha256").update(bytes).digest("hex")}`)
        const payload = JSON.parse(stored.receipt.signed_payload)
        expect(payload).toMatchObject({ receipt_type: "agent_transfer", receipt_version: "1.0", agent_slug: slug, previous_owner: org.orgUuid, new_owner: other.orgUuid })
        expect(payload.transferred_at).toBe(moved.transferred_at)
        // The stored text is the JCS bytes, and the portable verifier accepts the receipt.
        expect(canonicalJson(payload)).toBe(stored.receipt.signed_payload)
        expect(verifyReceipt({ signed_payload: payload, payload_hash: stored.receipt.payload_hash, signature: stored.receipt.signature, public_key: jwk }).errors).toEqual([])
        expect(stored.audits).toEqual([
          { org_uuid: other.orgUuid, event: "agent.transferred_in" },
          { org_uuid: org.orgUuid, event: "agent.transferred_out" }
        ])
      })
    )

    it.effect("refuses a decommissioned agent (422) and a transfer to its own organization (422)", () =>
      Effect.gen(function* () {
        const { org, other } = yield* Orgs
        const api = yield* client(org.key)
        const slug = uniqueSlug("stay")
        yield* api.agents.register({ payload: { agent_slug: slug, name: "Stays" } })
        const self = yield* transfer(org.key, slug, { target_org_id: org.orgUuid, signature: sign(org.key, slug, org.orgUuid, org.orgUuid) })
        expect(self.status).toBe(422)
        yield* api.agents.decommission({ params: { agent_slug: slug }, payload: { reason: "done" } })
        const retired = yield* transfer(org.key, slug, { target_org_id: other.orgUuid, signature: sign(org.key, slug, org.orgUuid, other.orgUuid) })
        expect(retired.status).toBe(422)
        expect(retired.body.code).toBe("AGENT_DECOMMISSIONED")
      })
    )
  })
})
