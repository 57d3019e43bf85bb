/**
 * The database: PostgreSQL through `@effect/sql-pg`, at DATABASE_URL when it
 * is set, otherwise a PostgreSQL the service runs itself under DATA_DIR/pg
 * (embedded/). Either way the layer checks the database answers, runs the
 * migrations, and provides `SqlClient` plus a small `Database` service (which
 * backend, and a health ping).
 */
import { join } from "node:path"
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Redacted } from "effect"
import { Migrator, SqlClient } from "effect/sql"
import { ConnectionError, SqlError, UnknownError } from "effect/sql/SqlError"
import * as Statement from "effect/sql/Statement"
import { logLine } from "../log.js"
import { startEmbeddedPostgres } from "./embedded/index.js"
import { migrations } from "./migrations/index.js"

export interface DatabaseConfig {
  /** DATABASE_URL; unset means the embedded PostgreSQL. */
  readonly url?: string | undefined
  /** DATA_DIR; the embedded PostgreSQL keeps its files in `<dataDir>/pg`. */
  readonly dataDir: string
  /** Pool size (DATABASE_MAX_CONNECTIONS; default 10). */
  readonly maxConnections?: number | undefined
  /** CI=true: said in the error when DATABASE_URL is unreachable (there is never a fallback). */
  readonly ci?: boolean | undefined
}

export interface DatabaseInfo {
  /** "embedded": the PostgreSQL this process started under DATA_DIR/pg. */
  readonly kind: "postgres" | "embedded"
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
export const runMigrations: Effect.Effect<ReadonlyArray<readonly [id: number, name: string]>, SqlError, SqlClient.SqlClient> = Effect.suspend(() =>
  runMigrationsOf(migrations)
)

/** `runMigrations` over a given set (tests of an upgrade run the older ones first). */
export const runMigrationsOf = (
  record: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>>
): Effect.Effect<ReadonlyArray<readonly [id: number, name: string]>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const run = Effect.andThen(
      // pg_advisory_xact_lock returns void, which the drivers cannot decode: select a constant.
      sql.unsafe(`SELECT 1 AS locked FROM (SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})) AS lock`),
      migrator({ loader: Migrator.fromRecord(record) })
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

/** The bare client of a DatabaseConfig: connected lazily, nothing migrated (tests of migrations). */
export const databaseClientLayer = (config: DatabaseConfig): Layer.Layer<SqlClient.SqlClient | PgClient.PgClient, SqlError> =>
  config.url ? postgresClientLayer(config.url, config.maxConnections) : embeddedClientLayer(config)

const embeddedDirectory = (dataDir: string): string => join(dataDir, "pg")

/** Started before the pool and stopped after it (same layer scope, reverse order). */
const embeddedClientLayer = (config: DatabaseConfig) =>
  Layer.unwrap(
    Effect.map(
      Effect.acquireRelease(startEmbedded(embeddedDirectory(config.dataDir)), (cluster) => Effect.promise(() => cluster.stop())),
      (cluster) => postgresClientLayer(cluster.url, config.maxConnections)
    )
  )

const startEmbedded = (directory: string) =>
  Effect.tryPromise({
    try: () =>
      startEmbeddedPostgres({
        directory,
        onUnexpectedExit: (code, signal) =>
          logLine("error", "embedded postgres exited", { directory, code, signal, log: join(directory, "postgres.log") })
      }),
    catch: (cause) =>
      new SqlError({
        reason: new ConnectionError({
          cause,
          operation: "connect",
          message: `Embedded PostgreSQL in ${directory} could not start: ${cause instanceof Error ? cause.message : String(cause)}`
        })
      })
  }).pipe(
    Effect.tap((cluster) =>
      Effect.logInfo("embedded postgres ready", {
        directory: cluster.directory,
        user: cluster.user.name,
        uid: cluster.user.uid,
        port: cluster.port,
        pid: cluster.pid,
        initdb_ms: cluster.initMs,
        start_ms: cluster.startMs,
        stopped_orphan: cluster.stoppedOrphan,
        log: cluster.logFile
      })
    )
  )

const postgresClientLayer = (url: string, maxConnections: number | undefined) =>
  PgClient.layer({
    url: Redacted.make(url),
    maxConnections: maxConnections ?? 10,
    applicationName: "accountability-gateway",
    // Statements outside transactions from many requests share a connection and go out in one write.
    multiplex: true
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
          ? "CI=true: not falling back to the embedded PostgreSQL."
          : "Start that database, or unset DATABASE_URL to use the embedded PostgreSQL under DATA_DIR.")
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
export const databaseLayer = (config: DatabaseConfig): Layer.Layer<SqlClient.SqlClient | PgClient.PgClient | Database, SqlError> => {
  const url = config.url
  const kind: DatabaseInfo["kind"] = url ? "postgres" : "embedded"
  const client = databaseClientLayer(config)

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
