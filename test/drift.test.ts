/**
 * Drift detection (spec 002 "Drift detection"): the divergence against hand-computed values and
 * its properties, the hour buckets, then end to end over HTTP: production, synthetic and pooled
 * baselines, a stable agent (no alert) and one whose mix shifts (an alert of the expected
 * severity), live counts fed by new actions, metering, alerts with their filter, JWT-only
 * acknowledgement recording the e-mail, and the periodic check's webhook event and live frame.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import fc from "fast-check"
import { beforeAll, describe, expect, it } from "vitest"
import { proportions, score, severityOf, symmetricKl } from "../src/drift/score.js"
import { Drift } from "../src/drift/service.js"
import { AgentWindow, HOUR_MS } from "../src/drift/window.js"
import { call, registerOrg } from "./support/client.js"
import { freshDatabaseUrl } from "./support/database.js"
import { useFixture } from "./support/fixture.js"
import { spawnServer } from "./support/process.js"
import { useServer } from "./support/server.js"
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

const server = useServer()
const org = useFixture(() => registerOrg(server.url, "Drift Org"))
const other = useFixture(() => registerOrg(server.url, "Other Drift Org"))

const suffix = `${process.pid}-${Date.now().toString(36)}`
const agents = { stable: `stable-${suffix}`, shifting: `shifting-${suffix}`, pooled: `pooled-${suffix}`, fresh: `fresh-${suffix}` }
const DAY = 86_400_000

/** Bulk-loads actions of an agent straight into Postgres: `mix` per day, spread over [fromMs, toMs). */
const load = (agentId: string, mix: Record<string, number>, fromMs: number, toMs: number) =>
  server.run(
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

const path = (agentId: string, rest = "") => `/api/v1/agents/${encodeURIComponent(agentId)}/drift${rest}`
const usage = (agentId: string) =>
  server.run(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql`SELECT count(*)::int AS n FROM usage_events WHERE org_uuid = ${org.orgUuid} AND event_type = 'drift_check' AND subject = ${agentId}`
      return rows[0]!.n as number
    })
  )

beforeAll(async () => {
  const now = Date.now()
  // A week of history, one day old: 60 % "a", 40 % "b", 100 actions a day.
  for (const agent of [agents.stable, agents.shifting]) await load(agent, { a: 60, b: 40 }, now - 8 * DAY, now - DAY)
  // The last 20 hours: the stable agent keeps its mix and volume, the other one shifts to 10/90.
  // (Per day over 20 hours: 60 + 40 and 10 + 90 actions in all.)
  await load(agents.stable, { a: 72, b: 48 }, now - (20 / 24) * DAY, now - 60_000)
  await load(agents.shifting, { a: 12, b: 108 }, now - (20 / 24) * DAY, now - 60_000)
  await load(agents.pooled, { a: 1 }, now - 2 * DAY, now - DAY)
  const registered = await call(server.url, "POST", "/api/v1/agents", { token: org.key, body: { agent_slug: agents.fresh, name: "Fresh agent" } })
  expect(registered.status).toBe(201)
})

const windowBody = () => ({ window_start: new Date(Date.now() - 8 * DAY).toISOString(), window_end: new Date(Date.now() - DAY).toISOString() })

