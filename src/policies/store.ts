/** SQL for policies. Rows come back as `PolicyRow` with ISO timestamps and parsed jsonb. */
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql"
import { jsonb } from "../platform/db/index.js"
import { count, iso, isoRequired, jsonValue, offset } from "../platform/sql.js"
import type { PolicyDecision, PolicyMode, PolicyStatus } from "./types.js"

export interface StoredScope {
  readonly agent_ids: ReadonlyArray<string>
  readonly action_types: ReadonlyArray<string>
}

/** The fields a create or update writes. */
export interface PolicyFields {
  readonly name: string
  readonly description: string | null
  readonly mode: PolicyMode
  readonly decision: PolicyDecision
  readonly priority: number
  readonly conditions: unknown
  readonly ai_prompt: string | null
  readonly ai_models: ReadonlyArray<string> | null
  readonly scan_config: unknown
  readonly scope: StoredScope
}

export interface PolicyRow extends PolicyFields {
  readonly id: string
  readonly org_uuid: string
  readonly status: PolicyStatus
  readonly evaluation_count: number
  readonly last_evaluated_at: string | null
  readonly activated_at: string | null
  readonly deactivated_at: string | null
  readonly created_at: string
  readonly updated_at: string
}

const toRow = (row: any): PolicyRow => ({
  id: row.id,
  org_uuid: row.org_uuid,
  name: row.name,
  description: row.description ?? null,
  mode: row.mode,
  decision: row.decision,
  priority: Number(row.priority),
  conditions: jsonValue<unknown>(row.conditions, null),
  ai_prompt: row.ai_prompt ?? null,
  ai_models: jsonValue<ReadonlyArray<string> | null>(row.ai_models, null),
  scan_config: jsonValue<unknown>(row.scan_config, null),
  scope: { agent_ids: [], action_types: [], ...jsonValue<Partial<StoredScope>>(row.scope, {}) },
  status: row.status,
  evaluation_count: count(row.evaluation_count),
  last_evaluated_at: iso(row.last_evaluated_at),
  activated_at: iso(row.activated_at),
  deactivated_at: iso(row.deactivated_at),
  created_at: isoRequired(row.created_at),
  updated_at: isoRequired(row.updated_at)
})

/** jsonb null must be SQL NULL, not the JSON literal null. */
const jsonOrNull = (value: unknown) => (value === null || value === undefined ? null : jsonb(value))

export interface EvaluationTally {
  readonly id: string
  readonly n: number
  readonly at: string
}

export const makePoliciesStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  return {
    sql,

    insert: (id: string, orgUuid: string, fields: PolicyFields, status: PolicyStatus) =>
      sql`INSERT INTO policies (id, org_uuid, name, description, mode, decision, priority, conditions, ai_prompt, ai_models,
            scan_config, scope, status, activated_at)
          VALUES (${id}, ${orgUuid}, ${fields.name}, ${fields.description}, ${fields.mode}, ${fields.decision}, ${fields.priority},
            ${jsonOrNull(fields.conditions)}, ${fields.ai_prompt}, ${jsonOrNull(fields.ai_models)}, ${jsonOrNull(fields.scan_config)},
            ${jsonb(fields.scope)}, ${status}, ${status === "active" ? new Date() : null})
          RETURNING *`.pipe(Effect.map((rows) => toRow(rows[0]))),

    find: (orgUuid: string, id: string) =>
      sql`SELECT * FROM policies WHERE id = ${id} AND org_uuid = ${orgUuid}`.pipe(
        Effect.map((rows) => (rows[0] ? toRow(rows[0]) : undefined))
      ),

    list: (orgUuid: string, filter: { mode?: string; status?: string }, page: number, perPage: number) =>
      Effect.gen(function* () {
        const where = sql.and([
          sql`org_uuid = ${orgUuid}`,
          ...(filter.mode ? [sql`mode = ${filter.mode}`] : []),
          ...(filter.status ? [sql`status = ${filter.status}`] : [])
        ])
        const rows = yield* sql`SELECT * FROM policies WHERE ${where}
          ORDER BY priority DESC, created_at ASC, id ASC LIMIT ${perPage} OFFSET ${offset(page, perPage)}`
        const total = yield* sql`SELECT count(*) AS n FROM policies WHERE ${where}`
        return { rows: rows.map(toRow), total: count(total[0]?.n) }
      }),

    active: (orgUuid: string) =>
      sql`SELECT * FROM policies WHERE org_uuid = ${orgUuid} AND status = 'active'`.pipe(Effect.map((rows) => rows.map(toRow))),

    update: (orgUuid: string, id: string, fields: PolicyFields) =>
      sql`UPDATE policies SET name = ${fields.name}, description = ${fields.description}, decision = ${fields.decision},
            priority = ${fields.priority}, conditions = ${jsonOrNull(fields.conditions)}, ai_prompt = ${fields.ai_prompt},
            ai_models = ${jsonOrNull(fields.ai_models)}, scan_config = ${jsonOrNull(fields.scan_config)}, scope = ${jsonb(fields.scope)},
            updated_at = now()
          WHERE id = ${id} AND org_uuid = ${orgUuid} RETURNING *`.pipe(Effect.map((rows) => (rows[0] ? toRow(rows[0]) : undefined))),

    /** Moves `from` → `to` atomically; undefined when the policy was not in `from`. */
    transition: (orgUuid: string, id: string, from: ReadonlyArray<PolicyStatus>, to: PolicyStatus) =>
      (to === "active"
        ? sql`UPDATE policies SET status = 'active', activated_at = now(), updated_at = now()
              WHERE id = ${id} AND org_uuid = ${orgUuid} AND status IN ${sql.in(from)} RETURNING *`
        : sql`UPDATE policies SET status = ${to}, deactivated_at = now(), updated_at = now()
              WHERE id = ${id} AND org_uuid = ${orgUuid} AND status IN ${sql.in(from)} RETURNING *`
      ).pipe(Effect.map((rows) => (rows[0] ? toRow(rows[0]) : undefined))),

    /** Deletes unless active; returns whether a row went. */
    removeInactive: (orgUuid: string, id: string) =>
      sql`DELETE FROM policies WHERE id = ${id} AND org_uuid = ${orgUuid} AND status <> 'active' RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0)
      ),

    /** One statement for every tallied policy (the evaluation counters are batched in memory). */
    addEvaluations: (tallies: ReadonlyArray<EvaluationTally>) =>
      tallies.length === 0
        ? Effect.void
        : sql`UPDATE policies AS p SET evaluation_count = p.evaluation_count + v.n,
                last_evaluated_at = GREATEST(COALESCE(p.last_evaluated_at, v.at), v.at)
              FROM (SELECT * FROM jsonb_to_recordset(${jsonb(tallies)}) AS x(id text, n bigint, at timestamptz)) AS v
              WHERE p.id = v.id`.pipe(Effect.asVoid),

    audit: (entry: { orgUuid: string; actor: string; event: string; target: string; details?: Record<string, unknown>; requestId: string | null }) =>
      sql`INSERT INTO audit_log (org_uuid, actor, event, target, details, request_id)
          VALUES (${entry.orgUuid}, ${entry.actor}, ${entry.event}, ${entry.target}, ${jsonb(entry.details ?? {})}, ${entry.requestId})`.pipe(
        Effect.asVoid
      )
  }
})

export type PoliciesStore = Effect.Success<typeof makePoliciesStore>
