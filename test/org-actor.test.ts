/**
 * OrgActor: the org's snapshot version increases on every policy and whitelist
 * change, decisions follow at once on the same server, and another
 * organization is unaffected.
 */
import { expect } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { OrgSnapshots } from "../actors/org.js"
import type { Principal } from "../protocol/auth.js"
import { platformMemoryLayer } from "../src/platform/redis/index.js"
import { type ActionSubject, EndpointGuard, PolicyDecisions } from "../src/policies/ports.js"
import { Policies, policiesLayer } from "../src/policies/service.js"
import { Whitelist, whitelistLayer } from "../src/whitelist/service.js"
import { modelCallsOnFreshDatabase, orgActorsOnFreshDatabase } from "./support/database.js"
import { liveLayer } from "./support/effect.js"
import { eventuallyEffect } from "./support/eventually.js"

type Services = Policies | PolicyDecisions | Whitelist | EndpointGuard | OrgSnapshots

let orgCounter = 0
const ownerOf = (): Principal =>
  ({ kind: "api_key", orgUuid: `org-${Date.now()}-${++orgCounter}`, userUuid: "u", email: "a@b.c", role: "owner", scopes: ["*"], keyId: "k" }) as Principal

const audit = { requestId: null }

const subject: ActionSubject = {
  action_type: "payment",
  details: "pay",
  agent_id: "bot",
  agent_version: null,
  model_id: null,
  model_version: null,
  endpoint_url: null,
  instruction_hash: null,
  context: { amount: 5000 }
}

const versionOf = (principal: Principal) => Effect.flatMap(OrgSnapshots, (orgs) => Effect.map(orgs.fetch(principal.orgUuid), (s) => s.version))
const decide = (principal: Principal) => Effect.flatMap(PolicyDecisions, (d) => Effect.map(d.evaluate(principal.orgUuid, subject), (v) => v.decision))
const check = (principal: Principal, url: string) =>
  Effect.flatMap(EndpointGuard, (g) => Effect.map(g.check(principal.orgUuid, { url, agentId: null, actionType: "test" }), (c) => c.outcome))
const policies = <A, E>(f: (p: Policies["Service"]) => Effect.Effect<A, E>) => Effect.flatMap(Policies, f)
const whitelist = <A, E>(f: (w: Whitelist["Service"]) => Effect.Effect<A, E>) => Effect.flatMap(Whitelist, f)

