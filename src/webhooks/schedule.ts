/**
 * Retry policy of webhook deliveries (CONTRACT.md "Webhooks"): what an answer
 * means and when to try again. Plain functions; time comes in as numbers.
 */

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE

/** Waits before retry 1..7; after the 7th retry fails the delivery is `failed`. */
export const RETRY_DELAYS_MS: ReadonlyArray<number> = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR]
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1
export const JITTER = 0.1
/** An endpoint that has failed without a single success for this long is disabled. */
export const DISABLE_AFTER_MS = 5 * 24 * HOUR
/** Longest Retry-After we accept; a longer one would stall the delivery for good. */
export const MAX_RETRY_AFTER_MS = 24 * HOUR

/**
 * The wait after attempt number `attempt` (1-based) failed, or undefined when
 * no retry is left. `random` in [0, 1) spreads it by ±10 %.
 */
export const retryDelay = (attempt: number, random: number): number | undefined => {
  const base = RETRY_DELAYS_MS[attempt - 1]
  if (base === undefined) return undefined
  return Math.round(base * (1 - JITTER + 2 * JITTER * random))
}

/** Retry-After as delta seconds or an HTTP date, in milliseconds from `now`; undefined when absent or unreadable. */
export const parseRetryAfter = (value: string | undefined, now: number): number | undefined => {
  if (value === undefined) return undefined
  const text = value.trim()
  if (/^\d+$/.test(text)) return Math.min(Number(text) * SECOND, MAX_RETRY_AFTER_MS)
  const date = Date.parse(text)
  if (Number.isNaN(date)) return undefined
  return Math.min(Math.max(0, date - now), MAX_RETRY_AFTER_MS)
}

export type AttemptOutcome =
  | { readonly kind: "delivered" }
  | { readonly kind: "gone" }
  | { readonly kind: "retry"; readonly at: number }
  | { readonly kind: "failed" }

/**
 * What happens after attempt `attempt` got `status` (undefined: no answer in
 * time or a network error). Only 2xx succeeds; 3xx counts as failure.
 */
export const judgeAttempt = (options: {
  readonly attempt: number
  readonly status: number | undefined
  readonly retryAfter: string | undefined
  readonly now: number
  readonly random: number
}): AttemptOutcome => {
  const { attempt, status, now } = options
  if (status !== undefined && status >= 200 && status < 300) return { kind: "delivered" }
  if (status === 410) return { kind: "gone" }
  const delay = retryDelay(attempt, options.random)
  if (delay === undefined) return { kind: "failed" }
  const asked = parseRetryAfter(options.retryAfter, now) ?? 0
  return { kind: "retry", at: now + Math.max(delay, asked) }
}

/**
 * The delivery body: the envelope fields, with the event's data both nested and at the top level.
 * The dispatcher builds it in SQL (`dispatchEvents` in store.ts); webhooks-delivery.test.ts holds the two to the same body.
 */
export const deliveryBody = (
  event: string,
  deliveryId: string,
  timestamp: string,
  data: Readonly<Record<string, unknown>>
): Record<string, unknown> => ({ ...data, event, delivery_id: deliveryId, timestamp, data })
