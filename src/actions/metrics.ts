/** What authorize decides, for `/metrics`: the outcome of every evaluated request. */
import * as Metric from "effect/Metric"

const outcomes = ["authorized", "pending_approval", "denied_by_policy"] as const
export type AuthorizeOutcome = (typeof outcomes)[number]

/** One counter per outcome, made once (recording is a map look-up on the hot path). */
export const authorizeDecisions: Readonly<Record<AuthorizeOutcome, Metric.Counter<number>>> = Object.fromEntries(
  outcomes.map((outcome) => [
    outcome,
    Metric.counter("authorize_decisions_total", { description: "Authorize requests by the status they were given", attributes: { outcome }, incremental: true })
  ])
) as Record<AuthorizeOutcome, Metric.Counter<number>>
