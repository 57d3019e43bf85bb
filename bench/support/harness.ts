/**
 * The frame every gateway benchmark shares: a fresh database on DATABASE_URL (default
 * postgres://postgres@127.0.0.1:5432/postgres), the gateway in its own process on it, a SQL client
 * for bulk loading straight into Postgres, everything stopped and dropped afterwards, and the exit
 * code (1 with the error printed when the benchmark throws).
 */
import { PgClient } from "@effect/sql-pg"
import { type Effect, ManagedRuntime, Redacted } from "effect"
import type { SqlClient } from "effect/sql"
import { freshDatabaseUrl } from "../../test/support/database.js"
import { startFlags } from "./build.js"
import { type GatewayProcess, startGateway } from "./gateway.js"

/** `npm start`'s memory budget (its flags, from scripts/start-flags.mjs), for benchmarks that measure memory. */
export const START_BUDGET_ARGS = startFlags()

export interface GatewayBench {
  readonly server: GatewayProcess
  /** Runs SQL against the benchmark's database (the SQL client connects on first use). */
  readonly run: <A>(effect: Effect.Effect<A, unknown, SqlClient.SqlClient>) => Promise<A>
}

export const runGatewayBench = (body: (bench: GatewayBench) => Promise<void>, options: { readonly nodeArgs?: ReadonlyArray<string> } = {}): void => {
  const main = async () => {
    const database = await freshDatabaseUrl(process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres")
    const server = await startGateway({ env: { DATABASE_URL: database.url }, ...(options.nodeArgs ? { nodeArgs: options.nodeArgs } : {}) })
    const runtime = ManagedRuntime.make(PgClient.layer({ url: Redacted.make(database.url), maxConnections: 2 }))
    const run = <A>(effect: Effect.Effect<A, unknown, SqlClient.SqlClient>) => runtime.runPromise(effect as Effect.Effect<A, never, SqlClient.SqlClient>)
    try {
      await body({ server, run })
    } finally {
      await runtime.dispose()
      await server.stop()
      await database.drop()
    }
  }
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error)
      process.exit(1)
    }
  )
}
