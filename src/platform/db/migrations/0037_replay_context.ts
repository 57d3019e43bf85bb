/**
 * Replay context (CONTRACT-sdk-beyond §1): the four fields an SDK may send on authorize stay in
 * `actions.sdk` (0004, only those present); their hash is kept beside them, computed once at
 * authorize, so every receipt of the action commits to it without re-canonicalizing the fields.
 * NULL when none was sent: those actions keep minting `1.1` receipts. Nullable and without a
 * default, the column is added without rewriting the table.
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`ALTER TABLE actions ADD COLUMN replay_context_hash TEXT`
})