describe("baselines", () => {
  it("answers has_baseline false without an active baseline, and 404 for unknown or other organizations' agents", async () => {
    const none = await call(server.url, "GET", path(agents.stable), { token: org.key })
    expect(none.status).toBe(200)
    expect(Object.keys(none.body).sort()).toEqual(["agent_id", "has_baseline", "is_drifting", "request_id"])
    expect(none.body).toMatchObject({ agent_id: agents.stable, has_baseline: false, is_drifting: false })
    expect((await call(server.url, "GET", path("nobody-here"), { token: org.key })).status).toBe(404)
    const foreign = await call(server.url, "GET", path(agents.stable), { token: other.key })
    expect(foreign.status).toBe(404)
    expect(foreign.body.code).toBe("NOT_FOUND")
    expect((await call(server.url, "POST", path(agents.stable, "/baseline"), { token: other.key, body: windowBody() })).status).toBe(404)
  })

  it("builds a production baseline from the window's actions", async () => {
    for (const agent of [agents.stable, agents.shifting]) {
      const reply = await call(server.url, "POST", path(agent, "/baseline"), { token: org.key, body: { ...windowBody(), extra: "ignored" } })
      expect(reply.status).toBe(201)
      expect(reply.body).toMatchObject({ agent_id: agent, baseline_type: "production", is_active: true, total_actions: 700, source_agent_ids: null })
      expect(reply.body.action_type_dist.a).toBeCloseTo(0.6, 6)
      expect(reply.body.action_type_dist.b).toBeCloseTo(0.4, 6)
      expect(reply.body.avg_actions_per_day).toBeCloseTo(100, 6)
      expect(reply.body.id).toMatch(/^dbl_/)
    }
  })

  it("refuses bad windows with 422 VALIDATION_ERROR listing every issue", async () => {
    const bad = await call(server.url, "POST", path(agents.stable, "/baseline"), { token: org.key, body: { window_start: "yesterday", window_end: "today" } })
    expect(bad.status).toBe(422)
    expect(bad.body.code).toBe("VALIDATION_ERROR")
    expect(bad.body.details.issues.map((i: any) => i.path)).toEqual(["window_start", "window_end"])
    const reversed = await call(server.url, "POST", path(agents.stable, "/baseline"), {
      token: org.key,
      body: { window_start: windowBody().window_end, window_end: windowBody().window_start }
    })
    expect(reversed.status).toBe(422)
    const missing = await call(server.url, "POST", path(agents.stable, "/baseline"), { token: org.key, body: {} })
    expect(missing.status).toBe(422)
  })

  it("builds a synthetic baseline from the expected distribution", async () => {
    const reply = await call(server.url, "POST", path(agents.fresh, "/baseline/synthetic"), {
      token: org.key,
      body: { expected_distribution: { read: 3, write: 1 }, expected_actions_per_day: 40 }
    })
    expect(reply.status).toBe(201)
    expect(reply.body).toMatchObject({
      agent_id: agents.fresh,
      baseline_type: "synthetic",
      is_active: true,
      action_type_dist: { read: 0.75, write: 0.25 },
      total_actions: 0,
      avg_actions_per_day: 40,
      source_agent_ids: null
    })
    expect(reply.body.window_start).toBe(reply.body.window_end)
    const empty = await call(server.url, "POST", path(agents.fresh, "/baseline/synthetic"), {
      token: org.key,
      body: { expected_distribution: {}, expected_actions_per_day: 1 }
    })
    expect(empty.status).toBe(422)
    const negative = await call(server.url, "POST", path(agents.fresh, "/baseline/synthetic"), {
      token: org.key,
      body: { expected_distribution: { read: -1 }, expected_actions_per_day: -2 }
    })
    expect(negative.status).toBe(422)
    // The agent has no actions: its volume is far below the expected 40 a day.
    const status = await call(server.url, "GET", path(agents.fresh), { token: org.key })
    expect(status.body).toMatchObject({ has_baseline: true, volume_ratio: 0, severity: "critical", is_drifting: true })
    expect(status.body.current_window).toMatchObject({ agent_id: agents.fresh, total_actions: 0, action_type_dist: {} })
  })

  it("builds a pooled baseline from several agents, per source agent", async () => {
    const reply = await call(server.url, "POST", path(agents.pooled, "/baseline/pooled"), {
      token: org.key,
      body: { source_agent_ids: [agents.stable, agents.shifting], ...windowBody() }
    })
    expect(reply.status).toBe(201)
    expect(reply.body).toMatchObject({ baseline_type: "pooled", total_actions: 1400, source_agent_ids: [agents.stable, agents.shifting] })
    expect(reply.body.action_type_dist.a).toBeCloseTo(0.6, 6)
    expect(reply.body.avg_actions_per_day).toBeCloseTo(100, 6)
    const unknown = await call(server.url, "POST", path(agents.pooled, "/baseline/pooled"), {
      token: org.key,
      body: { source_agent_ids: [agents.stable, "ghost-agent"], ...windowBody() }
    })
    expect(unknown.status).toBe(422)
    expect(unknown.body.details.issues[0].path).toBe("source_agent_ids[1]")
    const none = await call(server.url, "POST", path(agents.pooled, "/baseline/pooled"), { token: org.key, body: { source_agent_ids: [], ...windowBody() } })
    expect(none.status).toBe(422)
  })
})

