/**
 * Tables in memory for a store's in-memory layer (`memoryWhitelistStore`, `memoryFlagStore`), which lets a service's tests run
 * its rules without a database. One state object per store; a transaction that fails puts the
 * state back as it was, so "all or nothing" holds as it does in SQL. Isolation is by JavaScript
 * itself: a store method reads and writes in one synchronous step, as one SQL statement does.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"

export interface MemoryTables<S> {
  /** The current state; a method reads and replaces rows within one synchronous step. */
  readonly state: S
  /** Runs `effect`; when it fails or is interrupted, every write it made is undone. */
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

/** Tables initialized by `initial`; rows must be structured-cloneable (plain objects, arrays, Maps, Sets). */
export const memoryTables = <S extends object>(initial: S): MemoryTables<S> => {
  const tables = {
    state: initial,
    transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.suspend(() => {
        const saved = structuredClone(tables.state)
        return Effect.onError(
          effect,
          () =>
            Effect.sync(() => {
              tables.state = saved
            })
        )
      })
  }
  return tables
}

/** The current time as a column would hold it (ISO 8601, milliseconds). */
export const nowIso = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis).toISOString())
