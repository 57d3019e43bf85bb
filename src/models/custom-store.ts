/** SQL for custom models (the Authorization value sealed; everything else in clear). */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient, SqlSchema } from "effect/sql"
import { Json, NullableTimestamp, Timestamp } from "../platform/columns.js"
import { jsonb } from "../platform/db/index.js"

const Settings = Schema.Record(Schema.String, Schema.Unknown)

const CustomModelRow = Schema.Struct({
  id: Schema.String,
  org_uuid: Schema.String,
  name: Schema.String,
  model_id: Schema.String,
  endpoint_url: Schema.String,
  sealed_auth: Schema.NullOr(Schema.String),
  request_schema: Json(Settings, {}),
  response_schema: Json(Settings, {}),
  timeout_ms: Schema.Number,
  status: Schema.Literals(["untested", "ok", "error"]),
  last_tested: NullableTimestamp,
  created_at: Timestamp,
  updated_at: NullableTimestamp
})
export type CustomModelRow = typeof CustomModelRow.Type

export interface CustomModelWrite {
  readonly name: string
  readonly endpoint_url: string
  readonly sealed_auth: string | null
  readonly auth_key_id: string | null
  readonly request_schema: Readonly<Record<string, unknown>>
  readonly response_schema: Readonly<Record<string, unknown>>
  readonly timeout_ms: number
}

const COLUMNS = "id, org_uuid, name, model_id, endpoint_url, sealed_auth, request_schema, response_schema, timeout_ms, status, last_tested, created_at, updated_at"

export const makeCustomModelsStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const columns = sql.literal(COLUMNS)

  const byOrg = SqlSchema.findAll({
    Request: Schema.String,
    Result: CustomModelRow,
    execute: (orgUuid) => sql`SELECT ${columns} FROM custom_models WHERE org_uuid = ${orgUuid} ORDER BY created_at, id`
  })
  const byId = SqlSchema.findOneOption({
    Request: Schema.Struct({ orgUuid: Schema.String, id: Schema.String }),
    Result: CustomModelRow,
    execute: ({ orgUuid, id }) => sql`SELECT ${columns} FROM custom_models WHERE org_uuid = ${orgUuid} AND id = ${id}`
  })
  const byModelId = SqlSchema.findOneOption({
    Request: Schema.Struct({ orgUuid: Schema.String, modelId: Schema.String }),
    Result: CustomModelRow,
    execute: ({ orgUuid, modelId }) => sql`SELECT ${columns} FROM custom_models WHERE org_uuid = ${orgUuid} AND model_id = ${modelId}`
  })
  const insert = SqlSchema.findOneOption({
    Request: Schema.Any,
    Result: CustomModelRow,
    execute: (row: CustomModelWrite & { id: string; org_uuid: string; model_id: string }) =>
      sql`INSERT INTO custom_models (id, org_uuid, name, model_id, endpoint_url, sealed_auth, auth_key_id, request_schema, response_schema, timeout_ms)
          VALUES (${row.id}, ${row.org_uuid}, ${row.name}, ${row.model_id}, ${row.endpoint_url}, ${row.sealed_auth}, ${row.auth_key_id},
                  ${jsonb(row.request_schema)}, ${jsonb(row.response_schema)}, ${row.timeout_ms})
          ON CONFLICT (org_uuid, model_id) DO NOTHING
          RETURNING ${columns}`
  })
  const update = SqlSchema.findOneOption({
    Request: Schema.Any,
    Result: CustomModelRow,
    execute: (row: CustomModelWrite & { id: string; org_uuid: string }) =>
      sql`UPDATE custom_models SET name = ${row.name}, endpoint_url = ${row.endpoint_url}, sealed_auth = ${row.sealed_auth}, auth_key_id = ${row.auth_key_id},
            request_schema = ${jsonb(row.request_schema)}, response_schema = ${jsonb(row.response_schema)}, timeout_ms = ${row.timeout_ms},
            status = 'untested', last_tested = NULL, updated_at = now()
          WHERE org_uuid = ${row.org_uuid} AND id = ${row.id}
          RETURNING ${columns}`
  })

  return {
    byOrg,
    byId: (orgUuid: string, id: string) => Effect.map(byId({ orgUuid, id }), Option.getOrUndefined),
    byModelId: (orgUuid: string, modelId: string) => Effect.map(byModelId({ orgUuid, modelId }), Option.getOrUndefined),
    /** Undefined when the organization already has a model with this `model_id`. */
    insert: (row: CustomModelWrite & { id: string; org_uuid: string; model_id: string }) => Effect.map(insert(row), Option.getOrUndefined),
    update: (row: CustomModelWrite & { id: string; org_uuid: string }) => Effect.map(update(row), Option.getOrUndefined),
    remove: (orgUuid: string, id: string) =>
      sql`DELETE FROM custom_models WHERE org_uuid = ${orgUuid} AND id = ${id} RETURNING id`.pipe(Effect.map((rows) => rows.length > 0)),
    recordTest: (orgUuid: string, id: string, status: "ok" | "error") =>
      sql`UPDATE custom_models SET status = ${status}, last_tested = now() WHERE org_uuid = ${orgUuid} AND id = ${id}`.pipe(Effect.asVoid)
  }
})
