/**
 * The SQL of analytics: aggregates over the organization's `actions` (and, for model agreement,
 * the `cases` table) since a point in time. Aggregates without GROUP BY answer exactly one row.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { SqlClient } from "effect/sql"
import { Count, NullableCount } from "../platform/columns.js"
import * as Rows from "../platform/db/rows.js"
import { sqlDefects } from "../platform/db/store.js"

// The spec's exact lists: a human-approved action not yet notarized (`approved`) is in none of them,
// but still in `total`.
const APPROVED = ["authorized", "notarized", "completed"]
const DENIED = ["denied_by_policy", "denied_by_human"]
const REVIEW = ["pending_approval", "pending_review"]

const Window = Schema.Struct({ orgUuid: Schema.String, since: Schema.Date })

export const makeAnalyticsStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const present = Rows.findOne({
    Request: Schema.String,
    Result: Schema.Struct({ present: Schema.Boolean }),
    execute: (name) => sql`SELECT to_regclass(${name}) IS NOT NULL AS present`
  })

  const overTime = Rows.findAll({
    Request: Schema.Struct({ ...Window.fields, period: Schema.Literals(["daily", "weekly"]) }),
    Result: Schema.Struct({ date: Schema.String, n: Count }),
    execute: ({ orgUuid, since, period }) =>
      sql`SELECT to_char(date_trunc(${period === "weekly" ? "week" : "day"}, created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS date,
                 count(*) AS n
          FROM actions WHERE org_uuid = ${orgUuid} AND created_at >= ${since}
          GROUP BY 1 ORDER BY 1`
  })

  const topAgents = Rows.findAll({
    Request: Schema.Struct({ ...Window.fields, limit: Schema.Number }),
    Result: Schema.Struct({ agent_id: Schema.String, n: Count }),
    execute: ({ orgUuid, since, limit }) =>
      sql`SELECT agent_id, count(*) AS n FROM actions
          WHERE org_uuid = ${orgUuid} AND created_at >= ${since} AND agent_id IS NOT NULL AND agent_id <> ''
          GROUP BY agent_id ORDER BY n DESC, agent_id LIMIT ${limit}`
  })

  const rates = Rows.findOne({
    Request: Window,
    Result: Schema.Struct({ approved: Count, denied: Count, review: Count, total: Count }),
    execute: ({ orgUuid, since }) =>
      sql`SELECT count(*) FILTER (WHERE status IN ${sql.in(APPROVED)}) AS approved,
                 count(*) FILTER (WHERE status IN ${sql.in(DENIED)}) AS denied,
                 count(*) FILTER (WHERE status IN ${sql.in(REVIEW)}) AS review,
                 count(*) AS total
          FROM actions WHERE org_uuid = ${orgUuid} AND created_at >= ${since}`
  })

  const agreement = Rows.findOne({
    Request: Window,
    Result: Schema.Struct({ total: Count, avg_disagreement: Count, approve: Count, deny: Count, review: Count }),
    execute: ({ orgUuid, since }) =>
      sql`SELECT count(*) AS total, COALESCE(avg(disagreement), 0) AS avg_disagreement,
                 count(*) FILTER (WHERE consensus_decision = 'APPROVE') AS approve,
                 count(*) FILTER (WHERE consensus_decision = 'DENY') AS deny,
                 count(*) FILTER (WHERE consensus_decision = 'REVIEW') AS review
          FROM cases WHERE org_uuid = ${orgUuid} AND consensus_decision IS NOT NULL AND created_at >= ${since}`
  })

  const policyDenials = Rows.findAll({
    Request: Window,
    Result: Schema.Struct({ action_type: Schema.String, total: Count, denied: Count }),
    execute: ({ orgUuid, since }) =>
      sql`SELECT COALESCE(NULLIF(action_type, ''), 'unknown') AS action_type, count(*) AS total,
                 count(*) FILTER (WHERE status = 'denied_by_policy') AS denied
          FROM actions WHERE org_uuid = ${orgUuid} AND created_at >= ${since}
          GROUP BY 1 HAVING count(*) FILTER (WHERE status = 'denied_by_policy') > 0
          ORDER BY denied DESC, action_type LIMIT 20`
  })

  // The time series: a bucket is the UTC hour, day or week (from Monday) holding the instant, named by its start.
  const Range = Schema.Struct({ orgUuid: Schema.String, from: Schema.Date, to: Schema.Date, unit: Schema.Literals(["hour", "day", "week"]) })

  const statusSeries = Rows.findAll({
    Request: Range,
    Result: Schema.Struct({ start: Schema.String, status: Schema.String, n: Count }),
    execute: ({ orgUuid, from, to, unit }) =>
      sql`SELECT to_char(date_trunc(${unit}, created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS start, status, count(*) AS n
          FROM actions WHERE org_uuid = ${orgUuid} AND created_at >= ${from} AND created_at <= ${to}
          GROUP BY 1, 2 ORDER BY 1, 2`
  })

  // A person's decision (approve or deny) sets approved_at; the latency is decision minus request, per decision bucket.
  const latencySeries = Rows.findAll({
    Request: Range,
    Result: Schema.Struct({ start: Schema.String, decided: Count, median: NullableCount, p95: NullableCount }),
    execute: ({ orgUuid, from, to, unit }) =>
      sql`SELECT to_char(date_trunc(${unit}, approved_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS start, count(*) AS decided,
                 percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM approved_at - created_at)::float8) AS median,
                 percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM approved_at - created_at)::float8) AS p95
          FROM actions
          WHERE org_uuid = ${orgUuid} AND approved_at IS NOT NULL AND approved_at >= ${from} AND approved_at <= ${to}
            AND created_at <= ${to}
          GROUP BY 1 ORDER BY 1`
  })

  const denialsByPolicy = Rows.findAll({
    Request: Range,
    Result: Schema.Struct({ policy_uuid: Schema.NullOr(Schema.String), policy_name: Schema.NullOr(Schema.String), denied: Count }),
    execute: ({ orgUuid, from, to }) =>
      sql`SELECT a.policy_uuid, max(p.name) AS policy_name, count(*) AS denied
          FROM actions a LEFT JOIN policies p ON p.id = a.policy_uuid AND p.org_uuid = a.org_uuid
          WHERE a.org_uuid = ${orgUuid} AND a.status = 'denied_by_policy' AND a.created_at >= ${from} AND a.created_at <= ${to}
          GROUP BY a.policy_uuid ORDER BY denied DESC, a.policy_uuid NULLS LAST LIMIT 50`
  })

  // One-row queries: a missing row would be the database's fault, like any SQL failure.
  return sqlDefects({
    tableExists: (name: string) => Effect.map(Effect.orDie(present(name)), (row) => row.present),
    overTime,
    topAgents,
    rates: (window: typeof Window.Type) => Effect.orDie(rates(window)),
    agreement: (window: typeof Window.Type) => Effect.orDie(agreement(window)),
    policyDenials,
    statusSeries,
    latencySeries,
    denialsByPolicy
  })
})