describe("scoring and checks", () => {
  it("a stable agent does not drift: GET is read-only, the check answers null and is metered", async () => {
    const status = await call(server.url, "GET", path(agents.stable), { token: org.key })
    expect(status.status).toBe(200)
    expect(status.body).toMatchObject({ agent_id: agents.stable, has_baseline: true, severity: "info", is_drifting: false, new_action_types: null })
    expect(status.body.current_window.total_actions).toBe(100)
    expect(status.body.kl_divergence).toBeLessThan(0.01)
    expect(status.body.volume_ratio).toBeGreaterThan(0.9)
    expect(status.body.volume_ratio).toBeLessThan(1.1)
    expect(await usage(agents.stable)).toBe(0)
    const check = await call(server.url, "POST", path(agents.stable, "/check"), { token: org.key })
    expect(check.status).toBe(200)
    expect(check.body).toBeNull()
    expect(await usage(agents.stable)).toBe(1)
    const alerts = await call(server.url, "GET", path(agents.stable, "/alerts"), { token: org.key })
    expect(alerts.body.data).toEqual([])
  })

  it("an agent whose mix shifts raises a high alert, stored and listed", async () => {
    const status = await call(server.url, "GET", path(agents.shifting, "?lookback_hours=24"), { token: org.key })
    expect(status.body.kl_divergence).toBeCloseTo(1.2305, 2)
    expect(status.body).toMatchObject({ severity: "high", is_drifting: true })
    const check = await call(server.url, "POST", path(agents.shifting, "/check"), { token: org.key })
    expect(check.status).toBe(200)
    expect(check.body).toMatchObject({ agent_id: agents.shifting, severity: "high", acknowledged_at: null, acknowledged_by: null, new_action_types: null })
    expect(check.body.baseline_uuid).toBe(status.body.baseline.id)
    expect(await usage(agents.shifting)).toBe(1)
    const alerts = await call(server.url, "GET", path(agents.shifting, "/alerts"), { token: org.key })
    expect(alerts.body.data.map((a: any) => a.id)).toEqual([check.body.id])
    expect(alerts.body.pagination).toEqual({ page: 1, per_page: 50, total: 1, has_more: false })
    const webhook = await server.run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        return yield* sql`SELECT data FROM events WHERE org_uuid = ${org.orgUuid} AND type = 'drift.alert' AND data->>'id' = ${check.body.id}`
      })
    )
    expect(webhook).toHaveLength(1)
  })

  it("counts new actions as they arrive, without a rescan", async () => {
    const before = await call(server.url, "GET", path(agents.stable), { token: org.key })
    for (let i = 0; i < 10; i++) {
      const reply = await call(server.url, "POST", "/api/v1/actions", { token: org.key, body: { action_type: "c", details: "new kind of work", agent_id: agents.stable } })
      expect(reply.status).toBe(201)
    }
    // Postgres now holds a row the live window must not count twice: a row inserted behind its back is not seen.
    await load(agents.stable, { z: 24 }, Date.now() - 3_600_000, Date.now() - 60_000)
    const after = await call(server.url, "GET", path(agents.stable), { token: org.key })
    expect(after.body.current_window.total_actions).toBe(before.body.current_window.total_actions + 10)
    expect(after.body.new_action_types).toEqual(["c"])
    expect(after.body.is_drifting).toBe(true)
  })

  it("a check without an active baseline answers null and is still metered; another organization's agent is 404", async () => {
    const before = await usage(agents.fresh)
    const inactive = await call(server.url, "POST", path(agents.fresh, "/baseline/synthetic"), {
      token: org.key,
      body: { expected_distribution: { read: 1 }, expected_actions_per_day: 40, activate: false }
    })
    expect(inactive.status).toBe(201)
    expect(inactive.body.is_active).toBe(false)
    // The earlier synthetic baseline stays the active one.
    const status = await call(server.url, "GET", path(agents.fresh), { token: org.key })
    expect(status.body.baseline.action_type_dist).toEqual({ read: 0.75, write: 0.25 })
    const noBaseline = `no-baseline-${suffix}`
    expect((await call(server.url, "POST", "/api/v1/actions", { token: org.key, body: { action_type: "x", details: "x", agent_id: noBaseline } })).status).toBe(201)
    const check = await call(server.url, "POST", path(noBaseline, "/check"), { token: org.key })
    expect(check.status).toBe(200)
    expect(check.body).toBeNull()
    expect(await usage(noBaseline)).toBe(1)
    expect((await call(server.url, "POST", path(agents.fresh, "/check"), { token: other.key })).status).toBe(404)
    expect(await usage(agents.fresh)).toBe(before)
  })

  it("validates lookback_hours and per_page", async () => {
    for (const bad of ["0", "721", "x"]) expect((await call(server.url, "GET", path(agents.stable, `?lookback_hours=${bad}`), { token: org.key })).status).toBe(422)
    expect((await call(server.url, "POST", path(agents.stable, "/check?lookback_hours=721"), { token: org.key })).status).toBe(422)
    expect((await call(server.url, "GET", path(agents.stable, "?lookback_hours=720"), { token: org.key })).status).toBe(200)
    expect((await call(server.url, "GET", path(agents.shifting, "/alerts?per_page=201"), { token: org.key })).status).toBe(422)
    expect((await call(server.url, "GET", path(agents.shifting, "/alerts?per_page=0"), { token: org.key })).status).toBe(422)
    const max = await call(server.url, "GET", path(agents.shifting, "/alerts?per_page=200"), { token: org.key })
    expect(max.status).toBe(200)
    expect(max.body.pagination.per_page).toBe(200)
  })
})

