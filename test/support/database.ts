/**
 * A throwaway Postgres database per test file, on the server of
 * process.env.DATABASE_URL, so parallel test files never share tables.
 */
import { randomBytes } from "node:crypto"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"

export interface FreshDatabase {
  /** DATABASE_URL of the new, empty database (same server and credentials). */
  readonly url: string
  /** Drops the database, disconnecting whatever still uses it. */
  readonly drop: () => Promise<void>
}

/** Runs one statement on the admin database of `serverUrl` over a short-lived connection. */
const runAdmin = (serverUrl: string, statement: string): Promise<void> =>
  Effect.runPromise(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql.unsafe(statement)
    }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(serverUrl), maxConnections: 1 })))
  )

/** `undefined` when DATABASE_URL is unset (the tests then run on PGlite only). */
export const freshDatabaseUrl = async (
  serverUrl: string | undefined = process.env.DATABASE_URL
): Promise<FreshDatabase | undefined> => {
  if (!serverUrl) return undefined
  const name = `test_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`
  // Identifiers are generated here ([a-z0-9_] only), so inlining them is safe.
  await runAdmin(serverUrl, `CREATE DATABASE ${name}`)
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  let dropped = false
  return {
    url: url.toString(),
    drop: async () => {
      if (dropped) return
      dropped = true
      await runAdmin(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    }
  }
}
