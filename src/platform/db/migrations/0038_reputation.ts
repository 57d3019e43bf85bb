/**
 * Reputation: signed snapshots of each agent's score (a new one only when its inputs changed) and
 * counterparties' attestations, kept with their exact text and signature. `org_uuid` is the agent's
 * owner when the snapshot was computed, and the attested action's organization: deleting that
 * account removes the rows its data fed.
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`
    CREATE TABLE reputation_snapshots (
      snapshot_uuid TEXT PRIMARY KEY,
      seq BIGINT GENERATED ALWAYS AS IDENTITY,
      org_uuid TEXT NOT NULL,
      agent_slug TEXT NOT NULL REFERENCES agents (agent_slug) ON DELETE CASCADE,
      formula_version TEXT NOT NULL,
      inputs JSONB NOT NULL,
      score INTEGER NOT NULL,
      tier TEXT NOT NULL,
      score_hash TEXT NOT NULL,
      signature TEXT NOT NULL,
      public_key_id TEXT NOT NULL,
      computed_at TIMESTAMPTZ NOT NULL,
      trigger TEXT NOT NULL CHECK (trigger IN ('read', 'attestation', 'decommission'))
    )`
  yield* sql`CREATE INDEX reputation_snapshots_agent_idx ON reputation_snapshots (agent_slug, seq DESC)`
  yield* sql`
    CREATE TABLE reputation_attestations (
      attestation_uuid TEXT PRIMARY KEY,
      org_uuid TEXT NOT NULL,
      agent_slug TEXT NOT NULL REFERENCES agents (agent_slug) ON DELETE CASCADE,
      action_uuid TEXT NOT NULL,
      counterparty_did TEXT NOT NULL,
      outcome TEXT NOT NULL CHECK (outcome IN ('success', 'failure')),
      attested_at TIMESTAMPTZ NOT NULL,
      attestation TEXT NOT NULL,
      signature TEXT NOT NULL,
      attestation_hash TEXT NOT NULL,
      verification_method TEXT NOT NULL,
      recorded_at TIMESTAMPTZ NOT NULL,
      UNIQUE (action_uuid, counterparty_did)
    )`
  yield* sql`CREATE INDEX reputation_attestations_agent_idx ON reputation_attestations (agent_slug)`
})
