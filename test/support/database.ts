/**
 * A throwaway Postgres database per test file, on the server of DATABASE_URL,
 * or else of the run's embedded PostgreSQL (test/support/global-setup.ts), so
 * parallel test files never share tables.
 */
import { randomBytes } from "node:crypto"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { orgActorsLayer } from "../../actors/org.js"
import { memoryRunner } from "../../actors/runner.js"
import { ModelCalls } from "../../src/models/calls.js"
import { configLayer, loadConfig } from "../../src/platform/config.js"
import { databaseLayer } from "../../src/platform/db/index.js"
import { platformMemoryLayer } from "../../src/platform/redis/index.js"
import { Secrets } from "../../src/platform/secrets.js"
import { ProviderCredentials } from "../../src/provider-credentials/service.js"

export interface FreshDatabase {
  /** DATABASE_URL of the new, empty database (same server and credentials). */
  readonly url: string
  /** Drops the database, disconnecting whatever still uses it. */
  readonly drop: () => Promise<void>
}

/** DATA_DIR of servers that get a DATABASE_URL and a MASTER_KEY: nothing is ever written there. */
export const UNUSED_DATA_DIR = join(tmpdir(), "gateway-test-unused")

/** The server the tests create their databases on. */
export const databaseServerUrl = (): string => {
  const url = process.env.DATABASE_URL || process.env.TEST_DATABASE_SERVER_URL
  if (!url) throw new Error("no database server: set DATABASE_URL, or run under vitest (its global setup starts one)")
  return url
}

/** Runs one statement on the admin database of `serverUrl` over a short-lived connection. */
const runAdmin = (serverUrl: string, statement: string): Promise<void> =>
  Effect.runPromise(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql.unsafe(statement)
    }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(serverUrl), maxConnections: 1 })))
  )

export const freshDatabaseUrl = async (serverUrl: string = databaseServerUrl()): Promise<FreshDatabase> => {
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

/** The database services (migrated) on a fresh database of their own, dropped when the layer is released. */
export const freshDatabaseLayer = Layer.unwrap(
  Effect.acquireRelease(
    Effect.promise(() => freshDatabaseUrl()),
    (fresh) => Effect.promise(() => fresh.drop())
  ).pipe(Effect.map((fresh) => databaseLayer({ url: fresh.url, dataDir: UNUSED_DATA_DIR })))
)

/** The organizations' actors on an in-memory runner, with the fresh database and the in-memory Redis stand-ins beneath them (all provided). */
export const orgActorsOnFreshDatabase = orgActorsLayer().pipe(
  Layer.provideMerge(memoryRunner({ maxResidentEntities: 10_000, entityMaxIdleMs: 60_000 })),
  Layer.provideMerge(Layer.mergeAll(freshDatabaseLayer, platformMemoryLayer()))
)

/** The model layer (and what it needs: configuration, secrets, provider credentials) over a fresh database, for service-level tests of areas that call models. */
export const modelCallsOnFreshDatabase = ModelCalls.layer.pipe(
  Layer.provideMerge(ProviderCredentials.layer),
  Layer.provideMerge(Secrets.layer),
  Layer.provideMerge(configLayer(loadConfig({ MASTER_KEY: randomBytes(32).toString("base64"), DATA_DIR: UNUSED_DATA_DIR })))
)

/** Rows of every table (any schema but the system's) whose text contains `needle`, counted by table: proof that a secret or a prompt is stored nowhere. */
export const rowsContainingIn = (db: SqlClient.SqlClient, needle: string) =>
  Effect.gen(function* () {
    const tables = yield* db<{ schema: string; name: string }>`SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
      WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`
    const found: Record<string, number> = {}
    for (const table of tables) {
      const quoted = `"${table.schema.replace(/"/g, '""')}"."${table.name.replace(/"/g, '""')}"`
      const rows = yield* db.unsafe<{ n: number }>(`SELECT count(*)::int AS n FROM ${quoted} AS t WHERE t::text LIKE $1`, [`%${needle}%`])
      if (rows[0]!.n > 0) found[`${table.schema}.${table.name}`] = rows[0]!.n
    }
    return found
  })
