/**
 * The endpoint whitelist: entries (members propose, admins approve), approval
 * requests filed by strict-mode misses, the per-org mode, and the
 * EndpointGuard port the actions flow calls on authorize.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { Principal } from "../../protocol/auth.js"
import { isAdmin } from "../access/guards.js"
import { auditActor } from "../platform/audit.js"
import { Config } from "../platform/config.js"
import { InvalidInput } from "../platform/domain-error.js"
import { newId } from "../platform/ids.js"
import { type OutboundPolicy, outboundPolicyOfConfig, tlsFingerprintEffect } from "../platform/outbound/index.js"
import { ShortCache } from "../platform/redis/index.js"
import { type EndpointCheck, EndpointGuard } from "../policies/ports.js"
import { AlreadyResolved, ApprovalNotFound, EntryNotFound, refuse } from "./errors.js"
import { matchesPattern, parsePattern, suggestPattern } from "./patterns.js"
import { OrgWhitelist } from "./ports.js"
import { type EntryRow, makeWhitelistStore, type WhitelistMode } from "./store.js"

const TLS_CACHE_TTL_MS = 5 * 60_000
const TLS_UNREACHABLE = "unreachable"


export const makeWhitelist = Effect.gen(function* () {
  const store = yield* makeWhitelistStore
  // A granted request may be retried for as long as an approval stays open.
  const { approvalTtlMs } = yield* Config
  const orgs = yield* OrgWhitelist
  /** After a committed change: the org's actor reloads its entries and mode. */
  const changed = (orgUuid: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.tap(effect, () => orgs.changed(orgUuid))

  const addEntry = (principal: Principal, input: { url_pattern: string; name: string; tls_fingerprint?: string | null | undefined }, status?: string) =>
    Effect.gen(function* () {
      if (parsePattern(input.url_pattern) === undefined) {
        return yield* refuse(InvalidInput.one("url_pattern", "must be an http(s) URL pattern like https://api.example.com/v1/*"))
      }
      return yield* Effect.orDie(
        store.insertEntry({
          id: newId("wl"),
          orgUuid: principal.orgUuid,
          urlPattern: input.url_pattern,
          name: input.name,
          // Members propose; admins and owners add directly.
          status: status ?? (isAdmin(principal) ? "approved" : "pending"),
          tlsFingerprint: input.tls_fingerprint?.toLowerCase() ?? null,
          createdBy: auditActor(principal)
        })
      )
    })

  return {
    list: (principal: Principal) =>
      Effect.map(Effect.orDie(store.entries(principal.orgUuid)), (entries) => ({ entries, data: entries })),
    add: (principal: Principal, input: { url_pattern: string; name: string; tls_fingerprint?: string | null | undefined }) =>
      addEntry(principal, input).pipe(changed(principal.orgUuid)),
    setEntryStatus: (principal: Principal, id: string, status: "approved" | "rejected") =>
      Effect.flatMap(Effect.orDie(store.setEntryStatus(principal.orgUuid, id, status)), (row) =>
        row ? Effect.succeed({ id: row.id, status: row.status }) : refuse(new EntryNotFound({ id }))
      ).pipe(changed(principal.orgUuid)),
    remove: (principal: Principal, id: string) =>
      Effect.flatMap(Effect.orDie(store.deleteEntry(principal.orgUuid, id)), (deleted) =>
        deleted ? Effect.succeed({ id, deleted: true }) : refuse(new EntryNotFound({ id }))
      ).pipe(changed(principal.orgUuid)),
    approvals: (principal: Principal) =>
      Effect.map(Effect.orDie(store.approvals(principal.orgUuid)), (approvals) => ({ approvals, data: approvals })),
    resolveApproval: (principal: Principal, id: string, status: "approved" | "rejected", addPattern: boolean) =>
      Effect.gen(function* () {
        const current = yield* Effect.orDie(store.findApproval(principal.orgUuid, id))
        if (current === undefined) return yield* refuse(new ApprovalNotFound({ id }))
        if (current.status !== "pending") return yield* refuse(new AlreadyResolved({ id, status: current.status }))
        const withPattern = status === "approved" && addPattern
        // Checked first so a request whose URL yields no valid pattern is not left approved without its entry.
        if (withPattern && parsePattern(current.url_pattern_suggested) === undefined) {
          return yield* refuse(InvalidInput.one("add_pattern", `the suggested pattern ${current.url_pattern_suggested} is not a valid URL pattern`))
        }
        // Resolution and the added entry commit together; only a still-pending request is resolved, so of two
        // concurrent resolutions exactly one wins and the other answers ALREADY_RESOLVED.
        const resolve = Effect.gen(function* () {
          const resolved = yield* Effect.orDie(store.resolveApproval(principal.orgUuid, id, status, auditActor(principal), approvalTtlMs))
          if (resolved === undefined) return yield* refuse(new AlreadyResolved({ id, status: "resolved" }))
          const entry: EntryRow | null = withPattern
            ? yield* addEntry(principal, { url_pattern: current.url_pattern_suggested, name: `Approved from request ${id}` }, "approved")
            : null
          return { id, status: resolved.status, entry }
        })
        return yield* store.sql.withTransaction(resolve).pipe(
          Effect.catchTag("SqlError", (error) => Effect.die(error)),
          changed(principal.orgUuid)
        )
      }),
    mode: (principal: Principal) => Effect.map(Effect.orDie(store.mode(principal.orgUuid)), (mode) => ({ mode })),
    setMode: (principal: Principal, mode: WhitelistMode) =>
      Effect.as(Effect.orDie(store.setMode(principal.orgUuid, mode)), { mode }).pipe(changed(principal.orgUuid))
  }
})