describe("acknowledgement", () => {
  it("needs a JWT, records the user's e-mail, and the filter follows", async () => {
    const alerts = await call(server.url, "GET", path(agents.shifting, "/alerts?acknowledged=false"), { token: org.key })
    const alert = alerts.body.data[0]
    const withKey = await call(server.url, "POST", path(agents.shifting, `/alerts/${alert.id}/acknowledge`), { token: org.key })
    expect(withKey.status).toBe(401)
    expect(withKey.body.code).toBe("UNAUTHORIZED")
    const foreign = await call(server.url, "POST", path(agents.shifting, `/alerts/${alert.id}/acknowledge`), { token: other.token })
    expect(foreign.status).toBe(404)
    const missing = await call(server.url, "POST", path(agents.shifting, "/alerts/dal_missing/acknowledge"), { token: org.token })
    expect(missing.status).toBe(404)
    expect(missing.body.code).toBe("NOT_FOUND")
    const done = await call(server.url, "POST", path(agents.shifting, `/alerts/${alert.id}/acknowledge`), { token: org.token })
    expect(done.status).toBe(200)
    expect(done.body).toMatchObject({ id: alert.id, acknowledged_by: org.email })
    expect(Date.parse(done.body.acknowledged_at)).toBeGreaterThan(Date.now() - 60_000)
    const open = await call(server.url, "GET", path(agents.shifting, "/alerts?acknowledged=false"), { token: org.key })
    expect(open.body.data).toEqual([])
    const acknowledged = await call(server.url, "GET", path(agents.shifting, "/alerts?acknowledged=true"), { token: org.key })
    expect(acknowledged.body.data.map((a: any) => a.id)).toEqual([alert.id])
  })
})

