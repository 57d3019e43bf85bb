/**
 * Estate records: each agent's will, its death certificate (with the succession that ran and,
 * for `delete`, when the agent's data may be purged), and immutable compliance snapshots.
 * Every row carries the organization it belongs to, so account deletion removes it.
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`
    CREATE TABLE agent_wills (
      agent_slug TEXT PRIMARY KEY REFERENCES agents (agent_slug) ON DELETE CASCADE,
      org_uuid TEXT NOT NULL,
      successor_slug TEXT,
      succession_policy TEXT NOT NULL CHECK (succession_policy IN ('transfer_to_successor', 'archive', 'delete')),
      data_retention_days INTEGER,
      notify JSONB NOT NULL DEFAULT '[]',
      instructions TEXT,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE agent_death_certificates (
      certificate_id TEXT PRIMARY KEY,
      agent_slug TEXT NOT NULL UNIQUE REFERENCES agents (agent_slug) ON DELETE CASCADE,
      org_uuid TEXT NOT NULL,
      cause TEXT NOT NULL,
      notes TEXT,
      issued_at TIMESTAMPTZ NOT NULL,
      issued_by TEXT NOT NULL,
      succession_triggered BOOLEAN NOT NULL,
      successor_slug TEXT,
      succession_policy TEXT,
      transfer_receipt_id TEXT,
      purge_after TIMESTAMPTZ,
      purged_at TIMESTAMPTZ
    )`
  yield* sql`CREATE INDEX agent_death_certificates_purge_idx ON agent_death_certificates (purge_after) WHERE purge_after IS NOT NULL AND purged_at IS NULL`
  yield* sql`
    CREATE TABLE compliance_snapshots (
      snapshot_uuid TEXT PRIMARY KEY,
      org_uuid TEXT NOT NULL,
      agent_slug TEXT NOT NULL,
      framework TEXT NOT NULL,
      overall_status TEXT NOT NULL,
      findings JSONB NOT NULL,
      notes TEXT,
      finding_count INTEGER NOT NULL,
      pass_count INTEGER NOT NULL,
      fail_count INTEGER NOT NULL,
      partial_count INTEGER NOT NULL,
      created_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
      created_by TEXT NOT NULL
    )`
  yield* sql`CREATE INDEX compliance_snapshots_org_idx ON compliance_snapshots (org_uuid, created_at DESC, snapshot_uuid)`
  yield* sql`CREATE INDEX compliance_snapshots_agent_idx ON compliance_snapshots (org_uuid, agent_slug, created_at DESC)`
})
