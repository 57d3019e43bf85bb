/** Per-user read marks for notification keys. */
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql"
import { jsonb } from "../platform/db/index.js"

export const makeNotificationsStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  return {
    /** Cases waiting for a human review, newest first (the cases area's table). */
    casesInReview: (orgUuid: string, limit: number) =>
      sql<{ case_id: string; created_at: Date | string; consensus: unknown }>`
        SELECT case_id, created_at, consensus FROM cases
        WHERE org_uuid = ${orgUuid} AND review_status = 'pending' ORDER BY created_at DESC LIMIT ${limit}`.pipe(
        Effect.map((rows) =>
          rows.map((row) => ({
            case_id: row.case_id,
            created_at: new Date(row.created_at).toISOString(),
            consensus: (typeof row.consensus === "string" ? JSON.parse(row.consensus) : row.consensus) as Record<string, unknown> | null
          }))
        )
      ),
    /** The subset of `keys` this user has read. */
    readKeys: (userUuid: string, keys: ReadonlyArray<string>) =>
      keys.length === 0
        ? Effect.succeed(new Set<string>())
        : sql<{ notification_key: string }>`
            SELECT notification_key FROM notification_reads
            WHERE user_uuid = ${userUuid}
              AND notification_key IN (SELECT jsonb_array_elements_text(${jsonb(keys)}))`.pipe(
            Effect.map((rows) => new Set(rows.map((row) => row.notification_key)))
          ),
    /** Marks `keys` read; returns how many were not read before. */
    markRead: (userUuid: string, keys: ReadonlyArray<string>) =>
      keys.length === 0
        ? Effect.succeed(0)
        : sql<{ notification_key: string }>`
            INSERT INTO notification_reads (user_uuid, notification_key, read_at)
            SELECT ${userUuid}, key, now() FROM (SELECT DISTINCT jsonb_array_elements_text(${jsonb(keys)}) AS key) k
            ON CONFLICT (user_uuid, notification_key) DO NOTHING
            RETURNING notification_key`.pipe(Effect.map((rows) => rows.length))
  }
})
