/**
 * Aggregates over the organization's `actions` (and, for model agreement, the
 * `cases` table). Either table may not exist yet while the areas are being
 * built: a missing table reads as no rows, so every report answers zeros.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql"
import { count } from "../platform/sql.js"

// The spec's exact lists: a human-approved action not yet notarized (`approved`) is in none of them,
// but still in `total`.
const APPROVED = ["authorized", "notarized", "completed"]
const DENIED = ["denied_by_policy", "denied_by_human"]
const REVIEW = ["pending_approval", "pending_review"]

export const makeAnalytics = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const tableExists = (name: string) =>
    sql`SELECT to_regclass(${name}) IS NOT NULL AS present`.pipe(Effect.map((rows) => rows[0]?.present === true))

  /** Runs `query` when `table` exists, else answers `empty`. */
  const whenTable = <A>(table: string, empty: A, query: Effect.Effect<A, unknown>) =>
    Effect.flatMap(tableExists(table), (present) => (present ? query : Effect.succeed(empty))).pipe(Effect.orDie)

  const since = (days: number) => new Date(Date.now() - days * 86_400_000)

  return {
    actionsOverTime: (orgUuid: string, days: number, period: "daily" | "weekly") =>
      whenTable(
        "actions",
        { data: [] as Array<{ date: string; count: number }> },
        Effect.map(
          sql`SELECT to_char(date_trunc(${period === "weekly" ? "week" : "day"}, created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS date,
                     count(*) AS n
              FROM actions WHERE org_uuid = ${orgUuid} AND created_at >= ${since(days)}
              GROUP BY 1 ORDER BY 1`,
          (rows) => ({ data: rows.map((row: any) => ({ date: String(row.date), count: count(row.n) })) })
        )
      ),

    approvalRates: (orgUuid: string, days: number) =>
      whenTable(
        "actions",
        { approved: 0, denied: 0, review: 0, total: 0 },
        Effect.map(
          sql`SELECT count(*) FILTER (WHERE status IN ${sql.in(APPROVED)}) AS approved,
                     count(*) FILTER (WHERE status IN ${sql.in(DENIED)}) AS denied,
                     count(*) FILTER (WHERE status IN ${sql.in(REVIEW)}) AS review,
                     count(*) AS total
              FROM actions WHERE org_uuid = ${orgUuid} AND created_at >= ${since(days)}`,
          (rows) => {
            const row: any = rows[0] ?? {}
            return { approved: count(row.approved), denied: count(row.denied), review: count(row.review), total: count(row.total) }
          }
        )
      ),

    // Cases do not exist yet; once the cases area adds its table (org_uuid, consensus_decision,
    // disagreement, created_at) this answers from it, and zeros until then.
    modelAgreement: (orgUuid: string, days: number) =>
      whenTable(
        "cases",
        { total_cases: 0, avg_disagreement: 0, by_decision: { APPROVE: 0, DENY: 0, REVIEW: 0 } },
        Effect.map(
          sql`SELECT count(*) AS total, COALESCE(avg(disagreement), 0) AS avg_disagreement,
                     count(*) FILTER (WHERE consensus_decision = 'APPROVE') AS approve,
                     count(*) FILTER (WHERE consensus_decision = 'DENY') AS deny,
                     count(*) FILTER (WHERE consensus_decision = 'REVIEW') AS review
              FROM cases WHERE org_uuid = ${orgUuid} AND consensus_decision IS NOT NULL AND created_at >= ${since(days)}`,
          (rows) => {
            const row: any = rows[0] ?? {}
            return {
              total_cases: count(row.total),
              avg_disagreement: Math.round(Number(row.avg_disagreement ?? 0) * 10_000) / 10_000,
              by_decision: { APPROVE: count(row.approve), DENY: count(row.deny), REVIEW: count(row.review) }
            }
          }
        )
      ),

    policyDenials: (orgUuid: string, days: number) =>
      whenTable(
        "actions",
        { data: [] as Array<{ action_type: string; total: number; denied: number }> },
        Effect.map(
          sql`SELECT COALESCE(NULLIF(action_type, ''), 'unknown') AS action_type, count(*) AS total,
                     count(*) FILTER (WHERE status = 'denied_by_policy') AS denied
              FROM actions WHERE org_uuid = ${orgUuid} AND created_at >= ${since(days)}
              GROUP BY 1 HAVING count(*) FILTER (WHERE status = 'denied_by_policy') > 0
              ORDER BY denied DESC, action_type LIMIT 20`,
          (rows) => ({
            data: rows.map((row: any) => ({ action_type: String(row.action_type), total: count(row.total), denied: count(row.denied) }))
          })
        )
      ),

    topAgents: (orgUuid: string, days: number, limit: number) =>
      whenTable(
        "actions",
        { data: [] as Array<{ agent_id: string; action_count: number }> },
        Effect.map(
          sql`SELECT agent_id, count(*) AS n FROM actions
              WHERE org_uuid = ${orgUuid} AND created_at >= ${since(days)} AND agent_id IS NOT NULL AND agent_id <> ''
              GROUP BY agent_id ORDER BY n DESC, agent_id LIMIT ${limit}`,
          (rows) => ({ data: rows.map((row: any) => ({ agent_id: String(row.agent_id), action_count: count(row.n) })) })
        )
      )
  }
})

export class Analytics extends Context.Service<Analytics, Effect.Success<typeof makeAnalytics>>()("gateway/Analytics") {
  static readonly layer = Layer.effect(Analytics, makeAnalytics)
}
