/**
 * Fixed-window rate limiting: a counter per key that starts with the first hit
 * and expires `windowMs` later. The Redis driver counts with one MULTI
 * {INCR, PEXPIRE NX, PTTL}, so several gateway processes sharing Redis admit
 * exactly `limit` hits per window between them. The memory driver keeps the
 * same semantics for a single process.
 *
 * Effect's own `RateLimiter` "fixed-window" store is not used: it lengthens the
 * key's TTL by `window / limit` on every hit (a leaky-bucket schedule), so its
 * reset time is not the fixed window the RateLimit headers describe.
 */
import { Context, Effect, Layer } from "effect"
import { RedisClient } from "./connection.js"
import { ExpiringEntries } from "./expiring.js"

export interface RateLimitResult {
  readonly allowed: boolean
  readonly limit: number
  /** Hits still allowed in the current window (never negative). */
  readonly remaining: number
  /** Milliseconds until the current window ends and the count starts again. */
  readonly resetMs: number
  /** 0 when allowed; otherwise whole seconds to wait, at least 1. */
  readonly retryAfterSeconds: number
  /** The window length the hit was counted in (for `RateLimit-Policy`). */
  readonly windowMs: number
}

/** Builds the result for the `count`-th hit of a window that ends in `resetMs`. */
export const rateLimitResult = (count: number, limit: number, windowMs: number, resetMs: number): RateLimitResult => {
  const allowed = count <= limit
  const reset = Math.max(0, resetMs)
  return {
    allowed,
    limit,
    remaining: Math.max(0, limit - count),
    resetMs: reset,
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil(reset / 1000)),
    windowMs
  }
}

const normalizeWindow = (windowMs: number): number => Math.max(1, Math.ceil(windowMs))

/**
 * The in-process counters, synchronous so callers on a hot path can use them
 * directly. A window's entry expires when the window ends.
 */
export class FixedWindowCounters extends ExpiringEntries<{ count: number; readonly expiresAt: number }> {
  consume(key: string, limit: number, windowMs: number, now: number = Date.now()): RateLimitResult {
    const window = normalizeWindow(windowMs)
    this.sweepIfDue(now)
    let entry = this.entries.get(key)
    if (entry === undefined || entry.expiresAt <= now) {
      entry = { count: 0, expiresAt: now + window }
      this.entries.set(key, entry)
    }
    // Refused hits still count (as INCR does in Redis) but stop growing once past the limit.
    if (entry.count <= limit) entry.count += 1
    return rateLimitResult(entry.count, limit, window, entry.expiresAt - now)
  }

  /** What the next hit on `key` would get, without counting it. */
  peek(key: string, limit: number, windowMs: number, now: number = Date.now()): RateLimitResult {
    const window = normalizeWindow(windowMs)
    const entry = this.entries.get(key)
    if (entry === undefined || entry.expiresAt <= now) return rateLimitResult(1, limit, window, window)
    return rateLimitResult(entry.count + 1, limit, window, entry.expiresAt - now)
  }
}

export interface RateLimitRedisOptions {
  /** Prepended to every key (default `"rl:"`). */
  readonly prefix?: string
}

export interface RateLimitMemoryOptions {
  readonly sweepEveryMs?: number
}

export interface RateLimiter {
  /** Counts one hit on `key` and says whether it is within `limit` per `windowMs`. */
  readonly consume: (key: string, limit: number, windowMs: number) => Effect.Effect<RateLimitResult>
  /**
   * What the next hit on `key` would get, without counting it: lets a caller refuse before
   * doing work whose outcome decides whether the hit counts (a failed credential check).
   */
  readonly peek: (key: string, limit: number, windowMs: number) => Effect.Effect<RateLimitResult>
  /** `consume` answered at once; only drivers that never wait (the in-process one) have it. */
  readonly consumeNow?: (key: string, limit: number, windowMs: number) => RateLimitResult
}

