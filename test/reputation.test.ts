/**
 * Reputation end to end (CONTRACT-sdk-beyond §3) over the typed client: the four public routes
 * (credentials ignored, any organization's agent), snapshots answered again while the inputs stand
 * still, the inputs counted from the organizations that owned the agent at the time, a property
 * run where an independent formula recomputes the score from verify's inputs and score_hash
 * verifies with the published JWKS key, and attestations signed by a counterparty whose did:web
 * document a local HTTPS server publishes: every refusal in the contract's order, the 10 per
 * minute per IP limit (requests sent from distinct loopback addresses), the exact text stored.
 */
import { execFile } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { expect } from "@effect/vitest"
import * as ed from "@noble/ed25519"
import bs58 from "bs58"
import canonicalize from "canonicalize"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import { HttpApiClient } from "effect/http-api"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql"
import fc from "fast-check"
import { Agent, fetch as undiciFetch } from "undici"
import { GatewayApi } from "../protocol/api.js"
import { transferSignature } from "../src/agents/transfer.js"
import { answer, client, type GatewayClient, register } from "./support/api.js"
import type { Org } from "./support/client.js"
import { useDidHost } from "./support/did-host.js"
import { liveLayer } from "./support/effect.js"
import { eventuallyEffect } from "./support/eventually.js"
import { expectedScore, expectedTier } from "./support/reputation.js"
import { Gateway } from "./support/server.js"

const multibase = (publicKey: Uint8Array) => `z${bs58.encode(Buffer.concat([Buffer.from([0xed, 0x01]), publicKey]))}`
const sha256 = (text: string | Uint8Array) => `sha256:${createHash("sha256").update(text).digest("hex")}`
const sign = (text: string, secretKey: Uint8Array) =>
  Effect.promise(async () => `ed25519:${Buffer.from(await ed.signAsync(new TextEncoder().encode(text), secretKey)).toString("base64url")}`)

/* The counterparties' keys and their host, which publishes their DID documents over HTTPS. */
const bankKey = ed.utils.randomSecretKey()
const otherKey = ed.utils.randomSecretKey()
const { didAt, publish, certPem } = useDidHost()

interface DidsOfParties {
  /** One Ed25519VerificationKey2020 key (`bankKey`). */
  readonly bank: string
  /** A JsonWebKey2020 method first, then `otherKey` as `#key-2`. */
  readonly multi: string
  readonly empty: string
  readonly jwkOnly: string
  /** Not published: does not resolve. */
  readonly missing: string
}

class Parties extends Context.Service<Parties, { readonly a: Org; readonly b: Org; readonly c: Org; readonly dids: DidsOfParties }>()("test/reputation/Parties") {}

const denyForbidden = { name: "deny forbidden", mode: "rules", decision: "deny", conditions: [{ field: "action_type", op: "eq", value: "forbidden" }], activate: true } as const

