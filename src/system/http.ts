/** `/health`, `/health/ready` (`/metrics` has a listener of its own: metrics-listener.ts). */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { NotReady } from "../../protocol/system.js"
import { Database } from "../platform/db/index.js"
import { RedisHealth } from "../platform/redis/index.js"

const timed = <E>(effect: Effect.Effect<boolean, E>, kind: string) =>
  Effect.gen(function* () {
    const started = yield* Clock.currentTimeNanos
    const result = yield* Effect.result(effect.pipe(Effect.timeout(2_000)))
    const latency_ms = Math.round(Number((yield* Clock.currentTimeNanos) - started) / 10_000) / 100
    if (result._tag === "Success" && result.success) return { ok: true, kind, latency_ms }
    return { ok: false, kind, latency_ms, error: result._tag === "Failure" ? String(result.failure) : "no answer" }
  })

export const SystemHttp = HttpApiBuilder.group(GatewayApi, "system", (handlers) =>
  Effect.gen(function* () {
    const database = yield* Database
    const redis = yield* RedisHealth
    return handlers
      .handle("health", () => Effect.succeed({ status: "ok" as const }))
      .handle("ready", () =>
        Effect.gen(function* () {
          const [db, cache] = yield* Effect.all([timed(Effect.as(database.ping, true), database.kind), timed(redis.ping, redis.kind)], {
            concurrency: 2
          })
          const checks = { database: db, redis: cache }
          if (db.ok && cache.ok) return { status: "ok" as const, checks }
          return yield* Effect.fail(new NotReady({ status: "unavailable", checks }))
        })
      )
  })
)
