/**
 * Rate limits, fan-out and short caches, on Redis when `REDIS_URL` is set and
 * on in-process stand-ins otherwise. Each concern has its own module with an
 * interface, a Redis driver and a memory driver; this module picks the drivers.
 */
import { Context, Effect, Layer } from "effect"
import { Redis } from "effect/persistence"
import { ShortCache } from "./cache.js"
import { redisLayer } from "./connection.js"
import { Fanout } from "./pubsub.js"
import { RateLimits } from "./rate-limit.js"

export { ExpiringMap, ShortCache } from "./cache.js"
export { type RedisServices, redisLayer } from "./connection.js"
export { Fanout, type FanoutHandler, type FanoutSubscribeOptions } from "./pubsub.js"
export { FixedWindowCounters, type RateLimiter, type RateLimitResult, RateLimits, rateLimitHeaders, rateLimitResult } from "./rate-limit.js"

/** Which backend is in use, and whether it answers (for `GET /health/ready`). */
export class RedisHealth extends Context.Service<
  RedisHealth,
  {
    readonly kind: "redis" | "memory"
    /** True when the backend answers within a second; never fails. */
    readonly ping: Effect.Effect<boolean>
  }
>()("platform/redis/RedisHealth") {
  static readonly layerMemory: Layer.Layer<RedisHealth> = Layer.succeed(RedisHealth, {
    kind: "memory",
    ping: Effect.succeed(true)
  })

  static readonly layerRedis: Layer.Layer<RedisHealth, never, Redis.Redis> = Layer.effect(
    RedisHealth,
    Effect.gen(function* () {
      const redis = yield* Redis.Redis
      return RedisHealth.of({
        kind: "redis",
        ping: redis.send<string>("PING").pipe(
          Effect.map((answer) => answer === "PONG"),
          Effect.timeoutOrElse({ duration: 1_000, orElse: () => Effect.succeed(false) }),
          Effect.catchCause(() => Effect.succeed(false))
        )
      })
    })
  )
}

export type PlatformRedisServices = RateLimits | Fanout | ShortCache | RedisHealth

export interface PlatformRedisOptions {
  /**
   * Prepended to every Redis key and channel (default none): keys become
   * `<keyPrefix>rl:…`, `<keyPrefix>cache:…`, channels `<keyPrefix>gw:…`.
   * Lets several deployments or test runs share one Redis.
   */
  readonly keyPrefix?: string
  /**
   * When Redis is configured but unreachable at start-up, log a warning and
   * use the in-process drivers instead of failing. Default false; ignored
   * under `CI=true`, where a configured Redis must be used.
   */
  readonly fallbackToMemory?: boolean
  /** Running under CI (the Config's `ci`): a configured Redis is never replaced by memory. */
  readonly ci?: boolean
  readonly connectTimeoutMs?: number
}

/** The in-process drivers: one process, no Redis. */
export const platformMemoryLayer = (): Layer.Layer<PlatformRedisServices> =>
  Layer.mergeAll(RateLimits.layerMemory(), Fanout.layerMemory, ShortCache.layerMemory(), RedisHealth.layerMemory)

/**
 * Rate limits, fan-out, short caches and health, over Redis at `url` or, with
 * no url, in process.
 */
export const platformRedisLayer = (
  url?: string,
  options: PlatformRedisOptions = {}
): Layer.Layer<PlatformRedisServices, Redis.RedisError> => {
  if (url === undefined || url === "") return platformMemoryLayer()
  const keyPrefix = options.keyPrefix ?? ""
  const drivers = Layer.mergeAll(
    RateLimits.layerRedis({ prefix: `${keyPrefix}rl:` }),
    Fanout.layerRedis({ channelPrefix: `${keyPrefix}gw:` }),
    ShortCache.layerRedis({ prefix: `${keyPrefix}cache:` }),
    RedisHealth.layerRedis
  )
  const connectionOptions = options.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: options.connectTimeoutMs }
  const overRedis = drivers.pipe(Layer.provide(redisLayer(url, connectionOptions)))
  if (options.fallbackToMemory !== true || options.ci === true) return overRedis
  return overRedis.pipe(
    Layer.catchCause((cause) =>
      Layer.unwrap(
        Effect.as(
          Effect.logWarning("Redis unreachable at start-up; using in-process rate limits, fan-out and caches", cause),
          platformMemoryLayer()
        )
      )
    )
  )
}
