import { spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import type { Redis } from "effect/persistence"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  ExpiringMap,
  Fanout,
  FixedWindowCounters,
  type PlatformRedisServices,
  platformMemoryLayer,
  platformRedisLayer,
  RateLimits,
  RedisHealth,
  rateLimitHeaders,
  rateLimitResult,
  redisLayer,
  ShortCache
} from "../src/platform/redis/index.js"

const redisUrl = process.env.REDIS_URL || undefined
// Every key and channel of this run lives under its own prefix, so parallel runs never collide.
const runPrefix = `test:${process.pid}:${randomUUID().slice(0, 8)}:`

type Services = Context.Context<PlatformRedisServices>

interface Variant {
  readonly name: "memory" | "redis"
  /** Two handles on the platform, standing for two gateway processes. */
  readonly openTwo: Effect.Effect<readonly [Services, Services], Redis.RedisError, Scope.Scope>
}

const memoryVariant: Variant = {
  name: "memory",
  // In memory there is one process: both "processes" share the same instance.
  openTwo: Effect.map(Layer.build(platformMemoryLayer()), (context) => [context, context] as const)
}

const redisVariant = (url: string): Variant => ({
  name: "redis",
  // Two separate layers: two node-redis clients, two subscriber connections.
  openTwo: Effect.all([
    Layer.build(platformRedisLayer(url, { keyPrefix: runPrefix })),
    Layer.build(platformRedisLayer(url, { keyPrefix: runPrefix }))
  ])
})

const variants: ReadonlyArray<Variant> = redisUrl === undefined ? [memoryVariant] : [memoryVariant, redisVariant(redisUrl)]
if (redisUrl === undefined) {
  console.log("REDIS_URL is not set: the Redis variant of test/redis.test.ts did not run (memory drivers only)")
}

const run = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>): Promise<A> => Effect.runPromise(Effect.scoped(effect))

let keyCounter = 0
const uniqueKey = (label: string): string => `${label}:${Date.now()}:${keyCounter++}`

