/**
 * Aggregates over the organization's `actions` (and, for model agreement, the
 * `cases` table). Either table may not exist yet while the areas are being
 * built: a missing table reads as no rows, so every report answers zeros.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { TIMESERIES_MAX_BUCKETS, TIMESERIES_MAX_DAYS, type Timeseries } from "../../protocol/analytics.js"
import { InvalidInput, type Issue } from "../platform/domain-error.js"
import { parseInstant } from "../platform/instant.js"
import { makeAnalyticsStore } from "./store.js"

export interface ActionsOverTime {
  readonly data: ReadonlyArray<{ readonly date: string; readonly count: number }>
}

export interface ApprovalRates {
  readonly approved: number
  readonly denied: number
  readonly review: number
  readonly total: number
}

export interface ModelAgreement {
  readonly total_cases: number
  readonly avg_disagreement: number
  readonly by_decision: { readonly APPROVE: number; readonly DENY: number; readonly REVIEW: number }
}

export interface PolicyDenials {
  readonly data: ReadonlyArray<{ readonly action_type: string; readonly total: number; readonly denied: number }>
}

export interface TopAgents {
  readonly data: ReadonlyArray<{ readonly agent_id: string; readonly action_count: number }>
}

export interface AnalyticsService {
  readonly actionsOverTime: (orgUuid: string, days: number, period: "daily" | "weekly") => Effect.Effect<ActionsOverTime>
  readonly approvalRates: (orgUuid: string, days: number) => Effect.Effect<ApprovalRates>
  /** Zeros until the cases area's table (org_uuid, consensus_decision, disagreement, created_at) exists. */
  readonly modelAgreement: (orgUuid: string, days: number) => Effect.Effect<ModelAgreement>
  readonly policyDenials: (orgUuid: string, days: number) => Effect.Effect<PolicyDenials>
  readonly topAgents: (orgUuid: string, days: number, limit: number) => Effect.Effect<TopAgents>
  /** Counts per status, human decision latency and policy denials over [from, to] in UTC buckets; 422 past the limits. */
  readonly timeseries: (orgUuid: string, query: TimeseriesQuery) => Effect.Effect<Timeseries, InvalidInput>
}

export interface TimeseriesQuery {
  readonly from?: string | undefined
  readonly to?: string | undefined
  readonly bucket?: Timeseries["bucket"] | undefined
}

const DAY_MS = 86_400_000
const HOUR_MS = 3_600_000
const DEFAULT_SERIES_DAYS = 7
const BUCKET_MS = { hour: HOUR_MS, day: DAY_MS, week: 7 * DAY_MS } as const

/** The start of the UTC hour, day or week (weeks start on Monday, as PostgreSQL's date_trunc) holding `ms`. */
export const bucketStart = (ms: number, bucket: Timeseries["bucket"]): number => {
  if (bucket === "hour") return Math.floor(ms / HOUR_MS) * HOUR_MS
  const day = Math.floor(ms / DAY_MS) * DAY_MS
  if (bucket === "day") return day
  return day - ((new Date(day).getUTCDay() + 6) % 7) * DAY_MS
}

const isoText = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z")

/** Reads and checks the range before any query: every problem in one 422. */
const parseRange = (query: TimeseriesQuery, nowMs: number) => {
  const issues: Array<Issue> = []
  const bucket = query.bucket ?? "day"
  // As everywhere in the API: without an offset UTC, a date alone its day's start.
  const to = query.to === undefined ? nowMs : (parseInstant(query.to.trim()) ?? Number.NaN)
  const from = query.from === undefined ? to - DEFAULT_SERIES_DAYS * DAY_MS : (parseInstant(query.from.trim()) ?? Number.NaN)
  if (query.from !== undefined && Number.isNaN(from)) issues.push({ path: "from", message: "must be an ISO 8601 timestamp" })
  if (Number.isNaN(to)) issues.push({ path: "to", message: "must be an ISO 8601 timestamp" })
  if (issues.length === 0) {
    if (from >= to) issues.push({ path: "to", message: "must be after from" })
    else if (to - from > TIMESERIES_MAX_DAYS * DAY_MS) issues.push({ path: "from", message: `the range may span at most ${TIMESERIES_MAX_DAYS} days` })
    else {
      const count = (bucketStart(to, bucket) - bucketStart(from, bucket)) / BUCKET_MS[bucket] + 1
      if (count > TIMESERIES_MAX_BUCKETS)
        issues.push({ path: "bucket", message: `the range holds ${count} ${bucket} buckets; at most ${TIMESERIES_MAX_BUCKETS} (choose a larger bucket or a shorter range)` })
    }
  }
  return issues.length > 0 ? Effect.fail(InvalidInput.of(issues)) : Effect.succeed({ from, to, bucket })
}

