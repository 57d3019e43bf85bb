/** SQL for policies. Rows are decoded (`SqlSchema`) into `PolicyRow`: ISO timestamps, numbers, parsed jsonb. */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient } from "effect/sql"
import { type AuditEntry, insertAudit } from "../platform/audit.js"
import { Count, Json, NullableJson, NullableTimestamp, Timestamp } from "../platform/columns.js"
import { jsonb } from "../platform/db/index.js"
import * as Rows from "../platform/db/rows.js"
import { sqlDefects } from "../platform/db/store.js"
import { offset } from "../platform/sql.js"
import { POLICY_DECISIONS, POLICY_MODES, POLICY_STATUSES, type PolicyStatus } from "./types.js"

const Scope = Schema.Struct({ agent_ids: Schema.Array(Schema.String), action_types: Schema.Array(Schema.String) })
export type StoredScope = typeof Scope.Type

const Status = Schema.Literals(POLICY_STATUSES)

const writable = {
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  mode: Schema.Literals(POLICY_MODES),
  decision: Schema.Literals(POLICY_DECISIONS),
  priority: Schema.Number,
  conditions: Schema.Unknown,
  ai_prompt: Schema.NullOr(Schema.String),
  ai_models: Schema.NullOr(Schema.Array(Schema.String)),
  scan_config: Schema.Unknown,
  scope: Scope
}

/** The fields a create or update writes. */
export const PolicyFields = Schema.Struct(writable)
export type PolicyFields = typeof PolicyFields.Type

/** A stored scope may lack either list (the column's default is `{}`): it reads as empty. */
const NoneByDefault = Schema.Array(Schema.String).pipe(Schema.withDecodingDefaultKey(Effect.succeed([])))
const StoredScopeColumn = Json(Schema.Struct({ agent_ids: NoneByDefault, action_types: NoneByDefault }))

/** A `policies` row as read: the writable fields (jsonb parsed) and the bookkeeping. */
const PolicyRow = Schema.Struct({
  ...writable,
  priority: Count,
  conditions: NullableJson(Schema.Unknown),
  ai_models: NullableJson(Schema.Array(Schema.String)),
  scan_config: NullableJson(Schema.Unknown),
  scope: StoredScopeColumn,
  id: Schema.String,
  org_uuid: Schema.String,
  status: Status,
  evaluation_count: Count,
  last_evaluated_at: NullableTimestamp,
  activated_at: NullableTimestamp,
  deactivated_at: NullableTimestamp,
  created_at: Timestamp,
  updated_at: Timestamp
})
export type PolicyRow = typeof PolicyRow.Type

const ById = Schema.Struct({ orgUuid: Schema.String, id: Schema.String })

/** jsonb null must be SQL NULL, not the JSON literal null. */
const jsonOrNull = (value: unknown) => (value === null || value === undefined ? null : jsonb(value))

export interface EvaluationTally {
  readonly id: string
  readonly n: number
  readonly at: string
}

