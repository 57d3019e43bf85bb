/**
 * Authentication and rate limiting for every request.
 *
 * Keys and users are cached in process so that the hot path does no database
 * read; revocations, role changes and departures invalidate the cache on every
 * gateway process through the fan-out channel, and entries also expire after a
 * short time. Digests that matched no key are remembered for a minute (a
 * bounded map), so a bogus key sent again costs no lookup either; and failed
 * credentials count against their client's budget (failures.ts). `last_used_at` is collected in memory and written in one
 * statement every few seconds instead of once per request. Long-lived
 * connections (WebSockets) watch the invalidations to re-check their
 * credential.
 */
import { hash, randomBytes } from "node:crypto"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import type { Principal } from "../../protocol/auth.js"
import { Config } from "../platform/config.js"
import { logLine } from "../platform/log.js"
import { record } from "../platform/metrics.js"
import { ExpiringMap, Fanout, type RateLimitResult, RateLimits } from "../platform/redis/index.js"
import { Secrets } from "../platform/secrets.js"
import { digestsEqual, keyDigest, looksLikeApiKey, verifyJwt } from "./credentials.js"
import { AccessError, type CredentialsThrottled, InvalidCredential } from "./errors.js"
import { makeFailureBudget } from "./failures.js"
import { authFailures, authThrottled, keyLookups } from "./metrics.js"
import { makeCredentialsStore } from "./store.js"

const CACHE_TTL_MS = 30_000
const INVALIDATION_TOPIC = "access-invalidate"
const WINDOW_MS = 60_000
/** Digests that matched no key: remembered this long, at most this many (the oldest go first). */
const UNKNOWN_TTL_MS = 60_000
const UNKNOWN_MAX = 10_000

interface Cached<A> {
  readonly value: A | undefined
  readonly until: number
}

/** What an invalidation names; every field is optional and each one drops what it matches. */
export interface Invalidation {
  /** Digest of a revoked or newly created key (the caches are keyed by digest). */
  readonly keyDigest?: string
  /** Id of the same key (open connections are indexed by id). */
  readonly keyId?: string
  readonly userUuid?: string
  readonly orgUuid?: string
}

/** A checked credential and when it stops being valid (epoch ms; null = no expiry). */
export interface Session {
  readonly principal: Principal
  readonly expiresAt: number | null
}

export interface AccessService {
  /** The principal a bearer token stands for; fails with InvalidCredential otherwise. */
  readonly authenticate: (token: string) => Effect.Effect<Principal, AccessError>
  /** Like `authenticate`, with the credential's expiry, for connections that outlive a request. */
  readonly authenticateSession: (token: string) => Effect.Effect<Session, AccessError>
  /**
   * `authenticateSession` for a credential a client (its address) presents: a refused credential
   * counts against the address and the key's prefix, and past their budget the answer is
   * CredentialsThrottled. A key this node has verified passes unchecked by the budget, and a JWT
   * proves itself by its signature; any other key from a throttled client is refused before it is
   * looked up. An empty token (no credential) is refused without counting. `client` may be a
   * function: the address is then read only when the budget is consulted (reading it is a system call).
   */
  readonly authenticateClient: (token: string, client: string | (() => string)) => Effect.Effect<Session, AccessError>
  readonly rateLimitPrincipal: (principal: Principal) => Effect.Effect<RateLimitResult>
  readonly rateLimitClient: (ip: string) => Effect.Effect<RateLimitResult>
  /**
   * The synchronous paths of the hot requests, present only when the rate limits are counted in
   * this process (no Redis). `cachedSession` answers only for an API key this node holds valid in
   * its cache (anything else: undefined, and the caller takes `authenticateClient`).
   */
  readonly now:
    | {
        readonly cachedSession: (token: string) => Session | undefined
        readonly rateLimitPrincipal: (principal: Principal) => RateLimitResult
        readonly rateLimitClient: (ip: string) => RateLimitResult
      }
    | undefined
  /** When this process last saw the key used, if that is not yet written to the database. */
  readonly pendingUse: (keyId: string) => string | undefined
  /** Drop cached credentials everywhere (after revocation, role change, departure, deletion). */
  readonly invalidate: (what: Invalidation) => Effect.Effect<void>
  /**
   * Calls `listener` on every invalidation this process applies (its own and other nodes'), after the
   * cache entries are dropped, so an `authenticate` made from the listener reads the database.
   */
  readonly watchInvalidations: (listener: (what: Invalidation) => void) => Effect.Effect<void, never, Scope.Scope>
}