liveLayer(Layer.mergeAll(policiesLayer, whitelistLayer).pipe(Layer.provideMerge(modelCallsOnFreshDatabase), Layer.provideMerge(orgActorsOnFreshDatabase)))("OrgActor", (it) => {
  it.effect("policy changes bump the version and decisions follow at once; another org is unaffected", () =>
    Effect.gen(function* () {
    const owner = ownerOf()
    const other = ownerOf()
    const otherVersion = yield* versionOf(other)
    const versions = [yield* versionOf(owner)]
    expect(yield* decide(owner)).toBe("allow")
    const deny = [{ field: "context.amount", op: "gt", value: 1000 }]
    const created = yield* policies((p) => p.create(owner, { name: "d", mode: "rules", decision: "deny", conditions: deny, activate: true } as any, audit))
    versions.push(yield* versionOf(owner))
    expect(yield* decide(owner)).toBe("deny")
    yield* policies((p) => p.update(owner, created.id, { decision: "require_approval" } as any, audit))
    versions.push(yield* versionOf(owner))
    expect(yield* decide(owner)).toBe("require_approval")
    yield* policies((p) => p.deactivate(owner, created.id, audit))
    versions.push(yield* versionOf(owner))
    expect(yield* decide(owner)).toBe("allow")
    yield* policies((p) => p.activate(owner, created.id, audit))
    versions.push(yield* versionOf(owner))
    expect(yield* decide(owner)).toBe("require_approval")
    for (let i = 1; i < versions.length; i++) expect(versions[i]!).toBeGreaterThan(versions[i - 1]!)
    expect(yield* decide(other)).toBe("allow")
    expect(yield* versionOf(other)).toBe(otherVersion)
    })
  )

  it.effect("whitelist changes bump the version and endpoint checks follow at once", () =>
    Effect.gen(function* () {
    const owner = ownerOf()
    const other = ownerOf()
    const otherVersion = yield* versionOf(other)
    const url = "https://api.example.com/v1/pay"
    const versions = [yield* versionOf(owner)]
    expect(yield* check(owner, url)).toBe("warn")
    yield* whitelist((w) => w.setMode(owner, "strict"))
    versions.push(yield* versionOf(owner))
    expect(yield* check(owner, url)).toBe("blocked")
    const member = { ...owner, role: "member" } as Principal
    const entry = yield* whitelist((w) => w.add(member, { url_pattern: "https://api.example.com/v1/*", name: "api" }))
    versions.push(yield* versionOf(owner))
    expect(yield* check(owner, url)).toBe("blocked")
    yield* whitelist((w) => w.setEntryStatus(owner, entry.id, "approved"))
    versions.push(yield* versionOf(owner))
    expect(yield* check(owner, url)).toBe("allowed")
    yield* whitelist((w) => w.remove(owner, entry.id))
    versions.push(yield* versionOf(owner))
    expect(yield* check(owner, url)).toBe("blocked")
    for (let i = 1; i < versions.length; i++) expect(versions[i]!).toBeGreaterThan(versions[i - 1]!)
    expect(yield* check(other, url)).toBe("warn")
    expect(yield* versionOf(other)).toBe(otherVersion)
    })
  )

  it.effect("a change announced by another process drops this process's cached copy", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const owner = ownerOf()
        const draft = yield* policies((p) =>
          p.create(owner, { name: "d", mode: "rules", decision: "deny", conditions: [{ field: "details", op: "eq", value: "pay" }] } as any, audit)
        )
        const here = yield* OrgSnapshots
        // Another process: its own cache on the same entity and fan-out.
        const there = Context.get(yield* Layer.build(Layer.fresh(OrgSnapshots.layer)), OrgSnapshots)
        const count = Effect.map(here.get(owner.orgUuid), (snapshot) => snapshot.policies.length)
        const before = yield* count
        // Written behind the caches' back, then announced from the other process only.
        const sql = yield* SqlClient.SqlClient
        yield* Effect.orDie(sql`UPDATE policies SET status = 'active' WHERE id = ${draft.id}`)
        const stale = yield* count
        yield* there.changed(owner.orgUuid)
        // Until the announcement reaches this process (well within the 30 s after which its copy would expire anyway).
        const fresh = yield* eventuallyEffect(Effect.map(count, (n) => n === 1 && n), { timeoutMs: 5_000 })
        expect([before, stale, fresh]).toEqual([0, 0, 1])
      })
    )
  )

  it.effect("a process that misses the announcement answers from its copy for at most maxStalenessMs", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const owner = ownerOf()
        const draft = yield* policies((p) =>
          p.create(owner, { name: "d", mode: "rules", decision: "deny", conditions: [{ field: "details", op: "eq", value: "pay" }] } as any, audit)
        )
        const here = yield* OrgSnapshots
        // Another process whose fan-out hears nothing of this one's announcements.
        const deaf = OrgSnapshots.layerWith({ maxStalenessMs: 300 }).pipe(Layer.provide(platformMemoryLayer()))
        const there = Context.get(yield* Layer.build(Layer.fresh(deaf)), OrgSnapshots)
        const countThere = Effect.map(there.get(owner.orgUuid), (snapshot) => snapshot.policies.length)
        const sql = yield* SqlClient.SqlClient
        // Its copy's age is measured on Effect's Clock (the cache's time to live): a TestClock here, moved past maxStalenessMs.
        const { before, missed, after, version } = yield* Effect.gen(function* () {
          const before = yield* countThere
          yield* Effect.orDie(sql`UPDATE policies SET status = 'active' WHERE id = ${draft.id}`)
          const version = yield* here.changed(owner.orgUuid)
          const missed = yield* countThere
          yield* TestClock.adjust("400 millis")
          const after = yield* there.get(owner.orgUuid)
          return { before, missed, after, version }
        }).pipe(Effect.provide(TestClock.layer()))
        expect([before, missed, after.policies.length]).toEqual([0, 0, 1])
        expect(after.version).toBe(version)
      })
    )
  )

  it.effect("versions come from the database: a fresh actor's version is above every version handed out before", () =>
    Effect.gen(function* () {
      const owner = ownerOf()
      const first = yield* versionOf(owner)
      const sql = yield* SqlClient.SqlClient
      const [{ last }] = yield* Effect.orDie(sql<{ last: string }>`SELECT last_value AS last FROM org_snapshot_versions`)
      expect(first).toBeLessThanOrEqual(Number(last))
      const other = yield* versionOf(ownerOf())
      expect(other).toBeGreaterThan(first)
    })
  )

  it.effect("the cached path is far cheaper than an actor round trip per evaluation", () =>
    Effect.gen(function* () {
    const owner = ownerOf()
    yield* policies((p) =>
      p.create(owner, { name: "r", mode: "rules", decision: "deny", conditions: [{ field: "context.amount", op: "gt", value: 1e9 }], activate: true } as any, audit)
    )
    const n = 2000
    const timed = (effect: Effect.Effect<unknown, never, Services>) =>
      Effect.gen(function* () {
        yield* effect
        const start = performance.now()
        for (let i = 0; i < n; i++) yield* effect
        return ((performance.now() - start) * 1000) / n
      })
    const cached = yield* timed(Effect.flatMap(Effect.service(PolicyDecisions), (d) => d.evaluate(owner.orgUuid, subject)))
    const viaActor = yield* timed(Effect.flatMap(Effect.service(OrgSnapshots), (o) => o.fetch(owner.orgUuid)))
    console.log(`evaluate (local cache): ${cached.toFixed(1)} µs/call; actor Snapshot round trip: ${viaActor.toFixed(1)} µs/call`)
    expect(cached).toBeLessThan(viaActor)
    })
  )
})
