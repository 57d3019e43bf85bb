/**
 * Most events interest nobody outside the gateway: their organization has no webhook for their
 * type and, for approval requests, no notification channel. Such an event is stored already
 * dispatched, decided in the inserting transaction itself (no cache that another process could
 * hold stale), so the dispatcher never claims it and no NOTIFY wakes it for it. An event counts
 * the webhooks and channels committed when its insert ran: one created concurrently may miss
 * it, exactly as if it had been created a moment later.
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql.unsafe(`
    CREATE FUNCTION events_wanted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.dispatched_at IS NULL
        AND NOT EXISTS (
          SELECT 1 FROM webhooks w
          WHERE w.org_uuid = NEW.org_uuid AND w.status = 'active' AND w.deleted_at IS NULL
            AND (w.events ? NEW.type OR w.events ? '*'))
        AND NOT (NEW.type = 'action.approval_requested' AND EXISTS (
          SELECT 1 FROM notification_channels c
          WHERE c.org_uuid = NEW.org_uuid AND (c.email_enabled OR c.slack_enabled OR c.teams_enabled)))
      THEN
        NEW.dispatched_at := now();
      END IF;
      RETURN NEW;
    END
    $$`)
  yield* sql`CREATE TRIGGER events_wanted BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION events_wanted()`
  // The wake-up of 0010, now only for statements that left something to dispatch.
  yield* sql.unsafe(`
    CREATE OR REPLACE FUNCTION events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF EXISTS (SELECT 1 FROM inserted WHERE dispatched_at IS NULL) THEN
        PERFORM pg_notify('gateway_events', '');
      END IF;
      RETURN NULL;
    END
    $$`)
  yield* sql`DROP TRIGGER events_notify ON events`
  yield* sql`CREATE TRIGGER events_notify AFTER INSERT ON events REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION events_notify()`
})
