/**
 * Drift detection: an agent's baselines (at most one active per agent, enforced by a partial
 * unique index), the alerts checks store, and usage events (the metered `drift_check`).
 * Agents are named by the `agent_id` their actions carry, so there is no foreign key.
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`
    CREATE TABLE drift_baselines (
      id TEXT PRIMARY KEY,
      org_uuid TEXT NOT NULL,
      agent_id TEXT NOT NULL,
      baseline_type TEXT NOT NULL CHECK (baseline_type IN ('production', 'synthetic', 'pooled')),
      is_active BOOLEAN NOT NULL,
      window_start TIMESTAMPTZ NOT NULL,
      window_end TIMESTAMPTZ NOT NULL,
      action_type_dist JSONB NOT NULL,
      total_actions BIGINT NOT NULL,
      avg_actions_per_day DOUBLE PRECISION NOT NULL,
      source_agent_ids JSONB,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE UNIQUE INDEX drift_baselines_active_idx ON drift_baselines (org_uuid, agent_id) WHERE is_active`
  yield* sql`
    CREATE TABLE drift_alerts (
      id TEXT PRIMARY KEY,
      org_uuid TEXT NOT NULL,
      agent_id TEXT NOT NULL,
      baseline_uuid TEXT NOT NULL,
      window_start TIMESTAMPTZ NOT NULL,
      window_end TIMESTAMPTZ NOT NULL,
      kl_divergence DOUBLE PRECISION NOT NULL,
      volume_ratio DOUBLE PRECISION NOT NULL,
      severity TEXT NOT NULL CHECK (severity IN ('info', 'low', 'medium', 'high', 'critical')),
      new_action_types JSONB,
      detected_at TIMESTAMPTZ NOT NULL,
      acknowledged_at TIMESTAMPTZ,
      acknowledged_by TEXT
    )`
  yield* sql`CREATE INDEX drift_alerts_agent_idx ON drift_alerts (org_uuid, agent_id, detected_at DESC)`
  yield* sql`
    CREATE TABLE usage_events (
      id BIGSERIAL PRIMARY KEY,
      org_uuid TEXT NOT NULL,
      event_type TEXT NOT NULL,
      subject TEXT,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX usage_events_org_idx ON usage_events (org_uuid, event_type, created_at)`
})
