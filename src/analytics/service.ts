/**
 * Aggregates over the organization's `actions` (and, for model agreement, the
 * `cases` table). Either table may not exist yet while the areas are being
 * built: a missing table reads as no rows, so every report answers zeros.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
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
}

const DAY_MS = 86_400_000

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

  return Analytics.of({ actionsOverTime, approvalRates, modelAgreement, policyDenials, topAgents })
})

export class Analytics extends Context.Service<Analytics, AnalyticsService>()("gateway/Analytics") {
  static readonly layer = Layer.effect(Analytics, makeAnalytics)
}