export class RateLimits extends Context.Service<RateLimits, RateLimiter>()("platform/redis/RateLimits") {
  /** Counters in Redis, exact across every process sharing it. Needs `RedisClient`. */
  static readonly layerRedis = (options: RateLimitRedisOptions = {}): Layer.Layer<RateLimits, never, RedisClient> =>
    Layer.effect(
      RateLimits,
      Effect.gen(function* () {
        const { client } = yield* RedisClient
        const prefix = options.prefix ?? "rl:"
        const consume = (key: string, limit: number, windowMs: number): Effect.Effect<RateLimitResult> => {
          const redisKey = prefix + key
          const window = normalizeWindow(windowMs)
          // A Redis failure is an infrastructure defect: the request answers 500.
          return Effect.promise(() =>
            client.multi().incr(redisKey).pExpire(redisKey, window, "NX").pTTL(redisKey).exec()
          ).pipe(
            Effect.map((replies) => {
              const count = Number(replies[0])
              const ttl = Number(replies[2])
              // PTTL is -2 only if the window ended between EXEC's commands (sub-ms windows).
              return rateLimitResult(count, limit, window, ttl > 0 ? ttl : window)
            })
          )
        }
        const peek = (key: string, limit: number, windowMs: number): Effect.Effect<RateLimitResult> => {
          const redisKey = prefix + key
          const window = normalizeWindow(windowMs)
          return Effect.promise(() => client.multi().get(redisKey).pTTL(redisKey).exec()).pipe(
            Effect.map((replies) => {
              const count = Number(replies[0] ?? 0)
              const ttl = Number(replies[1])
              // No key, or one without a TTL left: the next hit starts a new window.
              return count > 0 && ttl > 0 ? rateLimitResult(count + 1, limit, window, ttl) : rateLimitResult(1, limit, window, window)
            })
          )
        }
        return RateLimits.of({ consume, peek })
      })
    )

  /** Counters in this process only. */
  static readonly layerMemory = (options: RateLimitMemoryOptions = {}): Layer.Layer<RateLimits> =>
    Layer.sync(RateLimits, () => {
      const counters = new FixedWindowCounters(options.sweepEveryMs)
      return RateLimits.of({
        consume: (key, limit, windowMs) => Effect.sync(() => counters.consume(key, limit, windowMs)),
        peek: (key, limit, windowMs) => Effect.sync(() => counters.peek(key, limit, windowMs)),
        consumeNow: (key, limit, windowMs) => counters.consume(key, limit, windowMs)
      })
    })
}

/** Quotes a policy name as an RFC 8941 string. */
const sfString = (value: string): string => `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`

/**
 * Response headers for a rate-limit decision: the IETF draft
 * (`RateLimit-Policy`, `RateLimit`), `Retry-After` when refused, and the older
 * `X-RateLimit-*` trio (`X-RateLimit-Reset` in Unix epoch seconds, as GitHub
 * sends it). Names are lower case, as HTTP/2 and Effect's `Headers` use them.
 */
/** Per policy name: the quoted name and the two headers that depend only on its limit and window (every request sends them). */
const policies = new Map<
  string,
  { readonly limitCount: number; readonly windowMs: number; readonly name: string; readonly policy: string; readonly limit: string }
>()

const policyOf = (policyName: string, limit: number, windowMs: number) => {
  let found = policies.get(policyName)
  if (found === undefined || found.limitCount !== limit || found.windowMs !== windowMs) {
    const name = sfString(policyName)
    found = { limitCount: limit, windowMs, name, policy: `${name};q=${limit};w=${Math.ceil(windowMs / 1000)}`, limit: String(limit) }
    policies.set(policyName, found)
  }
  return found
}

export const rateLimitHeaders = (
  result: RateLimitResult,
  policyName: string,
  now: number = Date.now()
): Record<string, string> => {
  const { name, policy, limit } = policyOf(policyName, result.limit, result.windowMs)
  const resetSeconds = Math.ceil(result.resetMs / 1000)
  const headers: Record<string, string> = {
    "ratelimit-policy": policy,
    ratelimit: `${name};r=${result.remaining};t=${resetSeconds}`,
    "x-ratelimit-limit": limit,
    "x-ratelimit-remaining": String(result.remaining),
    "x-ratelimit-reset": String(Math.ceil((now + result.resetMs) / 1000))
  }
  if (!result.allowed) headers["retry-after"] = String(result.retryAfterSeconds)
  return headers
}
