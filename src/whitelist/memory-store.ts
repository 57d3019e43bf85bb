/**
 * The whitelist's tables in memory, for tests of the service's rules without a database
 * (`whitelistLayerTest`). It answers as the SQL store does, order and grants included; the
 * service suite runs over both (test/whitelist.test.ts).
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { memoryTables, nowIso } from "../platform/db/memory.js"
import { parsePattern } from "./patterns.js"
import type { WhitelistSnapshot } from "./ports.js"
import { OrgWhitelist } from "./ports.js"
import { type ApprovalRow, type EntryRow, type WhitelistMode, WhitelistStore } from "./store.js"

interface Owned<Row> {
  readonly orgUuid: string
  readonly row: Row
}

const byCreation = (a: EntryRow, b: EntryRow) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id)
const newestRequestFirst = (a: ApprovalRow, b: ApprovalRow) => b.requested_at.localeCompare(a.requested_at) || a.id.localeCompare(b.id)

export const makeMemoryWhitelistStore = Effect.sync(() => {
  const tables = memoryTables({
    entries: [] as Owned<EntryRow>[],
    approvals: [] as Owned<ApprovalRow>[],
    modes: new Map<string, WhitelistMode>()
  })
  const entriesOf = (orgUuid: string, approvedOnly: boolean) =>
    Effect.sync(() =>
      tables.state.entries
        .filter((owned) => owned.orgUuid === orgUuid && (!approvedOnly || owned.row.status === "approved"))
        .map((owned) => owned.row)
        .sort(byCreation)
    )
  /** Replaces the organization's row `id` with what `change` makes of it; the new row, or undefined when there was none to change. */
  const updateApproval = (orgUuid: string, id: string, change: (row: ApprovalRow) => ApprovalRow | undefined) => {
    const index = tables.state.approvals.findIndex((owned) => owned.orgUuid === orgUuid && owned.row.id === id)
    const changed = index === -1 ? undefined : change(tables.state.approvals[index]!.row)
    if (changed !== undefined) tables.state.approvals[index] = { orgUuid, row: changed }
    return changed
  }

  return WhitelistStore.of({
    entries: (orgUuid) => entriesOf(orgUuid, false),
    approvedEntries: (orgUuid) => entriesOf(orgUuid, true),
    insertEntry: (entry) =>
      Effect.map(nowIso, (now) => {
        const row: EntryRow = {
          id: entry.id,
          url_pattern: entry.urlPattern,
          name: entry.name,
          status: entry.status,
          tls_fingerprint: entry.tlsFingerprint,
          created_by: entry.createdBy,
          created_at: now
        }
        tables.state.entries.push({ orgUuid: entry.orgUuid, row })
        return row
      }),
    setEntryStatus: (orgUuid, id, status) =>
      Effect.sync(() => {
        const owned = tables.state.entries.find((candidate) => candidate.orgUuid === orgUuid && candidate.row.id === id)
        if (owned === undefined) return undefined
        const row = { ...owned.row, status }
        tables.state.entries = tables.state.entries.map((candidate) => (candidate === owned ? { orgUuid, row } : candidate))
        return row
      }),
    deleteEntry: (orgUuid, id) =>
      Effect.sync(() => {
        const before = tables.state.entries.length
        tables.state.entries = tables.state.entries.filter((owned) => !(owned.orgUuid === orgUuid && owned.row.id === id))
        return tables.state.entries.length < before
      }),
    approvals: (orgUuid) =>
      Effect.sync(() =>
        tables.state.approvals
          .filter((owned) => owned.orgUuid === orgUuid)
          .map((owned) => owned.row)
          .sort(newestRequestFirst)
          .slice(0, 500)
      ),
    findApproval: (orgUuid, id) => Effect.sync(() => tables.state.approvals.find((owned) => owned.orgUuid === orgUuid && owned.row.id === id)?.row),
    insertApproval: (approval) =>
      Effect.map(nowIso, (now) => {
        tables.state.approvals.push({
          orgUuid: approval.orgUuid,
          row: {
            id: approval.id,
            url: approval.url,
            agent_id: approval.agentId,
            url_pattern_suggested: approval.suggested,
            status: "pending",
            requested_at: now,
            resolved_at: null,
            action_type: approval.actionType,
            grant_expires_at: null,
            grant_used_at: null
          }
        })
      }),
    resolveApproval: (orgUuid, id, status, _by, grantMs) =>
      Effect.map(Clock.currentTimeMillis, (now) =>
        updateApproval(orgUuid, id, (row) =>
          row.status !== "pending"
            ? undefined
            : {
                ...row,
                status,
                resolved_at: new Date(now).toISOString(),
                // An approval opens its single-use grant (a request without an action type grants nothing).
                grant_expires_at: status === "approved" && row.action_type !== null ? new Date(now + grantMs).toISOString() : null
              }
        )
      ),
    spendGrant: (grant) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const open = tables.state.approvals
          .filter(
            ({ orgUuid, row }) =>
              orgUuid === grant.orgUuid &&
              row.url === grant.url &&
              row.agent_id === grant.agentId &&
              row.action_type === grant.actionType &&
              row.status === "approved" &&
              row.grant_used_at === null &&
              row.grant_expires_at !== null &&
              Date.parse(row.grant_expires_at) > now
          )
          .sort((a, b) => (a.row.resolved_at ?? "").localeCompare(b.row.resolved_at ?? ""))[0]
        if (open === undefined) return undefined
        updateApproval(grant.orgUuid, open.row.id, (row) => ({ ...row, grant_used_at: new Date(now).toISOString() }))
        return open.row.id
      }),
    mode: (orgUuid) => Effect.sync(() => tables.state.modes.get(orgUuid) ?? "permissive"),
    setMode: (orgUuid, mode) =>
      Effect.sync(() => {
        tables.state.modes.set(orgUuid, mode)
      }),
    transaction: tables.transaction
  })
})

/**
 * The organization's whitelist read straight from the store on every call, in place of the
 * organization's actor and its cache: what a test of the service's rules needs.
 */
export const directOrgWhitelist = Layer.effect(
  OrgWhitelist,
  Effect.gen(function* () {
    const store = yield* WhitelistStore
    let version = 0
    return OrgWhitelist.of({
      get: (orgUuid) =>
        Effect.map(
          Effect.all([store.approvedEntries(orgUuid), store.mode(orgUuid)]),
          ([entries, mode]): WhitelistSnapshot => ({
            mode,
            entries: entries.map((entry) => ({ pattern: parsePattern(entry.url_pattern), tls_fingerprint: entry.tls_fingerprint }))
          })
        ),
      changed: () => Effect.sync(() => ++version)
    })
  })
)

export const memoryWhitelistStore = Layer.effect(WhitelistStore, makeMemoryWhitelistStore)