const setUp = Layer.effect(
  Parties,
  Effect.gen(function* () {
    const key = (id: string, secret: Uint8Array) =>
      Effect.map(Effect.promise(() => ed.getPublicKeyAsync(secret)), (raw) => ({ id, type: "Ed25519VerificationKey2020", publicKeyMultibase: multibase(raw) }))
    const jwk = (id: string) => ({ id, type: "JsonWebKey2020", publicKeyJwk: { kty: "OKP", crv: "Ed25519", x: "AAAA" } })
    const dids: DidsOfParties = {
      bank: publish("partners/bank", [yield* key(`${didAt("partners/bank")}#key-1`, bankKey)]),
      multi: publish("partners/multi", [jwk(`${didAt("partners/multi")}#jwk`), yield* key(`${didAt("partners/multi")}#key-2`, otherKey)]),
      empty: publish("partners/empty", []),
      jwkOnly: publish("partners/jwk", [jwk(`${didAt("partners/jwk")}#jwk`)]),
      missing: didAt("partners/nobody")
    }
    const { a, b, c } = yield* Effect.all({ a: register("Agent Owner"), b: register("Buyer"), c: register("Bystander") })
    for (const org of [a, b, c]) yield* (yield* client(org.key)).policies.create({ payload: denyForbidden })
    return { a, b, c, dids }
  })
).pipe(
  Layer.provideMerge(
    // Built after the TLS fixture above, whose certificate it trusts.
    Layer.suspend(() => {
      const caFile = `/tmp/reputation-ca-${process.pid}.pem`
      writeFileSync(caFile, certPem())
      return Gateway.layer({ OUTBOUND_CA_FILE: caFile, OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8", APPROVAL_SWEEP_MS: "100" })
    })
  )
)

/* Each test speaks from loopback addresses of its own, so the per-IP attestation limit is its own too. */
let nextAddress = 10
const freshAddress = () => `127.0.${Math.floor(nextAddress / 250)}.${(nextAddress++ % 250) + 2}`
const fromAddress = new Map<string, GatewayClient>()
/** The typed client, anonymous, its requests sent from `ip`. */
const from = (ip: string): Effect.Effect<GatewayClient, never, Gateway> =>
  Effect.flatMap(Gateway, (server) => {
    const cached = fromAddress.get(ip)
    if (cached !== undefined) return Effect.succeed(cached)
    const dispatcher = new Agent({ localAddress: ip })
    const fetchFrom = ((input: Parameters<typeof undiciFetch>[0], init?: Parameters<typeof undiciFetch>[1]) =>
      undiciFetch(input, { ...init, dispatcher })) as unknown as typeof globalThis.fetch
    return HttpApiClient.make(GatewayApi, { baseUrl: server.url }).pipe(
      Effect.provide(FetchHttpClient.layer),
      Effect.provideService(FetchHttpClient.Fetch, fetchFrom),
      Effect.tap((made) => Effect.sync(() => fromAddress.set(ip, made)))
    )
  })

let agents = 0
const newAgent = (org: Org, label = "rep") =>
  Effect.gen(function* () {
    const slug = `${label}-${process.pid}-${++agents}`
    yield* (yield* client(org.key)).agents.register({ payload: { agent_slug: slug, name: `Agent ${slug}` } })
    return slug
  })

type Kind = "notarized" | "failed" | "policy" | "human_denied" | "human_approved" | "authorized" | "pending"

/** One action of `agentId` in `org`, taken to `kind`; its id. */
const act = (org: Org, agentId: string, kind: Kind) =>
  Effect.gen(function* () {
    const api = yield* client(org.key)
    if (kind === "policy") {
      const denied = yield* answer(api.actions.authorize({ headers: {}, payload: { action_type: "forbidden", details: "d", agent_id: agentId }, responseMode: "response-only" }))
      expect(denied.status).toBe(403)
      return denied.body.details.action_uuid as string
    }
    const approval = kind === "human_denied" || kind === "human_approved" || kind === "pending"
    const { action_uuid } = yield* api.actions.authorize({
      headers: {},
      payload: { action_type: "work", details: `${kind} ${Math.random()}`, agent_id: agentId, ...(approval ? { require_approval: true } : {}) }
    })
    const params = { action_uuid }
    const owner = yield* client(org.token)
    if (kind === "human_denied") yield* owner.actions.dashboardDeny({ params, query: { reason: "no" } })
    if (kind === "human_approved") yield* owner.actions.dashboardApprove({ params })
    if (kind === "notarized" || kind === "human_approved") yield* api.actions.notarize({ params, payload: { outcome: "completed" } })
    if (kind === "failed") yield* api.actions.notarize({ params, payload: { outcome: "failed" } })
    return action_uuid
  })

const many = (org: Org, agentId: string, kind: Kind, times: number) =>
  Effect.forEach(Array.from({ length: times }), () => act(org, agentId, kind), { discard: true })

const anonymous = Effect.flatMap(Gateway, () => from("127.0.0.1"))
const verifyOf = (slug: string) => Effect.flatMap(anonymous, (api) => api.reputation.verify({ params: { agent_slug: slug } }))
const currentOf = (slug: string) => Effect.flatMap(anonymous, (api) => api.reputation.current({ params: { agent_slug: slug } }))
const historyOf = (slug: string, query: { page?: number; per_page?: number } = {}) =>
  Effect.flatMap(anonymous, (api) => api.reputation.history({ params: { agent_slug: slug }, query }))

/** A statement of `slug`'s action by `did`, and the request carrying it signed by `key`. */
const signedBody = (slug: string, actionUuid: string, did: string, key: Uint8Array, statement: Record<string, unknown> = {}) =>
  Effect.gen(function* () {
    const attestation = JSON.stringify({ agent_slug: slug, action_uuid: actionUuid, counterparty_did: did, outcome: "success", attested_at: new Date().toISOString(), ...statement })
    return { counterparty_did: did, action_uuid: actionUuid, attestation, signature: yield* sign(attestation, key) }
  })

const without = <T extends object>(value: T, key: keyof T) => Object.fromEntries(Object.entries(value).filter(([k]) => k !== key))

/** The attestation as answered (status and body), sent from `ip`. */
const attest = (ip: string, slug: string, body: unknown) =>
  Effect.flatMap(from(ip), (api) => answer(api.reputation.attest({ params: { agent_slug: slug }, payload: body, responseMode: "response-only" })))

const zeroInputs = {
  notarized: 0,
  failed: 0,
  denied_by_policy: 0,
  denied_by_human: 0,
  human_approved: 0,
  attested_success: 0,
  attested_failure: 0,
  attestations: 0,
  age_days: 0,
  decommissioned: false
}

/** The published key (JWKS) with this id, as raw bytes. */
const publishedKey = (kid: string) =>
  Effect.gen(function* () {
    const jwks = yield* (yield* anonymous).receiptsPublic.jwks()
    const jwk = jwks.keys.find((k) => k.kid === kid)
    expect(jwk, `kid ${kid} in the JWKS`).toBeDefined()
    return Buffer.from(jwk!.x, "base64url")
  })

/** score_hash is sha256 of the JCS of {formula_version, inputs, score}; the signature verifies with the JWKS key. */
const expectSignedLikeAReceipt = (answer: { formula_version: string; inputs: object; score: number; score_hash: string; signature: string; public_key_id: string }) =>
  Effect.gen(function* () {
    const jcs = canonicalize({ formula_version: answer.formula_version, inputs: answer.inputs, score: answer.score })!
    expect(answer.score_hash).toBe(sha256(jcs))
    const key = yield* publishedKey(answer.public_key_id)
    const valid = yield* Effect.promise(() => ed.verifyAsync(Buffer.from(answer.signature.slice("ed25519:".length), "base64url"), new TextEncoder().encode(jcs), key))
    expect(valid).toBe(true)
  })

liveLayer(setUp)((it) => {
  it.describe("the public reads", () => {
    it.effect("reputation, verify, history and the agent card agree; unchanged inputs answer the same snapshot", () =>
      Effect.gen(function* () {
        const { a } = yield* Parties
        const slug = yield* newAgent(a)
        yield* act(a, slug, "notarized")
        yield* act(a, slug, "failed")

        const [first, reply] = yield* (yield* anonymous).reputation.current({ params: { agent_slug: slug }, responseMode: "decoded-and-response" })
        expect(reply.status).toBe(200)
        const inputs = { ...zeroInputs, notarized: 1, failed: 1 }
        const score = expectedScore(inputs)
        expect(first).toMatchObject({ agent_slug: slug, score, tier: expectedTier(inputs, score), total_attestations: 0, formula_version: "1.0" })
        expect(first.snapshot_uuid).toMatch(/^rep_/)
        expect(first.computed_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)

        const verified = yield* verifyOf(slug)
        expect(verified).toMatchObject({ agent_slug: slug, score, tier: first.tier, score_hash: first.score_hash, signature: first.signature, computed_at: first.computed_at })
        expect(verified.inputs).toEqual({ agent_slug: slug, ...inputs, computed_at: first.computed_at })
        yield* expectSignedLikeAReceipt(verified)

        const card = yield* (yield* anonymous).didsPublic.agentCard({ params: { agent_slug: slug } })
        expect(card.aira.reputation_score).toBe(score)
        expect(card.platform.reputation_score).toBe(score)
        // Read again and again with nothing new: one snapshot, answered each time.
        expect((yield* currentOf(slug)).snapshot_uuid).toBe(first.snapshot_uuid)
        const history = yield* historyOf(slug)
        expect(history.pagination).toEqual({ page: 1, per_page: 20, total: 1, has_more: false })
        expect(history.snapshots).toEqual(history.data)
        expect(history.snapshots[0]).toMatchObject({ snapshot_uuid: first.snapshot_uuid, trigger: "read", score, inputs: verified.inputs, score_hash: first.score_hash })

        // Something new: a new snapshot, listed first.
        yield* act(a, slug, "notarized")
        const second = yield* verifyOf(slug)
        expect(second.inputs.notarized).toBe(2)
        expect(second.score).toBe(expectedScore({ ...inputs, notarized: 2 }))
        yield* expectSignedLikeAReceipt(second)
        const after = yield* historyOf(slug)
        expect(after.snapshots.map((s) => s.computed_at)).toEqual([second.computed_at, first.computed_at])
        expect(after.snapshots[1]!.snapshot_uuid).toBe(first.snapshot_uuid)
        const paged = yield* historyOf(slug, { page: 2, per_page: 1 })
        expect(paged.pagination).toEqual({ page: 2, per_page: 1, total: 2, has_more: false })
        expect(paged.data.map((s) => s.snapshot_uuid)).toEqual([first.snapshot_uuid])
      })
    )

    it.effect("ignore credentials (any, even invalid ones) and read other organizations' agents", () =>
      Effect.gen(function* () {
        const { a, b } = yield* Parties
        const slug = yield* newAgent(a)
        const theirs = yield* client(b.key)
        const garbage = yield* client("svc_live_not_a_real_key_at_all")
        const expired = yield* client("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJub2JvZHkifQ.invalid")
        const seen = new Set<string>()
        for (const api of [theirs, garbage, expired, yield* client(a.key)]) {
          const [current, reply] = yield* api.reputation.current({ params: { agent_slug: slug }, responseMode: "decoded-and-response" })
          expect(reply.status).toBe(200)
          seen.add(current.snapshot_uuid)
          expect((yield* api.reputation.verify({ params: { agent_slug: slug }, responseMode: "decoded-and-response" }))[1].status).toBe(200)
          expect((yield* api.reputation.history({ params: { agent_slug: slug }, query: {}, responseMode: "decoded-and-response" }))[1].status).toBe(200)
        }
        expect(seen.size).toBe(1)
        // An attestation sent with another organization's key is judged on its body alone.
        const refused = yield* answer(theirs.reputation.attest({ params: { agent_slug: slug }, payload: {}, responseMode: "response-only" }))
        expect(refused.status).toBe(422)
      })
    )

    it.effect(
      "verify and a history snapshot, saved as sent, pass `npm run verify` against the JWKS alone; one byte changed fails it",
      () =>
        Effect.gen(function* () {
          const server = yield* Gateway
          const { a } = yield* Parties
          const slug = yield* newAgent(a)
          yield* many(a, slug, "notarized", 3)
          yield* act(a, slug, "failed")
          yield* act(a, slug, "policy")
          const api = yield* anonymous
          const verified = yield* answer(api.reputation.verify({ params: { agent_slug: slug }, responseMode: "response-only" }))
          expect(verified.status).toBe(200)
          const history = yield* answer(api.reputation.history({ params: { agent_slug: slug }, query: {}, responseMode: "response-only" }))
          const snapshot = history.body.snapshots[0]
          expect(snapshot.score_hash).toBe(verified.body.score_hash)

          const dir = mkdtempSync(join(tmpdir(), "reputation-cli-"))
          const file = (name: string, value: unknown) => {
            const path = join(dir, `${name}.json`)
            writeFileSync(path, JSON.stringify(value))
            return path
          }
          const jwksFile = file("jwks", yield* api.receiptsPublic.jwks())
          const jwksUrl = `${server.url}/api/v1/.well-known/jwks.json`
          const cli = (...args: string[]) =>
            promisify(execFile)("npx", ["tsx", "scripts/verify.ts", ...args], { cwd: join(__dirname, "..") }).then(
              ({ stdout }) => ({ code: 0, stdout }),
              (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout })
            )
          const body = verified.body
          const otherSlug = `${slug.slice(0, -1)}${slug.endsWith("0") ? "1" : "0"}`
          const results = yield* Effect.promise(() =>
            Promise.all([
              cli(file("verify", body), "--jwks", jwksUrl),
              cli(file("snapshot", snapshot), "--jwks", jwksFile),
              // One byte changed: the score, a count, the agent of the inputs, the hash.
              cli(file("score", { ...body, score: body.score + 1 }), "--jwks", jwksFile),
              cli(file("count", { ...body, inputs: { ...body.inputs, failed: body.inputs.failed + 1 } }), "--jwks", jwksFile),
              cli(file("agent", { ...body, inputs: { ...body.inputs, agent_slug: otherSlug } }), "--jwks", jwksFile),
              cli(file("tier", { ...snapshot, tier: snapshot.tier === "exemplary" ? "trusted" : "exemplary" }), "--jwks", jwksFile)
            ])
          )
          expect(results.map((result) => result.code)).toEqual([0, 0, 1, 1, 1, 1])
          const lines = (stdout: string) => stdout.split("\n").filter((line) => /^(ok {2}|FAIL) /.test(line))
          expect(lines(results[0]!.stdout)).toEqual(["ok   score", "ok   tier", "ok   score_hash", "ok   signature", "ok   agent_slug"])
          expect(lines(results[1]!.stdout)).toEqual(["ok   score", "ok   tier", "ok   score_hash", "ok   signature"])
          const failed = (stdout: string) => lines(stdout).filter((line) => line.startsWith("FAIL")).map((line) => line.slice(5).split(":")[0])
          expect(failed(results[2]!.stdout)).toEqual(["score", "score_hash", "signature"])
          // A count that moves the score fails it too; the signed bytes always change.
          const moved = { ...zeroInputs, ...body.inputs, failed: body.inputs.failed + 1 }
          expect(failed(results[3]!.stdout)).toEqual([
            ...(expectedScore(moved) === body.score ? [] : ["score"]),
            ...(expectedTier(moved, expectedScore(moved)) === body.tier ? [] : ["tier"]),
            "score_hash",
            "signature"
          ])
          expect(failed(results[4]!.stdout)).toEqual(["score_hash", "signature", "agent_slug"])
          expect(failed(results[5]!.stdout)).toEqual(["tier"])
        }),
      120_000
    )

    it.effect("an unknown slug is 404 NOT_FOUND on every route", () =>
      Effect.gen(function* () {
        const api = yield* anonymous
        const params = { agent_slug: `nobody-${process.pid}` }
        for (const reply of [
          yield* answer(api.reputation.current({ params, responseMode: "response-only" })),
          yield* answer(api.reputation.verify({ params, responseMode: "response-only" })),
          yield* answer(api.reputation.history({ params, query: {}, responseMode: "response-only" })),
          yield* attest(freshAddress(), params.agent_slug, { not: "even a request" })
        ]) {
          expect(reply.status).toBe(404)
          expect(reply.body.code).toBe("NOT_FOUND")
        }
      })
    )
  })

  it.describe("the inputs", () => {
    it.effect("count the agent's actions only in the organizations that owned it when they were made", () =>
      Effect.gen(function* () {
        const { a, b, c } = yield* Parties
        const slug = yield* newAgent(a)
        const before = yield* act(a, slug, "notarized")
        yield* act(a, slug, "notarized")
        // A bystander using the same agent id never counts.
        const borrowed = yield* act(c, slug, "notarized")
        const signature = transferSignature(a.key, { agent_slug: slug, from_org: a.orgUuid, to_org: b.orgUuid })
        yield* (yield* client(a.key)).agents.transfer({ params: { agent_slug: slug }, payload: { target_org_id: b.orgUuid, signature } })
        // The former owner's actions after the transfer are no longer the agent's; the new owner's are.
        const late = yield* act(a, slug, "notarized")
        yield* act(b, slug, "failed")
        const verified = yield* verifyOf(slug)
        expect(verified.inputs).toMatchObject({ notarized: 2, failed: 1 })

        const { dids } = yield* Parties
        const ip = freshAddress()
        for (const actionUuid of [borrowed, late]) {
          const refused = yield* attest(ip, slug, yield* signedBody(slug, actionUuid, dids.bank, bankKey))
          expect(refused.status).toBe(404)
          expect(refused.body.code).toBe("NOT_FOUND")
        }
        // An action from its former owner's time stays the agent's, and can be attested.
        const accepted = yield* attest(ip, slug, yield* signedBody(slug, before, dids.bank, bankKey))
        expect(accepted.status).toBe(201)
        expect((yield* verifyOf(slug)).inputs).toMatchObject({ notarized: 2, failed: 1, attested_success: 1, attestations: 1 })
      })
    )

    it.effect("human denials count without expired approvals; approvals by a human count", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const { a } = yield* Parties
        const slug = yield* newAgent(a)
        yield* act(a, slug, "human_denied")
        yield* act(a, slug, "human_approved")
        yield* act(a, slug, "policy")
        yield* act(a, slug, "authorized")
        const expiring = yield* act(a, slug, "pending")
        // Its deadline moved to the past: the sweep expires it as it would any other.
        yield* Effect.promise(() =>
          server.run(
            Effect.gen(function* () {
              const sql = yield* SqlClient.SqlClient
              yield* sql`UPDATE actions SET approval_expires_at = now() - interval '1 second' WHERE action_uuid = ${expiring}`
            })
          )
        )
        const owner = yield* client(a.key)
        yield* eventuallyEffect(
          Effect.map(owner.actions.get({ params: { action_uuid: expiring } }), (action) => action.status === "denied_by_human"),
          { timeoutMs: 10_000 }
        )
        const verified = yield* verifyOf(slug)
        expect(verified.inputs).toEqual({
          ...zeroInputs,
          agent_slug: slug,
          notarized: 1,
          denied_by_policy: 1,
          denied_by_human: 1,
          human_approved: 1,
          computed_at: verified.computed_at
        })
        expect(verified.score).toBe(expectedScore(verified.inputs))
      })
    )

    it.effect("property: for any record, an independent formula recomputes score and tier from verify's inputs; score_hash verifies with the JWKS key", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const { a } = yield* Parties
        const record = fc.record({
          notarized: fc.nat({ max: 3 }),
          failed: fc.nat({ max: 2 }),
          policy: fc.nat({ max: 2 }),
          humanDenied: fc.nat({ max: 1 }),
          humanApproved: fc.nat({ max: 1 })
        })
        const run = (counts: typeof record extends fc.Arbitrary<infer T> ? T : never) =>
          Effect.gen(function* () {
            const slug = yield* newAgent(a, "prop")
            yield* many(a, slug, "notarized", counts.notarized)
            yield* many(a, slug, "failed", counts.failed)
            yield* many(a, slug, "policy", counts.policy)
            yield* many(a, slug, "human_denied", counts.humanDenied)
            yield* many(a, slug, "human_approved", counts.humanApproved)
            const verified = yield* verifyOf(slug)
            expect(verified.inputs).toEqual({
              ...zeroInputs,
              agent_slug: slug,
              notarized: counts.notarized + counts.humanApproved,
              failed: counts.failed,
              denied_by_policy: counts.policy,
              denied_by_human: counts.humanDenied,
              human_approved: counts.humanApproved,
              computed_at: verified.computed_at
            })
            expect(verified.score).toBe(expectedScore(verified.inputs))
            expect(verified.tier).toBe(expectedTier(verified.inputs, verified.score))
            yield* expectSignedLikeAReceipt(verified)
          })
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(record, (counts) => Effect.runPromise(run(counts).pipe(Effect.provideService(Gateway, server)))),
            { numRuns: 5 }
          )
        )
      })
    )
  })

  it.describe("attestations", () => {
    it.effect("a counterparty's signed statement is stored as sent and moves the score", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const { a, dids } = yield* Parties
        const slug = yield* newAgent(a)
        const done = yield* act(a, slug, "notarized")
        const failed = yield* act(a, slug, "failed")
        const before = yield* verifyOf(slug)
        const ip = freshAddress()

        // Unusual spacing and non-ASCII text: the signature is over these exact bytes.
        const attestation = `{ "agent_slug" : "${slug}",\n  "action_uuid": "${done}", "counterparty_did": "${dids.bank}",\t"outcome": "success", "attested_at": "2026-01-01T10:00:00+02:00", "comment": "prompt — très bien ✓" }`
        const body = { counterparty_did: dids.bank, action_uuid: done, attestation, signature: yield* sign(attestation, bankKey) }
        const accepted = yield* attest(ip, slug, body)
        expect(accepted.status).toBe(201)
        const current = yield* verifyOf(slug)
        expect(current.inputs).toMatchObject({ attested_success: 1, attested_failure: 0, attestations: 1 })
        expect(current.score).toBe(before.score + 2)
        expect(accepted.body).toEqual({
          attestation_uuid: expect.stringMatching(/^att_/),
          agent_slug: slug,
          action_uuid: done,
          counterparty_did: dids.bank,
          outcome: "success",
          attested_at: "2026-01-01T08:00:00.000Z",
          attestation_hash: sha256(Buffer.from(attestation, "utf8")),
          verification_method: `${dids.bank}#key-1`,
          recorded_at: expect.stringMatching(/Z$/),
          reputation: { score: current.score, tier: current.tier, score_hash: current.score_hash },
          request_id: expect.stringMatching(/^req_/)
        })
        const stored = yield* Effect.promise(() =>
          server.run(
            Effect.gen(function* () {
              const sql = yield* SqlClient.SqlClient
              return yield* sql<{ attestation: string; signature: string; org_uuid: string }>`
                SELECT attestation, signature, org_uuid FROM reputation_attestations WHERE attestation_uuid = ${accepted.body.attestation_uuid}`
            })
          )
        )
        expect(stored).toEqual([{ attestation, signature: body.signature, org_uuid: a.orgUuid }])
        expect((yield* historyOf(slug)).snapshots[0]).toMatchObject({ trigger: "attestation", score_hash: current.score_hash })

        // The same DID again: refused; another DID (its key is the document's second method) is another attestation.
        const again = yield* attest(ip, slug, yield* signedBody(slug, done, dids.bank, bankKey))
        expect(again.status).toBe(409)
        expect(again.body.code).toBe("DUPLICATE_ATTESTATION")
        // As the SDKs send it: `action_id`.
        const fromSdk = yield* signedBody(slug, done, dids.multi, otherKey)
        const second = yield* attest(ip, slug, { counterparty_did: fromSdk.counterparty_did, action_id: done, attestation: fromSdk.attestation, signature: fromSdk.signature })
        expect(second.status).toBe(201)
        expect(second.body.verification_method).toBe(`${dids.multi}#key-2`)
        // Distinct actions count once per outcome; failures weigh double.
        const onFailure = yield* attest(ip, slug, yield* signedBody(slug, failed, dids.bank, bankKey, { outcome: "failure" }))
        expect(onFailure.status).toBe(201)
        const last = yield* verifyOf(slug)
        expect(last.inputs).toMatchObject({ attested_success: 1, attested_failure: 1, attestations: 3 })
        expect(last.score).toBe(expectedScore(last.inputs))
        expect(onFailure.body.reputation).toEqual({ score: last.score, tier: last.tier, score_hash: last.score_hash })
      })
    )

    it.effect("404 agent before 422 shape: a malformed body for an unknown agent is 404", () =>
      Effect.gen(function* () {
        const unknown = yield* attest(freshAddress(), `ghost-${process.pid}`, [1, 2, 3])
        expect(unknown.status).toBe(404)
        expect(unknown.body.code).toBe("NOT_FOUND")
      })
    )

    it.effect("422 VALIDATION_ERROR for the shape, and for a statement that disagrees, before the action is looked up", () =>
      Effect.gen(function* () {
        const { a, dids } = yield* Parties
        const slug = yield* newAgent(a)
        const unknownAction = "act_does_not_exist"
        const good = yield* signedBody(slug, unknownAction, dids.bank, bankKey)
        const shapes: Array<[unknown, string]> = [
          [[good], "body"],
          [without(good, "counterparty_did"), "counterparty_did"],
          [{ ...good, counterparty_did: "did:key:z6Mk" }, "counterparty_did"],
          [{ ...good, counterparty_did: `did:web:${"x".repeat(2050)}` }, "counterparty_did"],
          [without(good, "action_uuid"), "action_uuid"],
          [{ ...good, action_uuid: "x".repeat(201) }, "action_uuid"],
          [{ ...good, attestation: 42 }, "attestation"],
          [{ ...good, attestation: "é".repeat(4097) }, "attestation"],
          [{ ...good, signature: "hmac-sha256:00" }, "signature"],
          [{ ...good, attestation: "not json" }, "attestation"],
          [{ ...good, attestation: "[1]" }, "attestation"]
        ]
        for (const [body, path] of shapes) {
          const refused = yield* attest(freshAddress(), slug, body)
          expect([path, refused.status, refused.body.code]).toEqual([path, 422, "VALIDATION_ERROR"])
          expect(refused.body.details.issues.map((issue: { path: string }) => issue.path)).toContain(path)
        }
        const statement = (fields: Record<string, unknown>) => signedBody(slug, unknownAction, dids.bank, bankKey, fields)
        const disagreeing: Array<[Record<string, unknown>, string]> = [
          [{ agent_slug: "someone-else" }, "attestation.agent_slug"],
          [{ action_uuid: "act_other" }, "attestation.action_uuid"],
          [{ counterparty_did: dids.multi }, "attestation.counterparty_did"],
          [{ outcome: "great" }, "attestation.outcome"],
          [{ attested_at: "yesterday" }, "attestation.attested_at"],
          [{ attested_at: new Date(Date.now() + 6 * 60_000).toISOString() }, "attestation.attested_at"],
          [{ attested_at: undefined }, "attestation.attested_at"],
          [{ comment: "c".repeat(1001) }, "attestation.comment"]
        ]
        const second = freshAddress()
        for (const [fields, path] of disagreeing) {
          const refused = yield* attest(second, slug, yield* statement(fields))
          expect([path, refused.status, refused.body.code]).toEqual([path, 422, "VALIDATION_ERROR"])
          expect(refused.body.details.issues.map((issue: { path: string }) => issue.path)).toContain(path)
        }
        // Within the limits (and 4 minutes ahead is within the leeway): now the unknown action is what is refused.
        const third = freshAddress()
        const longest = yield* statement({ comment: "é".repeat(1000), attested_at: new Date(Date.now() + 4 * 60_000).toISOString() })
        // 4,096 characters (not bytes: "é" is two) with the whitespace JSON allows after the object.
        const padded = longest.attestation + " ".repeat(4096 - [...longest.attestation].length)
        const notFound = yield* attest(third, slug, { ...longest, attestation: padded, signature: yield* sign(padded, bankKey) })
        expect(notFound.status).toBe(404)
        expect(notFound.body.code).toBe("NOT_FOUND")
      })
    )

    it.effect("then 404 for an action that is not the agent's, 409 for one not finished, 422 SELF_ATTESTATION, in that order", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const { a, b } = yield* Parties
        const slug = yield* newAgent(a)
        const sibling = yield* newAgent(a, "sibling")
        const theirAgent = yield* newAgent(b, "theirs")
        const port = new URL(server.url).port
        const platformDid = `did:web:127.0.0.1%3A${port}`
        const ownDid = `${platformDid}:agents:${slug}`
        const ip = freshAddress()

        // Another agent's action, with the agent's own DID and a bad signature: the action decides (404).
        const siblingAction = yield* act(a, sibling, "notarized")
        const notMine = yield* attest(ip, slug, { ...(yield* signedBody(slug, siblingAction, ownDid, otherKey)) })
        expect([notMine.status, notMine.body.code]).toEqual([404, "NOT_FOUND"])

        // Not finished yet (authorized, pending, denied): 409 before the self check.
        for (const kind of ["authorized", "pending", "policy", "human_denied"] as const) {
          const open = yield* act(a, slug, kind)
          const refused = yield* attest(ip, slug, yield* signedBody(slug, open, ownDid, otherKey))
          expect([kind, refused.status, refused.body.code]).toEqual([kind, 409, "INVALID_ACTION_STATE"])
        }

        // Finished: the agent itself, a sibling of its organization and the platform cannot attest, whatever they sign.
        const done = yield* act(a, slug, "notarized")
        for (const did of [ownDid, `${platformDid}:agents:${sibling}`, platformDid]) {
          const refused = yield* attest(ip, slug, yield* signedBody(slug, done, did, otherKey))
          expect([did, refused.status, refused.body.code]).toEqual([did, 422, "SELF_ATTESTATION"])
        }
        // Another organization's agent is a counterparty like any other: its DID resolves from our database,
        // and only its own key (held by the gateway) could sign, so this signature is refused, not the DID.
        const foreign = yield* attest(ip, slug, yield* signedBody(slug, done, `${platformDid}:agents:${theirAgent}`, otherKey))
        expect([foreign.status, foreign.body.code]).toEqual([400, "INVALID_SIGNATURE"])
      })
    )

    it.effect("then 400 for the counterparty's document (no method, unsupported keys), then INVALID_SIGNATURE, then DUPLICATE", () =>
      Effect.gen(function* () {
        const { a, dids } = yield* Parties
        const slug = yield* newAgent(a)
        const done = yield* act(a, slug, "notarized")
        const ip = freshAddress()
        for (const [did, code] of [
          [dids.missing, "DID_NO_VERIFICATION_METHOD"],
          [dids.empty, "DID_NO_VERIFICATION_METHOD"],
          [dids.jwkOnly, "DID_UNSUPPORTED_KEY_FORMAT"]
        ] as const) {
          // Signed by a key nobody publishes: the document is refused first.
          const refused = yield* attest(ip, slug, yield* signedBody(slug, done, did, otherKey))
          expect([did, refused.status, refused.body.code]).toEqual([did, 400, code])
        }
        const byOther = yield* signedBody(slug, done, dids.bank, otherKey)
        const wrongKey = yield* attest(ip, slug, byOther)
        expect([wrongKey.status, wrongKey.body.code]).toEqual([400, "INVALID_SIGNATURE"])
        // Signed over the same statement written differently: the bytes as sent are what must verify.
        const genuine = yield* signedBody(slug, done, dids.bank, bankKey)
        const rewritten = JSON.stringify(JSON.parse(genuine.attestation), null, 1)
        const reformatted = yield* attest(ip, slug, { ...genuine, attestation: rewritten })
        expect([reformatted.status, reformatted.body.code]).toEqual([400, "INVALID_SIGNATURE"])
        expect((yield* attest(ip, slug, genuine)).status).toBe(201)
        // Another statement by the same DID for the same action, validly signed: one per action and DID.
        const duplicate = yield* attest(ip, slug, yield* signedBody(slug, done, dids.bank, bankKey, { outcome: "failure" }))
        expect([duplicate.status, duplicate.body.code]).toEqual([409, "DUPLICATE_ATTESTATION"])
      })
    )

    it.effect("10 per minute per client IP: the 11th from one address is 429, another address goes on", () =>
      Effect.gen(function* () {
        const { a } = yield* Parties
        const slug = yield* newAgent(a)
        const ip = freshAddress()
        const statuses: Array<number> = []
        for (let i = 0; i < 11; i++) statuses.push((yield* attest(ip, slug, {})).status)
        expect(statuses).toEqual([...Array(10).fill(422), 429])
        const limited = yield* attest(ip, slug, {})
        expect(limited.body.code).toBe("RATE_LIMIT_EXCEEDED")
        // Reads from that address are not limited by it.
        expect((yield* answer((yield* from(ip)).reputation.current({ params: { agent_slug: slug }, responseMode: "response-only" }))).status).toBe(200)
        expect((yield* attest(freshAddress(), slug, {})).status).toBe(422)
      })
    )
  })

  it.describe("decommissioning", () => {
    it.effect("records a decommission snapshot: score 0, tier decommissioned, on the card too", () =>
      Effect.gen(function* () {
        const { a } = yield* Parties
        const slug = yield* newAgent(a)
        yield* act(a, slug, "notarized")
        const before = yield* currentOf(slug)
        expect(before.score).toBeGreaterThan(0)
        yield* (yield* client(a.key)).agents.decommission({ params: { agent_slug: slug }, payload: { reason: "retired" } })
        const history = yield* historyOf(slug)
        expect(history.snapshots[0]).toMatchObject({ trigger: "decommission", score: 0, tier: "decommissioned" })
        expect(history.snapshots[0]!.inputs.decommissioned).toBe(true)
        const after = yield* verifyOf(slug)
        expect(after).toMatchObject({ score: 0, tier: "decommissioned", score_hash: history.snapshots[0]!.score_hash })
        yield* expectSignedLikeAReceipt(after)
        expect((yield* (yield* anonymous).didsPublic.agentCard({ params: { agent_slug: slug } })).aira.reputation_score).toBe(0)
        // Reading it changed nothing: still the decommission snapshot.
        expect((yield* historyOf(slug)).pagination.total).toBe(history.pagination.total)
      })
    )
  })
})
