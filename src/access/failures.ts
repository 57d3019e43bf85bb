/**
 * The budget of failed authentications: counted per client address and, for API keys, per key
 * prefix, in the shared rate limiter (Redis when configured, so it holds across processes).
 * A failure counts when it happens; an address or prefix past its budget is refused before the
 * next check that could fail, so guessing costs neither a database lookup nor more than the
 * budget per window.
 */
import * as Effect from "effect/Effect"
import type { RateLimiter, RateLimitResult } from "../platform/redis/index.js"
import { KEY_PREFIX_LENGTH, looksLikeApiKey } from "./credentials.js"
import { CredentialsThrottled } from "./errors.js"

const WINDOW_MS = 60_000

interface Counted {
  readonly by: CredentialsThrottled["by"]
  readonly key: string
}

const countedUnder = (token: string, client: string): ReadonlyArray<Counted> => {
  const address: Counted = { by: "address", key: `authfail:ip:${client}` }
  return looksLikeApiKey(token) ? [address, { by: "key_prefix", key: `authfail:prefix:${token.slice(0, KEY_PREFIX_LENGTH)}` }] : [address]
}

export const makeFailureBudget = (limits: RateLimiter, perMinute: number) => {
  /** The refusal with the longest wait, or undefined when every counter allows. */
  const verdict = (counted: ReadonlyArray<Counted>, op: RateLimiter["consume"]) =>
    Effect.map(
      Effect.forEach(counted, ({ key }) => op(key, perMinute, WINDOW_MS), { concurrency: "unbounded" }),
      (results) => {
        let worst: { by: Counted["by"]; state: RateLimitResult } | undefined
        results.forEach((state, i) => {
          if (!state.allowed && (worst === undefined || state.retryAfterSeconds > worst.state.retryAfterSeconds)) worst = { by: counted[i]!.by, state }
        })
        return worst === undefined ? undefined : new CredentialsThrottled(worst)
      }
    )

  return {
    /** Refused when the client or the key's prefix is already past its budget; counts nothing. */
    throttled: (token: string, client: string) => verdict(countedUnder(token, client), limits.peek),
    /** Counts one failure; refused when this failure is past the budget. */
    failed: (token: string, client: string) => verdict(countedUnder(token, client), limits.consume)
  }
}
