/**
 * Waiting for an outcome instead of sleeping a fixed time: poll a check until
 * it holds, with a deadline. A check holds when it neither throws (or fails)
 * nor answers `false`; its answer is returned. At the deadline the last error
 * is thrown (an `expect` inside the check reports what was last seen).
 *
 * Both versions poll on real time (setTimeout and Date.now), not on Effect's
 * Clock, so the Effect version also polls under a TestClock.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"

export interface EventuallyOptions {
  /** Give up after this long (default 5 s). */
  readonly timeoutMs?: number
  /** Wait this long between checks (default 20 ms). */
  readonly intervalMs?: number
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

const notYet = (timeoutMs: number) => new Error(`eventually: the condition did not hold within ${timeoutMs} ms`)

/** Polls `check` until it holds; returns its answer. */
export const eventually = async <A>(check: () => A | Promise<A>, options: EventuallyOptions = {}): Promise<Exclude<A, false>> => {
  const { timeoutMs = 5_000, intervalMs = 20 } = options
  const deadline = Date.now() + timeoutMs
  for (;;) {
    let failure: unknown
    try {
      const answer = await check()
      if (answer !== false) return answer as Exclude<A, false>
      failure = notYet(timeoutMs)
    } catch (error) {
      failure = error
    }
    if (Date.now() >= deadline) throw failure
    await pause(intervalMs)
  }
}

/** The Effect version: runs `check` until it succeeds with something other than `false`; at the deadline, dies with the last failure. */
export const eventuallyEffect = <A, E, R>(check: Effect.Effect<A, E, R>, options: EventuallyOptions = {}): Effect.Effect<Exclude<A, false>, never, R> =>
  Effect.suspend(() => {
    const { timeoutMs = 5_000, intervalMs = 20 } = options
    const deadline = Date.now() + timeoutMs
    const attempt: Effect.Effect<Exclude<A, false>, never, R> = Effect.flatMap(Effect.exit(check), (exit) => {
      if (Exit.isSuccess(exit) && exit.value !== false) return Effect.succeed(exit.value as Exclude<A, false>)
      if (Date.now() >= deadline) return Effect.die(Exit.isSuccess(exit) ? notYet(timeoutMs) : Cause.squash(exit.cause))
      return Effect.andThen(
        Effect.promise(() => pause(intervalMs)),
        Effect.suspend(() => attempt)
      )
    })
    return attempt
  })
