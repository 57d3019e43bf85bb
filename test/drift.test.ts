/**
 * Drift detection (spec 002 "Drift detection"): the divergence against hand-computed values and
 * its properties, the hour buckets, then end to end over HTTP: production, synthetic and pooled
 * baselines, a stable agent (no alert) and one whose mix shifts (an alert of the expected
 * severity), live counts fed by new actions, metering, alerts with their filter, JWT-only
 * acknowledgement recording the e-mail, and the periodic check's webhook event and live frame.
 * Over the typed client (HttpApiClient over GatewayApi); bodies and queries outside the contract
 * go raw (`raw`).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql"
import fc from "fast-check"
import { proportions, score, severityOf, symmetricKl } from "../src/drift/score.js"
import { Drift } from "../src/drift/service.js"
import { AgentWindow, HOUR_MS } from "../src/drift/window.js"
import { answer, client, clientAt, raw, register } from "./support/api.js"
import { type Org, uniqueEmail } from "./support/client.js"
import { freshDatabaseUrl } from "./support/database.js"
import { liveLayer } from "./support/effect.js"
import { eventuallyEffect } from "./support/eventually.js"
import { spawnServer } from "./support/process.js"
import { Gateway } from "./support/server.js"
import { connected, subscribed } from "./support/socket-client.js"

describe("symmetric KL divergence", () => {
  it("matches a hand-computed example without smoothing", () => {
    // KL(P‖Q) + KL(Q‖P) = Σ (p - q) ln(p / q) = (-0.25) ln(0.5/0.75) + 0.25 ln(0.5/0.25) = 0.25 ln 1.5 + 0.25 ln 2
    expect(symmetricKl({ a: 0.5, b: 0.5 }, { a: 0.75, b: 0.25 }, 0)).toBeCloseTo(0.25 * Math.log(1.5) + 0.25 * Math.log(2), 12)
    expect(symmetricKl({ a: 0.5, b: 0.5 }, { a: 0.75, b: 0.25 }, 0)).toBeCloseTo(0.274653, 6)
  })

  it("matches a hand-computed example with the default smoothing (0.01 per type, renormalized)", () => {
    // p = (0.11, 0.91) / 1.02, q = (0.61, 0.41) / 1.02
    const p = [0.11 / 1.02, 0.91 / 1.02]
    const q = [0.61 / 1.02, 0.41 / 1.02]
    const expected = (p[0]! - q[0]!) * Math.log(p[0]! / q[0]!) + (p[1]! - q[1]!) * Math.log(p[1]! / q[1]!)
    expect(symmetricKl({ a: 0.1, b: 0.9 }, { a: 0.6, b: 0.4 })).toBeCloseTo(expected, 12)
    expect(expected).toBeCloseTo(1.230523, 5)
    // Counts and proportions give the same answer; a type missing on one side stays finite.
    expect(symmetricKl({ a: 10, b: 90 }, { a: 60, b: 40 })).toBeCloseTo(expected, 12)
    expect(Number.isFinite(symmetricKl({ a: 1 }, { b: 1 }))).toBe(true)
  })

  const distribution = fc.dictionary(fc.constantFrom("a", "b", "c", "d", "e", "f"), fc.integer({ min: 0, max: 1000 }), { minKeys: 1 })

  it("is symmetric, never negative, and 0 for identical distributions (property)", () => {
    fc.assert(
      fc.property(distribution, distribution, (p, q) => {
        const forward = symmetricKl(p, q)
        expect(forward).toBeGreaterThanOrEqual(0)
        expect(Math.abs(forward - symmetricKl(q, p))).toBeLessThan(1e-9)
        expect(symmetricKl(p, p)).toBeLessThan(1e-12)
        // Scaling the counts does not change the mix.
        const scaled = Object.fromEntries(Object.entries(p).map(([k, v]) => [k, v * 7]))
        expect(symmetricKl(p, scaled)).toBeLessThan(1e-9)
      }),
      { numRuns: 500 }
    )
  })
})

describe("severity", () => {
  it("follows the thresholds of docs/decisions.md", () => {
    expect(severityOf(0.05, 1, 0)).toBe("info")
    expect(severityOf(0.05, 1, 1)).toBe("low")
    expect(severityOf(0.2, 1, 0)).toBe("low")
    expect(severityOf(0.5, 1, 0)).toBe("medium")
    expect(severityOf(1.23, 1, 0)).toBe("high")
    expect(severityOf(2, 1, 0)).toBe("critical")
    expect(severityOf(0, 2.5, 0)).toBe("low")
    expect(severityOf(0, 10, 0)).toBe("critical")
    expect(severityOf(0, 0.05, 0)).toBe("critical")
    const stable = score({ dist: { a: 0.6, b: 0.4 }, perDay: 101 }, { dist: { a: 0.6, b: 0.4 }, perDay: 100 })
    expect(stable).toMatchObject({ severity: "info", is_drifting: false, new_action_types: null })
    expect(score({ dist: proportions({ a: 6, b: 4, c: 1 }), perDay: 100 }, { dist: { a: 0.6, b: 0.4 }, perDay: 100 }).new_action_types).toEqual(["c"])
  })
})

describe("hour buckets", () => {
  it("sums the buckets of the lookback and drops expired ones", () => {
    const now = Date.UTC(2026, 0, 31, 12, 30)
    const window = new AgentWindow()
    window.add("a", now, 2)
    window.add("b", now - 2 * HOUR_MS)
    window.add("a", now - 30 * HOUR_MS, 5)
    window.add("c", now - 800 * HOUR_MS)
    expect(window.counts(now, 1)).toEqual({ byType: { a: 2 }, total: 2 })
    expect(window.counts(now, 24)).toEqual({ byType: { a: 2, b: 1 }, total: 3 })
    expect(window.counts(now, 720)).toEqual({ byType: { a: 7, b: 1 }, total: 8 })
    expect(window.bucketCount).toBe(4)
    window.prune(now)
    expect(window.bucketCount).toBe(3)
  })
})

const suffix = `${process.pid}-${Date.now().toString(36)}`
const agents = { stable: `stable-${suffix}`, shifting: `shifting-${suffix}`, pooled: `pooled-${suffix}`, fresh: `fresh-${suffix}` }
const DAY = 86_400_000

/** Runs `effect` with the test server's services (its database). */
const inServer = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.flatMap(Gateway, (server) => Effect.promise(() => server.run(effect)))

