/** What authentication costs and refuses, for `/metrics` (and for tests that count database lookups). */
import * as Metric from "effect/Metric"

export const keyLookups = Metric.counter("auth_key_lookups_total", {
  description: "API key digests looked up in the database (neither cached as valid nor remembered as unknown)"
})
export const authFailures = Metric.counter("auth_failures_total", {
  description: "Credentials refused and counted against the client address (and key prefix)"
})
export const authThrottled = Metric.counter("auth_throttled_total", {
  description: "Credentials answered 429 because their address or key prefix was past its budget of failures"
})
