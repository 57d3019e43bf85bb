/**
 * Receipt signing keys (sealed at rest), the internal timestamp authority's
 * identity, and the receipts themselves. `signed_payload` is TEXT: the exact
 * canonical bytes that were signed (jsonb would reorder keys).
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`
    CREATE TABLE signing_keys (
      public_key_id TEXT PRIMARY KEY,
      public_key_raw TEXT NOT NULL,
      private_key_sealed TEXT NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('active', 'retired')),
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      retired_at TIMESTAMPTZ
    )`
  // At most one active key, so two processes starting together cannot both create one.
  yield* sql`CREATE UNIQUE INDEX signing_keys_one_active_idx ON signing_keys ((status)) WHERE status = 'active'`
  yield* sql`
    CREATE TABLE tsa_identity (
      id TEXT PRIMARY KEY,
      algorithm TEXT NOT NULL,
      certificate_der TEXT NOT NULL,
      private_key_sealed TEXT NOT NULL,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE receipts (
      receipt_uuid TEXT PRIMARY KEY,
      action_uuid TEXT NOT NULL,
      org_uuid TEXT NOT NULL,
      agent_id TEXT,
      agent_sequence BIGINT NOT NULL,
      receipt_status TEXT NOT NULL,
      receipt_version TEXT NOT NULL,
      signed_payload TEXT NOT NULL,
      payload_hash TEXT NOT NULL,
      signature TEXT NOT NULL,
      public_key_id TEXT NOT NULL,
      timestamp_token TEXT,
      created_at TIMESTAMPTZ NOT NULL
    )`
  yield* sql`CREATE INDEX receipts_action_idx ON receipts (action_uuid)`
  yield* sql`CREATE INDEX receipts_org_created_idx ON receipts (org_uuid, created_at, receipt_uuid)`
  yield* sql`CREATE UNIQUE INDEX receipts_agent_chain_idx ON receipts (org_uuid, COALESCE(agent_id, ''), agent_sequence)`
})
