/**
 * Wakes the webhook dispatchers when the outbox gets rows: one NOTIFY on
 * `gateway_events` per inserting statement, sent by PostgreSQL at commit
 * (never for a rolled-back insert; repeats within a transaction collapse).
 * Listeners still poll slowly, so a lost notification only delays delivery.
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`
    CREATE FUNCTION events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('gateway_events', '');
      RETURN NULL;
    END
    $$`
  yield* sql`CREATE TRIGGER events_notify AFTER INSERT ON events FOR EACH STATEMENT EXECUTE FUNCTION events_notify()`
})
