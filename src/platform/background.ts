/**
 * Work that runs behind the requests (outbox dispatch, delivery, sweeps, drift checks, fan-out):
 * a round that fails is logged with its cause and counted per loop in `background_failures_total`,
 * instead of vanishing, and the loop goes on. Interruption (shutdown) is not a failure.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import { record } from "./metrics.js"

const failures = (loop: string) =>
  Metric.counter("background_failures_total", { description: "Failed rounds of background loops, by loop", attributes: { loop }, incremental: true })

const counters = new Map<string, Metric.Counter<number>>()
const failuresOf = (loop: string) => {
  let counter = counters.get(loop)
  if (counter === undefined) {
    counter = failures(loop)
    counters.set(loop, counter)
  }
  return counter
}

/** Logs a failed round of `loop` with its cause and counts it; interruptions pass through untouched. */
export const reportFailure = (loop: string, cause: Cause.Cause<unknown>): Effect.Effect<void> =>
  Cause.hasInterruptsOnly(cause)
    ? Effect.interrupt
    : Effect.andThen(
        Effect.sync(() => record(failuresOf(loop), 1)),
        Effect.logError(`${loop} failed`, cause)
      )

/**
 * One round of `loop` that cannot fail: a failure is reported and answered with `fallback`
 * (e.g. "no work found", so the loop waits before trying again).
 */
export const supervisedRound = <A, E, R>(loop: string, round: Effect.Effect<A, E, R>, fallback: A): Effect.Effect<A, never, R> =>
  Effect.catchCause(round, (cause) => Effect.as(reportFailure(loop, cause), fallback))
