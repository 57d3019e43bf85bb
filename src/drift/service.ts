/**
 * Drift detection: baselines of an agent's action-type mix and volume, the live window scored
 * against the active baseline (score.ts), alerts stored by checks, and a periodic check of
 * every active baseline that pushes new alerts to `notifications` and the `drift.alert` webhook.
 *
 * Agents are named as actions carry them: a registered agent of the caller's organization or
 * any agent id its actions carry; anything else (another organization's agent) is 404.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import { SqlClient } from "effect/sql"
import type {
  CurrentWindow,
  DriftAlert,
  DriftBaseline,
  DriftStatus,
  PooledBaselineRequest,
  ProductionBaselineRequest,
  Severity,
  SyntheticBaselineRequest
} from "../../protocol/drift.js"
import { Severities } from "../../protocol/drift.js"
import type { RecordedAction } from "../actions/ports.js"
import { ActionObserver } from "../actions/ports.js"
import { Events } from "../events/service.js"
import { Config } from "../platform/config.js"
import { InvalidInput, type Issue } from "../platform/domain-error.js"
import { newId } from "../platform/ids.js"
import { Fanout } from "../platform/redis/index.js"
import { DriftAgentNotFound, DriftAlertNotFound, type DriftError, refuse } from "./errors.js"
import { makeLiveWindows } from "./live.js"
import { proportions, score } from "./score.js"
import { shareRecordedActions } from "./shared.js"
import { makeDriftStore } from "./store.js"
import { HOUR_MS, hourOf } from "./window.js"

const DAY_MS = 86_400_000
/** A production or pooled baseline covers at most a year of actions (bounds the counting query). */
const MAX_BASELINE_DAYS = 366
const MAX_TYPES = 1000
export const DEFAULT_LOOKBACK_HOURS = 24
/** Any one process runs the periodic check at a time. */
const PERIODIC_LOCK = 7_316_012_025
/** How long a read may use the active baseline it last loaded (a baseline made on another node shows within this). */
const BASELINE_CACHE_MS = 2_000

const rank = (severity: Severity) => Severities.indexOf(severity)

const parseWindow = (start: string, end: string) => {
  const issues: Array<Issue> = []
  const from = new Date(start)
  const to = new Date(end)
  if (Number.isNaN(from.getTime())) issues.push({ path: "window_start", message: "must be an ISO 8601 timestamp" })
  if (Number.isNaN(to.getTime())) issues.push({ path: "window_end", message: "must be an ISO 8601 timestamp" })
  if (issues.length === 0 && to.getTime() <= from.getTime()) issues.push({ path: "window_end", message: "must be after window_start" })
  if (issues.length === 0 && to.getTime() - from.getTime() > MAX_BASELINE_DAYS * DAY_MS)
    issues.push({ path: "window_end", message: `the window may span at most ${MAX_BASELINE_DAYS} days` })
  return issues.length > 0 ? refuse(InvalidInput.of(issues)) : Effect.succeed({ from, to, days: (to.getTime() - from.getTime()) / DAY_MS })
}

