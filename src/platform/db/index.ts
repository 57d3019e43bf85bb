/**
 * The database: Postgres through `@effect/sql-pg` when DATABASE_URL is set,
 * otherwise embedded PGlite under DATA_DIR/pglite. Either way the layer
 * checks the database answers, runs the migrations, and provides `SqlClient`
 * plus a small `Database` service (which backend, and a health ping).
 */
import { join } from "node:path"
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Redacted } from "effect"
import { Migrator, SqlClient } from "effect/sql"
import { ConnectionError, SqlError, UnknownError } from "effect/sql/SqlError"
import * as Statement from "effect/sql/Statement"
import { migrations } from "./migrations/index.js"
import { MEMORY_DATA_DIR, pgliteLayer } from "./pglite.js"

export { MEMORY_DATA_DIR } from "./pglite.js"

export interface DatabaseConfig {
  /** DATABASE_URL; unset means embedded PGlite. */
  readonly url?: string | undefined
  /** DATA_DIR; PGlite keeps its files in `<dataDir>/pglite`. "memory://" = in memory (tests). */
  readonly dataDir: string
  /** Postgres pool size (default 10); PGlite always has one connection. */
  readonly maxConnections?: number | undefined
  /** CI=true: said in the error when DATABASE_URL is unreachable (there is never a fallback). */
  readonly ci?: boolean | undefined
}

export interface DatabaseInfo {
  readonly kind: "postgres" | "pglite"
  readonly ping: Effect.Effect<void, SqlError>
}

export class Database extends Context.Service<Database, DatabaseInfo>()("gateway/Database") {}

/** `Migrator.make` is generic over a schema dumper; we never dump schemas. */
const migrator = Migrator.make({})

/** Serializes migration runs of every process sharing one Postgres database. */
export const MIGRATION_LOCK_KEY = 7_305_941_022

/**
 * Runs the pending migrations. The whole run is one transaction holding a
 * transaction-scoped advisory lock, so a second process starting at the same
 * time waits, then finds nothing left to do (the lock is released by COMMIT or
 * ROLLBACK, also when the process dies).
 */
export const runMigrations: Effect.Effect<ReadonlyArray<readonly [id: number, name: string]>, SqlError, SqlClient.SqlClient> =
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const run = Effect.andThen(
      // pg_advisory_xact_lock returns void, which the drivers cannot decode: select a constant.
      sql.unsafe(`SELECT 1 AS locked FROM (SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})) AS lock`),
      migrator({ loader: Migrator.fromRecord(migrations) })
    )
    return yield* sql.withTransaction(run)
  }).pipe(
    Effect.catchTag("MigrationError", (error) =>
      Effect.fail(
        new SqlError({
          reason: new UnknownError({ cause: error, message: `Migrations failed: ${error.message}`, operation: "migrate" })
        })
      )
    )
  )

/** A jsonb parameter: `sql\`INSERT ... VALUES (${jsonb(value)})\`` (a plain object is refused as a parameter). */
const PgJson = Statement.custom<Statement.Custom<"PgJson", unknown>>("PgJson")
export const jsonb = (value: unknown): Statement.Fragment => Statement.fragment([PgJson(value, undefined, undefined)])

/** `host:port/database` of a Postgres URL, without credentials, for messages and logs. */
export const describePostgresUrl = (url: string): string => {
  try {
    const parsed = new URL(url)
    return `${parsed.hostname}:${parsed.port || "5432"}${parsed.pathname || "/"}`
  } catch {
    return "(unparseable DATABASE_URL)"
  }
}

export const pgliteDirectory = (dataDir: string): string =>
  dataDir === MEMORY_DATA_DIR ? MEMORY_DATA_DIR : join(dataDir, "pglite")

const postgresClientLayer = (url: string, maxConnections: number | undefined) =>
  PgClient.layer({
    url: Redacted.make(url),
    maxConnections: maxConnections ?? 10,
    applicationName: "accountability-gateway"
  })

const selectOne = (sql: SqlClient.SqlClient) => Effect.asVoid(sql`SELECT 1`)

const unreachable = (config: DatabaseConfig & { url: string }) => (error: SqlError) =>
  new SqlError({
    reason: new ConnectionError({
      cause: error,
      operation: "connect",
      message:
        `DATABASE_URL is set but Postgres at ${describePostgresUrl(config.url)} cannot be used: ` +
        `${error.reason.message}${causeText(error)}. ` +
        (config.ci
          ? "CI=true: not falling back to embedded PGlite."
          : "Start that database, or unset DATABASE_URL to use the embedded PGlite store.")
    })
  })

const causeText = (error: SqlError): string => {
  const cause = error.reason.cause
  return cause instanceof Error && cause.message ? ` (${cause.message})` : ""
}

/**
 * `SqlClient` and `Database`, connected and migrated. Layer construction of
 * sql-pg does not connect, so this runs `SELECT 1` first to fail at start.
 */
export const databaseLayer = (config: DatabaseConfig): Layer.Layer<SqlClient.SqlClient | Database, SqlError> => {
  const url = config.url
  const kind: DatabaseInfo["kind"] = url ? "postgres" : "pglite"
  const client: Layer.Layer<SqlClient.SqlClient, SqlError> = url
    ? postgresClientLayer(url, config.maxConnections)
    : pgliteLayer({ dataDir: pgliteDirectory(config.dataDir) })

  const ready = Layer.effect(Database)(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* url ? selectOne(sql).pipe(Effect.mapError(unreachable({ ...config, url }))) : selectOne(sql)
      yield* runMigrations
      return { kind, ping: selectOne(sql) }
    })
  )
  return ready.pipe(Layer.provideMerge(client))
}

/** DatabaseConfig from the environment (DATABASE_URL, DATA_DIR, DATABASE_MAX_CONNECTIONS, CI). */
export const databaseConfigFromEnv = (env: NodeJS.ProcessEnv = process.env): DatabaseConfig => {
  const max = env.DATABASE_MAX_CONNECTIONS ? Number(env.DATABASE_MAX_CONNECTIONS) : undefined
  if (max !== undefined && !(Number.isInteger(max) && max > 0)) {
    throw new Error(`DATABASE_MAX_CONNECTIONS must be a positive integer, got "${env.DATABASE_MAX_CONNECTIONS}"`)
  }
  return {
    url: env.DATABASE_URL || undefined,
    dataDir: env.DATA_DIR || "./data",
    maxConnections: max,
    ci: env.CI === "true"
  }
}