describe("periodic check", () => {
  it("pushes new alerts to notifications and drift.alert, once per open alert", async () => {
    const watcher = await connected(`ws://127.0.0.1:${server.config.port}/api/v1/ws`, org.token)
    try {
      await subscribed(watcher, "notifications")
      const runCheck = () => server.run(
          Effect.gen(function* () {
            const drift = yield* Drift
            return yield* drift.checkAll
          })
        )
      const first = await runCheck()
      // The shifting agent's alert was acknowledged: a new one; the fresh agent's synthetic baseline: one; the stable agent drifts now too.
      expect(first).toBeGreaterThanOrEqual(2)
      const frame = await watcher.next((f) => f.type === "event" && f.data?.event === "drift.alert" && f.data.agent_id === agents.fresh)
      expect(frame.channel).toBe("notifications")
      expect(frame.data.type).toBe("notification.created")
      expect(frame.data.alert).toMatchObject({ agent_id: agents.fresh, severity: "critical" })
      expect(await runCheck()).toBe(0)
    } finally {
      watcher.close()
    }
  })
})

const sharedRedis = Boolean(process.env.REDIS_URL)
if (!sharedRedis) console.log("drift: the two-process live-count test needs REDIS_URL; it did not run")

describe.runIf(sharedRedis)("two gateway processes sharing Postgres and Redis", () => {
  it("count each other's new actions in an agent's live window", async () => {
    const database = await freshDatabaseUrl()
    const env = {
      DATABASE_URL: database.url,
      REDIS_URL: process.env.REDIS_URL!,
      REDIS_KEY_PREFIX: `drift-${process.pid}-${Date.now()}:`,
      MASTER_KEY: "2222222222222222222222222222222222222222222222222222222222222222",
      RATE_LIMIT_PER_MINUTE: "100000",
      DATA_DIR: `/tmp/gw-drift-${process.pid}`
    }
    const first = await spawnServer(env)
    const second = await spawnServer(env)
    try {
      const org = await registerOrg(first.url, "Two nodes")
      const agent = `two-node-agent-${process.pid}`
      expect((await call(first.url, "POST", "/api/v1/agents", { token: org.key, body: { agent_slug: agent, name: "Two nodes" } })).status).toBe(201)
      const baseline = await call(second.url, "POST", `/api/v1/agents/${agent}/drift/baseline/synthetic`, {
        token: org.key,
        body: { expected_distribution: { read: 1 }, expected_actions_per_day: 10 }
      })
      expect(baseline.status).toBe(201)
      const total = async () => (await call(second.url, "GET", `/api/v1/agents/${agent}/drift`, { token: org.key })).body.current_window.total_actions as number
      // The second process builds the agent's window now (nothing yet), then only hears of new actions.
      expect(await total()).toBe(0)
      for (let i = 0; i < 10; i++) {
        const created = await call(first.url, "POST", "/api/v1/actions", { token: org.key, body: { action_type: "write", details: `w${i}`, agent_id: agent } })
        expect(created.status).toBe(201)
      }
      const deadline = Date.now() + 5_000
      while ((await total()) !== 10) {
        if (Date.now() > deadline) throw new Error(`the second process counted ${await total()} of the first's 10 actions`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      const status = await call(second.url, "GET", `/api/v1/agents/${agent}/drift`, { token: org.key })
      expect(status.body.current_window.action_type_dist).toEqual({ write: 1 })
      expect(status.body.new_action_types).toEqual(["write"])
    } finally {
      await first.stop()
      await second.stop()
      await database.drop()
    }
  }, 120_000)
})
