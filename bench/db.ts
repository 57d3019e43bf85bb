/**
 * `npm run bench:db`: single-row INSERT rate, all in one run so the figures
 * compare on the same (shared, noisy) machine:
 *
 * - `@effect/sql-pg` through `SqlClient`, 1 and 8 connections;
 * - the same driver's bare connections (`PgConnection.query`, no SqlClient
 *   statement building, spans or pool) as the raw baseline — the `pg` package
 *   is not installed here (sql-pg 4 speaks the protocol itself);
 * - the embedded PostgreSQL (the default deployment: its own server under a
 *   temporary DATA_DIR, durable settings) through the same `@effect/sql-pg`
 *   SqlClient, 1 and 8 connections.
 *
 * The clients are measured in short alternating rounds, so load from other
 * work on the machine affects each of them alike.
 *
 * DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres) is where
 * the scratch tables are created and dropped. BENCH_SECONDS sets the length of
 * each measurement (default 5). The last line of output is one JSON object.
 */
import { join } from "node:path"
import { PgClient, PgConnection } from "@effect/sql-pg"
import { Effect, Exit, Redacted, Scope } from "effect"
import { startEmbeddedPostgres } from "../src/platform/db/embedded/index.js"
import { benchDataDir } from "./support/data-dir.js"
import {
  type InsertBench,
  type InsertRate,
  insertBenchFrom,
  openInsertBench,
  SCRATCH_TABLE_COLUMNS,
  scratchTableName
} from "./support/insert-rate.js"

const url = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres"
const seconds = Number(process.env.BENCH_SECONDS || 5)
const ROUNDS = 5

const sqlPgLayer = (maxConnections: number, at = url) =>
  PgClient.layer({ url: Redacted.make(at), maxConnections, minConnections: maxConnections })

/** The same INSERT straight on `connections` protocol connections, one worker each. */
const openRawInsertBench = async (connections: number): Promise<InsertBench> => {
  const scope = Scope.makeUnsafe()
  const inScope = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => Effect.runPromise(Scope.provide(scope)(effect))
  const config = { url: Redacted.make(url) }
  const table = scratchTableName()
  try {
    const pool = await inScope(Effect.forEach(Array.from({ length: connections }), () => PgConnection.make(config)))
    await inScope(pool[0].query(`CREATE TABLE ${table} (${SCRATCH_TABLE_COLUMNS})`, [], false))
    const statement = `INSERT INTO ${table} (id, org_uuid, seq) VALUES ($1, 'org_bench', $2)`
    return insertBenchFrom({
      connections,
      runPromise: (effect) => Effect.runPromise(effect),
      insert: (worker, seq) => pool[worker].query(statement, [`row_${seq}`, seq]),
      close: async () => {
        await inScope(Effect.ignore(pool[0].query(`DROP TABLE IF EXISTS ${table}`, [], false)))
        await Effect.runPromise(Scope.close(scope, Exit.void))
      }
    })
  } catch (error) {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    throw error
  }
}

const main = async () => {
  console.error(`single-row INSERT, ${seconds} s each in ${ROUNDS} interleaved rounds, Postgres at ${new URL(url).host}`)
  const dataDir = benchDataDir("bench-db")
  const embedded = await startEmbeddedPostgres({ directory: join(dataDir.path, "pg") })
  const benches: Array<[name: string, bench: InsertBench]> = []
  try {
    benches.push(["@effect/sql-pg SqlClient, 1 conn", await openInsertBench(sqlPgLayer(1), 1)])
    benches.push(["raw PgConnection, 1 conn", await openRawInsertBench(1)])
    benches.push(["@effect/sql-pg SqlClient, 8 conns", await openInsertBench(sqlPgLayer(8), 8)])
    benches.push(["raw PgConnection, 8 conns", await openRawInsertBench(8)])
    benches.push(["embedded PostgreSQL, 1 conn", await openInsertBench(sqlPgLayer(1, embedded.url), 1)])
    benches.push(["embedded PostgreSQL, 8 conns", await openInsertBench(sqlPgLayer(8, embedded.url), 8)])
    for (const [, bench] of benches) await bench.warmUp(0.5)
    // Short alternating rounds: load from other work on the machine spreads over every client alike.
    for (let round = 0; round < ROUNDS; round++) {
      for (const [, bench] of benches) await bench.measure(seconds / ROUNDS)
    }
  } finally {
    for (const [, bench] of benches) await bench.close()
    await embedded.stop()
    await dataDir.remove()
  }
  const rows: Array<[string, InsertRate]> = benches.map(([name, bench]) => [name, bench.result()])

  const header = ["what", "conns", "inserts", "rows/s", "p50 ms", "p99 ms"]
  const table = rows.map(([name, rate]) => [
    name,
    String(rate.connections),
    String(rate.inserts),
    String(rate.rps),
    rate.p50_ms.toFixed(3),
    rate.p99_ms.toFixed(3)
  ])
  const widths = header.map((title, column) => Math.max(title.length, ...table.map((row) => row[column].length)))
  const line = (cells: Array<string>) =>
    cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column]))).join("  ")
  console.log(line(header))
  for (const row of table) console.log(line(row))

  const rps = (index: number) => rows[index][1].rps
  const ratio = (a: number, b: number) => (b === 0 ? null : Number((a / b).toFixed(3)))
  console.log(
    JSON.stringify({
      insert_rps_1conn: rps(0),
      insert_rps_8conn: rps(2),
      pg_raw_rps_1conn: rps(1),
      pg_raw_rps_8conn: rps(3),
      pg_raw_driver: "@effect/sql-pg PgConnection (the pg package is not installed)",
      embedded_rps_1conn: rps(4),
      embedded_rps_8conn: rps(5),
      ratio_sqlclient_to_raw_1conn: ratio(rps(0), rps(1)),
      ratio_sqlclient_to_raw_8conn: ratio(rps(2), rps(3)),
      ratio_8conn_to_1conn: ratio(rps(2), rps(0)),
      ratio_embedded_to_postgres_1conn: ratio(rps(4), rps(0)),
      seconds
    })
  )
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
