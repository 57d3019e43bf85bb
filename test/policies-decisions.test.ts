/**
 * PolicyDecisions against the real database (a fresh one on DATABASE_URL's
 * server, or on the run's embedded PostgreSQL): deny wins, priority picks the reported policy, scope filters, the
 * snapshot is invalidated by PATCH / deactivate, evaluation counts are batched.
 */
import { Effect, Layer, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { orgActorsLayer } from "../actors/org.js"
import { memoryRunner } from "../actors/runner.js"
import type { Principal } from "../protocol/auth.js"
import { databaseLayer } from "../src/platform/db/index.js"
import { platformMemoryLayer } from "../src/platform/redis/index.js"
import { type ActionSubject, PolicyDecisions } from "../src/policies/ports.js"
import { Policies, policiesLayer } from "../src/policies/service.js"
import { PolicySnapshots } from "../src/policies/snapshot.js"
import { type FreshDatabase, freshDatabaseUrl, UNUSED_DATA_DIR } from "./support/database.js"

let fresh: FreshDatabase | undefined
let runtime: ManagedRuntime.ManagedRuntime<Policies | PolicyDecisions | PolicySnapshots | SqlClient.SqlClient, unknown>

beforeAll(async () => {
  fresh = await freshDatabaseUrl()
  const infrastructure = Layer.mergeAll(databaseLayer({ url: fresh.url, dataDir: UNUSED_DATA_DIR }), platformMemoryLayer())
  runtime = ManagedRuntime.make(policiesLayer.pipe(Layer.provideMerge(orgActorsLayer().pipe(Layer.provide(memoryRunner({ maxResidentEntities: 10_000, entityMaxIdleMs: 60_000 })))),
    Layer.provideMerge(infrastructure)
  ))
  await runtime.runPromise(Effect.void)
}, 60_000)

afterAll(async () => {
  await runtime?.dispose()
  await fresh?.drop()
})

let orgCounter = 0
const principalFor = (): Principal =>
  ({ kind: "api_key", orgUuid: `org-${Date.now()}-${++orgCounter}`, userUuid: "user-1", email: "a@b.c", role: "owner", scopes: ["*"], keyId: "key-1" }) as Principal

const audit = { requestId: null }
const run = <A, E>(effect: Effect.Effect<A, E, Policies | PolicyDecisions | PolicySnapshots | SqlClient.SqlClient>) => runtime.runPromise(effect)

const subject = (extra: Partial<ActionSubject> = {}): ActionSubject => ({
  action_type: "payment",
  details: "pay the invoice",
  agent_id: "bot-1",
  agent_version: null,
  model_id: null,
  model_version: null,
  endpoint_url: null,
  instruction_hash: null,
  context: { amount: 5000 },
  ...extra
})

const createPolicy = (principal: Principal, body: Record<string, unknown>) =>
  run(Effect.flatMap(Effect.service(Policies), (policies) => policies.create(principal, { activate: true, mode: "rules", ...body } as any, audit)))

const evaluate = (principal: Principal, input: ActionSubject) =>
  run(Effect.flatMap(Effect.service(PolicyDecisions), (decisions) => decisions.evaluate(principal.orgUuid, input)))

describe("PolicyDecisions", () => {
  it("allows when no policy is active", async () => {
    const verdict = await evaluate(principalFor(), subject())
    expect(verdict).toMatchObject({ decision: "allow", policy_uuid: null, warnings: [] })
  })

  it("deny wins over a higher-priority require_approval; the highest-priority deny is reported", async () => {
    const principal = principalFor()
    const big = [{ field: "context.amount", op: "gt", value: 1000 }]
    await createPolicy(principal, { name: "review", decision: "require_approval", priority: 100, conditions: big })
    const lowDeny = await createPolicy(principal, { name: "deny low", decision: "deny", priority: 1, conditions: big })
    const highDeny = await createPolicy(principal, { name: "deny high", decision: "deny", priority: 50, conditions: big })
    const verdict = await evaluate(principal, subject())
    expect(verdict.decision).toBe("deny")
    expect(verdict.policy_uuid).toBe(highDeny.id)
    expect(verdict.policy_uuid).not.toBe(lowDeny.id)
    const small = await evaluate(principal, subject({ context: { amount: 10 } }))
    expect(small).toMatchObject({ decision: "allow", policy_uuid: null })
  })

  it("drafts do not take part; scope restricts agents and action types", async () => {
    const principal = principalFor()
    await createPolicy(principal, { name: "draft", decision: "deny", activate: false, conditions: [{ field: "action_type", op: "eq", value: "payment" }] })
    const scoped = await createPolicy(principal, {
      name: "scoped",
      decision: "require_approval",
      conditions: [{ field: "action_type", op: "eq", value: "payment" }],
      scope: { agent_ids: ["bot-2"], action_types: ["payment"] }
    })
    expect((await evaluate(principal, subject())).decision).toBe("allow")
    const inScope = await evaluate(principal, subject({ agent_id: "bot-2" }))
    expect(inScope).toMatchObject({ decision: "require_approval", policy_uuid: scoped.id })
  })

  it("sees a PATCH and a deactivate immediately (snapshot invalidated)", async () => {
    const principal = principalFor()
    const policy = await createPolicy(principal, { name: "gate", decision: "deny", conditions: [{ field: "context.amount", op: "gt", value: 1000 }] })
    expect((await evaluate(principal, subject())).decision).toBe("deny")
    await run(Effect.flatMap(Effect.service(Policies), (p) => p.update(principal, policy.id, { conditions: [{ field: "context.amount", op: "gt", value: 9000 }] }, audit)))
    expect((await evaluate(principal, subject())).decision).toBe("allow")
    await run(Effect.flatMap(Effect.service(Policies), (p) => p.update(principal, policy.id, { decision: "require_approval", conditions: [{ field: "context.amount", op: "gt", value: 1 }] }, audit)))
    expect((await evaluate(principal, subject())).decision).toBe("require_approval")
    await run(Effect.flatMap(Effect.service(Policies), (p) => p.deactivate(principal, policy.id, audit)))
    expect((await evaluate(principal, subject())).decision).toBe("allow")
  })

  it("caches the snapshot (same object) until a change bumps its version", async () => {
    const principal = principalFor()
    const policy = await createPolicy(principal, { name: "c", decision: "deny", conditions: [{ field: "details", op: "contains", value: "x" }] })
    const first = await run(Effect.flatMap(Effect.service(PolicySnapshots), (s) => s.get(principal.orgUuid)))
    const second = await run(Effect.flatMap(Effect.service(PolicySnapshots), (s) => s.get(principal.orgUuid)))
    expect(second).toBe(first)
    await run(Effect.flatMap(Effect.service(Policies), (p) => p.update(principal, policy.id, { priority: 3 }, audit)))
    const third = await run(Effect.flatMap(Effect.service(PolicySnapshots), (s) => s.get(principal.orgUuid)))
    expect(third.version).toBeGreaterThan(first.version)
    expect(third.policies[0]!.priority).toBe(3)
  })

  it("counts evaluations in memory and flushes them in one UPDATE", async () => {
    const principal = principalFor()
    const policy = await createPolicy(principal, { name: "count", decision: "allow", conditions: [{ field: "action_type", op: "eq", value: "payment" }] })
    await evaluate(principal, subject())
    await evaluate(principal, subject())
    await evaluate(principal, subject())
    const stored = async () =>
      run(Effect.flatMap(Effect.service(SqlClient.SqlClient), (sql) => sql`SELECT evaluation_count, last_evaluated_at FROM policies WHERE id = ${policy.id}`))
    // Not written per request...
    expect(Number((await stored())[0]!.evaluation_count)).toBe(0)
    // ...but visible on the detail output of this process, and stored after a flush.
    const detail = await run(Effect.flatMap(Effect.service(Policies), (p) => p.get(principal, policy.id)))
    expect(detail.evaluation_count).toBe(3)
    expect(detail.last_evaluated_at).not.toBeNull()
    await run(Effect.flatMap(Effect.service(PolicySnapshots), (s) => s.flush))
    const after = await stored()
    expect(Number(after[0]!.evaluation_count)).toBe(3)
    expect(after[0]!.last_evaluated_at).not.toBeNull()
    const again = await run(Effect.flatMap(Effect.service(Policies), (p) => p.get(principal, policy.id)))
    expect(again.evaluation_count).toBe(3)
  })
})
