/** SQL for custom models (the Authorization value sealed; everything else in clear). */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient } from "effect/sql"
import { JsonObject, NullableTimestamp, Timestamp } from "../platform/columns.js"
import { jsonb } from "../platform/db/index.js"
import * as Rows from "../platform/db/rows.js"
import { sqlDefects } from "../platform/db/store.js"

export const CustomModelStatuses = ["untested", "ok", "error"] as const

const CustomModelRow = Schema.Struct({
  id: Schema.String,
  org_uuid: Schema.String,
  name: Schema.String,
  model_id: Schema.String,
  endpoint_url: Schema.String,
  sealed_auth: Schema.NullOr(Schema.String),
  request_schema: JsonObject,
  response_schema: JsonObject,
  timeout_ms: Schema.Number,
  status: Schema.Literals(CustomModelStatuses),
  last_tested: NullableTimestamp,
  created_at: Timestamp,
  updated_at: NullableTimestamp
})
export type CustomModelRow = typeof CustomModelRow.Type

const Settings = Schema.Record(Schema.String, Schema.Unknown)

const CustomModelWrite = Schema.Struct({
  id: Schema.String,
  org_uuid: Schema.String,
  name: Schema.String,
  endpoint_url: Schema.String,
  sealed_auth: Schema.NullOr(Schema.String),
  auth_key_id: Schema.NullOr(Schema.String),
  request_schema: Settings,
  response_schema: Settings,
  timeout_ms: Schema.Number
})

export type CustomModelWrite = typeof CustomModelWrite.Type

const COLUMNS = "id, org_uuid, name, model_id, endpoint_url, sealed_auth, request_schema, response_schema, timeout_ms, status, last_tested, created_at, updated_at"

export const makeCustomModelsStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const columns = sql.literal(COLUMNS)

  const byOrg = Rows.findAll({
    Request: Schema.String,
    Result: CustomModelRow,
    execute: (orgUuid) => sql`SELECT ${columns} FROM custom_models WHERE org_uuid = ${orgUuid} ORDER BY created_at, id`
  })
  const byId = Rows.findOneOption({
    Request: Schema.Struct({ orgUuid: Schema.String, id: Schema.String }),
    Result: CustomModelRow,
    execute: ({ orgUuid, id }) => sql`SELECT ${columns} FROM custom_models WHERE org_uuid = ${orgUuid} AND id = ${id}`
  })
  const byModelId = Rows.findOneOption({
    Request: Schema.Struct({ orgUuid: Schema.String, modelId: Schema.String }),
    Result: CustomModelRow,
    execute: ({ orgUuid, modelId }) => sql`SELECT ${columns} FROM custom_models WHERE org_uuid = ${orgUuid} AND model_id = ${modelId}`
  })
  const insert = Rows.findOneOption({
    Request: Schema.Struct({ ...CustomModelWrite.fields, model_id: Schema.String }),
    Result: CustomModelRow,
    execute: (row) =>
      sql`INSERT INTO custom_models (id, org_uuid, name, model_id, endpoint_url, sealed_auth, auth_key_id, request_schema, response_schema, timeout_ms)
          VALUES (${row.id}, ${row.org_uuid}, ${row.name}, ${row.model_id}, ${row.endpoint_url}, ${row.sealed_auth}, ${row.auth_key_id},
                  ${jsonb(row.request_schema)}, ${jsonb(row.response_schema)}, ${row.timeout_ms})
          ON CONFLICT (org_uuid, model_id) DO NOTHING
          RETURNING ${columns}`
  })
  const update = Rows.findOneOption({
    Request: CustomModelWrite,
    Result: CustomModelRow,
    execute: (row) =>
      sql`UPDATE custom_models SET name = ${row.name}, endpoint_url = ${row.endpoint_url}, sealed_auth = ${row.sealed_auth}, auth_key_id = ${row.auth_key_id},
            request_schema = ${jsonb(row.request_schema)}, response_schema = ${jsonb(row.response_schema)}, timeout_ms = ${row.timeout_ms},
            status = 'untested', last_tested = NULL, updated_at = now()
          WHERE org_uuid = ${row.org_uuid} AND id = ${row.id}
          RETURNING ${columns}`
  })
  const remove = Rows.findAll({
    Request: Schema.Struct({ orgUuid: Schema.String, id: Schema.String }),
    Result: Schema.Struct({ id: Schema.String }),
    execute: ({ orgUuid, id }) => sql`DELETE FROM custom_models WHERE org_uuid = ${orgUuid} AND id = ${id} RETURNING id`
  })
  const recordTest = Rows.void({
    Request: Schema.Struct({ orgUuid: Schema.String, id: Schema.String, status: Schema.Literals(CustomModelStatuses) }),
    execute: ({ orgUuid, id, status }) => sql`UPDATE custom_models SET status = ${status}, last_tested = now() WHERE org_uuid = ${orgUuid} AND id = ${id}`
  })

  return sqlDefects({
    byOrg,
    byId: (orgUuid: string, id: string) => Effect.map(byId({ orgUuid, id }), Option.getOrUndefined),
    byModelId: (orgUuid: string, modelId: string) => Effect.map(byModelId({ orgUuid, modelId }), Option.getOrUndefined),
    /** Undefined when the organization already has a model with this `model_id`. */
    insert: (row: CustomModelWrite & { readonly model_id: string }) => Effect.map(insert(row), Option.getOrUndefined),
    /** Undefined when there is no such model. */
    update: (row: CustomModelWrite) => Effect.map(update(row), Option.getOrUndefined),
    /** True when something was deleted. */
    remove: (orgUuid: string, id: string) => Effect.map(remove({ orgUuid, id }), (rows) => rows.length > 0),
    recordTest: (orgUuid: string, id: string, status: "ok" | "error") => recordTest({ orgUuid, id, status })
  })
})
