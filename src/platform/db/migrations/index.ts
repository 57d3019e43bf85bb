/**
 * Every schema migration, in order. The key is "<number>_<name>"; the number
 * is what the migrator records, so never renumber or edit a migration that has
 * shipped — append a new file and a new line here instead.
 */
import type { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import accounts from "./0001_accounts.js"
import events from "./0002_events.js"

export const migrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>> = {
  "0001_accounts": accounts,
  "0002_events": events
}
