/**
 * Invite codes are kept only as a keyed hash (`code_hash`), like API keys.
 * Migrations have no secrets, so existing codes stay in `invite_code` here and
 * the accounts layer hashes and wipes them when a node starts; new rows never
 * fill `invite_code`. The code no longer identifies the row, hence the new key.
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`ALTER TABLE invites DROP CONSTRAINT invites_pkey`
  yield* sql`ALTER TABLE invites ALTER COLUMN invite_code DROP NOT NULL`
  yield* sql`ALTER TABLE invites ADD COLUMN id BIGSERIAL PRIMARY KEY`
  yield* sql`ALTER TABLE invites ADD COLUMN code_hash TEXT UNIQUE`
  yield* sql`ALTER TABLE invites ADD CONSTRAINT invites_code_kept CHECK (code_hash IS NOT NULL OR invite_code IS NOT NULL)`
  // Finds the codes still to hash without scanning the table once none are left.
  yield* sql`CREATE INDEX invites_plaintext_idx ON invites (invite_code) WHERE invite_code IS NOT NULL`
})