/** Bulk-loads actions of an agent straight into Postgres: `mix` per day, spread over [fromMs, toMs). */
const load = (org: Org, agentId: string, mix: Record<string, number>, fromMs: number, toMs: number) =>
  inServer(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const rows: Array<Record<string, unknown>> = []
      const days = (toMs - fromMs) / DAY
      for (const [type, perDay] of Object.entries(mix)) {
        const n = Math.round(perDay * days)
        for (let i = 0; i < n; i++) {
          rows.push({
            action_uuid: `act_drift_${agentId}_${type}_${i}_${fromMs}`,
            org_uuid: org.orgUuid,
            agent_id: agentId,
            action_type: type,
            action_details_hash: "sha256:00",
            status: "authorized",
            created_at: new Date(fromMs + ((i + 0.5) * (toMs - fromMs)) / n)
          })
        }
      }
      if (rows.length > 0) yield* sql`INSERT INTO actions ${sql.insert(rows as [Record<string, unknown>, ...Array<Record<string, unknown>>])}`
    })
  )

class Orgs extends Context.Service<Orgs, { readonly org: Org; readonly other: Org }>()("test/drift/Orgs") {}

const Setup = Layer.effect(
  Orgs,
  Effect.gen(function* () {
    const orgs = yield* Effect.all({ org: register("Drift Org"), other: register("Other Drift Org") })
    const { org } = orgs
    const now = Date.now()
    // A week of history, one day old: 60 % "a", 40 % "b", 100 actions a day.
    for (const agent of [agents.stable, agents.shifting]) yield* load(org, agent, { a: 60, b: 40 }, now - 8 * DAY, now - DAY)
    // The last 20 hours: the stable agent keeps its mix and volume, the other one shifts to 10/90.
    // (Per day over 20 hours: 60 + 40 and 10 + 90 actions in all.)
    yield* load(org, agents.stable, { a: 72, b: 48 }, now - (20 / 24) * DAY, now - 60_000)
    yield* load(org, agents.shifting, { a: 12, b: 108 }, now - (20 / 24) * DAY, now - 60_000)
    yield* load(org, agents.pooled, { a: 1 }, now - 2 * DAY, now - DAY)
    yield* (yield* client(org.key)).agents.register({ payload: { agent_slug: agents.fresh, name: "Fresh agent" } })
    return orgs
  })
).pipe(Layer.provideMerge(Gateway.layer()))