export const makeAnalytics = Effect.gen(function* () {
  const store = yield* makeAnalyticsStore

  /** The start of a window of `days` ending now. */
  const since = (days: number) => Effect.map(Clock.currentTimeMillis, (now) => new Date(now - days * DAY_MS))

  const actionsOverTime = Effect.fn("Analytics.actionsOverTime")(function* (orgUuid: string, days: number, period: "daily" | "weekly") {
    if (!(yield* store.tableExists("actions"))) return { data: [] }
    const rows = yield* store.overTime({ orgUuid, since: yield* since(days), period })
    return { data: rows.map((row) => ({ date: row.date, count: row.n })) }
  })

  const approvalRates = Effect.fn("Analytics.approvalRates")(function* (orgUuid: string, days: number) {
    if (!(yield* store.tableExists("actions"))) return { approved: 0, denied: 0, review: 0, total: 0 }
    return yield* store.rates({ orgUuid, since: yield* since(days) })
  })

  const modelAgreement = Effect.fn("Analytics.modelAgreement")(function* (orgUuid: string, days: number) {
    if (!(yield* store.tableExists("cases"))) return { total_cases: 0, avg_disagreement: 0, by_decision: { APPROVE: 0, DENY: 0, REVIEW: 0 } }
    const row = yield* store.agreement({ orgUuid, since: yield* since(days) })
    return {
      total_cases: row.total,
      avg_disagreement: Math.round(row.avg_disagreement * 10_000) / 10_000,
      by_decision: { APPROVE: row.approve, DENY: row.deny, REVIEW: row.review }
    }
  })

  const policyDenials = Effect.fn("Analytics.policyDenials")(function* (orgUuid: string, days: number) {
    if (!(yield* store.tableExists("actions"))) return { data: [] }
    return { data: yield* store.policyDenials({ orgUuid, since: yield* since(days) }) }
  })

  const topAgents = Effect.fn("Analytics.topAgents")(function* (orgUuid: string, days: number, limit: number) {
    if (!(yield* store.tableExists("actions"))) return { data: [] }
    const rows = yield* store.topAgents({ orgUuid, since: yield* since(days), limit })
    return { data: rows.map((row) => ({ agent_id: row.agent_id, action_count: row.n })) }
  })

  const timeseries = Effect.fn("Analytics.timeseries")(function* (orgUuid: string, query: TimeseriesQuery) {
    const { from, to, bucket } = yield* parseRange(query, yield* Clock.currentTimeMillis)
    const starts: Array<string> = []
    for (let at = bucketStart(from, bucket); at <= to; at += BUCKET_MS[bucket]) starts.push(isoText(at))
    const empty = { from: new Date(from).toISOString(), to: new Date(to).toISOString(), bucket, statuses: [], denials_by_policy: [] }
    type Bucket = { start: string; total: number; by_status: Record<string, number>; approval_latency: Timeseries["buckets"][number]["approval_latency"] }
    const blank = (start: string): Bucket => ({ start, total: 0, by_status: {}, approval_latency: { decided: 0, median_seconds: null, p95_seconds: null } })
    if (!(yield* store.tableExists("actions"))) return { ...empty, buckets: starts.map(blank) }
    const range = { orgUuid, from: new Date(from), to: new Date(to), unit: bucket }
    const [counts, latencies, denials] = yield* Effect.all([store.statusSeries(range), store.latencySeries(range), store.denialsByPolicy(range)])
    const byStart = new Map(starts.map((start) => [start, blank(start)]))
    const statuses = new Set<string>()
    for (const row of counts) {
      const slot = byStart.get(row.start)
      if (slot === undefined) continue
      slot.by_status[row.status] = row.n
      slot.total += row.n
      statuses.add(row.status)
    }
    const round = (value: number | null) => (value === null ? null : Math.round(value * 1000) / 1000)
    for (const row of latencies) {
      const slot = byStart.get(row.start)
      if (slot !== undefined) slot.approval_latency = { decided: row.decided, median_seconds: round(row.median), p95_seconds: round(row.p95) }
    }
    return { ...empty, statuses: [...statuses].sort(), buckets: [...byStart.values()], denials_by_policy: denials }
  })

  return Analytics.of({ actionsOverTime, approvalRates, modelAgreement, policyDenials, topAgents, timeseries })
})

export class Analytics extends Context.Service<Analytics, AnalyticsService>()("gateway/Analytics") {
  static readonly layer = Layer.effect(Analytics, makeAnalytics)
}
