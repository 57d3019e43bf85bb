/**
 * The Redis connection shared by the rate limiter, the fan-out and the short
 * caches. Built from `REDIS_URL`; with no URL there is no connection and the
 * in-process drivers are used instead (see `index.ts`). node-redis is imported
 * only when a URL is given (src/platform/lazy.ts says why): a process without
 * Redis never holds the client library.
 */
import type * as NodeRedis from "@effect/platform-node/NodeRedis"
import { Context, Effect, Layer } from "effect"
import { Redis } from "effect/persistence"

/** The node-redis client, for MULTI and PSUBSCRIBE (which Effect's generic `Redis` lacks). */
export class RedisClient extends Context.Service<RedisClient, { readonly client: NodeRedis.NodeRedis["Service"]["client"] }>()(
  "platform/redis/RedisClient"
) {}

/** The services a Redis-backed driver may depend on. */
export type RedisServices = Redis.Redis | RedisClient

export interface RedisConnectionOptions {
  /** Bound on the initial connect and the start-up PING (default 5 s). */
  readonly connectTimeoutMs?: number
}

/**
 * A connected node-redis client exposed as Effect's `Redis` service and as
 * `RedisClient`.
 *
 * Construction fails fast: node-redis gives up on the first connection error
 * and a PING must answer before the layer is ready, so a wrong URL shows at
 * start-up rather than at the first rate-limited request.
 */
export function redisLayer(url: string, options?: RedisConnectionOptions): Layer.Layer<RedisServices, Redis.RedisError>
export function redisLayer(
  url: undefined,
  options?: RedisConnectionOptions
): Layer.Layer<never>
export function redisLayer(
  url: string | undefined,
  options?: RedisConnectionOptions
): Layer.Layer<RedisServices, Redis.RedisError> | Layer.Layer<never>
export function redisLayer(
  url: string | undefined,
  options: RedisConnectionOptions = {}
): Layer.Layer<RedisServices, Redis.RedisError> | Layer.Layer<never> {
  if (url === undefined || url === "") return Layer.empty
  const timeoutMs = options.connectTimeoutMs ?? 5_000
  const connected = Effect.map(
    Effect.promise(() => import("@effect/platform-node/NodeRedis")),
    (NodeRedis): Layer.Layer<RedisServices, Redis.RedisError> =>
      Layer.effect(RedisClient)(
        Effect.gen(function* () {
          const { client } = yield* NodeRedis.NodeRedis
          return RedisClient.of({ client })
        })
      ).pipe(
        Layer.provideMerge(NodeRedis.layer({ url, socket: { connectTimeout: timeoutMs } }))
      )
  )
  return Layer.unwrap(connected).pipe(Layer.tap((context) => pingOrFail(Context.get(context, Redis.Redis), timeoutMs)))
}

const pingOrFail = (redis: Redis.Redis["Service"], timeoutMs: number): Effect.Effect<void, Redis.RedisError> =>
  redis.send<string>("PING").pipe(
    Effect.timeoutOrElse({
      duration: timeoutMs,
      orElse: () => Effect.fail(new Redis.RedisError({ cause: new Error(`Redis did not answer PING within ${timeoutMs} ms`) }))
    }),
    Effect.flatMap((answer) =>
      answer === "PONG"
        ? Effect.void
        : Effect.fail(new Redis.RedisError({ cause: new Error(`unexpected PING answer: ${String(answer)}`) }))
    )
  )
