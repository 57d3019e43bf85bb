/** Per-user read marks for notification keys, and the cases waiting for a review. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { SqlClient } from "effect/sql"
import { NullableJson, Timestamp } from "../platform/columns.js"
import { jsonb } from "../platform/db/index.js"
import * as Rows from "../platform/db/rows.js"
import { sqlDefects } from "../platform/db/store.js"

const CaseInReview = Schema.Struct({
  case_id: Schema.String,
  created_at: Timestamp,
  consensus: NullableJson(Schema.Record(Schema.String, Schema.Unknown))
})
export type CaseInReview = typeof CaseInReview.Type

const Keyed = Schema.Struct({ notification_key: Schema.String })
const UserKeys = Schema.Struct({ userUuid: Schema.String, keys: Schema.Array(Schema.String) })

export const makeNotificationsStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const casesInReview = Rows.findAll({
    Request: Schema.Struct({ orgUuid: Schema.String, limit: Schema.Number }),
    Result: CaseInReview,
    execute: ({ orgUuid, limit }) =>
      sql`SELECT case_id, created_at, consensus FROM cases
          WHERE org_uuid = ${orgUuid} AND review_status = 'pending' ORDER BY created_at DESC LIMIT ${limit}`
  })
  const readKeys = Rows.findAll({
    Request: UserKeys,
    Result: Keyed,
    execute: ({ userUuid, keys }) =>
      sql`SELECT notification_key FROM notification_reads
          WHERE user_uuid = ${userUuid} AND notification_key IN (SELECT jsonb_array_elements_text(${jsonb(keys)}))`
  })
  const markRead = Rows.findAll({
    Request: UserKeys,
    Result: Keyed,
    execute: ({ userUuid, keys }) =>
      sql`INSERT INTO notification_reads (user_uuid, notification_key, read_at)
          SELECT ${userUuid}, key, now() FROM (SELECT DISTINCT jsonb_array_elements_text(${jsonb(keys)}) AS key) k
          ON CONFLICT (user_uuid, notification_key) DO NOTHING
          RETURNING notification_key`
  })

  return sqlDefects({
    /** Cases waiting for a human review, newest first (the cases area's table). */
    casesInReview: (orgUuid: string, limit: number) => casesInReview({ orgUuid, limit }),
    /** The subset of `keys` this user has read. */
    readKeys: (userUuid: string, keys: ReadonlyArray<string>) =>
      keys.length === 0 ? Effect.succeed(new Set<string>()) : Effect.map(readKeys({ userUuid, keys }), (rows) => new Set(rows.map((row) => row.notification_key))),
    /** Marks `keys` read; answers how many were not read before. */
    markRead: (userUuid: string, keys: ReadonlyArray<string>) =>
      keys.length === 0 ? Effect.succeed(0) : Effect.map(markRead({ userUuid, keys }), (rows) => rows.length)
  })
})
