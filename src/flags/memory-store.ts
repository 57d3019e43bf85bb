/**
 * The flags' tables in memory, for tests of the service's rules without a database
 * (`Flags.layerTest`). It answers as the SQL store does, list order included (by the time an
 * organization was added, then its id: one statement's rows share their time); the rules suite
 * runs over both (test/flags-rules.test.ts).
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { FeatureFlag } from "../../protocol/flags.js"
import type { AuditEntry } from "../platform/audit.js"
import { memoryTables, nowIso } from "../platform/db/memory.js"
import { FlagStore } from "./store.js"

type StoredFlag = Omit<FeatureFlag, "enabled_org_ids">

interface Listed {
  readonly orgUuid: string
  readonly addedAt: string
}

export const makeMemoryFlagStore = Effect.sync(() => {
  const tables = memoryTables({
    flags: new Map<string, StoredFlag>(),
    lists: new Map<string, Array<Listed>>(),
    audit: [] as AuditEntry[]
  })
  const view = (flag: StoredFlag): FeatureFlag => ({
    ...flag,
    enabled_org_ids: [...(tables.state.lists.get(flag.id) ?? [])]
      .sort((a, b) => a.addedAt.localeCompare(b.addedAt) || a.orgUuid.localeCompare(b.orgUuid))
      .map((listed) => listed.orgUuid)
  })
  const addOrgs = (flagId: string, orgIds: ReadonlyArray<string>, now: string) => {
    const list = tables.state.lists.get(flagId) ?? []
    for (const orgUuid of orgIds) if (!list.some((listed) => listed.orgUuid === orgUuid)) list.push({ orgUuid, addedAt: now })
    tables.state.lists.set(flagId, list)
  }
  /** The flag `key` with its `updated_at` moved to now, or undefined when there is none. */
  const touched = (key: string, now: string) => {
    const flag = tables.state.flags.get(key)
    if (flag === undefined) return undefined
    const updated = { ...flag, updated_at: now }
    tables.state.flags.set(key, updated)
    return updated
  }
  const find = (key: string) =>
    Effect.sync(() => {
      const flag = tables.state.flags.get(key)
      return flag === undefined ? undefined : view(flag)
    })

  return FlagStore.of({
    audit: (entry) => Effect.sync(() => void tables.state.audit.push(entry)),
    all: Effect.sync(() => [...tables.state.flags.values()].sort((a, b) => a.key.localeCompare(b.key)).map(view)),
    find,
    insert: (flag) =>
      Effect.map(nowIso, (now) => {
        if (tables.state.flags.has(flag.key)) return undefined
        const stored: StoredFlag = {
          id: flag.id,
          key: flag.key,
          description: flag.description,
          enabled_global: flag.enabledGlobal,
          rollout_percentage: flag.rolloutPercentage,
          created_at: now,
          updated_at: now
        }
        tables.state.flags.set(flag.key, stored)
        addOrgs(flag.id, flag.orgIds, now)
        return view(stored)
      }),
    update: (key, patch) =>
      Effect.map(nowIso, (now) => {
        const flag = touched(key, now)
        if (flag === undefined) return undefined
        const updated: StoredFlag = {
          ...flag,
          description: patch.description !== undefined ? patch.description : flag.description,
          enabled_global: patch.enabled_global ?? flag.enabled_global,
          rollout_percentage: patch.rollout_percentage ?? flag.rollout_percentage
        }
        tables.state.flags.set(key, updated)
        if (patch.enabled_org_ids !== undefined) {
          tables.state.lists.set(flag.id, [])
          addOrgs(flag.id, patch.enabled_org_ids, now)
        }
        return view(updated)
      }),
    remove: (key) =>
      Effect.sync(() => {
        const flag = tables.state.flags.get(key)
        if (flag === undefined) return false
        tables.state.flags.delete(key)
        tables.state.lists.delete(flag.id)
        return true
      }),
    setOrg: (key, orgUuid, listed) =>
      Effect.map(nowIso, (now) => {
        const flag = touched(key, now)
        if (flag === undefined) return undefined
        if (listed) addOrgs(flag.id, [orgUuid], now)
        else tables.state.lists.set(flag.id, (tables.state.lists.get(flag.id) ?? []).filter((entry) => entry.orgUuid !== orgUuid))
        return view(flag)
      })
  })
})

export const memoryFlagStore = Layer.effect(FlagStore, makeMemoryFlagStore)