/** Polls until `check` holds or fails the test after `timeoutMs`. */
const eventually = async (check: () => boolean, timeoutMs = 3_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time")
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

describe.each(variants)("platform redis services ($name)", (variant) => {
  it("allows 5 per window, counts remaining down 4..0 and refuses the 6th with Retry-After", () =>
    run(
      Effect.gen(function* () {
        const [services] = yield* variant.openTwo
        const rateLimits = Context.get(services, RateLimits)
        const key = uniqueKey("five")
        const results = []
        for (let i = 0; i < 6; i++) results.push(yield* rateLimits.consume(key, 5, 10_000))

        expect(results.map((r) => r.allowed)).toEqual([true, true, true, true, true, false])
        expect(results.map((r) => r.remaining)).toEqual([4, 3, 2, 1, 0, 0])
        for (const r of results.slice(0, 5)) expect(r.retryAfterSeconds).toBe(0)
        const refused = results[5]
        expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1)
        expect(refused.retryAfterSeconds).toBeLessThanOrEqual(10)
        expect(refused.resetMs).toBeGreaterThan(0)
        expect(refused.resetMs).toBeLessThanOrEqual(10_000)
        expect(refused.limit).toBe(5)
        // The reset point is fixed: it does not move later as hits arrive.
        expect(refused.resetMs).toBeLessThanOrEqual(results[0].resetMs)

        const headers = rateLimitHeaders(refused, "per-key")
        expect(headers["ratelimit-policy"]).toBe('"per-key";q=5;w=10')
        expect(headers.ratelimit).toBe(`"per-key";r=0;t=${Math.ceil(refused.resetMs / 1000)}`)
        expect(headers["retry-after"]).toBe(String(refused.retryAfterSeconds))
      })
    ))

  it("admits exactly the limit when two processes hammer one key concurrently", () =>
    run(
      Effect.gen(function* () {
        const [first, second] = yield* variant.openTwo
        const limiters = [Context.get(first, RateLimits), Context.get(second, RateLimits)]
        const key = uniqueKey("exact")
        const results = yield* Effect.forEach(
          Array.from({ length: 100 }, (_, i) => limiters[i % 2]),
          (limiter) => limiter.consume(key, 37, 10_000),
          { concurrency: "unbounded" }
        )
        const allowed = results.filter((r) => r.allowed)
        expect(allowed).toHaveLength(37)
        // Each admitted hit saw a distinct count: remaining values 36..0, each once.
        expect(allowed.map((r) => r.remaining).sort((a, b) => a - b)).toEqual(Array.from({ length: 37 }, (_, i) => i))
        expect(results.filter((r) => !r.allowed).every((r) => r.remaining === 0 && r.retryAfterSeconds >= 1)).toBe(true)
      })
    ))

  if (variant.name === "redis") {
    it("admits exactly the limit when a real second Node process consumes the same key", async () => {
      const url = redisUrl as string
      const key = uniqueKey("child")
      const limit = 150
      const hitsEach = 200
      const child = spawn(process.execPath, ["--import", "tsx", "test/support/redis-rate-worker.ts"], {
        cwd: process.cwd(),
        env: {
          ...process.env,
          REDIS_URL: url,
          WORKER_KEY_PREFIX: runPrefix,
          WORKER_KEY: key,
          WORKER_LIMIT: String(limit),
          WORKER_WINDOW_MS: "30000",
          WORKER_HITS: String(hitsEach)
        },
        stdio: ["pipe", "pipe", "pipe"]
      })
      let stdout = ""
      let stderr = ""
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        stdout += chunk
      })
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
        stderr += chunk
      })
      const exited = new Promise<number | null>((resolve) => child.on("exit", resolve))
      try {
        await eventually(() => stdout.includes("ready\n") || child.exitCode !== null, 30_000)
        expect(stdout, stderr).toContain("ready")

        const parentAllowed = await run(
          Effect.gen(function* () {
            const services = yield* Layer.build(platformRedisLayer(url, { keyPrefix: runPrefix }))
            const rateLimits = Context.get(services, RateLimits)
            // Both processes start hammering together.
            child.stdin.write("go\n")
            const results = yield* Effect.forEach(
              Array.from({ length: hitsEach }, () => key),
              (k) => rateLimits.consume(k, limit, 30_000),
              { concurrency: "unbounded" }
            )
            return results.filter((r) => r.allowed).length
          })
        )
        expect(await exited, stderr).toBe(0)
        const childAllowed = JSON.parse(stdout.trim().split("\n").at(-1) as string).allowed as number
        expect(parentAllowed + childAllowed).toBe(limit)
      } finally {
        if (child.exitCode === null) child.kill()
      }
    })
  }

  it("starts a new window once the old one expires", () =>
    run(
      Effect.gen(function* () {
        const [services] = yield* variant.openTwo
        const rateLimits = Context.get(services, RateLimits)
        const key = uniqueKey("expiry")
        expect((yield* rateLimits.consume(key, 2, 300)).allowed).toBe(true)
        expect((yield* rateLimits.consume(key, 2, 300)).allowed).toBe(true)
        const refused = yield* rateLimits.consume(key, 2, 300)
        expect(refused.allowed).toBe(false)
        expect(refused.resetMs).toBeLessThanOrEqual(300)
        // Kept: the window's expiry is the behaviour under test (Redis keeps its time, no clock to move).
        yield* Effect.promise(() => sleep(refused.resetMs + 50))
        const fresh = yield* rateLimits.consume(key, 2, 300)
        expect(fresh.allowed).toBe(true)
        expect(fresh.remaining).toBe(1)
        expect(fresh.resetMs).toBeGreaterThan(200)
      })
    ))

  it("peeks at what the next hit would get without counting it, also from another process", () =>
    run(
      Effect.gen(function* () {
        const [first, second] = yield* variant.openTwo
        const counting = Context.get(first, RateLimits)
        const peeking = Context.get(second, RateLimits)
        const key = uniqueKey("peek")
        const untouched = yield* peeking.peek(key, 2, 10_000)
        expect(untouched).toMatchObject({ allowed: true, remaining: 1, retryAfterSeconds: 0 })
        // Peeking never counts: a window is still not started after many peeks.
        for (let i = 0; i < 5; i++) yield* peeking.peek(key, 2, 10_000)
        expect((yield* counting.consume(key, 2, 10_000)).remaining).toBe(1)
        expect((yield* peeking.peek(key, 2, 10_000)).allowed).toBe(true)
        yield* counting.consume(key, 2, 10_000)
        const full = yield* peeking.peek(key, 2, 10_000)
        expect(full.allowed).toBe(false)
        expect(full.retryAfterSeconds).toBeGreaterThanOrEqual(1)
        expect(full.resetMs).toBeLessThanOrEqual(10_000)
      })
    ))

  it("fans a message out from one process to a subscriber in another", () =>
    run(
      Effect.gen(function* () {
        const [publisherSide, subscriberSide] = yield* variant.openTwo
        const received: Array<[string, string]> = []
        const casesOnly: Array<string> = []
        const fanoutIn = Context.get(subscriberSide, Fanout)
        yield* fanoutIn.subscribe((topic, message) => received.push([topic, message]))
        yield* fanoutIn.subscribe((topic) => casesOnly.push(topic), { topicPrefix: "case:" })

        // A subscription that ends must stop receiving.
        const ended: Array<string> = []
        const innerScope = yield* Scope.make()
        yield* Scope.provide(innerScope)(fanoutIn.subscribe((topic) => ended.push(topic)))
        yield* Scope.close(innerScope, Exit.void)

        const fanoutOut = Context.get(publisherSide, Fanout)
        yield* fanoutOut.publish("org:42:notifications", '{"type":"approval"}')
        yield* fanoutOut.publish("case:7", "update")
        yield* Effect.promise(() => eventually(() => received.length === 2))

        expect(received).toEqual([
          ["org:42:notifications", '{"type":"approval"}'],
          ["case:7", "update"]
        ])
        expect(casesOnly).toEqual(["case:7"])
        expect(ended).toEqual([])
      })
    ))

  it("forgets cached values after their TTL", () =>
    run(
      Effect.gen(function* () {
        const [first, second] = yield* variant.openTwo
        const cache = Context.get(first, ShortCache)
        const otherCache = Context.get(second, ShortCache)
        const key = uniqueKey("did")
        expect(yield* cache.get(key)).toBeUndefined()
        yield* cache.set(key, '{"id":"did:web:example.com"}', 250)
        expect(yield* otherCache.get(key)).toBe('{"id":"did:web:example.com"}')
        expect(yield* otherCache.setIfAbsent(key, "other", 250)).toBe(false)
        // Kept: the TTL's expiry is the behaviour under test (Redis keeps its time, no clock to move).
        yield* Effect.promise(() => sleep(350))
        expect(yield* cache.get(key)).toBeUndefined()
        expect(yield* otherCache.setIfAbsent(key, "marker", 10_000)).toBe(true)
        expect(yield* cache.get(key)).toBe("marker")
        yield* cache.delete(key)
        expect(yield* otherCache.get(key)).toBeUndefined()
      })
    ))

  it("reports its backend and answers a ping", () =>
    run(
      Effect.gen(function* () {
        const [services] = yield* variant.openTwo
        const health = Context.get(services, RedisHealth)
        expect(health.kind).toBe(variant.name)
        expect(yield* health.ping).toBe(true)
      })
    ))
})

