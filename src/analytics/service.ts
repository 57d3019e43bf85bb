/**
 * Aggregates over the organization's `actions` (and, for model agreement, the
 * `cases` table). Either table may not exist yet while the areas are being
 * built: a missing table reads as no rows, so every report answers zeros.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { SqlClient, SqlSchema } from "effect/sql"
import { Count } from "../platform/columns.js"

// The spec's exact lists: a human-approved action not yet notarized (`approved`) is in none of them,
// but still in `total`.
const APPROVED = ["authorized", "notarized", "completed"]
const DENIED = ["denied_by_policy", "denied_by_human"]
const REVIEW = ["pending_approval", "pending_review"]

const Window = Schema.Struct({ orgUuid: Schema.String, days: Schema.Number })
const Rates = Schema.Struct({ approved: Count, denied: Count, review: Count, total: Count })
const Agreement = Schema.Struct({ total: Count, avg_disagreement: Count, approve: Count, deny: Count, review: Count })

export const makeAnalytics = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const tableExists = (name: string) =>
    sql`SELECT to_regclass(${name}) IS NOT NULL AS present`.pipe(Effect.map((rows) => rows[0]?.present === true))

  /** Runs `query` when `table` exists, else answers `empty`. */
  const whenTable = <A>(table: string, empty: A, query: Effect.Effect<A, unknown>) =>
    Effect.flatMap(tableExists(table), (present) => (present ? query : Effect.succeed(empty))).pipe(Effect.orDie)

  const since = (days: number) => new Date(Date.now() - days * 86_400_000)

  const overTime = SqlSchema.findAll({
    Request: Schema.Struct({ ...Window.fields, period: Schema.Literals(["daily", "weekly"]) }),
    Result: Schema.Struct({ date: Schema.String, n: Count }),
    execute: ({ orgUuid, days, period }) =>
      sql`SELECT to_char(date_trunc(${period === "weekly" ? "week" : "day"}, created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS date,
                 count(*) AS n
          FROM actions WHERE org_uuid = ${orgUuid} AND created_at >= ${since(days)}
          GROUP BY 1 ORDER BY 1`
  })

  const top = SqlSchema.findAll({
    Request: Schema.Struct({ ...Window.fields, limit: Schema.Number }),
    Result: Schema.Struct({ agent_id: Schema.String, n: Count }),
    execute: ({ orgUuid, days, limit }) =>
      sql`SELECT agent_id, count(*) AS n FROM actions
          WHERE org_uuid = ${orgUuid} AND created_at >= ${since(days)} AND agent_id IS NOT NULL AND agent_id <> ''
          GROUP BY agent_id ORDER BY n DESC, agent_id LIMIT ${limit}`
  })

  // Aggregates without GROUP BY answer exactly one row.
  const rates = SqlSchema.findOne({
    Request: Window,
    Result: Rates,
    execute: ({ orgUuid, days }) =>
      sql`SELECT count(*) FILTER (WHERE status IN ${sql.in(APPROVED)}) AS approved,
                 count(*) FILTER (WHERE status IN ${sql.in(DENIED)}) AS denied,
                 count(*) FILTER (WHERE status IN ${sql.in(REVIEW)}) AS review,
                 count(*) AS total
          FROM actions WHERE org_uuid = ${orgUuid} AND created_at >= ${since(days)}`
  })

  const agreement = SqlSchema.findOne({
    Request: Window,
    Result: Agreement,
    execute: ({ orgUuid, days }) =>
      sql`SELECT count(*) AS total, COALESCE(avg(disagreement), 0) AS avg_disagreement,
                 count(*) FILTER (WHERE consensus_decision = 'APPROVE') AS approve,
                 count(*) FILTER (WHERE consensus_decision = 'DENY') AS deny,
                 count(*) FILTER (WHERE consensus_decision = 'REVIEW') AS review
          FROM cases WHERE org_uuid = ${orgUuid} AND consensus_decision IS NOT NULL AND created_at >= ${since(days)}`
  })

  const denials = SqlSchema.findAll({
    Request: Window,
    Result: Schema.Struct({ action_type: Schema.String, total: Count, denied: Count }),
    execute: ({ orgUuid, days }) =>
      sql`SELECT COALESCE(NULLIF(action_type, ''), 'unknown') AS action_type, count(*) AS total,
                 count(*) FILTER (WHERE status = 'denied_by_policy') AS denied
          FROM actions WHERE org_uuid = ${orgUuid} AND created_at >= ${since(days)}
          GROUP BY 1 HAVING count(*) FILTER (WHERE status = 'denied_by_policy') > 0
          ORDER BY denied DESC, action_type LIMIT 20`
  })

  return {
    actionsOverTime: (orgUuid: string, days: number, period: "daily" | "weekly") =>
      whenTable(
        "actions",
        { data: [] as Array<{ date: string; count: number }> },
        Effect.map(overTime({ orgUuid, days, period }), (rows) => ({ data: rows.map((row) => ({ date: row.date, count: row.n })) }))
      ),

    approvalRates: (orgUuid: string, days: number) =>
      whenTable(
        "actions",
        { approved: 0, denied: 0, review: 0, total: 0 },
        rates({ orgUuid, days })
      ),

    // Cases do not exist yet; once the cases area adds its table (org_uuid, consensus_decision,
    // disagreement, created_at) this answers from it, and zeros until then.
    modelAgreement: (orgUuid: string, days: number) =>
      whenTable(
        "cases",
        { total_cases: 0, avg_disagreement: 0, by_decision: { APPROVE: 0, DENY: 0, REVIEW: 0 } },
        Effect.map(agreement({ orgUuid, days }), (row) => ({
          total_cases: row.total,
          avg_disagreement: Math.round(row.avg_disagreement * 10_000) / 10_000,
          by_decision: { APPROVE: row.approve, DENY: row.deny, REVIEW: row.review }
        }))
      ),

    policyDenials: (orgUuid: string, days: number) =>
      whenTable(
        "actions",
        { data: [] as Array<{ action_type: string; total: number; denied: number }> },
        Effect.map(denials({ orgUuid, days }), (data) => ({ data }))
      ),

    topAgents: (orgUuid: string, days: number, limit: number) =>
      whenTable(
        "actions",
        { data: [] as Array<{ agent_id: string; action_count: number }> },
        Effect.map(top({ orgUuid, days, limit }), (rows) => ({ data: rows.map((row) => ({ agent_id: row.agent_id, action_count: row.n })) }))
      )
  }
})

export class Analytics extends Context.Service<Analytics, Effect.Success<typeof makeAnalytics>>()("gateway/Analytics") {
  static readonly layer = Layer.effect(Analytics, makeAnalytics)
}
