/**
 * Agent identity: each agent's did:web key (private half sealed with the envelope), the
 * verifiable credentials issued for it, the StatusList2021 lists their revocation bits live in,
 * and mutual-signing requests.
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`
    CREATE TABLE agent_dids (
      agent_slug TEXT PRIMARY KEY REFERENCES agents (agent_slug) ON DELETE CASCADE,
      public_key_multibase TEXT NOT NULL,
      private_key_sealed TEXT NOT NULL,
      version INTEGER NOT NULL,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      rotated_at TIMESTAMPTZ
    )`
  yield* sql`
    CREATE TABLE credential_status_lists (
      list_id TEXT PRIMARY KEY,
      bits BYTEA NOT NULL,
      next_index INTEGER NOT NULL DEFAULT 0,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE agent_credentials (
      vc_id TEXT PRIMARY KEY,
      agent_slug TEXT NOT NULL REFERENCES agents (agent_slug) ON DELETE CASCADE,
      org_uuid TEXT NOT NULL,
      version INTEGER NOT NULL,
      vc_json JSONB NOT NULL,
      status_list_id TEXT NOT NULL REFERENCES credential_status_lists (list_id),
      status_index INTEGER NOT NULL,
      issued_at TIMESTAMPTZ NOT NULL,
      expires_at TIMESTAMPTZ NOT NULL,
      revoked_at TIMESTAMPTZ,
      revocation_reason TEXT,
      UNIQUE (agent_slug, version),
      UNIQUE (status_list_id, status_index)
    )`
  yield* sql`
    CREATE TABLE mutual_signatures (
      action_uuid TEXT PRIMARY KEY,
      org_uuid TEXT NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('pending', 'completed', 'rejected')),
      initiator_did TEXT,
      counterparty_did TEXT NOT NULL,
      payload JSONB NOT NULL,
      payload_hash TEXT NOT NULL,
      initiator_signature TEXT NOT NULL,
      counterparty_signature TEXT,
      counterparty_signed_at TIMESTAMPTZ,
      combined_receipt_hash TEXT,
      reason TEXT,
      expires_at TIMESTAMPTZ NOT NULL,
      requested_at TIMESTAMPTZ NOT NULL,
      sealed_at TIMESTAMPTZ
    )`
})
