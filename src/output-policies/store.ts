/** SQL of output policies: one JSON document per organization. */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient } from "effect/sql"
import { JsonObject } from "../platform/columns.js"
import { jsonb } from "../platform/db/index.js"
import * as Rows from "../platform/db/rows.js"
import { sqlDefects } from "../platform/db/store.js"

export const makeOutputPoliciesStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const find = Rows.findOneOption({
    Request: Schema.String,
    Result: Schema.Struct({ policy: JsonObject }),
    execute: (orgUuid) => sql`SELECT policy FROM output_policies WHERE org_uuid = ${orgUuid}`
  })

  const save = Rows.void({
    Request: Schema.Struct({ orgUuid: Schema.String, policy: Schema.Record(Schema.String, Schema.Unknown) }),
    execute: ({ orgUuid, policy }) =>
      sql`INSERT INTO output_policies (org_uuid, policy) VALUES (${orgUuid}, ${jsonb(policy)})
          ON CONFLICT (org_uuid) DO UPDATE SET policy = EXCLUDED.policy, updated_at = now()`
  })

  return sqlDefects({
    /** The stored document; undefined when the organization never set one. */
    find: (orgUuid: string) => Effect.map(find(orgUuid), (row) => Option.getOrUndefined(Option.map(row, (found) => found.policy))),
    save: (orgUuid: string, policy: Record<string, unknown>) => save({ orgUuid, policy })
  })
})
