/**
 * Policies, the endpoint whitelist (entries, approval requests, per-org mode)
 * and output policies. Conditions and scan configs are stored as sent (jsonb).
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`
    CREATE TABLE policies (
      id TEXT PRIMARY KEY,
      org_uuid TEXT NOT NULL,
      name TEXT NOT NULL,
      description TEXT,
      mode TEXT NOT NULL,
      decision TEXT NOT NULL,
      priority INTEGER NOT NULL DEFAULT 0,
      conditions JSONB,
      ai_prompt TEXT,
      ai_models JSONB,
      scan_config JSONB,
      scope JSONB NOT NULL DEFAULT '{}'::jsonb,
      status TEXT NOT NULL DEFAULT 'draft',
      evaluation_count BIGINT NOT NULL DEFAULT 0,
      last_evaluated_at TIMESTAMPTZ,
      activated_at TIMESTAMPTZ,
      deactivated_at TIMESTAMPTZ,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX policies_org_idx ON policies (org_uuid, status, created_at)`
  yield* sql`
    CREATE TABLE endpoint_whitelist (
      id TEXT PRIMARY KEY,
      org_uuid TEXT NOT NULL,
      url_pattern TEXT NOT NULL,
      name TEXT NOT NULL,
      status TEXT NOT NULL,
      tls_fingerprint TEXT,
      created_by TEXT,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX endpoint_whitelist_org_idx ON endpoint_whitelist (org_uuid, status)`
  yield* sql`
    CREATE TABLE endpoint_approvals (
      id TEXT PRIMARY KEY,
      org_uuid TEXT NOT NULL,
      url TEXT NOT NULL,
      agent_id TEXT,
      url_pattern_suggested TEXT NOT NULL,
      status TEXT NOT NULL DEFAULT 'pending',
      requested_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      resolved_at TIMESTAMPTZ,
      resolved_by TEXT
    )`
  yield* sql`CREATE INDEX endpoint_approvals_org_idx ON endpoint_approvals (org_uuid, status, requested_at)`
  yield* sql`
    CREATE TABLE whitelist_settings (
      org_uuid TEXT PRIMARY KEY,
      mode TEXT NOT NULL DEFAULT 'permissive',
      updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE output_policies (
      org_uuid TEXT PRIMARY KEY,
      policy JSONB NOT NULL,
      updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`
})
