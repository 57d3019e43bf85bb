/** SQL of drift: baselines, alerts, the hourly counts a window is rebuilt from, and usage events. */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient } from "effect/sql"
import { BaselineTypes, type DriftAlert, type DriftBaseline, Severities, type Severity } from "../../protocol/drift.js"
import { Count, Json, NullableJson, NullableTimestamp, Timestamp } from "../platform/columns.js"
import { jsonb } from "../platform/db/index.js"
import * as Rows from "../platform/db/rows.js"
import { sqlDefects } from "../platform/db/store.js"

const BaselineRow = Schema.Struct({
  id: Schema.String,
  agent_id: Schema.String,
  baseline_type: Schema.Literals(BaselineTypes),
  is_active: Schema.Boolean,
  window_start: Timestamp,
  window_end: Timestamp,
  action_type_dist: Json(Schema.Record(Schema.String, Schema.Number)),
  total_actions: Count,
  avg_actions_per_day: Schema.Number,
  source_agent_ids: NullableJson(Schema.Array(Schema.String))
})

const AlertRow = Schema.Struct({
  id: Schema.String,
  agent_id: Schema.String,
  baseline_uuid: Schema.String,
  window_start: Timestamp,
  window_end: Timestamp,
  kl_divergence: Schema.Number,
  volume_ratio: Schema.Number,
  severity: Schema.Literals(Severities),
  new_action_types: NullableJson(Schema.Array(Schema.String)),
  detected_at: Timestamp,
  acknowledged_at: NullableTimestamp,
  acknowledged_by: Schema.NullOr(Schema.String)
})

const BASELINE_COLUMNS = "id, agent_id, baseline_type, is_active, window_start, window_end, action_type_dist, total_actions, avg_actions_per_day, source_agent_ids"
const ALERT_COLUMNS =
  "id, agent_id, baseline_uuid, window_start, window_end, kl_divergence, volume_ratio, severity, new_action_types, detected_at, acknowledged_at, acknowledged_by"

const Agent = Schema.Struct({ orgUuid: Schema.String, agentId: Schema.String })
const Agents = Schema.Struct({ orgUuid: Schema.String, agentIds: Schema.Array(Schema.String) })
/** Instants as ISO text, which Postgres reads as timestamptz. */
const Span = { start: Schema.String, end: Schema.String }

export interface NewBaseline extends DriftBaseline {
  readonly org_uuid: string
}

export interface NewAlert extends DriftAlert {
  readonly org_uuid: string
}

