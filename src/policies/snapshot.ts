/**
 * Each organization's active policies, compiled once and cached in memory
 * (a plain cached snapshot service, not an actor). Every change bumps the
 * organization's version locally and is announced on the Fanout topic
 * `policies:<org>` so other processes drop their copy too. A load that raced
 * with an invalidation is not cached (its version is stale).
 *
 * Evaluation counts are tallied in memory and flushed every few seconds in one
 * UPDATE, so the authorize hot path never writes a policy row.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import { Fanout } from "../platform/redis/index.js"
import { compileConditions } from "./conditions.js"
import { compileScanConfig } from "./content-scan.js"
import { type EvaluationTally, makePoliciesStore, type PolicyRow } from "./store.js"
import type { EvaluablePolicy } from "./types.js"

export const POLICIES_TOPIC = "policies"
const FLUSH_INTERVAL_MS = 3_000

export interface OrgPolicySnapshot {
  readonly version: number
  readonly policies: ReadonlyArray<EvaluablePolicy>
}

/** A stored policy ready for evaluation; invalid stored parts make it fail closed in the evaluator. */
export const toEvaluable = (row: PolicyRow): EvaluablePolicy => {
  const base = {
    id: row.id,
    name: row.name,
    mode: row.mode,
    decision: row.decision,
    priority: row.priority,
    created_at: row.created_at,
    status: row.status,
    scope: row.scope
  }
  if (row.mode === "rules") {
    const compiled = compileConditions(row.conditions, { required: false })
    return compiled.ok ? { ...base, rules: compiled.compiled } : base
  }
  if (row.mode === "content_scan") {
    const compiled = compileScanConfig(row.scan_config)
    return compiled.ok ? { ...base, scan: compiled.compiled } : base
  }
  return base
}

export class PolicySnapshots extends Context.Service<
  PolicySnapshots,
  {
    readonly get: (orgUuid: string) => Effect.Effect<OrgPolicySnapshot>
    /** Drops the organization's snapshot here and in every other process. */
    readonly invalidate: (orgUuid: string) => Effect.Effect<void>
    /** Counts one evaluation of each policy (flushed later). */
    readonly recordEvaluations: (ids: ReadonlyArray<string>) => void
    /** Evaluations tallied here but not yet flushed, for read-your-writes on detail output. */
    readonly pending: (id: string) => { readonly n: number; readonly at: string } | undefined
    /** Writes the tallies now (also runs on a timer and when the layer closes). */
    readonly flush: Effect.Effect<void>
  }
>()("gateway/PolicySnapshots") {
  static readonly layer = Layer.effect(
    PolicySnapshots,
    Effect.gen(function* () {
      const store = yield* makePoliciesStore
      const fanout = yield* Fanout
      const cache = new Map<string, OrgPolicySnapshot>()
      const versions = new Map<string, number>()
      let tallies = new Map<string, { n: number; at: string }>()

      const versionOf = (orgUuid: string) => versions.get(orgUuid) ?? 0
      const dropLocal = (orgUuid: string) => {
        versions.set(orgUuid, versionOf(orgUuid) + 1)
        cache.delete(orgUuid)
      }

      yield* fanout.subscribe(
        (topic) => {
          const orgUuid = topic.slice(POLICIES_TOPIC.length + 1)
          if (orgUuid) dropLocal(orgUuid)
        },
        { topicPrefix: `${POLICIES_TOPIC}:` }
      )

      const get = (orgUuid: string): Effect.Effect<OrgPolicySnapshot> => {
        const cached = cache.get(orgUuid)
        if (cached !== undefined) return Effect.succeed(cached)
        const version = versionOf(orgUuid)
        return store.active(orgUuid).pipe(
          Effect.map((rows) => {
            const snapshot: OrgPolicySnapshot = { version, policies: rows.map(toEvaluable) }
            if (versionOf(orgUuid) === version) cache.set(orgUuid, snapshot)
            return snapshot
          }),
          Effect.orDie
        )
      }

      const flush = Effect.suspend(() => {
        if (tallies.size === 0) return Effect.void
        const batch: Array<EvaluationTally> = [...tallies].map(([id, t]) => ({ id, n: t.n, at: t.at }))
        const taken = tallies
        tallies = new Map()
        return store.addEvaluations(batch).pipe(
          Effect.catch(() =>
            // Put the counts back so the next flush retries them.
            Effect.sync(() => {
              for (const [id, t] of taken) {
                const current = tallies.get(id)
                tallies.set(id, current ? { n: current.n + t.n, at: [current.at, t.at].sort()[1] ?? t.at } : t)
              }
            })
          )
        )
      })

      yield* Effect.forkScoped(Effect.repeat(flush, Schedule.spaced(FLUSH_INTERVAL_MS)))
      yield* Effect.addFinalizer(() => flush)

      return {
        get,
        invalidate: (orgUuid) =>
          Effect.suspend(() => {
            dropLocal(orgUuid)
            return fanout.publish(`${POLICIES_TOPIC}:${orgUuid}`, String(versionOf(orgUuid)))
          }),
        recordEvaluations: (ids) => {
          if (ids.length === 0) return
          const at = new Date().toISOString()
          for (const id of ids) {
            const current = tallies.get(id)
            if (current) {
              current.n += 1
              current.at = at
            } else tallies.set(id, { n: 1, at })
          }
        },
        pending: (id) => tallies.get(id),
        flush
      }
    })
  )
}