describe("rate-limit results and headers", () => {
  it("formats the IETF draft headers and the X-RateLimit trio", () => {
    const now = 1_700_000_000_000
    const allowed = rateLimitResult(3, 60, 60_000, 42_500)
    expect(rateLimitHeaders(allowed, "api-key", now)).toEqual({
      "ratelimit-policy": '"api-key";q=60;w=60',
      ratelimit: '"api-key";r=57;t=43',
      "x-ratelimit-limit": "60",
      "x-ratelimit-remaining": "57",
      "x-ratelimit-reset": String(Math.ceil((now + 42_500) / 1000))
    })
    const refused = rateLimitResult(61, 60, 60_000, 200)
    expect(refused.retryAfterSeconds).toBe(1)
    expect(rateLimitHeaders(refused, 'odd "name"', now)).toMatchObject({
      "ratelimit-policy": '"odd \\"name\\"";q=60;w=60',
      ratelimit: '"odd \\"name\\"";r=0;t=1',
      "retry-after": "1"
    })
  })

  it("admits exactly min(hits, limit) per window in memory, whatever the key mix", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom("a", "b", "c"), { maxLength: 200 }),
        fc.integer({ min: 0, max: 20 }),
        (keys, limit) => {
          const counters = new FixedWindowCounters()
          const seen = new Map<string, number>()
          for (const key of keys) {
            const result = counters.consume(key, limit, 60_000, 1_000)
            const hit = (seen.get(key) ?? 0) + 1
            seen.set(key, hit)
            if (result.allowed !== hit <= limit) return false
            if (result.remaining !== Math.max(0, limit - hit)) return false
            if (result.resetMs !== 60_000) return false
          }
          return true
        }
      )
    )
  })

  it("sweeps ended windows so memory stays bounded", () => {
    const counters = new FixedWindowCounters(100)
    for (let i = 0; i < 1_000; i++) counters.consume(`ip:${i}`, 10, 50, 0)
    expect(counters.size).toBe(1_000)
    counters.consume("ip:late", 10, 50, 200)
    expect(counters.size).toBe(1)
  })
})

describe("short cache in memory", () => {
  it("drops the oldest entries beyond its capacity and expired ones on sweep", () => {
    const map = new ExpiringMap(3, 100)
    for (const key of ["a", "b", "c", "d"]) map.set(key, key, 1_000, 0)
    expect(map.get("a", 1)).toBeUndefined()
    expect(map.get("d", 1)).toBe("d")
    expect(map.size).toBe(3)
    map.set("e", "e", 10, 500)
    expect(map.get("e", 509)).toBe("e")
    expect(map.get("e", 510)).toBeUndefined()
    map.sweep(2_000)
    expect(map.size).toBe(0)
  })
})

describe("redis connection", () => {
  it("fails fast when the configured Redis cannot be reached", async () => {
    const started = Date.now()
    const exit = await Effect.runPromiseExit(Effect.scoped(Layer.build(redisLayer("redis://127.0.0.1:1"))))
    expect(Exit.isFailure(exit)).toBe(true)
    expect(Date.now() - started).toBeLessThan(5_000)
  })

  it("falls back to memory only when asked, and never under CI", async () => {
    const kindOf = (options: { fallbackToMemory: boolean; ci: boolean }) =>
      Effect.runPromiseExit(
        Effect.scoped(Effect.map(Layer.build(platformRedisLayer("redis://127.0.0.1:1", options)), (services) => Context.get(services, RedisHealth).kind))
      )
    expect(await kindOf({ fallbackToMemory: true, ci: false })).toEqual(Exit.succeed("memory"))
    expect(Exit.isFailure(await kindOf({ fallbackToMemory: true, ci: true }))).toBe(true)
    const strict = await Effect.runPromiseExit(Effect.scoped(Layer.build(platformRedisLayer("redis://127.0.0.1:1"))))
    expect(Exit.isFailure(strict)).toBe(true)
  })
})