export const makeDriftStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const baselineColumns = sql.literal(BASELINE_COLUMNS)
  const alertColumns = sql.literal(ALERT_COLUMNS)

  /** A registered agent of the organization, or an agent id its actions carry. */
  const known = Rows.findOne({
    Request: Agent,
    Result: Schema.Struct({ known: Schema.Boolean }),
    execute: ({ orgUuid, agentId }) =>
      sql`SELECT (EXISTS (SELECT 1 FROM agents WHERE org_uuid = ${orgUuid} AND agent_slug = ${agentId})
                  OR EXISTS (SELECT 1 FROM actions WHERE org_uuid = ${orgUuid} AND agent_id = ${agentId})) AS known`
  })
  // A SELECT of EXISTS always answers one row.
  const agentKnown = (orgUuid: string, agentId: string) => Effect.map(Effect.orDie(known({ orgUuid, agentId })), (row) => row.known)

  /** Counts per (hour since the epoch, action type) of the agent's actions in [start, end). */
  const hourlyCounts = Rows.findAll({
    Request: Schema.Struct({ ...Agent.fields, ...Span }),
    Result: Schema.Struct({ hour: Schema.Number, action_type: Schema.String, n: Schema.Number }),
    execute: ({ orgUuid, agentId, start, end }) =>
      sql`SELECT floor(extract(epoch FROM created_at) / 3600)::int AS hour, action_type, count(*)::int AS n
          FROM actions WHERE org_uuid = ${orgUuid} AND agent_id = ${agentId} AND created_at >= ${start} AND created_at < ${end}
          GROUP BY 1, 2`
  })

  const typeCountRows = Rows.findAll({
    Request: Schema.Struct({ ...Agents.fields, ...Span }),
    Result: Schema.Struct({ action_type: Schema.String, n: Schema.Number }),
    execute: ({ orgUuid, agentIds, start, end }) =>
      sql`SELECT action_type, count(*)::int AS n FROM actions
          WHERE org_uuid = ${orgUuid} AND agent_id IN ${sql.in(agentIds)} AND created_at >= ${start} AND created_at < ${end}
          GROUP BY 1`
  })
  /** Counts per action type of these agents' actions in [start, end). */
  const typeCounts = (orgUuid: string, agentIds: ReadonlyArray<string>, start: Date, end: Date) =>
    Effect.map(typeCountRows({ orgUuid, agentIds, start: start.toISOString(), end: end.toISOString() }), (rows) => {
      const out: Record<string, number> = {}
      for (const row of rows) out[row.action_type] = row.n
      return out
    })

  const knownAgentRows = Rows.findAll({
    Request: Agents,
    Result: Schema.Struct({ id: Schema.String }),
    execute: ({ orgUuid, agentIds }) =>
      sql`SELECT agent_slug AS id FROM agents WHERE org_uuid = ${orgUuid} AND agent_slug IN ${sql.in(agentIds)}
          UNION SELECT DISTINCT agent_id AS id FROM actions WHERE org_uuid = ${orgUuid} AND agent_id IN ${sql.in(agentIds)}`
  })
  /** Which of these ids the organization knows as agents. */
  const knownAgents = (orgUuid: string, agentIds: ReadonlyArray<string>) =>
    Effect.map(knownAgentRows({ orgUuid, agentIds }), (rows) => new Set(rows.map((row) => row.id)))

  const insertedBaseline = Rows.findOne({
    Request: Schema.Any,
    Result: BaselineRow,
    execute: (b: NewBaseline) =>
      sql`INSERT INTO drift_baselines (id, org_uuid, agent_id, baseline_type, is_active, window_start, window_end,
            action_type_dist, total_actions, avg_actions_per_day, source_agent_ids)
          VALUES (${b.id}, ${b.org_uuid}, ${b.agent_id}, ${b.baseline_type}, ${b.is_active}, ${b.window_start}, ${b.window_end},
            ${jsonb(b.action_type_dist)}, ${b.total_actions}, ${b.avg_actions_per_day}, ${b.source_agent_ids === null ? null : jsonb(b.source_agent_ids)})
          RETURNING ${baselineColumns}`
  })
  /** Inserts a baseline; an active one replaces the agent's previous active baseline. */
  const insertBaseline = (b: NewBaseline) =>
    sql.withTransaction(
      Effect.gen(function* () {
        if (b.is_active) yield* sql`UPDATE drift_baselines SET is_active = false WHERE org_uuid = ${b.org_uuid} AND agent_id = ${b.agent_id} AND is_active`
        // INSERT … RETURNING answers its row.
        return yield* Effect.catchTag(insertedBaseline(b), "NoSuchElementError", (error) => Effect.die(error))
      })
    )

  const activeBaselineRow = Rows.findOneOption({
    Request: Agent,
    Result: BaselineRow,
    execute: ({ orgUuid, agentId }) => sql`SELECT ${baselineColumns} FROM drift_baselines WHERE org_uuid = ${orgUuid} AND agent_id = ${agentId} AND is_active`
  })
  const activeBaseline = (orgUuid: string, agentId: string) =>
    Effect.map(activeBaselineRow({ orgUuid, agentId }), Option.getOrNull)

  const activeBaselineRows = Rows.findAll({
    Request: Schema.Void,
    Result: Schema.Struct({ org_uuid: Schema.String, agent_id: Schema.String }),
    execute: () => sql`SELECT org_uuid, agent_id FROM drift_baselines WHERE is_active ORDER BY org_uuid, agent_id`
  })
  const lockRow = Rows.findOne({
    Request: Schema.Number,
    Result: Schema.Struct({ locked: Schema.Boolean }),
    execute: (lock) => sql`SELECT pg_try_advisory_xact_lock(${lock}) AS locked`
  })
  /** Every active baseline, when this transaction takes the periodic check's lock (else none: another process runs it). */
  const lockedBaselines = (lock: number) =>
    sql.withTransaction(
      Effect.gen(function* () {
        const { locked } = yield* Effect.orDie(lockRow(lock))
        return locked ? yield* activeBaselineRows(undefined) : []
      })
    )

  const insertedAlert = Rows.findOne({
    Request: Schema.Any,
    Result: AlertRow,
    execute: (a: NewAlert) =>
      sql`INSERT INTO drift_alerts (id, org_uuid, agent_id, baseline_uuid, window_start, window_end, kl_divergence, volume_ratio, severity,
            new_action_types, detected_at)
          VALUES (${a.id}, ${a.org_uuid}, ${a.agent_id}, ${a.baseline_uuid}, ${a.window_start}, ${a.window_end}, ${a.kl_divergence},
            ${a.volume_ratio}, ${a.severity}, ${a.new_action_types === null ? null : jsonb(a.new_action_types)}, ${a.detected_at})
          RETURNING ${alertColumns}`
  })
  // INSERT … RETURNING answers its row.
  const insertAlert = (a: NewAlert) => Effect.catchTag(insertedAlert(a), "NoSuchElementError", (error) => Effect.die(error))

  const openAlertRow = Rows.findOneOption({
    Request: Schema.Struct({ ...Agent.fields, baselineUuid: Schema.String }),
    Result: AlertRow,
    execute: ({ orgUuid, agentId, baselineUuid }) =>
      sql`SELECT ${alertColumns} FROM drift_alerts WHERE org_uuid = ${orgUuid} AND agent_id = ${agentId} AND baseline_uuid = ${baselineUuid}
            AND acknowledged_at IS NULL ORDER BY detected_at DESC LIMIT 1`
  })
  /** The latest unacknowledged alert against this baseline, if any (the periodic check repeats none). */
  const openAlert = (orgUuid: string, agentId: string, baselineUuid: string) => Effect.map(openAlertRow({ orgUuid, agentId, baselineUuid }), Option.getOrNull)

  const AlertFilter = Schema.Struct({ ...Agent.fields, acknowledged: Schema.NullOr(Schema.Boolean) })
  const ackFilter = (acknowledged: boolean | null) =>
    acknowledged === null ? sql`` : acknowledged ? sql`AND acknowledged_at IS NOT NULL` : sql`AND acknowledged_at IS NULL`
  const alertPage = Rows.findAll({
    Request: Schema.Struct({ ...AlertFilter.fields, limit: Schema.Number, offset: Schema.Number }),
    Result: AlertRow,
    execute: ({ orgUuid, agentId, acknowledged, limit, offset }) =>
      sql`SELECT ${alertColumns} FROM drift_alerts WHERE org_uuid = ${orgUuid} AND agent_id = ${agentId} ${ackFilter(acknowledged)}
          ORDER BY detected_at DESC, id LIMIT ${limit} OFFSET ${offset}`
  })
  const alertCount = Rows.findOne({
    Request: AlertFilter,
    Result: Schema.Struct({ n: Count }),
    execute: ({ orgUuid, agentId, acknowledged }) =>
      sql`SELECT count(*) AS n FROM drift_alerts WHERE org_uuid = ${orgUuid} AND agent_id = ${agentId} ${ackFilter(acknowledged)}`
  })
  const listAlerts = (orgUuid: string, agentId: string, acknowledged: boolean | undefined, page: number, perPage: number) =>
    Effect.map(
      Effect.all(
        [
          alertPage({ orgUuid, agentId, acknowledged: acknowledged ?? null, limit: perPage, offset: (page - 1) * perPage }),
          // COUNT(*) always answers one row.
          Effect.orDie(alertCount({ orgUuid, agentId, acknowledged: acknowledged ?? null }))
        ],
        { concurrency: 2 }
      ),
      ([items, counted]): { items: ReadonlyArray<DriftAlert>; total: number } => ({ items, total: counted.n })
    )

  const alertById = Rows.findOneOption({
    Request: Schema.Struct({ ...Agent.fields, alertId: Schema.String }),
    Result: AlertRow,
    execute: ({ orgUuid, agentId, alertId }) => sql`SELECT ${alertColumns} FROM drift_alerts WHERE id = ${alertId} AND org_uuid = ${orgUuid} AND agent_id = ${agentId}`
  })
  /** The first acknowledgement stands; acknowledging again answers the alert as it is. */
  const acknowledge = (orgUuid: string, agentId: string, alertId: string, email: string) =>
    Effect.gen(function* () {
      yield* sql`UPDATE drift_alerts SET acknowledged_at = now(), acknowledged_by = ${email}
                 WHERE id = ${alertId} AND org_uuid = ${orgUuid} AND agent_id = ${agentId} AND acknowledged_at IS NULL`
      return Option.getOrNull(yield* alertById({ orgUuid, agentId, alertId }))
    })

  const recordUsage = (orgUuid: string, eventType: string, subject: string) =>
    sql`INSERT INTO usage_events (org_uuid, event_type, subject) VALUES (${orgUuid}, ${eventType}, ${subject})`.pipe(Effect.asVoid)

  return sqlDefects({
    sql,
    agentKnown,
    hourlyCounts: (orgUuid: string, agentId: string, startMs: number, endMs: number) =>
      hourlyCounts({ orgUuid, agentId, start: new Date(startMs).toISOString(), end: new Date(endMs).toISOString() }),
    typeCounts,
    knownAgents,
    insertBaseline,
    activeBaseline,
    lockedBaselines,
    insertAlert,
    openAlert,
    listAlerts,
    acknowledge,
    recordUsage
  })
})

export type DriftStore = Effect.Success<typeof makeDriftStore>
export type { Severity }
