/**
 * The live windows of this process: one AgentWindow per (organization, agent) that drift has
 * read, fed by every action this process records (the actions area's ActionObserver port) and
 * rebuilt from Postgres on its first read. A read then costs the sum of its hour buckets.
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type { RecordedAction } from "../actions/ports.js"
import type { DriftStore } from "./store.js"
import { AgentWindow, HOUR_MS, MAX_HOURS } from "./window.js"

interface Entry {
  readonly window: AgentWindow
  /** Actions told while the rebuild runs; applied after it when newer than its snapshot. */
  pending: Array<RecordedAction> | null
  readonly loaded: Deferred.Deferred<void>
}

const keyOf = (orgUuid: string, agentId: string) => `${orgUuid}\u0000${agentId}`

/** Windows held at once; past it the longest-held one is forgotten (rebuilt from Postgres if read again). */
export const MAX_WINDOWS = 50_000

export const makeLiveWindows = (store: DriftStore) => {
  const entries = new Map<string, Entry>()

  const recorded = (action: RecordedAction) =>
    Effect.sync(() => {
      if (action.agent_id === null) return
      const entry = entries.get(keyOf(action.org_uuid, action.agent_id))
      if (entry === undefined) return
      if (entry.pending !== null) entry.pending.push(action)
      else entry.window.add(action.action_type, Date.parse(action.created_at))
    })

  const rebuild = (orgUuid: string, agentId: string, entry: Entry) =>
    Effect.gen(function* () {
      const snapshot = yield* Clock.currentTimeMillis
      const rows = yield* store.hourlyCounts(orgUuid, agentId, snapshot - MAX_HOURS * HOUR_MS, snapshot)
      for (const row of rows) entry.window.add(row.action_type, row.hour * HOUR_MS, row.n)
      for (const action of entry.pending ?? []) {
        const at = Date.parse(action.created_at)
        if (at >= snapshot) entry.window.add(action.action_type, at)
      }
      entry.pending = null
    })

  /** The agent's window, built on first use; fails (and forgets the entry) when the rebuild fails. */
  const windowOf = (orgUuid: string, agentId: string): Effect.Effect<AgentWindow> =>
    Effect.suspend(() => {
      const key = keyOf(orgUuid, agentId)
      const existing = entries.get(key)
      if (existing !== undefined) return existing.pending === null ? Effect.succeed(existing.window) : Effect.as(Deferred.await(existing.loaded), existing.window)
      const entry: Entry = { window: new AgentWindow(), pending: [], loaded: Deferred.makeUnsafe<void>() }
      if (entries.size >= MAX_WINDOWS) {
        for (const [oldKey, old] of entries) {
          if (old.pending !== null) continue
          entries.delete(oldKey)
          break
        }
      }
      entries.set(key, entry)
      return rebuild(orgUuid, agentId, entry).pipe(
        Effect.onExit((exit) => {
          if (exit._tag === "Failure") entries.delete(key)
          return Deferred.done(entry.loaded, exit)
        }),
        Effect.as(entry.window)
      )
    })

  /** Drops buckets past the longest lookback; run with the periodic check. */
  const prune = (nowMs: number) =>
    Effect.sync(() => {
      for (const entry of entries.values()) entry.window.prune(nowMs)
    })

  /** True when this process already holds the agent's window (so the agent is known). */
  const holds = (orgUuid: string, agentId: string) => entries.has(keyOf(orgUuid, agentId))

  return { recorded, windowOf, prune, holds }
}
