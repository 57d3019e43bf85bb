/**
 * The endpoint whitelist: entries (members propose, admins approve), approval
 * requests filed by strict-mode misses, the per-org mode, and the
 * EndpointGuard port the actions flow calls on authorize.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Principal } from "../../protocol/auth.js"
import { isAdmin } from "../access/guards.js"
import { auditActor } from "../platform/audit.js"
import { Config } from "../platform/config.js"
import { InvalidInput } from "../platform/domain-error.js"
import { newId } from "../platform/ids.js"
import { Outbound, tlsFingerprintEffect } from "../platform/outbound/index.js"
import { ShortCache } from "../platform/redis/index.js"
import { type EndpointCheck, EndpointGuard } from "../policies/ports.js"
import { AlreadyResolved, ApprovalNotFound, EntryNotFound, refuse, type WhitelistError } from "./errors.js"
import { directOrgWhitelist, memoryWhitelistStore } from "./memory-store.js"
import { matchesPattern, parsePattern, suggestPattern } from "./patterns.js"
import { OrgWhitelist } from "./ports.js"
import { type ApprovalRow, type EntryRow, type WhitelistMode, WhitelistStore } from "./store.js"

const TLS_CACHE_TTL_MS = 5 * 60_000
const TLS_UNREACHABLE = "unreachable"

export interface NewEntry {
  readonly url_pattern: string
  readonly name: string
  readonly tls_fingerprint?: string | null | undefined
}

export interface WhitelistService {
  readonly list: (principal: Principal) => Effect.Effect<{ readonly entries: ReadonlyArray<EntryRow>; readonly data: ReadonlyArray<EntryRow> }>
  /** Members propose (pending); admins and owners add directly (approved). */
  readonly add: (principal: Principal, input: NewEntry) => Effect.Effect<EntryRow, WhitelistError>
  readonly setEntryStatus: (
    principal: Principal,
    id: string,
    status: "approved" | "rejected"
  ) => Effect.Effect<{ readonly id: string; readonly status: string }, WhitelistError>
  readonly remove: (principal: Principal, id: string) => Effect.Effect<{ readonly id: string; readonly deleted: boolean }, WhitelistError>
  readonly approvals: (principal: Principal) => Effect.Effect<{ readonly approvals: ReadonlyArray<ApprovalRow>; readonly data: ReadonlyArray<ApprovalRow> }>
  /** Resolves a pending request; approving with `addPattern` also adds its suggested pattern, in the same transaction. */
  readonly resolveApproval: (
    principal: Principal,
    id: string,
    status: "approved" | "rejected",
    addPattern: boolean
  ) => Effect.Effect<{ readonly id: string; readonly status: string; readonly entry: EntryRow | null }, WhitelistError>
  readonly mode: (principal: Principal) => Effect.Effect<{ readonly mode: WhitelistMode }>
  readonly setMode: (principal: Principal, mode: WhitelistMode) => Effect.Effect<{ readonly mode: WhitelistMode }>
}

