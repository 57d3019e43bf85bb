/**
 * Single-row INSERT throughput: `connections` concurrent fibers insert one
 * row per statement into a scratch table (created for the run, dropped after).
 *
 * `measureInsertRate` measures one `SqlClient` layer in one go. Benchmarks
 * comparing several clients on a shared, noisy machine should open an
 * `InsertBench` per client and interleave short `measure` rounds, so load
 * drift hits every client alike.
 */
import { randomBytes } from "node:crypto"
import { Effect, type Layer, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql"

export interface InsertRate {
  readonly connections: number
  readonly seconds: number
  readonly inserts: number
  readonly rps: number
  readonly p50_ms: number
  readonly p99_ms: number
}

export interface InsertBench {
  /** Inserts for `seconds` without counting (JIT, prepared statements, pool fill). */
  readonly warmUp: (seconds: number) => Promise<void>
  /** Inserts for `seconds` and adds them to the running result. */
  readonly measure: (seconds: number) => Promise<void>
  /** Everything measured so far. */
  readonly result: () => InsertRate
  /** Drops the scratch table and closes the client. */
  readonly close: () => Promise<void>
}

export const percentile = (sorted: ArrayLike<number>, fraction: number): number =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))]

export const summarise = (connections: number, elapsedMs: number, latencies: ReadonlyArray<number>): InsertRate => {
  const sorted = Float64Array.from(latencies).sort()
  return {
    connections,
    seconds: Number((elapsedMs / 1000).toFixed(3)),
    inserts: latencies.length,
    rps: elapsedMs === 0 ? 0 : Math.round((latencies.length * 1000) / elapsedMs),
    p50_ms: Number(percentile(sorted, 0.5).toFixed(3)),
    p99_ms: Number(percentile(sorted, 0.99).toFixed(3))
  }
}

/** A table name nobody else uses, so parallel runs and reruns never collide. */
export const scratchTableName = (): string => `bench_insert_${randomBytes(5).toString("hex")}`

export const SCRATCH_TABLE_COLUMNS =
  "id TEXT PRIMARY KEY, org_uuid TEXT NOT NULL, seq BIGINT NOT NULL, created_at TIMESTAMPTZ NOT NULL DEFAULT now()"

/**
 * Builds an `InsertBench` from one "insert row number `seq`" step per worker;
 * the workers run concurrently until the deadline.
 */
export const insertBenchFrom = (options: {
  readonly connections: number
  readonly runPromise: <A, E>(effect: Effect.Effect<A, E>) => Promise<A>
  /** The insert step for worker `worker` (0-based). */
  readonly insert: (worker: number, seq: number) => Effect.Effect<unknown, unknown>
  readonly close: () => Promise<void>
}): InsertBench => {
  let sequence = 0
  let elapsedMs = 0
  const latencies: Array<number> = []
  const drive = (seconds: number, record: boolean) => {
    const until = performance.now() + seconds * 1000
    const worker = (index: number) =>
      Effect.gen(function* () {
        while (performance.now() < until) {
          const started = performance.now()
          yield* options.insert(index, sequence++)
          if (record) latencies.push(performance.now() - started)
        }
      })
    return options.runPromise(
      Effect.forEach(
        Array.from({ length: options.connections }, (_, index) => index),
        worker,
        { concurrency: "unbounded", discard: true }
      )
    )
  }
  return {
    warmUp: (seconds) => drive(seconds, false),
    measure: async (seconds) => {
      const started = performance.now()
      await drive(seconds, true)
      elapsedMs += performance.now() - started
    },
    result: () => summarise(options.connections, elapsedMs, latencies),
    close: options.close
  }
}

/** An `InsertBench` over a `SqlClient` layer (give it a pool of at least `connections`). */
export const openInsertBench = async <E>(
  sqlLayer: Layer.Layer<SqlClient.SqlClient, E>,
  connections: number
): Promise<InsertBench> => {
  const runtime = ManagedRuntime.make(sqlLayer)
  const table = scratchTableName()
  try {
    const sql = await runtime.runPromise(
      SqlClient.SqlClient.use((sql) => Effect.as(sql.unsafe(`CREATE TABLE ${table} (${SCRATCH_TABLE_COLUMNS})`), sql))
    )
    return insertBenchFrom({
      connections,
      runPromise: (effect) => runtime.runPromise(effect),
      insert: (_, seq) => sql`INSERT INTO ${sql(table)} (id, org_uuid, seq) VALUES (${`row_${seq}`}, 'org_bench', ${seq})`,
      close: async () => {
        await runtime.runPromise(Effect.ignore(sql.unsafe(`DROP TABLE IF EXISTS ${table}`)))
        await runtime.dispose()
      }
    })
  } catch (error) {
    await runtime.dispose()
    throw error
  }
}

/**
 * Single-row INSERTs per second that `connections` concurrent fibers achieve
 * through `sqlLayer` over `seconds` (after a half-second warm-up).
 */
export const measureInsertRate = async <E>(
  sqlLayer: Layer.Layer<SqlClient.SqlClient, E>,
  connections: number,
  seconds: number
): Promise<InsertRate> => {
  const bench = await openInsertBench(sqlLayer, connections)
  try {
    await bench.warmUp(0.5)
    await bench.measure(seconds)
    return bench.result()
  } finally {
    await bench.close()
  }
}
