/**
 * Endpoint whitelist: pattern matching, entries (member pending, admin approved),
 * strict / permissive checks, approval requests with add_pattern, and TLS pins
 * checked against a local https server. Runs on the real database.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as TestClock from "effect/testing/TestClock"
import fc from "fast-check"
import type { Principal } from "../protocol/auth.js"
import { configLayer, loadConfig } from "../src/platform/config.js"
import { certificateFingerprint } from "../src/platform/outbound/index.js"
import { EndpointGuard } from "../src/policies/ports.js"
import type { WhitelistError } from "../src/whitelist/errors.js"
import { matchesPattern, parsePattern, suggestPattern } from "../src/whitelist/patterns.js"
import { Whitelist, whitelistLayer, whitelistLayerTest } from "../src/whitelist/service.js"
import { orgActorsOnFreshDatabase, UNUSED_DATA_DIR } from "./support/database.js"
import { liveLayer } from "./support/effect.js"
import { useTlsServer } from "./support/tls.js"

describe("patterns", () => {
  const matches = (pattern: string, url: string) => matchesPattern(parsePattern(pattern)!, new URL(url))

  it("matches scheme, host and path; a trailing * matches any rest of the path", () => {
    expect(matches("https://api.example.com/v1/*", "https://api.example.com/v1/charges?x=1")).toBe(true)
    expect(matches("https://api.example.com/v1/*", "https://api.example.com/v2/charges")).toBe(false)
    expect(matches("https://api.example.com/v1/*", "http://api.example.com/v1/charges")).toBe(false)
    expect(matches("https://api.example.com/v1/*", "https://evil.example.com/v1/charges")).toBe(false)
    expect(matches("https://API.example.com/v1/charges", "https://api.example.com/v1/charges")).toBe(true)
    expect(matches("https://api.example.com/v1/charges", "https://api.example.com/v1/charges/1")).toBe(false)
    expect(matches("https://api.example.com:8443/*", "https://api.example.com/x")).toBe(false)
    expect(parsePattern("ftp://x/*")).toBeUndefined()
    expect(parsePattern("not a url")).toBeUndefined()
  })

  it("suggests the host or the path's parent, and the suggestion matches the URL", () => {
    expect(suggestPattern(new URL("https://api.example.com/charges"))).toBe("https://api.example.com/*")
    expect(suggestPattern(new URL("https://api.example.com/v1/charges/ch_1"))).toBe("https://api.example.com/v1/charges/*")
    fc.assert(
      fc.property(fc.webUrl({ validSchemes: ["https", "http"] }), (raw) => {
        const url = new URL(raw)
        expect(matchesPattern(parsePattern(suggestPattern(url))!, url)).toBe(true)
      })
    )
  })
})

const tls = useTlsServer()
const certFingerprint = () => certificateFingerprint(tls.certDer)

let orgCounter = 0
const principalFor = (role: Principal["role"], orgUuid = `org-wl-${Date.now()}-${++orgCounter}`): Principal =>
  ({ kind: "api_key", orgUuid, userUuid: `user-${role}`, email: "a@b.c", role, scopes: ["*"], keyId: "k" }) as Principal

const whitelist = <A, E>(f: (w: Whitelist["Service"]) => Effect.Effect<A, E>) => Effect.flatMap(Whitelist, f)
const check = (orgUuid: string, url: string, agentId: string | null = "bot-1", actionType = "payments.charge") =>
  Effect.flatMap(EndpointGuard, (guard) => guard.check(orgUuid, { url, agentId, actionType }))

// Loopback reachable: the TLS fingerprint test below dials a local server.
const config = configLayer(loadConfig({ DATA_DIR: UNUSED_DATA_DIR, OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8" }))

/** The service's rules, the same over the database (with the organization's actor) and over its tables in memory. */
const rules = (name: string, layer: Layer.Layer<Whitelist | EndpointGuard, unknown>) =>
liveLayer(layer)(`whitelist entries and checks (${name})`, (it) => {
  it.effect("members propose pending entries; admins add approved ones; only approved entries allow", () =>
    Effect.gen(function* () {
    const admin = principalFor("admin")
    const member = principalFor("member", admin.orgUuid)
    const proposed = yield* whitelist((w) => w.add(member, { url_pattern: "https://api.example.com/v1/*", name: "Example" }))
    expect(proposed.status).toBe("pending")
    expect(proposed.id).toMatch(/^wl_/)
    yield* whitelist((w) => w.setMode(admin, "strict"))
    expect((yield* check(admin.orgUuid, "https://api.example.com/v1/x")).outcome).toBe("blocked")
    expect(yield* whitelist((w) => w.setEntryStatus(admin, proposed.id, "approved"))).toEqual({ id: proposed.id, status: "approved" })
    expect(yield* check(admin.orgUuid, "https://api.example.com/v1/x")).toEqual({ outcome: "allowed" })
    const direct = yield* whitelist((w) => w.add(admin, { url_pattern: "https://other.example.com/*", name: "Other" }))
    expect(direct.status).toBe("approved")
    const rejected = yield* whitelist((w) => w.setEntryStatus(admin, direct.id, "rejected"))
    expect(rejected.status).toBe("rejected")
    expect((yield* check(admin.orgUuid, "https://other.example.com/a")).outcome).toBe("blocked")
    expect(yield* whitelist((w) => w.remove(admin, direct.id))).toEqual({ id: direct.id, deleted: true })
    const list = yield* whitelist((w) => w.list(admin))
    expect(list.entries.map((e) => e.id)).toEqual([proposed.id])
    expect(list.data).toEqual(list.entries)
    })
  )

  it.effect("permissive (the default) warns; strict blocks and files an approval request", () =>
    Effect.gen(function* () {
    const admin = principalFor("owner")
    expect(yield* whitelist((w) => w.mode(admin))).toEqual({ mode: "permissive" })
    const warned = yield* check(admin.orgUuid, "https://unknown.example.com/a/b")
    expect(warned.outcome).toBe("warn")
    expect((yield* whitelist((w) => w.approvals(admin))).approvals).toHaveLength(0)
    yield* whitelist((w) => w.setMode(admin, "strict"))
    const blocked = yield* check(admin.orgUuid, "https://unknown.example.com/a/b", "bot-9")
    expect(blocked).toMatchObject({ outcome: "blocked", url_pattern_suggested: "https://unknown.example.com/a/*" })
    const approvals = (yield* whitelist((w) => w.approvals(admin))).approvals
    expect(approvals).toHaveLength(1)
    expect(approvals[0]).toMatchObject({ url: "https://unknown.example.com/a/b", agent_id: "bot-9", status: "pending" })
    })
  )

  it.effect("approving a request with add_pattern whitelists the suggested pattern", () =>
    Effect.gen(function* () {
    const admin = principalFor("admin")
    yield* whitelist((w) => w.setMode(admin, "strict"))
    const blocked = yield* check(admin.orgUuid, "https://pay.example.com/v2/charges")
    if (blocked.outcome !== "blocked") throw new Error("expected blocked")
    const approved = yield* whitelist((w) => w.resolveApproval(admin, blocked.approval_id, "approved", true))
    expect(approved.status).toBe("approved")
    expect(approved.entry).toMatchObject({ url_pattern: "https://pay.example.com/v2/*", status: "approved" })
    expect(yield* check(admin.orgUuid, "https://pay.example.com/v2/refunds")).toEqual({ outcome: "allowed" })
    const twice = yield* Effect.flip(whitelist((w) => w.resolveApproval(admin, blocked.approval_id, "rejected", false)))
    expect(twice.reason.code).toBe("ALREADY_RESOLVED")
    // Without add_pattern nothing is added.
    const other = yield* check(admin.orgUuid, "https://pay.example.com/v3/x")
    if (other.outcome !== "blocked") throw new Error("expected blocked")
    const rejected = yield* whitelist((w) => w.resolveApproval(admin, other.approval_id, "rejected", false))
    expect(rejected).toMatchObject({ status: "rejected", entry: null })
    })
  )

  it.effect("approving a blocked request grants it once: same agent, action type and URL, a single use", () =>
    Effect.gen(function* () {
      const admin = principalFor("admin")
      yield* whitelist((w) => w.setMode(admin, "strict"))
      const url = "https://once.example.com/v1/transfer"
      const blocked = yield* check(admin.orgUuid, url)
      if (blocked.outcome !== "blocked") throw new Error("expected blocked")
      const approved = yield* whitelist((w) => w.resolveApproval(admin, blocked.approval_id, "approved", false))
      expect(approved).toMatchObject({ status: "approved", entry: null })
      // Another agent, action type or URL is not what was approved.
      expect((yield* check(admin.orgUuid, url, "bot-2")).outcome).toBe("blocked")
      expect((yield* check(admin.orgUuid, url, "bot-1", "payments.refund")).outcome).toBe("blocked")
      expect((yield* check(admin.orgUuid, `${url}?again`, "bot-1")).outcome).toBe("blocked")
      // The retry goes through once, saying why; the next one is blocked again.
      const retried = yield* check(admin.orgUuid, url)
      expect(retried).toMatchObject({ outcome: "warn", warning: expect.stringContaining(blocked.approval_id) })
      expect((yield* check(admin.orgUuid, url)).outcome).toBe("blocked")
      const listed = yield* whitelist((w) => w.approvals(admin))
      const record = listed.approvals.find((item) => item.id === blocked.approval_id)!
      expect(record).toMatchObject({ action_type: "payments.charge", status: "approved" })
      expect(record.grant_used_at).not.toBeNull()
      expect(Date.parse(record.grant_expires_at!)).toBeGreaterThan(Date.now())
      // A rejected request grants nothing.
      const again = yield* check(admin.orgUuid, "https://never.example.com/x")
      if (again.outcome !== "blocked") throw new Error("expected blocked")
      yield* whitelist((w) => w.resolveApproval(admin, again.approval_id, "rejected", false))
      expect((yield* check(admin.orgUuid, "https://never.example.com/x")).outcome).toBe("blocked")
    })
  )

  it.effect("another organization's ids are not found", () =>
    Effect.gen(function* () {
    const admin = principalFor("admin")
    const stranger = principalFor("admin")
    const entry = yield* whitelist((w) => w.add(admin, { url_pattern: "https://a.example.com/*", name: "A" }))
    yield* whitelist((w) => w.setMode(admin, "strict"))
    const blocked = yield* check(admin.orgUuid, "https://b.example.com/x")
    if (blocked.outcome !== "blocked") throw new Error("expected blocked")
    const attempts = [
      Effect.flatMap(Whitelist, (w) => w.setEntryStatus(stranger, entry.id, "rejected")),
      Effect.flatMap(Whitelist, (w) => w.remove(stranger, entry.id)),
      Effect.flatMap(Whitelist, (w) => w.resolveApproval(stranger, blocked.approval_id, "approved", true))
    ]
    for (const attempt of attempts) {
      const error = yield* Effect.flip(attempt as Effect.Effect<unknown, WhitelistError, Whitelist>)
      expect(error.reason.code).toBe("NOT_FOUND")
    }
    })
  )

  it.effect("checks a pinned TLS fingerprint: match allows, mismatch and unreachable are tls_mismatch", () =>
    Effect.gen(function* () {
      const admin = principalFor("admin")
      const url = `https://127.0.0.1:${tls.port}/api/x`
      yield* whitelist((w) => w.add(admin, { url_pattern: `https://127.0.0.1:${tls.port}/api/*`, name: "local", tls_fingerprint: certFingerprint() }))
      expect(yield* check(admin.orgUuid, url)).toEqual({ outcome: "allowed" })

      const wrong = principalFor("admin")
      const pin = `sha256:${"ab".repeat(32)}`
      yield* whitelist((w) => w.add(wrong, { url_pattern: `https://127.0.0.1:${tls.port}/*`, name: "wrong pin", tls_fingerprint: pin }))
      expect(yield* check(wrong.orgUuid, url)).toMatchObject({ outcome: "tls_mismatch", expected: pin, actual: certFingerprint() })

      const closed = principalFor("admin")
      yield* whitelist((w) => w.add(closed, { url_pattern: "https://127.0.0.1:1/*", name: "closed", tls_fingerprint: pin }))
      expect(yield* check(closed.orgUuid, "https://127.0.0.1:1/x")).toMatchObject({ outcome: "tls_mismatch", actual: null })
    })
  )
})

