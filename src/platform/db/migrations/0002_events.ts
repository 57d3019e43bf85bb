/**
 * The event log every state change writes in its own transaction. Webhook
 * delivery drains it (outbox); live channels are told after commit.
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`
    CREATE TABLE events (
      id BIGSERIAL PRIMARY KEY,
      event_id TEXT NOT NULL UNIQUE,
      org_uuid TEXT NOT NULL,
      type TEXT NOT NULL,
      data JSONB NOT NULL,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      dispatched_at TIMESTAMPTZ
    )`
  yield* sql`CREATE INDEX events_undispatched_idx ON events (id) WHERE dispatched_at IS NULL`
  yield* sql`CREATE INDEX events_org_idx ON events (org_uuid, created_at)`
})
