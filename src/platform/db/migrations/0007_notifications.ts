/** Which notifications each dashboard user has read. */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`
    CREATE TABLE notification_reads (
      user_uuid TEXT NOT NULL,
      notification_key TEXT NOT NULL,
      read_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      PRIMARY KEY (user_uuid, notification_key)
    )`
})
