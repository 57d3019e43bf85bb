/** SQL of drift: baselines, alerts, the hourly counts a window is rebuilt from, and usage events. */
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql"
import type { DriftAlert, DriftBaseline, Severity } from "../../protocol/drift.js"
import { jsonb } from "../platform/db/index.js"

const iso = (value: unknown): string => (value instanceof Date ? value : new Date(String(value))).toISOString()

const parseJson = <T>(value: unknown): T => (typeof value === "string" ? JSON.parse(value) : value) as T

const toBaseline = (row: any): DriftBaseline => ({
  id: row.id,
  agent_id: row.agent_id,
  baseline_type: row.baseline_type,
  is_active: row.is_active,
  window_start: iso(row.window_start),
  window_end: iso(row.window_end),
  action_type_dist: parseJson(row.action_type_dist),
  total_actions: Number(row.total_actions),
  avg_actions_per_day: Number(row.avg_actions_per_day),
  source_agent_ids: row.source_agent_ids === null ? null : parseJson(row.source_agent_ids)
})

const toAlert = (row: any): DriftAlert => ({
  id: row.id,
  agent_id: row.agent_id,
  baseline_uuid: row.baseline_uuid,
  window_start: iso(row.window_start),
  window_end: iso(row.window_end),
  kl_divergence: Number(row.kl_divergence),
  volume_ratio: Number(row.volume_ratio),
  severity: row.severity,
  new_action_types: row.new_action_types === null ? null : parseJson(row.new_action_types),
  detected_at: iso(row.detected_at),
  acknowledged_at: row.acknowledged_at === null ? null : iso(row.acknowledged_at),
  acknowledged_by: row.acknowledged_by
})

export interface NewBaseline extends DriftBaseline {
  readonly org_uuid: string
}

export interface NewAlert extends DriftAlert {
  readonly org_uuid: string
}

