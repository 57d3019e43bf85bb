/**
 * An Effect `SqlClient` over embedded PGlite (WASM Postgres in this process).
 *
 * PGlite is one backend session, so the client has exactly one connection,
 * shared through a semaphore: a statement holds it while it runs, a
 * transaction (or `reserve`) holds it until its scope closes, so no other
 * fiber's statement can land inside someone else's transaction.
 *
 * Statements compile with `@effect/sql-pg`'s compiler and values convert the
 * way sql-pg converts them (see pglite-types.ts), so the same queries and
 * migrations run unchanged on both.
 */
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs"
import { dirname } from "node:path"
import { PgClient } from "@effect/sql-pg"
import { PGlite, type Results } from "@electric-sql/pglite"
import { Context, Effect, Layer, type Scope, Semaphore, Stream } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { SqlClient } from "effect/sql"
import type { Connection } from "effect/sql/SqlConnection"
import { SqlError, UnknownError } from "effect/sql/SqlError"
import { encodeParameters, ParameterEncodeError, resultParsers } from "./pglite-types.js"
import { sqlErrorFrom } from "./sql-state.js"

/** `dataDir` is a directory path, or "memory://" for a throwaway in-memory database. */
export interface PgliteOptions {
  readonly dataDir: string
}

export const MEMORY_DATA_DIR = "memory://"

type TransformRows = (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined

// Parameters arrive already in text form (pglite-types.ts), so every
// serializer PGlite would pick from the described parameter type is identity.
const passThroughSerializers = new Proxy({} as Record<number, (value: unknown) => string>, {
  get: () => (value: unknown) => value as string
})

const queryFailed = (cause: unknown, operation: string): SqlError => {
  if (cause instanceof ParameterEncodeError) {
    return new SqlError({ reason: new UnknownError({ cause, message: "PGlite: Failed to encode query", operation }) })
  }
  return sqlErrorFrom(cause, "PGlite: Query failed", operation)
}

class PgliteConnection implements Connection {
  constructor(readonly db: PGlite) {}

  query(sql: string, params: ReadonlyArray<unknown>, rowMode: "object" | "array" = "object") {
    return Effect.tryPromise({
      try: () => {
        const { values, types } = encodeParameters(params)
        return this.db.query<any>(sql, values, { rowMode, paramTypes: types, serializers: passThroughSerializers })
      },
      catch: (cause) => queryFailed(cause, "query")
    })
  }

  private rows(sql: string, params: ReadonlyArray<unknown>, transformRows: TransformRows) {
    const rows = Effect.map(this.query(sql, params), (result) => result.rows as ReadonlyArray<any>)
    return transformRows ? Effect.map(rows, transformRows) : rows
  }

  private values(sql: string, params: ReadonlyArray<unknown>) {
    return Effect.map(this.query(sql, params, "array"), (result) => result.rows as ReadonlyArray<ReadonlyArray<unknown>>)
  }

  execute(sql: string, params: ReadonlyArray<unknown>, transformRows: TransformRows) {
    return this.rows(sql, params, transformRows)
  }
  executeUnprepared(sql: string, params: ReadonlyArray<unknown>, transformRows: TransformRows) {
    return this.rows(sql, params, transformRows)
  }
  executeRaw(sql: string, params: ReadonlyArray<unknown>): Effect.Effect<Results<any>, SqlError> {
    return this.query(sql, params)
  }
  executeValues(sql: string, params: ReadonlyArray<unknown>) {
    return this.values(sql, params)
  }
  executeValuesUnprepared(sql: string, params: ReadonlyArray<unknown>) {
    return this.values(sql, params)
  }
  executeStream(sql: string, params: ReadonlyArray<unknown>, transformRows: TransformRows) {
    // PGlite returns whole results; the stream holds the connection while it is read.
    return Stream.fromArrayEffect(this.rows(sql, params, transformRows))
  }
}

/**
 * PGlite answers a COMMIT of an aborted transaction with a ROLLBACK command
 * tag and no error: treat that (or a transaction still open) as a failure.
 */
const commit = (connection: PgliteConnection) =>
  Effect.flatMap(connection.executeRaw("COMMIT", []), (result) =>
    result.command === "ROLLBACK" || connection.db.isInTransaction()
      ? Effect.fail(
          new SqlError({
            reason: new UnknownError({
              cause: new Error("COMMIT rolled back an aborted transaction"),
              message: "PGlite: COMMIT rolled back an aborted transaction",
              operation: "commit"
            })
          })
        )
      : Effect.void
  )

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/**
 * PGlite happily opens a data directory another process has open, and two
 * writers corrupt it. A lock file next to the directory (holding the owner's
 * pid) refuses the second opener; a lock left by a dead process is taken over.
 */
const lockDataDir = (dataDir: string): (() => void) => {
  const lockPath = `${dataDir}.lock`
  mkdirSync(dirname(lockPath), { recursive: true })
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, "wx")
      writeSync(fd, String(process.pid))
      closeSync(fd)
      return () => {
        try {
          unlinkSync(lockPath)
        } catch {
          // Already gone: nothing to release.
        }
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
      const owner = Number.parseInt(readFileSync(lockPath, "utf8"), 10)
      if (Number.isInteger(owner) && isAlive(owner)) {
        throw new Error(
          `${dataDir} is in use by process ${owner}. Embedded PGlite serves one process; ` +
            "set DATABASE_URL to share a Postgres database between processes."
        )
      }
      unlinkSync(lockPath)
    }
  }
  throw new Error(`Could not lock ${dataDir}`)
}