export class Whitelist extends Context.Service<Whitelist, Effect.Success<typeof makeWhitelist>>()("gateway/Whitelist") {
  static readonly layer = Layer.effect(Whitelist, makeWhitelist)
}

/**
 * The outbound policy of the server's configuration (OUTBOUND_ALLOW_PRIVATE / OUTBOUND_ALLOW_HTTP as loaded into
 * Config, which need not be process.env); without a Config service, the process environment's default.
 */
const configuredOutboundPolicy = Effect.map(Effect.serviceOption(Config), (config): OutboundPolicy | undefined =>
  Option.isSome(config)
    ? outboundPolicyOfConfig(config.value)
    : undefined
)

/** The certificate fingerprint of the URL's host, cached 5 minutes ("unreachable" when the handshake failed). */
const makeFingerprints = Effect.gen(function* () {
  const cache = yield* ShortCache
  const policy = yield* configuredOutboundPolicy
  return (url: URL) =>
    Effect.gen(function* () {
      const key = `tlsfp:${url.host}`
      const cached = yield* cache.get(key)
      if (cached !== undefined) return cached === TLS_UNREACHABLE ? null : cached
      const actual = yield* tlsFingerprintEffect(url, policy === undefined ? {} : { policy }).pipe(Effect.catch(() => Effect.succeed(null)))
      yield* cache.set(key, actual ?? TLS_UNREACHABLE, TLS_CACHE_TTL_MS)
      return actual
    })
})

export const EndpointGuardLive = Layer.effect(
  EndpointGuard,
  Effect.gen(function* () {
    const store = yield* makeWhitelistStore
    const orgs = yield* OrgWhitelist
    const fingerprintOf = yield* makeFingerprints
    return {
      check: (orgUuid, input) =>
        Effect.gen(function* () {
          let url: URL
          try {
            url = new URL(input.url)
          } catch {
            url = new URL("invalid://invalid")
          }
          const whitelist = yield* orgs.get(orgUuid)
          const match = whitelist.entries.find((entry) => entry.pattern !== undefined && matchesPattern(entry.pattern, url))
          if (match !== undefined) {
            if (match.tls_fingerprint === null) return { outcome: "allowed" } satisfies EndpointCheck
            const actual = yield* fingerprintOf(url)
            if (actual === match.tls_fingerprint) return { outcome: "allowed" } satisfies EndpointCheck
            return {
              outcome: "tls_mismatch",
              message:
                actual === null
                  ? `Could not read the TLS certificate of ${url.host} to check its pinned fingerprint`
                  : `The TLS certificate of ${url.host} does not match the pinned fingerprint`,
              expected: match.tls_fingerprint,
              actual
            } satisfies EndpointCheck
          }
          if (whitelist.mode === "permissive") {
            return { outcome: "warn", warning: `Endpoint ${input.url} is not on the whitelist` } satisfies EndpointCheck
          }
          // An approved request lets the same agent, action type and URL through once (CONTRACT.md).
          const granted = yield* store.spendGrant({ orgUuid, url: input.url, agentId: input.agentId, actionType: input.actionType })
          if (granted !== undefined) {
            return { outcome: "warn", warning: `Endpoint ${input.url} is not on the whitelist: allowed once by endpoint approval ${granted}` } satisfies EndpointCheck
          }
          const approvalId = newId("epa")
          const suggested = url.protocol === "invalid:" ? input.url : suggestPattern(url)
          yield* store.insertApproval({ id: approvalId, orgUuid, url: input.url, agentId: input.agentId, actionType: input.actionType, suggested })
          return { outcome: "blocked", approval_id: approvalId, url_pattern_suggested: suggested } satisfies EndpointCheck
        }).pipe(Effect.orDie)
    }
  })
)

export const whitelistLayer = Layer.mergeAll(Whitelist.layer, EndpointGuardLive)
