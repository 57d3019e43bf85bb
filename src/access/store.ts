/**
 * SQL of authentication: the user and key rows a credential stands for, and batched key usage.
 * The row schemas are shared with accounts, which manages the same rows.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient } from "effect/sql"
import { Roles } from "../../protocol/accounts.js"
import { Json, NullableTimestamp, Timestamp } from "../platform/columns.js"
import { jsonb } from "../platform/db/index.js"
import * as Rows from "../platform/db/rows.js"
import { sqlDefects } from "../platform/db/store.js"

const Role = Schema.Literals(Roles)

export const UserRow = Schema.Struct({
  user_uuid: Schema.String,
  org_uuid: Schema.String,
  email: Schema.String,
  name: Schema.NullOr(Schema.String),
  password_hash: Schema.String,
  role: Role,
  created_at: Timestamp,
  deactivated_at: NullableTimestamp
})
export type UserRow = typeof UserRow.Type

export const KeyRow = Schema.Struct({
  id: Schema.String,
  org_uuid: Schema.String,
  user_uuid: Schema.NullOr(Schema.String),
  name: Schema.String,
  key_prefix: Schema.String,
  scopes: Json(Schema.Array(Schema.String)),
  created_at: Timestamp,
  expires_at: NullableTimestamp,
  revoked_at: NullableTimestamp,
  last_used_at: NullableTimestamp
})
export type KeyRow = typeof KeyRow.Type

/** A key together with its creator, as authentication needs it. */
const KeyPrincipalRow = Schema.Struct({ ...KeyRow.fields, key_hash: Schema.String, role: Role, email: Schema.String, user_active: Schema.Boolean })

export const makeCredentialsStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const userInOrg = Rows.findOneOption({
    Request: Schema.Struct({ orgUuid: Schema.String, userUuid: Schema.String }),
    Result: UserRow,
    execute: ({ orgUuid, userUuid }) =>
      sql`SELECT * FROM users WHERE user_uuid = ${userUuid} AND org_uuid = ${orgUuid} AND deactivated_at IS NULL`
  })

  const keyByDigest = Rows.findOneOption({
    Request: Schema.String,
    Result: KeyPrincipalRow,
    execute: (digest) =>
      sql`SELECT k.*, u.role, u.email, (u.deactivated_at IS NULL) AS user_active
          FROM api_keys k JOIN users u ON u.user_uuid = k.user_uuid
          WHERE k.key_hash = ${digest}`
  })

  const touchKeys = Rows.void({
    Request: Schema.Array(Schema.Tuple([Schema.String, Schema.String])),
    execute: (usage) =>
      sql`UPDATE api_keys AS k SET last_used_at = GREATEST(COALESCE(k.last_used_at, u.at), u.at)
          FROM (SELECT (e->>0) AS id, (e->>1)::timestamptz AS at FROM jsonb_array_elements(${jsonb(usage)}) AS e) AS u
          WHERE k.id = u.id`
  })

  return sqlDefects({
    /** An active user of the organization. */
    userInOrg: (orgUuid: string, userUuid: string) => Effect.map(userInOrg({ orgUuid, userUuid }), Option.getOrUndefined),

    keyByDigest: (digest: string) => Effect.map(keyByDigest(digest), Option.getOrUndefined),

    /** One statement for every key used since the last flush. */
    touchKeys: (usage: ReadonlyArray<readonly [keyId: string, at: string]>) => (usage.length === 0 ? Effect.void : touchKeys(usage))
  })
})
