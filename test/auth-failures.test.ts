/**
 * Failed authentications cost the caller, not the database: with AUTH_FAILURES_PER_MINUTE=5, the
 * sixth refused credential from one address (or with one key prefix) is 429 with the rate-limit
 * headers, and further guesses are refused before any lookup; other addresses and keys this node
 * verified are unaffected; a bogus key sent again is remembered and costs no lookup.
 */
import { randomBytes } from "node:crypto"
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { keyDigest } from "../src/access/credentials.js"
import { Access } from "../src/access/service.js"
import { renderMetrics } from "../src/platform/metrics.js"
import { Secrets } from "../src/platform/secrets.js"
import { callFrom, freshAddress } from "./support/address.js"
import { call, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { signTestJwt } from "./support/jwt.js"
import { useServer } from "./support/server.js"

const BUDGET = 5
const server = useServer({ AUTH_FAILURES_PER_MINUTE: String(BUDGET) })
const org = useFixture(() => registerOrg(server.url))

const ROUTE = "/api/v1/team/members"
const bogusKey = (prefix = "svc_live_") => prefix + randomBytes(24).toString("hex")

/** A counter of the gateway's metrics registry (this process runs the server). */
const counter = async (name: string) => {
  const text = await server.run(renderMetrics)
  return Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+)`, "m").exec(text)?.[1] ?? 0)
}

const newKey = async () => {
  const reply = await call(server.url, "POST", "/api/v1/api-keys", { token: org.token, body: { name: "fresh" } })
  expect(reply.status).toBe(201)
  return reply.body.key as string
}

/** `BUDGET` refused keys from `address`, each answered 401. */
const exhaust = async (address: string) => {
  for (let i = 0; i < BUDGET; i++) expect((await callFrom(address, server.url, "GET", ROUTE, { token: bogusKey() })).status).toBe(401)
}

describe("failed authentications per client address", () => {
  it("answer 401 up to the budget, then 429 with Retry-After and RateLimit headers, looking nothing up any more", async () => {
    const address = freshAddress()
    const before = await counter("auth_key_lookups_total")
    await exhaust(address)
    expect(await counter("auth_key_lookups_total")).toBe(before + BUDGET)
    const refused = await callFrom(address, server.url, "GET", ROUTE, { token: bogusKey() })
    expect(refused.status).toBe(429)
    expect(refused.body).toMatchObject({ code: "RATE_LIMIT_EXCEEDED" })
    expect(refused.body.error).toBe(refused.body.message)
    expect(refused.body.message).toMatch(/failed authentications from this address/)
    expect(refused.body.request_id).toMatch(/^req_/)
    const retryAfter = Number(refused.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)
    expect(refused.headers.get("ratelimit-policy")).toBe(`"auth-failures-per-ip";q=${BUDGET};w=60`)
    expect(refused.headers.get("ratelimit")).toMatch(/^"auth-failures-per-ip";r=0;t=\d+$/)
    // Twenty more guesses: every one refused before the database is asked.
    for (let i = 0; i < 20; i++) expect((await callFrom(address, server.url, "GET", ROUTE, { token: bogusKey() })).status).toBe(429)
    expect(await counter("auth_key_lookups_total")).toBe(before + BUDGET)
  })

  it("bad and expired JWTs count as well", async () => {
    const address = freshAddress()
    const expired = await signTestJwt(server, org, { expiresAt: Math.floor(Date.now() / 1000) - 60 })
    const tokens = ["not-a-jwt", expired, "x.y.z", expired, "eyJhbGciOiJFZERTQSJ9.e30.AAAA", expired]
    const statuses = []
    for (const token of tokens) statuses.push((await callFrom(address, server.url, "GET", ROUTE, { token })).status)
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429])
  })

  it("the public model catalogue counts a refused credential too, and answers the same 429 past the budget", async () => {
    const address = freshAddress()
    for (let i = 0; i < BUDGET; i++) expect((await callFrom(address, server.url, "GET", "/api/v1/models", { token: bogusKey() })).status).toBe(401)
    const refused = await callFrom(address, server.url, "GET", "/api/v1/models", { token: bogusKey() })
    expect(refused.status).toBe(429)
    expect(refused.headers.get("ratelimit-policy")).toBe(`"auth-failures-per-ip";q=${BUDGET};w=60`)
    // Without a credential the catalogue stays public.
    expect((await callFrom(address, server.url, "GET", "/api/v1/models")).status).toBe(200)
  })

  it("a missing credential is not a guess and does not count", async () => {
    const address = freshAddress()
    for (let i = 0; i < BUDGET * 2; i++) expect((await callFrom(address, server.url, "GET", ROUTE)).status).toBe(401)
    expect((await callFrom(address, server.url, "GET", ROUTE, { token: bogusKey() })).status).toBe(401)
  })

  it("another address is not throttled by them: its new key works and its own failures start from zero", async () => {
    await exhaust(freshAddress())
    const other = freshAddress()
    expect((await callFrom(other, server.url, "GET", ROUTE, { token: await newKey() })).status).toBe(200)
    expect((await callFrom(other, server.url, "GET", ROUTE, { token: bogusKey() })).status).toBe(401)
  })

  it("a throttled address keeps keys this node verified and valid JWTs; a key not yet verified waits for the window", async () => {
    const address = freshAddress()
    const verified = await newKey()
    const unverified = await newKey()
    expect((await callFrom(address, server.url, "GET", ROUTE, { token: verified })).status).toBe(200)
    await exhaust(address)
    expect((await callFrom(address, server.url, "GET", ROUTE, { token: bogusKey() })).status).toBe(429)
    expect((await callFrom(address, server.url, "GET", ROUTE, { token: verified })).status).toBe(200)
    expect((await callFrom(address, server.url, "GET", ROUTE, { token: org.token })).status).toBe(200)
    const waiting = await callFrom(address, server.url, "GET", ROUTE, { token: unverified })
    expect(waiting.status).toBe(429)
    expect(Number(waiting.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
    // The same key from an address in good standing is checked and works.
    expect((await callFrom(freshAddress(), server.url, "GET", ROUTE, { token: unverified })).status).toBe(200)
  })
})

describe("failed authentications per key prefix", () => {
  it("guesses sharing a prefix are throttled across addresses; other prefixes and the verified key itself are not", async () => {
    const key = await newKey()
    expect((await callFrom(freshAddress(), server.url, "GET", ROUTE, { token: key })).status).toBe(200)
    const prefix = key.slice(0, "svc_live_".length + 6)
    for (let i = 0; i < BUDGET; i++) {
      expect((await callFrom(freshAddress(), server.url, "GET", ROUTE, { token: bogusKey(prefix) })).status).toBe(401)
    }
    const refused = await callFrom(freshAddress(), server.url, "GET", ROUTE, { token: bogusKey(prefix) })
    expect(refused.status).toBe(429)
    expect(refused.headers.get("ratelimit-policy")).toBe(`"auth-failures-per-key-prefix";q=${BUDGET};w=60`)
    expect(refused.body.message).toMatch(/with this key prefix/)
    expect((await callFrom(freshAddress(), server.url, "GET", ROUTE, { token: bogusKey() })).status).toBe(401)
    expect((await callFrom(freshAddress(), server.url, "GET", ROUTE, { token: key })).status).toBe(200)
  })
})

describe("unknown key digests are remembered", () => {
  it("the same bogus key again costs no database lookup", async () => {
    const address = freshAddress()
    const token = bogusKey()
    const before = await counter("auth_key_lookups_total")
    for (let i = 0; i < BUDGET - 1; i++) expect((await callFrom(address, server.url, "GET", ROUTE, { token })).status).toBe(401)
    expect(await counter("auth_key_lookups_total")).toBe(before + 1)
  })

  it("a digest remembered as unknown works once a key with it exists and is announced (as key creation does)", async () => {
    const token = bogusKey()
    expect((await callFrom(freshAddress(), server.url, "GET", ROUTE, { token })).status).toBe(401)
    const digest = await server.run(Effect.map(Effect.service(Secrets), (secrets) => keyDigest(secrets, token)))
    await server.run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO api_keys (id, org_uuid, user_uuid, name, key_prefix, key_hash, scopes)
                   VALUES (${`key_${randomBytes(8).toString("hex")}`}, ${org.orgUuid}, ${org.userUuid}, 'planted', ${token.slice(0, 15)}, ${digest}, '["*"]'::jsonb)`
      })
    )
    // Still remembered as unknown until the key is announced.
    expect((await callFrom(freshAddress(), server.url, "GET", ROUTE, { token })).status).toBe(401)
    await server.run(Effect.flatMap(Effect.service(Access), (access) => access.invalidate({ keyDigest: digest })))
    expect((await callFrom(freshAddress(), server.url, "GET", ROUTE, { token })).status).toBe(200)
  })
})
