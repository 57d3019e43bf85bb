/**
 * Webhooks and their deliveries (drained from the `events` outbox), plus the
 * approval notification channels and what was sent through them.
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`
    CREATE TABLE webhooks (
      id TEXT PRIMARY KEY,
      org_uuid TEXT NOT NULL,
      url TEXT NOT NULL,
      secret_sealed TEXT NOT NULL,
      events JSONB NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('active', 'disabled')),
      disabled_reason TEXT,
      failing_since TIMESTAMPTZ,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      deleted_at TIMESTAMPTZ
    )`
  yield* sql`CREATE INDEX webhooks_org_idx ON webhooks (org_uuid) WHERE deleted_at IS NULL`
  yield* sql`
    CREATE TABLE webhook_deliveries (
      id TEXT PRIMARY KEY,
      webhook_id TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
      org_uuid TEXT NOT NULL,
      event_id TEXT NOT NULL,
      event TEXT NOT NULL,
      payload JSONB NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
      attempt INTEGER NOT NULL DEFAULT 0,
      status_code INTEGER,
      last_error TEXT,
      next_attempt_at TIMESTAMPTZ NOT NULL,
      lease_until TIMESTAMPTZ,
      delivered_at TIMESTAMPTZ,
      last_attempt_at TIMESTAMPTZ,
      created_at TIMESTAMPTZ NOT NULL,
      UNIQUE (webhook_id, event_id)
    )`
  yield* sql`CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`
  yield* sql`CREATE INDEX webhook_deliveries_list_idx ON webhook_deliveries (webhook_id, created_at DESC)`
  yield* sql`
    CREATE TABLE webhook_delivery_attempts (
      delivery_id TEXT NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
      attempt INTEGER NOT NULL,
      status_code INTEGER,
      outcome TEXT NOT NULL,
      error TEXT,
      attempted_at TIMESTAMPTZ NOT NULL,
      PRIMARY KEY (delivery_id, attempt)
    )`
  yield* sql`
    CREATE TABLE notification_channels (
      org_uuid TEXT PRIMARY KEY,
      email_enabled BOOLEAN NOT NULL DEFAULT false,
      email_recipients JSONB NOT NULL DEFAULT '[]',
      slack_enabled BOOLEAN NOT NULL DEFAULT false,
      slack_url_sealed TEXT,
      teams_enabled BOOLEAN NOT NULL DEFAULT false,
      teams_url_sealed TEXT,
      updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE channel_deliveries (
      id BIGSERIAL PRIMARY KEY,
      org_uuid TEXT NOT NULL,
      event_id TEXT NOT NULL,
      channel TEXT NOT NULL CHECK (channel IN ('email', 'slack', 'teams')),
      status TEXT NOT NULL CHECK (status IN ('sent', 'failed', 'skipped')),
      detail TEXT,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX channel_deliveries_org_idx ON channel_deliveries (org_uuid, created_at)`
})