export const makeDrift = Effect.gen(function* () {
  const store = yield* makeDriftStore
  const events = yield* Events
  const sql = store.sql
  const live = makeLiveWindows(store)
  /** Active baseline per agent as last read; this process's own baseline writes replace it at once. */
  const activeCache = new Map<string, { readonly baseline: DriftBaseline | null; readonly at: number }>()
  const cacheKey = (orgUuid: string, agentId: string) => `${orgUuid}\u0000${agentId}`

  const requireAgent = (orgUuid: string, agentId: string) =>
    live.holds(orgUuid, agentId)
      ? Effect.void
      : Effect.flatMap(store.agentKnown(orgUuid, agentId), (known) => (known ? Effect.void : refuse(DriftAgentNotFound.of(agentId))))

  const currentWindow = (orgUuid: string, agentId: string, hours: number) =>
    Effect.gen(function* () {
      const window = yield* live.windowOf(orgUuid, agentId)
      const now = yield* Clock.currentTimeMillis
      const startMs = (hourOf(now) - hours + 1) * HOUR_MS
      const { byType, total } = window.counts(now, hours)
      return {
        agent_id: agentId,
        window_start: new Date(startMs).toISOString(),
        window_end: new Date(now).toISOString(),
        action_type_dist: proportions(byType),
        total_actions: total,
        avg_actions_per_day: total / (Math.max(now - startMs, 1) / DAY_MS)
      } satisfies CurrentWindow
    })

  const activeBaseline = (orgUuid: string, agentId: string) =>
    Effect.gen(function* () {
      const key = cacheKey(orgUuid, agentId)
      const cached = activeCache.get(key)
      const now = yield* Clock.currentTimeMillis
      if (cached !== undefined && now - cached.at < BASELINE_CACHE_MS) return cached.baseline
      const baseline = yield* store.activeBaseline(orgUuid, agentId)
      activeCache.set(key, { baseline, at: now })
      return baseline
    })

  const saveBaseline = (orgUuid: string, baseline: Omit<DriftBaseline, "id">) =>
    Effect.tap(store.insertBaseline({ ...baseline, id: newId("dbl"), org_uuid: orgUuid }), () =>
      Effect.sync(() => activeCache.delete(cacheKey(orgUuid, baseline.agent_id)))
    )

  const createProduction = Effect.fn("Drift.createProduction")(function* (orgUuid: string, agentId: string, input: ProductionBaselineRequest) {
    const window = yield* parseWindow(input.window_start, input.window_end)
    yield* requireAgent(orgUuid, agentId)
    const counts = yield* store.typeCounts(orgUuid, [agentId], window.from, window.to)
    const total = Object.values(counts).reduce((a, b) => a + b, 0)
    if (total === 0) return yield* refuse(InvalidInput.one("window_start", "the agent has no actions in this window"))
    return yield* saveBaseline(orgUuid, {
      agent_id: agentId,
      baseline_type: "production",
      is_active: input.activate ?? true,
      window_start: window.from.toISOString(),
      window_end: window.to.toISOString(),
      action_type_dist: proportions(counts),
      total_actions: total,
      avg_actions_per_day: total / window.days,
      source_agent_ids: null
    })
  })

  const createSynthetic = Effect.fn("Drift.createSynthetic")(function* (orgUuid: string, agentId: string, input: SyntheticBaselineRequest) {
    const entries = Object.entries(input.expected_distribution)
    const issues: Array<Issue> = []
    if (entries.length === 0) issues.push({ path: "expected_distribution", message: "needs at least one entry" })
    if (entries.length > MAX_TYPES) issues.push({ path: "expected_distribution", message: `at most ${MAX_TYPES} action types` })
    for (const [type, weight] of entries.slice(0, MAX_TYPES)) {
      if (type.length === 0 || type.length > 200) issues.push({ path: `expected_distribution.${type}`, message: "action types have 1-200 characters" })
      if (!Number.isFinite(weight) || weight < 0) issues.push({ path: `expected_distribution.${type}`, message: "must be a number >= 0" })
    }
    if (issues.length === 0 && entries.every(([, weight]) => weight === 0))
      issues.push({ path: "expected_distribution", message: "needs at least one entry above 0" })
    if (!Number.isFinite(input.expected_actions_per_day)) issues.push({ path: "expected_actions_per_day", message: "must be a finite number >= 0" })
    if (issues.length > 0) return yield* refuse(InvalidInput.of(issues))
    yield* requireAgent(orgUuid, agentId)
    const now = new Date(yield* Clock.currentTimeMillis).toISOString()
    return yield* saveBaseline(orgUuid, {
      agent_id: agentId,
      baseline_type: "synthetic",
      is_active: input.activate ?? true,
      window_start: now,
      window_end: now,
      action_type_dist: proportions(input.expected_distribution),
      total_actions: 0,
      avg_actions_per_day: input.expected_actions_per_day,
      source_agent_ids: null
    })
  })

  const createPooled = Effect.fn("Drift.createPooled")(function* (orgUuid: string, agentId: string, input: PooledBaselineRequest) {
    const window = yield* parseWindow(input.window_start, input.window_end)
    yield* requireAgent(orgUuid, agentId)
    const sources = [...new Set(input.source_agent_ids)]
    const known = yield* store.knownAgents(orgUuid, sources)
    const unknown = input.source_agent_ids.flatMap((id, index) => (known.has(id) ? [] : [{ path: `source_agent_ids[${index}]`, message: "no such agent in this organization" }]))
    if (unknown.length > 0) return yield* refuse(InvalidInput.of(unknown))
    const counts = yield* store.typeCounts(orgUuid, sources, window.from, window.to)
    const total = Object.values(counts).reduce((a, b) => a + b, 0)
    if (total === 0) return yield* refuse(InvalidInput.one("source_agent_ids", "the source agents have no actions in this window"))
    return yield* saveBaseline(orgUuid, {
      agent_id: agentId,
      baseline_type: "pooled",
      is_active: input.activate ?? true,
      window_start: window.from.toISOString(),
      window_end: window.to.toISOString(),
      action_type_dist: proportions(counts),
      total_actions: total,
      // Per source agent: the pool stands for what one agent of its kind does.
      avg_actions_per_day: total / window.days / sources.length,
      source_agent_ids: sources
    })
  })

  /** The comparison the GET answers and the check stores; `null` baseline when none is active. */
  const evaluate = (orgUuid: string, agentId: string, hours: number) =>
    Effect.gen(function* () {
      yield* requireAgent(orgUuid, agentId)
      const baseline = yield* activeBaseline(orgUuid, agentId)
      if (baseline === null) return { baseline: null } as const
      const current = yield* currentWindow(orgUuid, agentId, hours)
      const scored = score(
        { dist: current.action_type_dist, perDay: current.avg_actions_per_day },
        { dist: baseline.action_type_dist, perDay: baseline.avg_actions_per_day }
      )
      return { baseline, current, scored } as const
    })

  const status = Effect.fn("Drift.status")(function* (orgUuid: string, agentId: string, hours: number) {
    const result = yield* evaluate(orgUuid, agentId, hours)
    if (result.baseline === null) return { agent_id: agentId, has_baseline: false, is_drifting: false } satisfies DriftStatus
    const { baseline, current, scored } = result
    return {
      agent_id: agentId,
      has_baseline: true,
      baseline,
      current_window: current,
      kl_divergence: scored.kl_divergence,
      volume_ratio: scored.volume_ratio,
      severity: scored.severity,
      new_action_types: scored.new_action_types,
      is_drifting: scored.is_drifting
    } satisfies DriftStatus
  })

  /** Stores the alert, its webhook event and live frame, all after one commit. */
  const raise = (orgUuid: string, alert: DriftAlert) =>
    Effect.gen(function* () {
      const stored = yield* sql
        .withTransaction(
          Effect.gen(function* () {
            const row = yield* store.insertAlert({ ...alert, org_uuid: orgUuid })
            yield* events.record([{ orgUuid, type: "drift.alert", data: { ...row } }])
            return row
          })
        )
        // BEGIN and COMMIT are not the store's statements: their failures are defects too.
        .pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.orDie)
      yield* events.announce(orgUuid, "notifications", {
        type: "notification.created",
        event: "drift.alert",
        id: stored.id,
        notification_type: "drift_alert",
        title: `Drift (${stored.severity}): ${stored.agent_id}`,
        description: `Symmetric KL divergence ${stored.kl_divergence.toFixed(3)}, volume ratio ${stored.volume_ratio.toFixed(2)}`,
        alert: stored,
        agent_id: stored.agent_id,
        created_at: stored.detected_at
      })
      return stored
    })

  const alertOf = (agentId: string, baseline: DriftBaseline, current: CurrentWindow, scored: ReturnType<typeof score>, nowMs: number): DriftAlert => ({
    id: newId("dal"),
    agent_id: agentId,
    baseline_uuid: baseline.id,
    window_start: current.window_start,
    window_end: current.window_end,
    kl_divergence: scored.kl_divergence,
    volume_ratio: scored.volume_ratio,
    severity: scored.severity,
    new_action_types: scored.new_action_types,
    detected_at: new Date(nowMs).toISOString(),
    acknowledged_at: null,
    acknowledged_by: null
  })

  /** POST /check: metered as a `drift_check` usage event whether or not it finds drift. */
  const check = Effect.fn("Drift.check")(function* (orgUuid: string, agentId: string, hours: number) {
    const result = yield* evaluate(orgUuid, agentId, hours)
    yield* store.recordUsage(orgUuid, "drift_check", agentId)
    if (result.baseline === null || !result.scored.is_drifting) return null
    return yield* raise(orgUuid, alertOf(agentId, result.baseline, result.current, result.scored, yield* Clock.currentTimeMillis))
  })

  const alerts = Effect.fn("Drift.alerts")(function* (
    orgUuid: string,
    agentId: string,
    query: { readonly page: number; readonly perPage: number; readonly acknowledged: boolean | undefined }
  ) {
    yield* requireAgent(orgUuid, agentId)
    return yield* store.listAlerts(orgUuid, agentId, query.acknowledged, query.page, query.perPage)
  })

  const acknowledge = Effect.fn("Drift.acknowledge")(function* (orgUuid: string, agentId: string, alertId: string, email: string) {
    const alert = yield* store.acknowledge(orgUuid, agentId, alertId, email)
    if (alert === null) return yield* refuse(DriftAlertNotFound.of(alertId))
    return alert
  })

  /**
   * Every active baseline, scored over the default lookback. A new alert is stored and pushed
   * only when no unacknowledged alert of the same or a higher severity is open against that
   * baseline, so a lasting drift is announced once, and again when it worsens.
   */
  const checkAll = Effect.gen(function* () {
    yield* live.prune(yield* Clock.currentTimeMillis)
    const locked = yield* store.lockedBaselines(PERIODIC_LOCK)
    let raised = 0
    for (const { org_uuid, agent_id } of locked) {
      const result = yield* Effect.orElseSucceed(evaluate(org_uuid, agent_id, DEFAULT_LOOKBACK_HOURS), () => ({ baseline: null }) as const)
      if (result.baseline === null || !result.scored.is_drifting) continue
      const open = yield* store.openAlert(org_uuid, agent_id, result.baseline.id)
      if (open !== null && rank(open.severity) >= rank(result.scored.severity)) continue
      yield* raise(org_uuid, alertOf(agent_id, result.baseline, result.current, result.scored, yield* Clock.currentTimeMillis))
      raised++
    }
    return raised
  })

  return Drift.of({ createProduction, createSynthetic, createPooled, status, check, alerts, acknowledge, checkAll, recorded: live.recorded })
})