rules("database", whitelistLayer.pipe(Layer.provideMerge(orgActorsOnFreshDatabase), Layer.provideMerge(config)))
rules("in memory", whitelistLayerTest.pipe(Layer.provideMerge(config)))

layer(whitelistLayerTest.pipe(Layer.provideMerge(config)))("whitelist grants on the test clock", (it) => {
  it.effect("a granted request may be retried until the approval's time runs out, not after", () =>
    Effect.gen(function* () {
      const admin = principalFor("admin")
      const { approvalTtlMs } = loadConfig({ DATA_DIR: UNUSED_DATA_DIR })
      yield* whitelist((w) => w.setMode(admin, "strict"))
      const url = "https://later.example.com/v1/pay"
      const first = yield* check(admin.orgUuid, url)
      const second = yield* check(admin.orgUuid, `${url}/2`)
      if (first.outcome !== "blocked" || second.outcome !== "blocked") throw new Error("expected blocked")
      yield* whitelist((w) => w.resolveApproval(admin, first.approval_id, "approved", false))
      yield* whitelist((w) => w.resolveApproval(admin, second.approval_id, "approved", false))
      yield* TestClock.adjust(approvalTtlMs - 1)
      expect((yield* check(admin.orgUuid, url)).outcome).toBe("warn")
      yield* TestClock.adjust(1)
      expect((yield* check(admin.orgUuid, `${url}/2`)).outcome).toBe("blocked")
    })
  )
})