export const makeDriftStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  /** A registered agent of the organization, or an agent id its actions carry. */
  const agentKnown = (orgUuid: string, agentId: string) =>
    Effect.map(
      sql`SELECT (EXISTS (SELECT 1 FROM agents WHERE org_uuid = ${orgUuid} AND agent_slug = ${agentId})
                  OR EXISTS (SELECT 1 FROM actions WHERE org_uuid = ${orgUuid} AND agent_id = ${agentId})) AS known`,
      (rows) => rows[0]?.known === true
    )

  /** Counts per (hour since the epoch, action type) of the agent's actions in [since, before). */
  const hourlyCounts = (orgUuid: string, agentId: string, since: Date, before: Date) =>
    Effect.map(
      sql`SELECT floor(extract(epoch FROM created_at) / 3600)::int AS hour, action_type, count(*)::int AS n
          FROM actions WHERE org_uuid = ${orgUuid} AND agent_id = ${agentId} AND created_at >= ${since} AND created_at < ${before}
          GROUP BY 1, 2`,
      (rows) => rows as unknown as ReadonlyArray<{ hour: number; action_type: string; n: number }>
    )

  /** Counts per action type of these agents' actions in [start, end). */
  const typeCounts = (orgUuid: string, agentIds: ReadonlyArray<string>, start: Date, end: Date) =>
    Effect.map(
      sql`SELECT action_type, count(*)::int AS n FROM actions
          WHERE org_uuid = ${orgUuid} AND agent_id IN ${sql.in(agentIds)} AND created_at >= ${start} AND created_at < ${end}
          GROUP BY 1`,
      (rows) => {
        const out: Record<string, number> = {}
        for (const row of rows as unknown as ReadonlyArray<{ action_type: string; n: number }>) out[row.action_type] = row.n
        return out
      }
    )

  /** Which of these ids the organization knows as agents. */
  const knownAgents = (orgUuid: string, agentIds: ReadonlyArray<string>) =>
    Effect.map(
      sql`SELECT agent_slug AS id FROM agents WHERE org_uuid = ${orgUuid} AND agent_slug IN ${sql.in(agentIds)}
          UNION SELECT DISTINCT agent_id AS id FROM actions WHERE org_uuid = ${orgUuid} AND agent_id IN ${sql.in(agentIds)}`,
      (rows) => new Set((rows as unknown as ReadonlyArray<{ id: string }>).map((row) => row.id))
    )

  /** Inserts a baseline; an active one replaces the agent's previous active baseline. */
  const insertBaseline = (b: NewBaseline) =>
    sql.withTransaction(
      Effect.gen(function* () {
        if (b.is_active) yield* sql`UPDATE drift_baselines SET is_active = false WHERE org_uuid = ${b.org_uuid} AND agent_id = ${b.agent_id} AND is_active`
        const rows = yield* sql`INSERT INTO drift_baselines (id, org_uuid, agent_id, baseline_type, is_active, window_start, window_end,
              action_type_dist, total_actions, avg_actions_per_day, source_agent_ids)
            VALUES (${b.id}, ${b.org_uuid}, ${b.agent_id}, ${b.baseline_type}, ${b.is_active}, ${b.window_start}, ${b.window_end},
              ${jsonb(b.action_type_dist)}, ${b.total_actions}, ${b.avg_actions_per_day}, ${b.source_agent_ids === null ? null : jsonb(b.source_agent_ids)})
            RETURNING *`
        return toBaseline(rows[0])
      })
    )

  const activeBaseline = (orgUuid: string, agentId: string) =>
    Effect.map(sql`SELECT * FROM drift_baselines WHERE org_uuid = ${orgUuid} AND agent_id = ${agentId} AND is_active`, (rows) =>
      rows.length === 0 ? null : toBaseline(rows[0])
    )

  /** Every active baseline, for the periodic check. */
  const activeBaselines = Effect.map(
    sql`SELECT org_uuid, agent_id FROM drift_baselines WHERE is_active ORDER BY org_uuid, agent_id`,
    (rows) => rows as unknown as ReadonlyArray<{ org_uuid: string; agent_id: string }>
  )

  const insertAlert = (a: NewAlert) =>
    Effect.map(
      sql`INSERT INTO drift_alerts (id, org_uuid, agent_id, baseline_uuid, window_start, window_end, kl_divergence, volume_ratio, severity,
            new_action_types, detected_at)
          VALUES (${a.id}, ${a.org_uuid}, ${a.agent_id}, ${a.baseline_uuid}, ${a.window_start}, ${a.window_end}, ${a.kl_divergence},
            ${a.volume_ratio}, ${a.severity}, ${a.new_action_types === null ? null : jsonb(a.new_action_types)}, ${a.detected_at})
          RETURNING *`,
      (rows) => toAlert(rows[0])
    )

  /** The latest unacknowledged alert against this baseline, if any (the periodic check repeats none). */
  const openAlert = (orgUuid: string, agentId: string, baselineUuid: string) =>
    Effect.map(
      sql`SELECT * FROM drift_alerts WHERE org_uuid = ${orgUuid} AND agent_id = ${agentId} AND baseline_uuid = ${baselineUuid}
            AND acknowledged_at IS NULL ORDER BY detected_at DESC LIMIT 1`,
      (rows) => (rows.length === 0 ? null : toAlert(rows[0]))
    )

  const listAlerts = (orgUuid: string, agentId: string, acknowledged: boolean | undefined, page: number, perPage: number) =>
    Effect.gen(function* () {
      const filter =
        acknowledged === undefined ? sql`` : acknowledged ? sql`AND acknowledged_at IS NOT NULL` : sql`AND acknowledged_at IS NULL`
      const [rows, counted] = yield* Effect.all(
        [
          sql`SELECT * FROM drift_alerts WHERE org_uuid = ${orgUuid} AND agent_id = ${agentId} ${filter}
              ORDER BY detected_at DESC, id LIMIT ${perPage} OFFSET ${(page - 1) * perPage}`,
          sql`SELECT count(*)::int AS n FROM drift_alerts WHERE org_uuid = ${orgUuid} AND agent_id = ${agentId} ${filter}`
        ],
        { concurrency: 2 }
      )
      return { items: rows.map(toAlert), total: Number((counted[0] as any)?.n ?? 0) }
    })

  /** The first acknowledgement stands; acknowledging again answers the alert as it is. */
  const acknowledge = (orgUuid: string, agentId: string, alertId: string, email: string) =>
    Effect.gen(function* () {
      yield* sql`UPDATE drift_alerts SET acknowledged_at = now(), acknowledged_by = ${email}
                 WHERE id = ${alertId} AND org_uuid = ${orgUuid} AND agent_id = ${agentId} AND acknowledged_at IS NULL`
      const rows = yield* sql`SELECT * FROM drift_alerts WHERE id = ${alertId} AND org_uuid = ${orgUuid} AND agent_id = ${agentId}`
      return rows.length === 0 ? null : toAlert(rows[0])
    })

  const recordUsage = (orgUuid: string, eventType: string, subject: string) =>
    sql`INSERT INTO usage_events (org_uuid, event_type, subject) VALUES (${orgUuid}, ${eventType}, ${subject})`

  return {
    sql,
    agentKnown,
    hourlyCounts,
    typeCounts,
    knownAgents,
    insertBaseline,
    activeBaseline,
    activeBaselines,
    insertAlert,
    openAlert,
    listAlerts,
    acknowledge,
    recordUsage
  }
})

export type DriftStore = Effect.Success<typeof makeDriftStore>
export type { Severity }
