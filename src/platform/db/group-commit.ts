/**
 * Group commit: one writer per process takes whatever was queued while its last write ran and
 * writes it as one batch (one statement, one commit). Nothing waits on a timer: an idle writer
 * writes the first unit at once, and under load the batch grows by itself to what arrived during
 * the previous commit, bounded by a count and a byte budget.
 *
 * A caller's `submit` answers only after the batch holding its unit committed. A batch that fails
 * is written again in halves until the bad unit is alone, so it fails alone and its neighbours
 * only wait longer.
 */
import type * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"

/** Why a unit was not committed: `conflict` = a guard found the state changed since it was read (retry after a fresh read). */
export type UnitFailure = { readonly _tag: "Conflict" } | { readonly _tag: "Failed"; readonly cause: Cause.Cause<unknown> }

export interface GroupCommit<Unit> {
  /** Queues `unit`; succeeds once it committed, fails with why it did not. */
  readonly submit: (unit: Unit) => Effect.Effect<void, UnitFailure>
}

export interface GroupCommitOptions<Unit, E> {
  /** Writes the units as one atomic statement (or transaction). */
  readonly write: (units: ReadonlyArray<Unit>) => Effect.Effect<void, E>
  /** True when a failure means "the state changed under us" rather than a broken write. */
  readonly isConflict: (error: E) => boolean
  /** The unit's share of the byte budget (roughly what it adds to the statement). */
  readonly sizeOf: (unit: Unit) => number
  readonly maxUnits: number
  readonly maxBytes: number
  /** Told every batch that committed and how long its write took (ms). */
  readonly committed?: (units: ReadonlyArray<Unit>, ms: number) => void
}

interface Queued<Unit> {
  readonly unit: Unit
  readonly size: number
  readonly done: Deferred.Deferred<void, UnitFailure>
}

/** Starts the writer in the current scope; it stops with the scope. */
export const makeGroupCommit = <Unit, E>(options: GroupCommitOptions<Unit, E>): Effect.Effect<GroupCommit<Unit>, never, Scope.Scope> =>
  Effect.gen(function* () {
    const queue = yield* Queue.unbounded<Queued<Unit>>()
    // What the last take brought beyond the byte budget goes first into the next batch.
    let carried: Array<Queued<Unit>> = []

    const nextBatch = Effect.gen(function* () {
      const taken = carried.length > 0 ? carried : yield* Queue.takeBetween(queue, 1, options.maxUnits)
      let bytes = 0
      let cut = 0
      while (cut < taken.length && (cut === 0 || bytes + taken[cut]!.size <= options.maxBytes)) bytes += taken[cut++]!.size
      carried = taken.slice(cut)
      return taken.slice(0, cut)
    })

    const settle = (queued: ReadonlyArray<Queued<Unit>>, outcome: Effect.Effect<void, UnitFailure>) => {
      for (const entry of queued) Deferred.doneUnsafe(entry.done, outcome)
    }

    /**
     * Writes `batch` as one statement; when it fails, nothing of it committed, and its halves are
     * written again on their own until the failing units are alone (a few statements for one bad
     * unit in hundreds, instead of one per unit).
     */
    const writeAll = (batch: ReadonlyArray<Queued<Unit>>): Effect.Effect<void> =>
      Effect.suspend(() => {
        const started = performance.now()
        // Suspended, so a write that throws while building its statement fails this batch, not the writer.
        const write = Effect.suspend(() => options.write(batch.map((queued) => queued.unit)))
        return Effect.flatMap(Effect.exit(write), (exit) => written(batch, exit, started))
      })

    const written = (batch: ReadonlyArray<Queued<Unit>>, exit: Exit.Exit<void, E>, started: number): Effect.Effect<void> => {
        if (exit._tag === "Success") {
          options.committed?.(
            batch.map((queued) => queued.unit),
            performance.now() - started
          )
          return Effect.sync(() => settle(batch, Effect.void))
        }
        if (batch.length === 1) {
          const error = exit.cause.reasons.find((reason) => reason._tag === "Fail")?.error as E | undefined
          const failure: UnitFailure = error !== undefined && options.isConflict(error) ? { _tag: "Conflict" } : { _tag: "Failed", cause: exit.cause }
          return Effect.sync(() => settle(batch, Effect.fail(failure)))
        }
        const half = Math.ceil(batch.length / 2)
        return Effect.andThen(writeAll(batch.slice(0, half)), writeAll(batch.slice(half)))
    }

    const writeBatch = Effect.flatMap(nextBatch, writeAll)
    yield* Effect.forkScoped(Effect.forever(writeBatch))

    return {
      submit: (unit) =>
        Effect.flatMap(Deferred.make<void, UnitFailure>(), (done) =>
          Effect.andThen(Queue.offer(queue, { unit, size: options.sizeOf(unit), done }), Deferred.await(done))
        )
    }
  })
