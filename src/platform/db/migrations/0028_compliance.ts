/**
 * Compliance reports (CONTRACT "Compliance reports"): the signed report rows, their PDF bytes in a
 * table of their own (lists and metadata reads never touch the bytes) in chunks of 4 MiB (a row
 * travels as one protocol message, which the driver caps at 16 MiB), and the Article 9 risk
 * observations each art9 report refreshes per (agent, category). Every table carries `org_uuid`,
 * so account deletion removes them.
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`
    CREATE TABLE compliance_reports (
      report_uuid TEXT PRIMARY KEY,
      org_uuid TEXT NOT NULL,
      framework TEXT NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('pending', 'generating', 'ready', 'failed')),
      period_start TIMESTAMPTZ,
      period_end TIMESTAMPTZ,
      action_uuid TEXT,
      agent_filter JSONB,
      receipt_count BIGINT NOT NULL DEFAULT 0,
      pdf_size_bytes BIGINT,
      content_hash TEXT,
      signature TEXT,
      signing_key_id TEXT,
      timestamp_token TEXT,
      report_metadata JSONB,
      error_message TEXT,
      generated_at TIMESTAMPTZ,
      retain_until TIMESTAMPTZ,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX compliance_reports_org_created_idx ON compliance_reports (org_uuid, created_at DESC, report_uuid DESC)`
  yield* sql`
    CREATE TABLE compliance_report_pdfs (
      report_uuid TEXT NOT NULL REFERENCES compliance_reports (report_uuid) ON DELETE CASCADE,
      chunk INTEGER NOT NULL,
      org_uuid TEXT NOT NULL,
      pdf BYTEA NOT NULL,
      PRIMARY KEY (report_uuid, chunk)
    )`
  yield* sql`
    CREATE TABLE compliance_art9_observations (
      org_uuid TEXT NOT NULL,
      agent_id TEXT NOT NULL,
      category TEXT NOT NULL,
      risk_level TEXT NOT NULL,
      action_count BIGINT NOT NULL,
      first_seen_at TIMESTAMPTZ NOT NULL,
      last_seen_at TIMESTAMPTZ NOT NULL,
      last_report_id TEXT NOT NULL,
      updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      PRIMARY KEY (org_uuid, agent_id, category)
    )`
})
