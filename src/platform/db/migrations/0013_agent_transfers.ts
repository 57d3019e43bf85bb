/** Agent ownership transfers: each one's receipt, signed by the platform key (verifiable with the JWKS). */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`
    CREATE TABLE agent_transfers (
      transfer_receipt_id TEXT PRIMARY KEY,
      agent_slug TEXT NOT NULL REFERENCES agents (agent_slug) ON DELETE CASCADE,
      previous_owner TEXT NOT NULL,
      new_owner TEXT NOT NULL,
      signed_payload TEXT NOT NULL,
      payload_hash TEXT NOT NULL,
      signature TEXT NOT NULL,
      public_key_id TEXT NOT NULL,
      transferred_at TIMESTAMPTZ NOT NULL
    )`
  yield* sql`CREATE INDEX agent_transfers_agent_idx ON agent_transfers (agent_slug, transferred_at)`
})