export class Access extends Context.Service<Access, AccessService>()("gateway/Access") {
  static readonly layer = Layer.effect(Access)(
    Effect.gen(function* () {
      const config = yield* Config
      const secrets = yield* Secrets
      const store = yield* makeCredentialsStore
      const limits = yield* RateLimits
      const fanout = yield* Fanout

      const failures = makeFailureBudget(limits, config.authFailuresPerMinute)
      // Only keys that were valid when read, by `cacheKeyOf` (not the stored digest); a digest that matched none goes to `unknown`.
      const keys = new Map<string, Cached<Principal & { digest: string; expiresAt: number | null }>>()
      // The cache's own keyed digest: one SHA-256 over a secret drawn at start and the key (one native
      // call, ~1 µs), where the stored HMAC takes two and buffer copies. The HMAC is computed only
      // when the cache has no entry. Neither the key nor anything derived without a secret is kept.
      const cacheSalt = randomBytes(32).toString("base64")
      const cacheKeyOf = (token: string) => hash("sha256", cacheSalt + token, "base64")
      const unknown = new ExpiringMap(UNKNOWN_MAX)
      const users = new Map<string, Cached<Principal>>()
      // Key id → when this process last saw it used (epoch ms), until written to the database.
      const usage = new Map<string, number>()

      const watchers = new Set<(what: Invalidation) => void>()
      // Bumped by every invalidation: a lookup that began before one does not cache what it read.
      let generation = 0

      const dropLocal = (what: Invalidation) => {
        generation++
        if (what.keyDigest) {
          for (const [cacheKey, entry] of keys) if (entry.value?.digest === what.keyDigest) keys.delete(cacheKey)
          unknown.delete(what.keyDigest)
        }
        if (what.userUuid) {
          users.delete(what.userUuid)
          for (const [digest, entry] of keys) if (entry.value?.userUuid === what.userUuid) keys.delete(digest)
        }
        if (what.orgUuid) {
          for (const [digest, entry] of keys) if (entry.value?.orgUuid === what.orgUuid) keys.delete(digest)
          for (const [user, entry] of users) if (entry.value?.orgUuid === what.orgUuid) users.delete(user)
        }
        for (const watcher of watchers) {
          try {
            watcher(what)
          } catch (cause) {
            logLine("warn", "invalidation watcher failed", { cause: String(cause) })
          }
        }
      }

      yield* fanout.subscribe(
        (_topic, message) => {
          try {
            dropLocal(JSON.parse(message))
          } catch {
            // A malformed invalidation is ignored; the TTL still bounds staleness.
          }
        },
        { topicPrefix: INVALIDATION_TOPIC }
      )

      yield* Effect.forkScoped(
        Effect.suspend(() => {
          if (usage.size === 0) return Effect.void
          const batch = [...usage.entries()]
          // Entries stay readable (pendingUse) until written; a failed write is retried with the next batch.
          return Effect.tap(
            store.touchKeys(batch.map(([keyId, at]) => [keyId, new Date(at).toISOString()] as const)),
            Effect.sync(() => {
              for (const [keyId, at] of batch) if (usage.get(keyId) === at) usage.delete(keyId)
            })
          )
        }).pipe(
          Effect.catchCause((cause) => Effect.sync(() => logLine("warn", "could not record key usage", { cause: String(cause) }))),
          Effect.repeat(Schedule.spaced(5_000))
        )
      )

      const fail = new AccessError({ reason: new InvalidCredential({}) })

      type KeyEntry = Cached<Principal & { digest: string; expiresAt: number | null }>

      /** The session a key entry stands for while its key is valid (its use recorded), else undefined. */
      const validSession = (entry: KeyEntry, now: number): Session | undefined => {
        const principal = entry.value
        if (principal === undefined || (principal.expiresAt !== null && principal.expiresAt <= now)) return undefined
        usage.set(principal.keyId!, now)
        return { principal, expiresAt: principal.expiresAt }
      }

      /** `validSession` as an Exit, so a cache hit costs no fiber step. */
      const keyEntrySession = (entry: KeyEntry, now: number): Effect.Effect<Session, AccessError> => {
        const session = validSession(entry, now)
        return session === undefined ? Effect.fail(fail) : Effect.succeed(session)
      }

      const readKey = (cacheKey: string, digest: string, now: number) =>
        Effect.gen(function* () {
          const seen = generation
          record(keyLookups, 1)
          const row = yield* store.keyByDigest(digest)
          const value =
            row && row.revoked_at === null && row.user_active && digestsEqual(row.key_hash, digest)
              ? {
                  kind: "api_key" as const,
                  orgUuid: row.org_uuid,
                  userUuid: row.user_uuid!,
                  email: row.email,
                  role: row.role,
                  scopes: row.scopes,
                  keyId: row.id,
                  digest,
                  expiresAt: row.expires_at ? Date.parse(row.expires_at) : null
                }
              : undefined
          const entry: KeyEntry = { value, until: now + CACHE_TTL_MS }
          if (generation === seen) {
            if (value === undefined) {
              keys.delete(cacheKey)
              unknown.set(digest, "", UNKNOWN_TTL_MS)
            } else keys.set(cacheKey, entry)
          }
          return yield* keyEntrySession(entry, now)
        })

      /**
       * One SHA-256 and one map look-up when the key is cached and valid (the HMAC as well when it is
       * unknown); the database only on
       * a miss or after the TTL. `beforeLookup` runs before a digest this node has never seen valid
       * is looked up (a key it verified before is only being re-read).
       */
      const keySession = (token: string, beforeLookup?: () => Effect.Effect<void, AccessError>): Effect.Effect<Session, AccessError> => {
        const cacheKey = cacheKeyOf(token)
        const now = Date.now()
        const entry = keys.get(cacheKey)
        if (entry !== undefined && entry.until >= now) return keyEntrySession(entry, now)
        const digest = keyDigest(secrets, token)
        if (entry !== undefined) return readKey(cacheKey, digest, now)
        if (unknown.get(digest, now) !== undefined) return Effect.fail(fail)
        return beforeLookup === undefined ? readKey(cacheKey, digest, now) : Effect.andThen(beforeLookup(), readKey(cacheKey, digest, now))
      }

      const jwtSession = (token: string) =>
        Effect.gen(function* () {
          const claims = yield* Effect.promise(() => verifyJwt(secrets, token, [config.baseUrl]))
          if (claims === undefined) return yield* Effect.fail(fail)
          const now = yield* Clock.currentTimeMillis
          let entry = users.get(claims.userUuid)
          if (entry === undefined || entry.until < now) {
            const seen = generation
            const row = yield* store.userInOrg(claims.orgUuid, claims.userUuid)
            const value = row
              ? { kind: "jwt" as const, orgUuid: row.org_uuid, userUuid: row.user_uuid, email: row.email, role: row.role, scopes: ["*"], keyId: undefined }
              : undefined
            entry = { value, until: now + CACHE_TTL_MS }
            if (generation === seen) users.set(claims.userUuid, entry)
          }
          if (entry.value === undefined || entry.value.orgUuid !== claims.orgUuid) return yield* Effect.fail(fail)
          return { principal: entry.value, expiresAt: claims.expiresAt }
        })

      const authenticateSession = (token: string): Effect.Effect<Session, AccessError> => {
        if (token === "") return Effect.fail(fail)
        return looksLikeApiKey(token) ? keySession(token) : jwtSession(token)
      }

      const throttled = (refusal: CredentialsThrottled) => {
        record(authThrottled, 1)
        return Effect.fail(new AccessError({ reason: refusal }))
      }

      const authenticateClient = (token: string, clientOf: string | (() => string)): Effect.Effect<Session, AccessError> => {
        if (token === "") return Effect.fail(fail)
        const client = () => (typeof clientOf === "string" ? clientOf : clientOf())
        // Built only when a key this node has never seen valid is about to be looked up.
        const refuseIfThrottled = () => Effect.flatMap(failures.throttled(token, client()), (refusal) => (refusal === undefined ? Effect.void : throttled(refusal)))
        const session = looksLikeApiKey(token) ? keySession(token, refuseIfThrottled) : jwtSession(token)
        // Only a refused credential counts; a throttled one was never checked.
        return Effect.catch(session, (error) => {
          if (error.reason._tag !== "InvalidCredential") return Effect.fail(error)
          record(authFailures, 1)
          return Effect.flatMap(failures.failed(token, client()), (refusal) => (refusal === undefined ? Effect.fail(error) : throttled(refusal)))
        })
      }

      const principalLimitKey = (principal: Principal) => (principal.keyId ? `key:${principal.keyId}` : `user:${principal.userUuid}`)
      const consumeNow = limits.consumeNow

      const cachedSession = (token: string): Session | undefined => {
        if (!looksLikeApiKey(token)) return undefined
        const entry = keys.get(cacheKeyOf(token))
        const now = Date.now()
        return entry === undefined || entry.until < now ? undefined : validSession(entry, now)
      }

      return Access.of({
        now:
          consumeNow === undefined
            ? undefined
            : {
                cachedSession,
                rateLimitPrincipal: (principal) => consumeNow(principalLimitKey(principal), config.rateLimitPerMinute, WINDOW_MS),
                rateLimitClient: (ip) => consumeNow(`ip:${ip}`, config.publicRateLimitPerMinute, WINDOW_MS)
              },
        authenticate: (token) => Effect.map(authenticateSession(token), (session) => session.principal),
        authenticateSession,
        authenticateClient,
        rateLimitPrincipal: (principal) => limits.consume(principalLimitKey(principal), config.rateLimitPerMinute, WINDOW_MS),
        rateLimitClient: (ip) => limits.consume(`ip:${ip}`, config.publicRateLimitPerMinute, WINDOW_MS),
        pendingUse: (keyId) => {
          const at = usage.get(keyId)
          return at === undefined ? undefined : new Date(at).toISOString()
        },
        invalidate: (what) =>
          Effect.sync(() => dropLocal(what)).pipe(Effect.andThen(fanout.publish(INVALIDATION_TOPIC, JSON.stringify(what)))),
        watchInvalidations: (listener) =>
          Effect.acquireRelease(
            Effect.sync(() => watchers.add(listener)),
            () => Effect.sync(() => watchers.delete(listener))
          ).pipe(Effect.asVoid)
      })
    })
  )
}