const openPglite = (options: PgliteOptions) => {
  const inMemory = options.dataDir === MEMORY_DATA_DIR
  const lock = Effect.acquireRelease(
    Effect.try({
      try: () => (inMemory ? () => {} : lockDataDir(options.dataDir)),
      catch: (cause) => sqlErrorFrom(cause, `PGlite: ${(cause as Error).message}`, "connect")
    }),
    (release) => Effect.sync(release)
  )
  const open = Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        if (!inMemory) mkdirSync(options.dataDir, { recursive: true })
        return await PGlite.create(options.dataDir, { parsers: resultParsers })
      },
      catch: (cause) => sqlErrorFrom(cause, `PGlite: Failed to open ${options.dataDir}`, "connect")
    }),
    (db) => Effect.promise(() => db.close()).pipe(Effect.timeoutOption("5 seconds"))
  )
  return Effect.andThen(lock, open)
}

/** A `SqlClient` over a PGlite database that lives as long as the scope. */
export const makePgliteClient = (
  options: PgliteOptions
): Effect.Effect<SqlClient.SqlClient, SqlError, Scope.Scope | Reactivity.Reactivity> =>
  Effect.gen(function* () {
    const db = yield* openPglite(options)
    const connection = new PgliteConnection(db)
    const semaphore = yield* Semaphore.make(1)
    const acquirers = SqlClient.makeSqliteAcquirers({
      connection: Effect.succeed(connection),
      semaphore,
      isTransaction: (conn) => conn.db.isInTransaction()
    })
    return yield* SqlClient.make({
      ...acquirers,
      driver: "pglite",
      compiler: PgClient.makeCompiler(),
      prepareTransactionControls: true,
      commit: (conn) => commit(conn as PgliteConnection),
      releaseSavepoint: (name) => `RELEASE SAVEPOINT ${name}`,
      spanAttributes: [
        ["db.system.name", "postgresql"],
        ["db.namespace", options.dataDir]
      ]
    })
  })

/** Provides `SqlClient` backed by PGlite; the database closes with the layer. */
export const pgliteLayer = (options: PgliteOptions): Layer.Layer<SqlClient.SqlClient, SqlError> =>
  Layer.effectContext(Effect.map(makePgliteClient(options), (client) => Context.make(SqlClient.SqlClient, client))).pipe(
    Layer.provide(Reactivity.layer)
  )