export const makeWhitelist = Effect.gen(function* () {
  const store = yield* WhitelistStore
  // A granted request may be retried for as long as an approval stays open.
  const { approvalTtlMs } = yield* Config
  const orgs = yield* OrgWhitelist
  /** After a committed change: the org's actor reloads its entries and mode. */
  const changed = (orgUuid: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.tap(effect, () => orgs.changed(orgUuid))

  const addEntry = Effect.fnUntraced(function* (principal: Principal, input: NewEntry, status?: "approved") {
    if (parsePattern(input.url_pattern) === undefined) {
      return yield* refuse(InvalidInput.one("url_pattern", "must be an http(s) URL pattern like https://api.example.com/v1/*"))
    }
    return yield* store.insertEntry({
      id: newId("wl"),
      orgUuid: principal.orgUuid,
      urlPattern: input.url_pattern,
      name: input.name,
      // Members propose; admins and owners add directly.
      status: status ?? (isAdmin(principal) ? "approved" : "pending"),
      tlsFingerprint: input.tls_fingerprint?.toLowerCase() ?? null,
      createdBy: auditActor(principal)
    })
  })

  const list = Effect.fn("Whitelist.list")(function* (principal: Principal) {
    const entries = yield* store.entries(principal.orgUuid)
    return { entries, data: entries }
  })

  const add = Effect.fn("Whitelist.add")(function* (principal: Principal, input: NewEntry) {
    return yield* addEntry(principal, input).pipe(changed(principal.orgUuid))
  })

  const setEntryStatus = Effect.fn("Whitelist.setEntryStatus")(function* (principal: Principal, id: string, status: "approved" | "rejected") {
    const row = yield* store.setEntryStatus(principal.orgUuid, id, status)
    if (row === undefined) return yield* refuse(EntryNotFound.of(id))
    yield* orgs.changed(principal.orgUuid)
    return { id: row.id, status: row.status }
  })

  const remove = Effect.fn("Whitelist.remove")(function* (principal: Principal, id: string) {
    if (!(yield* store.deleteEntry(principal.orgUuid, id))) return yield* refuse(EntryNotFound.of(id))
    yield* orgs.changed(principal.orgUuid)
    return { id, deleted: true }
  })

  const approvals = Effect.fn("Whitelist.approvals")(function* (principal: Principal) {
    const rows = yield* store.approvals(principal.orgUuid)
    return { approvals: rows, data: rows }
  })

  const resolveApproval = Effect.fn("Whitelist.resolveApproval")(function* (
    principal: Principal,
    id: string,
    status: "approved" | "rejected",
    addPattern: boolean
  ) {
    const current = yield* store.findApproval(principal.orgUuid, id)
    if (current === undefined) return yield* refuse(ApprovalNotFound.of(id))
    if (current.status !== "pending") return yield* refuse(AlreadyResolved.of(id, current.status))
    const withPattern = status === "approved" && addPattern
    // Checked first so a request whose URL yields no valid pattern is not left approved without its entry.
    if (withPattern && parsePattern(current.url_pattern_suggested) === undefined) {
      return yield* refuse(InvalidInput.one("add_pattern", `the suggested pattern ${current.url_pattern_suggested} is not a valid URL pattern`))
    }
    // Resolution and the added entry commit together; only a still-pending request is resolved, so of two
    // concurrent resolutions exactly one wins and the other answers ALREADY_RESOLVED.
    const resolve = Effect.gen(function* () {
      const resolved = yield* store.resolveApproval(principal.orgUuid, id, status, auditActor(principal), approvalTtlMs)
      if (resolved === undefined) return yield* refuse(AlreadyResolved.of(id, "resolved"))
      const entry: EntryRow | null = withPattern
        ? yield* addEntry(principal, { url_pattern: current.url_pattern_suggested, name: `Approved from request ${id}` }, "approved")
        : null
      return { id, status: resolved.status, entry }
    })
    return yield* store.transaction(resolve).pipe(changed(principal.orgUuid))
  })

  const mode = Effect.fn("Whitelist.mode")(function* (principal: Principal) {
    return { mode: yield* store.mode(principal.orgUuid) }
  })

  const setMode = Effect.fn("Whitelist.setMode")(function* (principal: Principal, mode: WhitelistMode) {
    yield* store.setMode(principal.orgUuid, mode)
    yield* orgs.changed(principal.orgUuid)
    return { mode }
  })

  return Whitelist.of({ list, add, setEntryStatus, remove, approvals, resolveApproval, mode, setMode })
})

export class Whitelist extends Context.Service<Whitelist, WhitelistService>()("gateway/Whitelist") {
  static readonly layer = Layer.effect(Whitelist, makeWhitelist)
}

/** The certificate fingerprint of the URL's host, cached 5 minutes ("unreachable" when the handshake failed). */
const makeFingerprints = Effect.gen(function* () {
  const cache = yield* ShortCache
  const { policy } = yield* Outbound
  return (url: URL) =>
    Effect.gen(function* () {
      const key = `tlsfp:${url.host}`
      const cached = yield* cache.get(key)
      if (cached !== undefined) return cached === TLS_UNREACHABLE ? null : cached
      const actual = yield* tlsFingerprintEffect(url, { policy }).pipe(Effect.catch(() => Effect.succeed(null)))
      yield* cache.set(key, actual ?? TLS_UNREACHABLE, TLS_CACHE_TTL_MS)
      return actual
    })
})

export const EndpointGuardLive = Layer.effect(
  EndpointGuard,
  Effect.gen(function* () {
    const store = yield* WhitelistStore
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
        })
    }
  })
)

export const whitelistLayer = Layer.mergeAll(Whitelist.layer, EndpointGuardLive).pipe(Layer.provide(WhitelistStore.layer))

/**
 * The whitelist and its EndpointGuard on tables in memory, the organization's whitelist read
 * straight from them and the TLS fingerprint cache in memory: the service's rules without a
 * database, an actor or Redis. Needs only the configuration.
 */
export const whitelistLayerTest = Layer.mergeAll(Whitelist.layer, EndpointGuardLive).pipe(
  Layer.provide(directOrgWhitelist),
  Layer.provideMerge(memoryWhitelistStore),
  Layer.provide(ShortCache.layerMemory())
)