export const makePoliciesStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const insert = Rows.findOne({
    Request: Schema.Struct({ id: Schema.String, orgUuid: Schema.String, fields: PolicyFields, status: Status }),
    Result: PolicyRow,
    execute: ({ id, orgUuid, fields, status }) =>
      sql`INSERT INTO policies (id, org_uuid, name, description, mode, decision, priority, conditions, ai_prompt, ai_models,
            scan_config, scope, status, activated_at)
          VALUES (${id}, ${orgUuid}, ${fields.name}, ${fields.description}, ${fields.mode}, ${fields.decision}, ${fields.priority},
            ${jsonOrNull(fields.conditions)}, ${fields.ai_prompt}, ${jsonOrNull(fields.ai_models)}, ${jsonOrNull(fields.scan_config)},
            ${jsonb(fields.scope)}, ${status}, ${status === "active" ? sql`now()` : null})
          RETURNING *`
  })

  const find = Rows.findOneOption({
    Request: ById,
    Result: PolicyRow,
    execute: ({ orgUuid, id }) => sql`SELECT * FROM policies WHERE id = ${id} AND org_uuid = ${orgUuid}`
  })

  const ListFilter = Schema.Struct({ orgUuid: Schema.String, mode: Schema.optional(Schema.String), status: Schema.optional(Schema.String) })
  const where = (filter: typeof ListFilter.Encoded) =>
    sql.and([
      sql`org_uuid = ${filter.orgUuid}`,
      ...(filter.mode ? [sql`mode = ${filter.mode}`] : []),
      ...(filter.status ? [sql`status = ${filter.status}`] : [])
    ])

  const findPage = Rows.findAll({
    Request: Schema.Struct({ filter: ListFilter, limit: Schema.Number, offset: Schema.Number }),
    Result: PolicyRow,
    execute: ({ filter, limit, offset }) =>
      sql`SELECT * FROM policies WHERE ${where(filter)} ORDER BY priority DESC, created_at ASC, id ASC LIMIT ${limit} OFFSET ${offset}`
  })

  const countAll = Rows.findOne({
    Request: ListFilter,
    Result: Schema.Struct({ n: Count }),
    execute: (filter) => sql`SELECT count(*) AS n FROM policies WHERE ${where(filter)}`
  })

  const active = Rows.findAll({
    Request: Schema.String,
    Result: PolicyRow,
    execute: (orgUuid) => sql`SELECT * FROM policies WHERE org_uuid = ${orgUuid} AND status = 'active'`
  })

  const update = Rows.findOneOption({
    Request: Schema.Struct({ ...ById.fields, fields: PolicyFields }),
    Result: PolicyRow,
    execute: ({ orgUuid, id, fields }) =>
      sql`UPDATE policies SET name = ${fields.name}, description = ${fields.description}, decision = ${fields.decision},
            priority = ${fields.priority}, conditions = ${jsonOrNull(fields.conditions)}, ai_prompt = ${fields.ai_prompt},
            ai_models = ${jsonOrNull(fields.ai_models)}, scan_config = ${jsonOrNull(fields.scan_config)}, scope = ${jsonb(fields.scope)},
            updated_at = now()
          WHERE id = ${id} AND org_uuid = ${orgUuid} RETURNING *`
  })

  const removeInactive = Rows.findAll({
    Request: ById,
    Result: Schema.Struct({ id: Schema.String }),
    execute: ({ orgUuid, id }) => sql`DELETE FROM policies WHERE id = ${id} AND org_uuid = ${orgUuid} AND status <> 'active' RETURNING id`
  })

  const addEvaluations = Rows.void({
    Request: Schema.Array(Schema.Struct({ id: Schema.String, n: Schema.Number, at: Schema.String })),
    execute: (tallies) =>
      sql`UPDATE policies AS p SET evaluation_count = p.evaluation_count + v.n,
            last_evaluated_at = GREATEST(COALESCE(p.last_evaluated_at, v.at), v.at)
          FROM (SELECT * FROM jsonb_to_recordset(${jsonb(tallies)}) AS x(id text, n bigint, at timestamptz)) AS v
          WHERE p.id = v.id`
  })

  const transition = Rows.findOneOption({
    Request: Schema.Struct({ ...ById.fields, from: Schema.Array(Status), to: Status }),
    Result: PolicyRow,
    execute: ({ orgUuid, id, from, to }) =>
      to === "active"
        ? sql`UPDATE policies SET status = 'active', activated_at = now(), updated_at = now()
              WHERE id = ${id} AND org_uuid = ${orgUuid} AND status IN ${sql.in(from)} RETURNING *`
        : sql`UPDATE policies SET status = ${to}, deactivated_at = now(), updated_at = now()
              WHERE id = ${id} AND org_uuid = ${orgUuid} AND status IN ${sql.in(from)} RETURNING *`
  })

  return sqlDefects({
    sql,

    // RETURNING answers the row it inserted.
    insert: (id: string, orgUuid: string, fields: PolicyFields, status: PolicyStatus) =>
      insert({ id, orgUuid, fields, status }).pipe(Effect.catchTag("NoSuchElementError", Effect.die)),

    find: (orgUuid: string, id: string) => Effect.map(find({ orgUuid, id }), Option.getOrUndefined),

    list: (orgUuid: string, filter: { mode?: string | undefined; status?: string | undefined }, page: number, perPage: number) =>
      Effect.gen(function* () {
        const rows = yield* findPage({ filter: { orgUuid, ...filter }, limit: perPage, offset: offset(page, perPage) })
        // COUNT(*) always answers one row.
        const { n } = yield* countAll({ orgUuid, ...filter }).pipe(Effect.catchTag("NoSuchElementError", Effect.die))
        return { rows, total: n }
      }),

    active,

    update: (orgUuid: string, id: string, fields: PolicyFields) => Effect.map(update({ orgUuid, id, fields }), Option.getOrUndefined),

    /** Moves `from` → `to` atomically; undefined when the policy was not in `from`. */
    transition: (orgUuid: string, id: string, from: ReadonlyArray<PolicyStatus>, to: PolicyStatus) =>
      Effect.map(transition({ orgUuid, id, from, to }), Option.getOrUndefined),

    /** Deletes unless active; returns whether a row went. */
    removeInactive: (orgUuid: string, id: string) => Effect.map(removeInactive({ orgUuid, id }), (rows) => rows.length > 0),

    /** One statement for every tallied policy (the evaluation counters are batched in memory). */
    addEvaluations: (tallies: ReadonlyArray<EvaluationTally>) => (tallies.length === 0 ? Effect.void : addEvaluations(tallies)),

    audit: (entry: AuditEntry) => insertAudit(sql, entry)
  })
})

export type PoliciesStore = Effect.Success<typeof makePoliciesStore>
