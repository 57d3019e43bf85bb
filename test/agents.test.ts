/**
 * The agent registry end to end over HTTP (spec 001 "Agents"): registration with its slug rules
 * and the SDK's `display_name`, lists with action counts, updates, semantic versions,
 * decommissioning (irreversible, then notarize, versions answer 422), the agent's actions, the
 * public page, and decommission racing 50 in-flight notarizes of the same agent.
 */
import { createHash, createHmac, createPublicKey, verify } from "node:crypto"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { canonicalJson, verifyReceipt } from "../protocol/verifier/index.js"
import { addMember, call, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { useServer } from "./support/server.js"

const server = useServer()
const org = useFixture(() => registerOrg(server.url, "Agents Org"))
const other = useFixture(() => registerOrg(server.url, "Other Agents Org"))

let slugCounter = 0
const uniqueSlug = (label: string) => `${label}-${process.pid}-${Date.now().toString(36)}-${++slugCounter}`
const hash = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`

const register = (token: string, body: Record<string, unknown>) => call(server.url, "POST", "/api/v1/agents", { token, body })
const authorize = (token: string, agentId: string) =>
  call(server.url, "POST", "/api/v1/actions", { token, body: { action_type: "email.send", details: "send the report", agent_id: agentId } })
const notarize = (token: string, actionUuid: string) =>
  call(server.url, "POST", `/api/v1/actions/${actionUuid}/notarize`, { token, body: { outcome: "completed" } })

describe("registration", () => {
  it("registers an agent and answers the spec's fields, owner_id being the organization", async () => {
    const slug = uniqueSlug("mailer")
    const reply = await register(org.key, {
      agent_slug: slug,
      name: "Mailer",
      description: "Sends the weekly report",
      capabilities: ["email.send", "email.send", "files.read"],
      metadata: { team: "ops" },
      unknown_field: "ignored"
    })
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

    const got = await call(server.url, "GET", `/api/v1/agents/${slug}`, { token: org.key })
    expect(got.status).toBe(200)
    expect(got.body).toMatchObject({ agent_slug: slug, metadata: { team: "ops" }, versions: [], current_version: null, action_count: 0 })
  })

  it("accepts the published SDK's display_name for name", async () => {
    const slug = uniqueSlug("sdk")
    const reply = await register(org.key, { agent_slug: slug, display_name: "From the SDK" })
    expect(reply.status).toBe(201)
    expect(reply.body.name).toBe("From the SDK")
    const renamed = await call(server.url, "PUT", `/api/v1/agents/${slug}`, { token: org.key, body: { display_name: "Renamed" } })
    expect(renamed.status).toBe(200)
    expect(renamed.body.name).toBe("Renamed")
  })

  it("refuses malformed slugs with 400 INVALID_SLUG and a missing name with 422", async () => {
    for (const slug of ["ab", "Upper-Case", "under_score", "x".repeat(65), "with space", "public"]) {
      const reply = await register(org.key, { agent_slug: slug, name: "Bad" })
      expect(reply.status, slug).toBe(400)
      expect(reply.body.code, slug).toBe("INVALID_SLUG")
    }
    const noName = await register(org.key, { agent_slug: uniqueSlug("noname") })
    expect(noName.status).toBe(422)
    expect(noName.body.code).toBe("VALIDATION_ERROR")
    const tooMuch = await register(org.key, { agent_slug: uniqueSlug("big"), name: "Big", metadata: { blob: "x".repeat(20_000) } })
    expect(tooMuch.status).toBe(422)
  })

  it("slugs are unique across organizations: 409 SLUG_TAKEN", async () => {
    const slug = uniqueSlug("taken")
    expect((await register(org.key, { agent_slug: slug, name: "First" })).status).toBe(201)
    const again = await register(org.key, { agent_slug: slug, name: "Again" })
    expect(again.status).toBe(409)
    expect(again.body.code).toBe("SLUG_TAKEN")
    const elsewhere = await register(other.key, { agent_slug: slug, name: "Elsewhere" })
    expect(elsewhere.status).toBe(409)
    expect(elsewhere.body.code).toBe("SLUG_TAKEN")
  })
})

describe("lists, updates and versions", () => {
  it("lists the organization's agents with action counts, under agents and data", async () => {
    const fresh = await registerOrg(server.url, "List Org")
    const slugs = [uniqueSlug("list-a"), uniqueSlug("list-b"), uniqueSlug("list-c")]
    for (const slug of slugs) expect((await register(fresh.key, { agent_slug: slug, name: slug })).status).toBe(201)
    for (let i = 0; i < 2; i++) expect((await authorize(fresh.key, slugs[0]!)).status).toBe(201)

    const page = await call(server.url, "GET", "/api/v1/agents?per_page=2", { token: fresh.key })
    expect(page.status).toBe(200)
    expect(page.body.pagination).toEqual({ page: 1, per_page: 2, total: 3, has_more: true })
    expect(page.body.agents).toEqual(page.body.data)
    expect(page.body.agents.map((agent: any) => agent.agent_slug)).toEqual([slugs[2], slugs[1]])
    const second = await call(server.url, "GET", "/api/v1/agents?page=2&per_page=2", { token: fresh.key })
    expect(second.body.agents).toEqual([expect.objectContaining({ agent_slug: slugs[0], action_count: 2, status: "active", current_version: null })])
    expect((await call(server.url, "GET", "/api/v1/agents?per_page=101", { token: fresh.key })).status).toBe(422)
    // Another organization sees none of them.
    const foreign = await call(server.url, "GET", "/api/v1/agents", { token: other.key })
    expect(foreign.body.agents.map((agent: any) => agent.agent_slug)).not.toContain(slugs[0])
  })

  it("updates: metadata replaces, omitted fields stay", async () => {
    const slug = uniqueSlug("update")
    await register(org.key, { agent_slug: slug, name: "Before", description: "kept", capabilities: ["a"], metadata: { one: 1, two: 2 } })
    const updated = await call(server.url, "PUT", `/api/v1/agents/${slug}`, { token: org.key, body: { capabilities: ["b", "c"], metadata: { three: 3 } } })
    expect(updated.status).toBe(200)
    expect(updated.body).toMatchObject({ name: "Before", description: "kept", capabilities: ["b", "c"], metadata: { three: 3 } })
    const missing = await call(server.url, "PUT", `/api/v1/agents/${uniqueSlug("nobody")}`, { token: org.key, body: { name: "x" } })
    expect(missing.status).toBe(404)
    expect(missing.body.code).toBe("NOT_FOUND")
  })

  it("publishes semantic versions, newest first; a repeated version is 409 VERSION_EXISTS", async () => {
    const slug = uniqueSlug("versions")
    await register(org.key, { agent_slug: slug, name: "Versioned" })
    const first = await call(server.url, "POST", `/api/v1/agents/${slug}/versions`, {
      token: org.key,
      body: { version: "1.0.0", instruction_hash: hash("v1"), changelog: "first" }
    })
    expect(first.status).toBe(201)
    expect(first.body).toMatchObject({ agent_slug: slug, version: "1.0.0", instruction_hash: hash("v1"), changelog: "first" })
    const second = await call(server.url, "POST", `/api/v1/agents/${slug}/versions`, { token: org.key, body: { version: "1.1.0-beta.1", instruction_hash: hash("v2") } })
    expect(second.status).toBe(201)
    expect(second.body.changelog).toBeNull()

    const again = await call(server.url, "POST", `/api/v1/agents/${slug}/versions`, { token: org.key, body: { version: "1.0.0", instruction_hash: hash("v3") } })
    expect(again.status).toBe(409)
    expect(again.body.code).toBe("VERSION_EXISTS")
    for (const body of [{ version: "1.0", instruction_hash: hash("x") }, { version: "01.0.0", instruction_hash: hash("x") }, { version: "2.0.0" }]) {
      const bad = await call(server.url, "POST", `/api/v1/agents/${slug}/versions`, { token: org.key, body })
      expect(bad.status, JSON.stringify(body)).toBe(422)
    }

    const list = await call(server.url, "GET", `/api/v1/agents/${slug}/versions`, { token: org.key })
    expect(list.status).toBe(200)
    expect(list.body.versions.map((v: any) => v.version)).toEqual(["1.1.0-beta.1", "1.0.0"])
    const agent = await call(server.url, "GET", `/api/v1/agents/${slug}`, { token: org.key })
    expect(agent.body.current_version).toBe("1.1.0-beta.1")
    expect(agent.body.versions).toHaveLength(2)
  })
})

describe("decommission", () => {
  it("needs a reason (422), an owner or admin (403), and is irreversible; afterwards notarize and versions answer 422", async () => {
    const slug = uniqueSlug("retire")
    await register(org.key, { agent_slug: slug, name: "Retiring" })
    const pending = await authorize(org.key, slug)
    expect(pending.status).toBe(201)

    expect((await call(server.url, "POST", `/api/v1/agents/${slug}/decommission`, { token: org.key, body: {} })).status).toBe(422)
    const member = await addMember(server.url, org, "member")
    const byMember = await call(server.url, "POST", `/api/v1/agents/${slug}/decommission`, { token: member.token, body: { reason: "no" } })
    expect(byMember.status).toBe(403)

    const done = await call(server.url, "POST", `/api/v1/agents/${slug}/decommission`, { token: org.key, body: { reason: "replaced by v2" } })
    expect(done.status).toBe(200)
    expect(done.body).toMatchObject({ agent_slug: slug, status: "decommissioned", reason: "replaced by v2" })
    expect(Date.parse(done.body.decommissioned_at)).not.toBeNaN()

    const twice = await call(server.url, "POST", `/api/v1/agents/${slug}/decommission`, { token: org.key, body: { reason: "again" } })
    expect(twice.status).toBe(422)
    expect(twice.body.code).toBe("AGENT_DECOMMISSIONED")

    const late = await notarize(org.key, pending.body.action_uuid)
    expect(late.status).toBe(422)
    expect(late.body.code).toBe("AGENT_DECOMMISSIONED")
    const version = await call(server.url, "POST", `/api/v1/agents/${slug}/versions`, { token: org.key, body: { version: "2.0.0", instruction_hash: hash("late") } })
    expect(version.status).toBe(422)
    expect(version.body.code).toBe("AGENT_DECOMMISSIONED")

    const agent = await call(server.url, "GET", `/api/v1/agents/${slug}`, { token: org.key })
    expect(agent.body).toMatchObject({ status: "decommissioned", decommissioned_at: done.body.decommissioned_at })
  })

  it("racing 50 in-flight notarizes: each succeeded before the decommission or answered 422, and the chain has no gap", async () => {
    const slug = uniqueSlug("race")
    await register(org.key, { agent_slug: slug, name: "Racer" })
    const ids: Array<string> = []
    for (let i = 0; i < 50; i++) {
      const reply = await authorize(org.key, slug)
      expect(reply.status).toBe(201)
      ids.push(reply.body.action_uuid)
    }
    // Half in flight, then the decommission together with the other half, so both orders occur.
    const notarizes = ids.slice(0, 25).map((id) => notarize(org.key, id))
    await Promise.race(notarizes)
    const decommission = call(server.url, "POST", `/api/v1/agents/${slug}/decommission`, { token: org.key, body: { reason: "race" } })
    notarizes.push(...ids.slice(25).map((id) => notarize(org.key, id)))
    const [answers, retired] = await Promise.all([Promise.all(notarizes), decommission])
    expect(retired.status).toBe(200)
    const decommissionedAt = Date.parse(retired.body.decommissioned_at)

    const succeeded = answers.filter((reply) => reply.status === 200)
    const refused = answers.filter((reply) => reply.status === 422)
    expect(succeeded.length + refused.length).toBe(50)
    for (const reply of refused) expect(reply.body.code).toBe("AGENT_DECOMMISSIONED")

    // Every receipt was minted before the decommission took effect, and the agent's chain is 1..n without a gap.
    const sequences: Array<number> = []
    for (const reply of succeeded) {
      const action = await call(server.url, "GET", `/api/v1/actions/${reply.body.action_uuid}`, { token: org.key })
      expect(Date.parse(action.body.receipt.created_at)).toBeLessThanOrEqual(decommissionedAt)
      sequences.push(action.body.agent_sequence)
    }
    sequences.sort((a, b) => a - b)
    expect(sequences).toEqual(sequences.map((_, index) => index + 1))
    // The refused ones are still authorized: nothing was half-written.
    for (const reply of refused.slice(0, 5)) {
      const uuid = ids[answers.indexOf(reply)]!
      const action = await call(server.url, "GET", `/api/v1/actions/${uuid}`, { token: org.key })
      expect(action.body.status).toBe("authorized")
    }
  }, 60_000)
})

describe("the agent's actions and its public page", () => {
  it("lists the agent's actions with filters, and counts them on the public page", async () => {
    const slug = uniqueSlug("worker")
    await register(org.key, { agent_slug: slug, name: "Worker", description: "does work", capabilities: ["work"] })
    const first = await authorize(org.key, slug)
    await authorize(org.key, slug)
    await authorize(org.key, uniqueSlug("someone-else"))
    expect((await notarize(org.key, first.body.action_uuid)).status).toBe(200)

    const actions = await call(server.url, "GET", `/api/v1/agents/${slug}/actions`, { token: org.key })
    expect(actions.status).toBe(200)
    expect(actions.body.pagination.total).toBe(2)
    expect(actions.body.actions).toEqual(actions.body.data)
    expect(actions.body.actions.every((action: any) => action.agent_id === slug)).toBe(true)
    const notarized = await call(server.url, "GET", `/api/v1/agents/${slug}/actions?status=notarized`, { token: org.key })
    expect(notarized.body.actions.map((action: any) => action.action_uuid)).toEqual([first.body.action_uuid])

    const page = await call(server.url, "GET", `/api/v1/agents/public/${slug}`)
    expect(page.status).toBe(200)
    expect(page.body).toMatchObject({
      agent_slug: slug,
      name: "Worker",
      description: "does work",
      capabilities: ["work"],
      status: "active",
      current_version: null,
      owner_verified: true,
      action_count: 2
    })
    expect(page.body.metadata).toBeUndefined()
    expect(page.body.owner_id).toBeUndefined()
    expect((await call(server.url, "GET", `/api/v1/agents/public/${uniqueSlug("ghost")}`)).status).toBe(404)
  })

  it("another organization gets 404 for the agent and everything under it", async () => {
    const slug = uniqueSlug("private")
    await register(org.key, { agent_slug: slug, name: "Private" })
    const probes: Array<[string, string, unknown?]> = [
      ["GET", `/api/v1/agents/${slug}`],
      ["PUT", `/api/v1/agents/${slug}`, { name: "Mine now" }],
      ["GET", `/api/v1/agents/${slug}/versions`],
      ["POST", `/api/v1/agents/${slug}/versions`, { version: "9.9.9", instruction_hash: hash("x") }],
      ["GET", `/api/v1/agents/${slug}/actions`],
      ["POST", `/api/v1/agents/${slug}/decommission`, { reason: "hostile" }]
    ]
    for (const [method, path, body] of probes) {
      const reply = await call(server.url, method, path, { token: other.token, body })
      expect(reply.status, `${method} ${path}`).toBe(404)
    }
    const still = await call(server.url, "GET", `/api/v1/agents/${slug}`, { token: org.key })
    expect(still.body).toMatchObject({ name: "Private", status: "active", versions: [] })
  })

  it("keys without the agents scopes are refused", async () => {
    const key = await call(server.url, "POST", "/api/v1/api-keys", { token: org.token, body: { name: "actions only", scopes: ["actions:read"] } })
    expect(key.status).toBe(201)
    expect((await call(server.url, "GET", "/api/v1/agents", { token: key.body.key })).status).toBe(403)
    expect((await register(key.body.key, { agent_slug: uniqueSlug("scoped"), name: "No" })).status).toBe(403)
  })
})

describe("transfer", () => {
  const sign = (credential: string, slug: string, from: string, to: string) =>
    `hmac-sha256:${createHmac("sha256", credential).update(JSON.stringify({ agent_slug: slug, from_org: from, to_org: to })).digest("hex")}`
  const transfer = (token: string, slug: string, body: unknown) => call(server.url, "POST", `/api/v1/agents/${slug}/transfer`, { token, body })

  it("moves the agent with the owner's signature: new owner, reissued credential, signed receipt, audited on both sides", async () => {
    const slug = uniqueSlug("moving")
    await register(org.key, { agent_slug: slug, name: "Mover", capabilities: ["pay"] })
    const before = (await call(server.url, "GET", `/api/v1/agents/${slug}/credential`)).body.credential

    expect((await transfer(org.key, slug, { target_org_id: other.orgUuid })).status).toBe(422)
    const forged = await transfer(org.key, slug, { target_org_id: other.orgUuid, signature: sign("not-my-key", slug, org.orgUuid, other.orgUuid) })
    expect(forged.status).toBe(400)
    expect(forged.body.code).toBe("INVALID_SIGNATURE")
    // A signature over other terms (another target) does not transfer to this one.
    const wrongTerms = await transfer(org.key, slug, { target_org_id: other.orgUuid, signature: sign(org.key, slug, org.orgUuid, "org_elsewhere") })
    expect(wrongTerms.body.code).toBe("INVALID_SIGNATURE")
    const nowhere = await transfer(org.key, slug, { target_org_id: "org_nowhere", signature: sign(org.key, slug, org.orgUuid, "org_nowhere") })
    expect(nowhere.status).toBe(404)
    expect(nowhere.body.code).toBe("TARGET_ORG_NOT_FOUND")
    const member = await addMember(server.url, org, "member")
    expect((await transfer(member.key, slug, { target_org_id: other.orgUuid, signature: sign(member.key, slug, org.orgUuid, other.orgUuid) })).status).toBe(403)

    const moved = await transfer(org.key, slug, { target_org_id: other.orgUuid, signature: sign(org.key, slug, org.orgUuid, other.orgUuid) })
    expect(moved.status).toBe(200)
    expect(moved.body).toMatchObject({ agent_slug: slug, previous_owner: org.orgUuid, new_owner: other.orgUuid, transfer_receipt_id: expect.stringMatching(/^atr_/) })
    expect(Date.parse(moved.body.transferred_at)).not.toBeNaN()

    expect((await call(server.url, "GET", `/api/v1/agents/${slug}`, { token: org.key })).status).toBe(404)
    const theirs = await call(server.url, "GET", `/api/v1/agents/${slug}`, { token: other.key })
    expect(theirs.body).toMatchObject({ owner_id: other.orgUuid, status: "active" })
    const after = (await call(server.url, "GET", `/api/v1/agents/${slug}/credential`)).body.credential
    expect(after.id).not.toBe(before.id)
    expect(after.credentialSubject.ownerOrganization).toBe(other.orgUuid)

    // The receipt verifies offline with the platform key from the JWKS; both organizations' audit logs name it.
    const stored = await server.run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const [receipt] = yield* sql`SELECT signed_payload, payload_hash, signature, public_key_id FROM agent_transfers WHERE transfer_receipt_id = ${moved.body.transfer_receipt_id}`
        const audits = yield* sql`SELECT org_uuid, event FROM audit_log WHERE target = ${slug} AND event LIKE 'agent.transferred%' ORDER BY event`
        return { receipt: receipt as any, audits }
      })
    )
    const jwks = await call(server.url, "GET", "/api/v1/.well-known/jwks.json")
    const jwk = jwks.body.keys.find((key: { kid: string }) => key.kid === stored.receipt.public_key_id)
    const publicKey = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: jwk.x }, format: "jwk" })
    const bytes = Buffer.from(stored.receipt.signed_payload, "utf8")
    expect(verify(null, bytes, publicKey, Buffer.from(stored.receipt.signature.slice(8), "base64url"))).toBe(true)
    expect(stored.receipt.payload_hash).toBe(`sha256:${createHash("sha256").update(bytes).digest("hex")}`)
    const payload = JSON.parse(stored.receipt.signed_payload)
    expect(payload).toMatchObject({ receipt_type: "agent_transfer", receipt_version: "1.0", agent_slug: slug, previous_owner: org.orgUuid, new_owner: other.orgUuid })
    expect(payload.transferred_at).toBe(moved.body.transferred_at)
    // The stored text is the JCS bytes, and the portable verifier accepts the receipt.
    expect(canonicalJson(payload)).toBe(stored.receipt.signed_payload)
    expect(verifyReceipt({ signed_payload: payload, payload_hash: stored.receipt.payload_hash, signature: stored.receipt.signature, public_key: jwk }).errors).toEqual([])
    expect(stored.audits).toEqual([
      { org_uuid: other.orgUuid, event: "agent.transferred_in" },
      { org_uuid: org.orgUuid, event: "agent.transferred_out" }
    ])
  })

  it("refuses a decommissioned agent (422) and a transfer to its own organization (422)", async () => {
    const slug = uniqueSlug("stay")
    await register(org.key, { agent_slug: slug, name: "Stays" })
    const self = await transfer(org.key, slug, { target_org_id: org.orgUuid, signature: sign(org.key, slug, org.orgUuid, org.orgUuid) })
    expect(self.status).toBe(422)
    await call(server.url, "POST", `/api/v1/agents/${slug}/decommission`, { token: org.key, body: { reason: "done" } })
    const retired = await transfer(org.key, slug, { target_org_id: other.orgUuid, signature: sign(org.key, slug, org.orgUuid, other.orgUuid) })
    expect(retired.status).toBe(422)
    expect(retired.body.code).toBe("AGENT_DECOMMISSIONED")
  })
})
