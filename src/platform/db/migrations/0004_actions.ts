/**
 * Actions: the authorization records, their cosignatures, idempotency records,
 * and the head of each (org, agent) receipt chain.
 *
 * `agent_chains` is the correctness anchor of the per-agent hash chain: every
 * minting transaction locks its row (SELECT … FOR UPDATE), so sequences stay
 * gap-free even with several gateway processes on one database.
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`
    CREATE TABLE actions (
      action_uuid TEXT PRIMARY KEY,
      org_uuid TEXT NOT NULL,
      agent_id TEXT,
      agent_version TEXT,
      action_type TEXT NOT NULL,
      action_details_hash TEXT NOT NULL,
      instruction_hash TEXT,
      details_sealed TEXT,
      details_storage_key TEXT,
      model_id TEXT,
      model_version TEXT,
      parent_action_uuid TEXT,
      endpoint_url TEXT,
      status TEXT NOT NULL CHECK (status IN
        ('authorized', 'pending_approval', 'denied_by_policy', 'approved', 'denied_by_human', 'notarized', 'failed')),
      legal_hold BOOLEAN NOT NULL DEFAULT false,
      policy_uuid TEXT,
      require_approval BOOLEAN NOT NULL DEFAULT false,
      approvers JSONB,
      context JSONB,
      sdk JSONB,
      warnings JSONB,
      approval_code_hash TEXT UNIQUE,
      approval_code_used_at TIMESTAMPTZ,
      approval_expires_at TIMESTAMPTZ,
      approved_by TEXT,
      approved_at TIMESTAMPTZ,
      approval_via TEXT,
      denial_reason TEXT,
      outcome TEXT,
      outcome_hash TEXT,
      output_scan_flags JSONB,
      receipt_uuid TEXT,
      receipt_payload_hash TEXT,
      receipt JSONB,
      agent_sequence BIGINT,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX actions_org_created_idx ON actions (org_uuid, created_at)`
  yield* sql`CREATE INDEX actions_org_status_idx ON actions (org_uuid, status)`
  yield* sql`CREATE INDEX actions_org_agent_idx ON actions (org_uuid, agent_id, created_at)`
  yield* sql`CREATE INDEX actions_pending_expiry_idx ON actions (approval_expires_at) WHERE status = 'pending_approval'`

  yield* sql`
    CREATE TABLE action_cosignatures (
      cosignature_uuid TEXT PRIMARY KEY,
      org_uuid TEXT NOT NULL,
      action_uuid TEXT NOT NULL REFERENCES actions (action_uuid) ON DELETE CASCADE,
      user_uuid TEXT NOT NULL,
      cosigner_email TEXT NOT NULL,
      cosigned_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      UNIQUE (action_uuid, user_uuid)
    )`

  yield* sql`
    CREATE TABLE idempotency_keys (
      org_uuid TEXT NOT NULL,
      idempotency_key TEXT NOT NULL,
      request_hash TEXT NOT NULL,
      status_code INTEGER,
      response JSONB,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      completed_at TIMESTAMPTZ,
      PRIMARY KEY (org_uuid, idempotency_key)
    )`
  yield* sql`CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at)`

  yield* sql`
    CREATE TABLE agent_chains (
      org_uuid TEXT NOT NULL,
      agent_id TEXT NOT NULL,
      last_sequence BIGINT NOT NULL DEFAULT 0,
      last_payload_hash TEXT,
      updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      PRIMARY KEY (org_uuid, agent_id)
    )`
})