const path = (agentId: string, rest = "") => `/api/v1/agents/${encodeURIComponent(agentId)}/drift${rest}`
const drift = (token: string) => Effect.map(client(token), (api) => api.drift)
const params = (agentId: string) => ({ agent_id: agentId })
const usage = (agentId: string) =>
  Effect.flatMap(Orgs, ({ org }) =>
    inServer(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql`SELECT count(*)::int AS n FROM usage_events WHERE org_uuid = ${org.orgUuid} AND event_type = 'drift_check' AND subject = ${agentId}`
        return rows[0]!.n as number
      })
    )
  )
const authorize = (token: string, payload: { readonly action_type: string; readonly details: string; readonly agent_id: string }) =>
  Effect.flatMap(client(token), (api) => api.actions.authorize({ headers: {}, payload, responseMode: "response-only" }))

const windowBody = () => ({ window_start: new Date(Date.now() - 8 * DAY).toISOString(), window_end: new Date(Date.now() - DAY).toISOString() })

liveLayer(Setup)((it) => {
  it.describe("baselines", () => {
    it.effect("answers has_baseline false without an active baseline, and 404 for unknown or other organizations' agents", () =>
      Effect.gen(function* () {
        const { org, other } = yield* Orgs
        const api = yield* drift(org.key)
        const stranger = yield* drift(other.key)
        const [none, noneReply] = yield* api.status({ params: params(agents.stable), query: {}, responseMode: "decoded-and-response" })
        expect(noneReply.status).toBe(200)
        // The keys as sent (the decoder would drop request_id).
        expect(Object.keys((yield* noneReply.json) as object).sort()).toEqual(["agent_id", "has_baseline", "is_drifting", "request_id"])
        expect(none).toMatchObject({ agent_id: agents.stable, has_baseline: false, is_drifting: false })
        expect((yield* api.status({ params: params("nobody-here"), query: {}, responseMode: "response-only" })).status).toBe(404)
        const foreign = yield* answer(stranger.status({ params: params(agents.stable), query: {}, responseMode: "response-only" }))
        expect(foreign.status).toBe(404)
        expect(foreign.body.code).toBe("NOT_FOUND")
        expect((yield* stranger.baseline({ params: params(agents.stable), payload: windowBody(), responseMode: "response-only" })).status).toBe(404)
      })
    )

    it.effect("builds a production baseline from the window's actions", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        for (const agent of [agents.stable, agents.shifting]) {
          // Raw: a field outside the contract, which the server ignores.
          const reply = yield* raw("POST", path(agent, "/baseline"), { token: org.key, body: { ...windowBody(), extra: "ignored" } })
          expect(reply.status).toBe(201)
          expect(reply.body).toMatchObject({ agent_id: agent, baseline_type: "production", is_active: true, total_actions: 700, source_agent_ids: null })
          expect(reply.body.action_type_dist.a).toBeCloseTo(0.6, 6)
          expect(reply.body.action_type_dist.b).toBeCloseTo(0.4, 6)
          expect(reply.body.avg_actions_per_day).toBeCloseTo(100, 6)
          expect(reply.body.id).toMatch(/^dbl_/)
        }
      })
    )

    it.effect("refuses bad windows with 422 VALIDATION_ERROR listing every issue", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* drift(org.key)
        const bad = yield* answer(api.baseline({ params: params(agents.stable), payload: { window_start: "yesterday", window_end: "today" }, responseMode: "response-only" }))
        expect(bad.status).toBe(422)
        expect(bad.body.code).toBe("VALIDATION_ERROR")
        expect(bad.body.details.issues.map((i: any) => i.path)).toEqual(["window_start", "window_end"])
        const reversed = yield* api.baseline({
          params: params(agents.stable),
          payload: { window_start: windowBody().window_end, window_end: windowBody().window_start },
          responseMode: "response-only"
        })
        expect(reversed.status).toBe(422)
        // Raw: a body without the window is outside the contract.
        const missing = yield* raw("POST", path(agents.stable, "/baseline"), { token: org.key, body: {} })
        expect(missing.status).toBe(422)
      })
    )

    it.effect("builds a synthetic baseline from the expected distribution", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* drift(org.key)
        const [baseline, reply] = yield* api.syntheticBaseline({
          params: params(agents.fresh),
          payload: { expected_distribution: { read: 3, write: 1 }, expected_actions_per_day: 40 },
          responseMode: "decoded-and-response"
        })
        expect(reply.status).toBe(201)
        expect(baseline).toMatchObject({
          agent_id: agents.fresh,
          baseline_type: "synthetic",
          is_active: true,
          action_type_dist: { read: 0.75, write: 0.25 },
          total_actions: 0,
          avg_actions_per_day: 40,
          source_agent_ids: null
        })
        expect(baseline.window_start).toBe(baseline.window_end)
        const empty = yield* api.syntheticBaseline({
          params: params(agents.fresh),
          payload: { expected_distribution: {}, expected_actions_per_day: 1 },
          responseMode: "response-only"
        })
        expect(empty.status).toBe(422)
        // Raw: a negative expected_actions_per_day is outside the contract.
        const negative = yield* raw("POST", path(agents.fresh, "/baseline/synthetic"), { token: org.key, body: {
          expected_distribution: { read: -1 },
          expected_actions_per_day: -2
        } })
        expect(negative.status).toBe(422)
        // The agent has no actions: its volume is far below the expected 40 a day.
        const status = yield* api.status({ params: params(agents.fresh), query: {} })
        expect(status).toMatchObject({ has_baseline: true, volume_ratio: 0, severity: "critical", is_drifting: true })
        expect(status.current_window).toMatchObject({ agent_id: agents.fresh, total_actions: 0, action_type_dist: {} })
      })
    )

    it.effect("builds a pooled baseline from several agents, per source agent", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* drift(org.key)
        const [baseline, reply] = yield* api.pooledBaseline({
          params: params(agents.pooled),
          payload: { source_agent_ids: [agents.stable, agents.shifting], ...windowBody() },
          responseMode: "decoded-and-response"
        })
        expect(reply.status).toBe(201)
        expect(baseline).toMatchObject({ baseline_type: "pooled", total_actions: 1400, source_agent_ids: [agents.stable, agents.shifting] })
        expect(baseline.action_type_dist.a).toBeCloseTo(0.6, 6)
        expect(baseline.avg_actions_per_day).toBeCloseTo(100, 6)
        const unknown = yield* answer(
          api.pooledBaseline({
            params: params(agents.pooled),
            payload: { source_agent_ids: [agents.stable, "ghost-agent"], ...windowBody() },
            responseMode: "response-only"
          })
        )
        expect(unknown.status).toBe(422)
        expect(unknown.body.details.issues[0].path).toBe("source_agent_ids[1]")
        // Raw: an empty source_agent_ids is outside the contract.
        const none = yield* raw("POST", path(agents.pooled, "/baseline/pooled"), { token: org.key, body: { source_agent_ids: [], ...windowBody() } })
        expect(none.status).toBe(422)
      })
    )
  })

  it.describe("scoring and checks", () => {
    it.effect("a stable agent does not drift: GET is read-only, the check answers null and is metered", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* drift(org.key)
        const [status, statusReply] = yield* api.status({ params: params(agents.stable), query: {}, responseMode: "decoded-and-response" })
        expect(statusReply.status).toBe(200)
        expect(status).toMatchObject({ agent_id: agents.stable, has_baseline: true, severity: "info", is_drifting: false, new_action_types: null })
        expect(status.current_window!.total_actions).toBe(100)
        expect(status.kl_divergence).toBeLessThan(0.01)
        expect(status.volume_ratio).toBeGreaterThan(0.9)
        expect(status.volume_ratio).toBeLessThan(1.1)
        expect(yield* usage(agents.stable)).toBe(0)
        const [check, checkReply] = yield* api.check({ params: params(agents.stable), query: {}, responseMode: "decoded-and-response" })
        expect(checkReply.status).toBe(200)
        expect(check).toBeNull()
        expect(yield* usage(agents.stable)).toBe(1)
        const alerts = yield* api.alerts({ params: params(agents.stable), query: {} })
        expect(alerts.data).toEqual([])
      })
    )

    it.effect("an agent whose mix shifts raises a high alert, stored and listed", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* drift(org.key)
        const status = yield* api.status({ params: params(agents.shifting), query: { lookback_hours: 24 } })
        expect(status.kl_divergence).toBeCloseTo(1.2305, 2)
        expect(status).toMatchObject({ severity: "high", is_drifting: true })
        const [check, checkReply] = yield* api.check({ params: params(agents.shifting), query: {}, responseMode: "decoded-and-response" })
        expect(checkReply.status).toBe(200)
        expect(check).toMatchObject({ agent_id: agents.shifting, severity: "high", acknowledged_at: null, acknowledged_by: null, new_action_types: null })
        expect(check!.baseline_uuid).toBe(status.baseline!.id)
        expect(yield* usage(agents.shifting)).toBe(1)
        const alerts = yield* api.alerts({ params: params(agents.shifting), query: {} })
        expect(alerts.data.map((a) => a.id)).toEqual([check!.id])
        expect(alerts.pagination).toEqual({ page: 1, per_page: 50, total: 1, has_more: false })
        const webhook = yield* inServer(
          Effect.gen(function* () {
            const sql = yield* SqlClient.SqlClient
            return yield* sql`SELECT data FROM events WHERE org_uuid = ${org.orgUuid} AND type = 'drift.alert' AND data->>'id' = ${check!.id}`
          })
        )
        expect(webhook).toHaveLength(1)
      })
    )

    it.effect("counts new actions as they arrive, without a rescan", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* drift(org.key)
        const before = yield* api.status({ params: params(agents.stable), query: {} })
        for (let i = 0; i < 10; i++) {
          const reply = yield* authorize(org.key, { action_type: "c", details: "new kind of work", agent_id: agents.stable })
          expect(reply.status).toBe(201)
        }
        // Postgres now holds a row the live window must not count twice: a row inserted behind its back is not seen.
        yield* load(org, agents.stable, { z: 24 }, Date.now() - 3_600_000, Date.now() - 60_000)
        const after = yield* api.status({ params: params(agents.stable), query: {} })
        expect(after.current_window!.total_actions).toBe(before.current_window!.total_actions + 10)
        expect(after.new_action_types).toEqual(["c"])
        expect(after.is_drifting).toBe(true)
      })
    )

    it.effect("a check without an active baseline answers null and is still metered; another organization's agent is 404", () =>
      Effect.gen(function* () {
        const { org, other } = yield* Orgs
        const api = yield* drift(org.key)
        const before = yield* usage(agents.fresh)
        const [inactive, inactiveReply] = yield* api.syntheticBaseline({
          params: params(agents.fresh),
          payload: { expected_distribution: { read: 1 }, expected_actions_per_day: 40, activate: false },
          responseMode: "decoded-and-response"
        })
        expect(inactiveReply.status).toBe(201)
        expect(inactive.is_active).toBe(false)
        // The earlier synthetic baseline stays the active one.
        const status = yield* api.status({ params: params(agents.fresh), query: {} })
        expect(status.baseline!.action_type_dist).toEqual({ read: 0.75, write: 0.25 })
        const noBaseline = `no-baseline-${suffix}`
        expect((yield* authorize(org.key, { action_type: "x", details: "x", agent_id: noBaseline })).status).toBe(201)
        const [check, checkReply] = yield* api.check({ params: params(noBaseline), query: {}, responseMode: "decoded-and-response" })
        expect(checkReply.status).toBe(200)
        expect(check).toBeNull()
        expect(yield* usage(noBaseline)).toBe(1)
        expect((yield* (yield* drift(other.key)).check({ params: params(agents.fresh), query: {}, responseMode: "response-only" })).status).toBe(404)
        expect(yield* usage(agents.fresh)).toBe(before)
      })
    )

    it.effect("validates lookback_hours and per_page", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* drift(org.key)
        // Raw: values outside the contract's ranges (lookback_hours 1-720, per_page 1-200), which the typed client would not encode.
        for (const bad of ["0", "721", "x"]) expect((yield* raw("GET", path(agents.stable, `?lookback_hours=${bad}`), { token: org.key })).status).toBe(422)
        expect((yield* raw("POST", path(agents.stable, "/check?lookback_hours=721"), { token: org.key })).status).toBe(422)
        expect((yield* api.status({ params: params(agents.stable), query: { lookback_hours: 720 }, responseMode: "response-only" })).status).toBe(200)
        expect((yield* raw("GET", path(agents.shifting, "/alerts?per_page=201"), { token: org.key })).status).toBe(422)
        expect((yield* raw("GET", path(agents.shifting, "/alerts?per_page=0"), { token: org.key })).status).toBe(422)
        const [max, maxReply] = yield* api.alerts({ params: params(agents.shifting), query: { per_page: 200 }, responseMode: "decoded-and-response" })
        expect(maxReply.status).toBe(200)
        expect(max.pagination.per_page).toBe(200)
      })
    )
  })

  it.describe("acknowledgement", () => {
    it.effect("needs a JWT, records the user's e-mail, and the filter follows", () =>
      Effect.gen(function* () {
        const { org, other } = yield* Orgs
        const api = yield* drift(org.key)
        const dashboard = yield* drift(org.token)
        const alerts = yield* api.alerts({ params: params(agents.shifting), query: { acknowledged: "false" } })
        const alert = alerts.data[0]!
        const alertParams = { agent_id: agents.shifting, alert_id: alert.id }
        const withKey = yield* answer(api.acknowledge({ params: alertParams, responseMode: "response-only" }))
        expect(withKey.status).toBe(401)
        expect(withKey.body.code).toBe("UNAUTHORIZED")
        const foreign = yield* (yield* drift(other.token)).acknowledge({ params: alertParams, responseMode: "response-only" })
        expect(foreign.status).toBe(404)
        const missing = yield* answer(dashboard.acknowledge({ params: { agent_id: agents.shifting, alert_id: "dal_missing" }, responseMode: "response-only" }))
        expect(missing.status).toBe(404)
        expect(missing.body.code).toBe("NOT_FOUND")
        const [done, doneReply] = yield* dashboard.acknowledge({ params: alertParams, responseMode: "decoded-and-response" })
        expect(doneReply.status).toBe(200)
        expect(done).toMatchObject({ id: alert.id, acknowledged_by: org.email })
        expect(Date.parse(done.acknowledged_at!)).toBeGreaterThan(Date.now() - 60_000)
        const open = yield* api.alerts({ params: params(agents.shifting), query: { acknowledged: "false" } })
        expect(open.data).toEqual([])
        const acknowledged = yield* api.alerts({ params: params(agents.shifting), query: { acknowledged: "true" } })
        expect(acknowledged.data.map((a) => a.id)).toEqual([alert.id])
      })
    )
  })

  it.describe("periodic check", () => {
    it.effect("pushes new alerts to notifications and drift.alert, once per open alert", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const { org } = yield* Orgs
        const watcher = yield* Effect.acquireRelease(
          Effect.promise(() => connected(`ws://127.0.0.1:${server.config.port}/api/v1/ws`, org.token)),
          (socket) => Effect.sync(() => socket.close())
        )
        yield* Effect.promise(() => subscribed(watcher, "notifications"))
        const runCheck = Effect.promise(() =>
          server.run(
            Effect.gen(function* () {
              const drift = yield* Drift
              return yield* drift.checkAll
            })
          )
        )
        const first = yield* runCheck
        // The shifting agent's alert was acknowledged: a new one; the fresh agent's synthetic baseline: one; the stable agent drifts now too.
        expect(first).toBeGreaterThanOrEqual(2)
        const frame = yield* Effect.promise(() => watcher.next((f) => f.type === "event" && f.data?.event === "drift.alert" && f.data.agent_id === agents.fresh))
        expect(frame.channel).toBe("notifications")
        expect(frame.data.type).toBe("notification.created")
        expect(frame.data.alert).toMatchObject({ agent_id: agents.fresh, severity: "critical" })
        expect(yield* runCheck).toBe(0)
      })
    )
  })
})

