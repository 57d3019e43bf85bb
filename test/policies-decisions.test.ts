/**
 * PolicyDecisions against the real database (a fresh one on DATABASE_URL's
 * server, or on the run's embedded PostgreSQL): deny wins, priority picks the reported policy, scope filters, the
 * snapshot is invalidated by PATCH / deactivate, evaluation counts are batched.
 */
import { expect } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { Principal } from "../protocol/auth.js"
import { type ActionSubject, PolicyDecisions } from "../src/policies/ports.js"
import { Policies, policiesLayer } from "../src/policies/service.js"
import { PolicySnapshots } from "../src/policies/snapshot.js"
import { modelCallsOnFreshDatabase, orgActorsOnFreshDatabase } from "./support/database.js"
import { liveLayer } from "./support/effect.js"

let orgCounter = 0
const principalFor = (): Principal =>
  ({ kind: "api_key", orgUuid: `org-${Date.now()}-${++orgCounter}`, userUuid: "user-1", email: "a@b.c", role: "owner", scopes: ["*"], keyId: "key-1" }) as Principal

const audit = { requestId: null }

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
  Effect.flatMap(Policies, (policies) => policies.create(principal, { activate: true, mode: "rules", ...body } as any, audit))

const evaluate = (principal: Principal, input: ActionSubject) =>
  Effect.flatMap(PolicyDecisions, (decisions) => decisions.evaluate(principal.orgUuid, input))

liveLayer(policiesLayer.pipe(Layer.provideMerge(modelCallsOnFreshDatabase), Layer.provideMerge(orgActorsOnFreshDatabase)))("PolicyDecisions", (it) => {
  it.effect("allows when no policy is active", () =>
    Effect.gen(function* () {
    const verdict = yield* evaluate(principalFor(), subject())
    expect(verdict).toMatchObject({ decision: "allow", policy_uuid: null, warnings: [] })
    })
  )

  it.effect("deny wins over a higher-priority require_approval; the highest-priority deny is reported", () =>
    Effect.gen(function* () {
    const principal = principalFor()
    const big = [{ field: "context.amount", op: "gt", value: 1000 }]
    yield* createPolicy(principal, { name: "review", decision: "require_approval", priority: 100, conditions: big })
    const lowDeny = yield* createPolicy(principal, { name: "deny low", decision: "deny", priority: 1, conditions: big })
    const highDeny = yield* createPolicy(principal, { name: "deny high", decision: "deny", priority: 50, conditions: big })
    const verdict = yield* evaluate(principal, subject())
    expect(verdict.decision).toBe("deny")
    expect(verdict.policy_uuid).toBe(highDeny.id)
    expect(verdict.policy_uuid).not.toBe(lowDeny.id)
    const small = yield* evaluate(principal, subject({ context: { amount: 10 } }))
    expect(small).toMatchObject({ decision: "allow", policy_uuid: null })
    })
  )

  it.effect("drafts do not take part; scope restricts agents and action types", () =>
    Effect.gen(function* () {
    const principal = principalFor()
    yield* createPolicy(principal, { name: "draft", decision: "deny", activate: false, conditions: [{ field: "action_type", op: "eq", value: "payment" }] })
    const scoped = yield* createPolicy(principal, {
      name: "scoped",
      decision: "require_approval",
      conditions: [{ field: "action_type", op: "eq", value: "payment" }],
      scope: { agent_ids: ["bot-2"], action_types: ["payment"] }
    })
    expect((yield* evaluate(principal, subject())).decision).toBe("allow")
    const inScope = yield* evaluate(principal, subject({ agent_id: "bot-2" }))
    expect(inScope).toMatchObject({ decision: "require_approval", policy_uuid: scoped.id })
    })
  )

  it.effect("sees a PATCH and a deactivate immediately (snapshot invalidated)", () =>
    Effect.gen(function* () {
    const principal = principalFor()
    const policy = yield* createPolicy(principal, { name: "gate", decision: "deny", conditions: [{ field: "context.amount", op: "gt", value: 1000 }] })
    expect((yield* evaluate(principal, subject())).decision).toBe("deny")
    yield* Effect.flatMap(Policies, (p) => p.update(principal, policy.id, { conditions: [{ field: "context.amount", op: "gt", value: 9000 }] }, audit))
    expect((yield* evaluate(principal, subject())).decision).toBe("allow")
    yield* Effect.flatMap(Policies, (p) => p.update(principal, policy.id, { decision: "require_approval", conditions: [{ field: "context.amount", op: "gt", value: 1 }] }, audit))
    expect((yield* evaluate(principal, subject())).decision).toBe("require_approval")
    yield* Effect.flatMap(Policies, (p) => p.deactivate(principal, policy.id, audit))
    expect((yield* evaluate(principal, subject())).decision).toBe("allow")
    })
  )

  it.effect("caches the snapshot (same object) until a change bumps its version", () =>
    Effect.gen(function* () {
    const principal = principalFor()
    const policy = yield* createPolicy(principal, { name: "c", decision: "deny", conditions: [{ field: "details", op: "contains", value: "x" }] })
    // The change's announcement comes back through the fan-out; a copy fetched before it lands is used once, not kept.
    yield* Effect.sleep("20 millis")
    const first = yield* Effect.flatMap(PolicySnapshots, (s) => s.get(principal.orgUuid))
    const second = yield* Effect.flatMap(PolicySnapshots, (s) => s.get(principal.orgUuid))
    expect(second).toBe(first)
    yield* Effect.flatMap(Policies, (p) => p.update(principal, policy.id, { priority: 3 }, audit))
    const third = yield* Effect.flatMap(PolicySnapshots, (s) => s.get(principal.orgUuid))
    expect(third.version).toBeGreaterThan(first.version)
    expect(third.policies[0]!.priority).toBe(3)
    })
  )

  it.effect("counts evaluations in memory and flushes them in one UPDATE", () =>
    Effect.gen(function* () {
    const principal = principalFor()
    const policy = yield* createPolicy(principal, { name: "count", decision: "allow", conditions: [{ field: "action_type", op: "eq", value: "payment" }] })
    yield* evaluate(principal, subject())
    yield* evaluate(principal, subject())
    yield* evaluate(principal, subject())
    const stored = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT evaluation_count, last_evaluated_at FROM policies WHERE id = ${policy.id}`)
    // Not written per request...
    expect(Number((yield* stored)[0]!.evaluation_count)).toBe(0)
    // ...but visible on the detail output of this process, and stored after a flush.
    const detail = yield* Effect.flatMap(Policies, (p) => p.get(principal, policy.id))
    expect(detail.evaluation_count).toBe(3)
    expect(detail.last_evaluated_at).not.toBeNull()
    yield* Effect.flatMap(PolicySnapshots, (s) => s.flush)
    const after = yield* stored
    expect(Number(after[0]!.evaluation_count)).toBe(3)
    expect(after[0]!.last_evaluated_at).not.toBeNull()
    const again = yield* Effect.flatMap(Policies, (p) => p.get(principal, policy.id))
    expect(again.evaluation_count).toBe(3)
    })
  )
})
