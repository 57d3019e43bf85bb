/**
 * Short-lived string cache with a TTL per entry: DID documents (5 min), TLS
 * fingerprints (5 min), and `setIfAbsent` as a "done recently" marker that lets
 * `last_used_at` be written at most once per TTL instead of on every request.
 * Values are strings; callers encode JSON themselves.
 */
import { Context, Effect, Layer } from "effect"
import { RedisClient } from "./connection.js"
import { ExpiringEntries } from "./expiring.js"

export interface ShortCacheRedisOptions {
  /** Prepended to every key (default `"cache:"`). */
  readonly prefix?: string
}

export interface ShortCacheMemoryOptions {
  /** Most entries kept; the oldest are dropped first (default 100,000). */
  readonly maxEntries?: number
  readonly sweepEveryMs?: number
}

export class ShortCache extends Context.Service<
  ShortCache,
  {
    readonly get: (key: string) => Effect.Effect<string | undefined>
    readonly set: (key: string, value: string, ttlMs: number) => Effect.Effect<void>
    /** Stores only when the key is absent; true when this call stored it. */
    readonly setIfAbsent: (key: string, value: string, ttlMs: number) => Effect.Effect<boolean>
    readonly delete: (key: string) => Effect.Effect<void>
  }
>()("platform/redis/ShortCache") {
  /** Entries in Redis with PX expiry, shared by every process. Needs `RedisClient`. */
  static readonly layerRedis = (options: ShortCacheRedisOptions = {}): Layer.Layer<ShortCache, never, RedisClient> =>
    Layer.effect(
      ShortCache,
      Effect.gen(function* () {
        const { client } = yield* RedisClient
        const prefix = options.prefix ?? "cache:"
        return ShortCache.of({
          get: (key) =>
            Effect.promise(() => client.get(prefix + key)).pipe(Effect.map((value) => value ?? undefined)),
          set: (key, value, ttlMs) =>
            Effect.asVoid(
              Effect.promise(() => client.set(prefix + key, value, { expiration: { type: "PX", value: ttl(ttlMs) } }))
            ),
          setIfAbsent: (key, value, ttlMs) =>
            Effect.promise(() =>
              client.set(prefix + key, value, { expiration: { type: "PX", value: ttl(ttlMs) }, condition: "NX" })
            ).pipe(Effect.map((reply) => reply === "OK")),
          delete: (key) => Effect.asVoid(Effect.promise(() => client.del(prefix + key)))
        })
      })
    )

  /** Entries in this process only. */
  static readonly layerMemory = (options: ShortCacheMemoryOptions = {}): Layer.Layer<ShortCache> =>
    Layer.sync(ShortCache, () => {
      const store = new ExpiringMap(options.maxEntries, options.sweepEveryMs)
      return ShortCache.of({
        get: (key) => Effect.sync(() => store.get(key)),
        set: (key, value, ttlMs) => Effect.sync(() => store.set(key, value, ttl(ttlMs))),
        setIfAbsent: (key, value, ttlMs) => Effect.sync(() => store.setIfAbsent(key, value, ttl(ttlMs))),
        delete: (key) => Effect.sync(() => store.delete(key))
      })
    })
}

const ttl = (ttlMs: number): number => Math.max(1, Math.ceil(ttlMs))

/**
 * A Map whose entries expire. Expired entries are dropped when read and by a
 * sweep at most once per `sweepEveryMs`; past `maxEntries` the oldest written
 * entries go first, so memory stays bounded.
 */
export class ExpiringMap extends ExpiringEntries<{ readonly value: string; readonly expiresAt: number }> {
  constructor(
    private readonly maxEntries = 100_000,
    sweepEveryMs = 1_000
  ) {
    super(sweepEveryMs)
  }

  get(key: string, now: number = Date.now()): string | undefined {
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    if (entry.expiresAt <= now) {
      this.entries.delete(key)
      return undefined
    }
    return entry.value
  }

  set(key: string, value: string, ttlMs: number, now: number = Date.now()): void {
    this.sweepIfDue(now)
    // Re-inserting moves the key to the end, so eviction order is write order.
    this.entries.delete(key)
    this.entries.set(key, { value, expiresAt: now + ttlMs })
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value as string
      this.entries.delete(oldest)
    }
  }

  setIfAbsent(key: string, value: string, ttlMs: number, now: number = Date.now()): boolean {
    if (this.get(key, now) !== undefined) return false
    this.set(key, value, ttlMs, now)
    return true
  }

  delete(key: string): void {
    this.entries.delete(key)
  }
}