const sharedRedis = Boolean(process.env.REDIS_URL)
if (!sharedRedis) console.log("drift: the two-process live-count test needs REDIS_URL; it did not run")

describe.runIf(sharedRedis)("two gateway processes sharing Postgres and Redis", () => {
  it.live(
    "count each other's new actions in an agent's live window",
    () =>
      Effect.gen(function* () {
        const database = yield* Effect.acquireRelease(
          Effect.promise(() => freshDatabaseUrl()),
          (fresh) => Effect.promise(() => fresh.drop())
        )
        const env = {
          DATABASE_URL: database.url,
          REDIS_URL: process.env.REDIS_URL!,
          REDIS_KEY_PREFIX: `drift-${process.pid}-${Date.now()}:`,
          MASTER_KEY: "2222222222222222222222222222222222222222222222222222222222222222",
          RATE_LIMIT_PER_MINUTE: "100000",
          DATA_DIR: `/tmp/gw-drift-${process.pid}`
        }
        const spawned = Effect.acquireRelease(
          Effect.promise(() => spawnServer(env)),
          (server) => Effect.promise(() => server.stop())
        )
        const first = yield* spawned
        const second = yield* spawned
        const registered = yield* (yield* clientAt(first.url)).auth.register({
          payload: { email: uniqueEmail("owner"), password: "correct horse battery staple", org_name: "Two nodes" }
        })
        const key = registered.api_key.key
        const one = yield* clientAt(first.url, key)
        const two = yield* clientAt(second.url, key)
        const agent = `two-node-agent-${process.pid}`
        expect((yield* one.agents.register({ payload: { agent_slug: agent, name: "Two nodes" }, responseMode: "response-only" })).status).toBe(201)
        const [, baselineReply] = yield* two.drift.syntheticBaseline({
          params: params(agent),
          payload: { expected_distribution: { read: 1 }, expected_actions_per_day: 10 },
          responseMode: "decoded-and-response"
        })
        expect(baselineReply.status).toBe(201)
        const total = Effect.map(two.drift.status({ params: params(agent), query: {} }), (status) => status.current_window!.total_actions)
        // The second process builds the agent's window now (nothing yet), then only hears of new actions.
        expect(yield* total).toBe(0)
        for (let i = 0; i < 10; i++) {
          const created = yield* one.actions.authorize({ headers: {}, payload: { action_type: "write", details: `w${i}`, agent_id: agent }, responseMode: "response-only" })
          expect(created.status).toBe(201)
        }
        yield* eventuallyEffect(Effect.map(total, (counted) => expect(counted, "the second process's count of the first's 10 actions").toBe(10)), { intervalMs: 50 })
        const status = yield* two.drift.status({ params: params(agent), query: {} })
        expect(status.current_window!.action_type_dist).toEqual({ write: 1 })
        expect(status.new_action_types).toEqual(["write"])
      }),
    120_000
  )
})