export interface DriftService {
  readonly createProduction: (orgUuid: string, agentId: string, input: ProductionBaselineRequest) => Effect.Effect<DriftBaseline, DriftError>
  readonly createSynthetic: (orgUuid: string, agentId: string, input: SyntheticBaselineRequest) => Effect.Effect<DriftBaseline, DriftError>
  readonly createPooled: (orgUuid: string, agentId: string, input: PooledBaselineRequest) => Effect.Effect<DriftBaseline, DriftError>
  readonly status: (orgUuid: string, agentId: string, hours: number) => Effect.Effect<DriftStatus, DriftError>
  /** Scores now and stores an alert when the agent drifts (metered as `drift_check`). */
  readonly check: (orgUuid: string, agentId: string, hours: number) => Effect.Effect<DriftAlert | null, DriftError>
  readonly alerts: (
    orgUuid: string,
    agentId: string,
    query: { readonly page: number; readonly perPage: number; readonly acknowledged: boolean | undefined }
  ) => Effect.Effect<{ readonly items: ReadonlyArray<DriftAlert>; readonly total: number }, DriftError>
  readonly acknowledge: (orgUuid: string, agentId: string, alertId: string, email: string) => Effect.Effect<DriftAlert, DriftError>
  /** The periodic check of every active baseline; answers how many alerts it raised. */
  readonly checkAll: Effect.Effect<number>
  /** Tells the live windows of an action this process recorded. */
  readonly recorded: (action: RecordedAction) => Effect.Effect<void>
}

export class Drift extends Context.Service<Drift, DriftService>()("gateway/Drift") {
  /** The service, its periodic check, and the ActionObserver the actions area tells of new actions. */
  static readonly layer = Layer.effectContext(
    Effect.gen(function* () {
      const drift = yield* makeDrift
      const config = yield* Config
      // With Redis, several processes may record an agent's actions: they share them.
      const recorded = config.redisUrl === undefined ? drift.recorded : yield* shareRecordedActions(yield* Fanout, drift.recorded)
      const sweep = drift.checkAll.pipe(Effect.catchCause((cause) => Effect.logError("periodic drift check failed", cause)))
      yield* Effect.forkScoped(Effect.repeat(Effect.delay(sweep, config.driftCheckIntervalMs), Schedule.forever))
      return Context.make(Drift, drift).pipe(Context.add(ActionObserver, ActionObserver.of({ recorded })))
    })
  )
}
