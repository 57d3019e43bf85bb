/**
 * Each organization's active policies for evaluation. The data lives in the
 * organization's OrgActor (`actors/org.ts`), the source of truth and the
 * invalidation point; the `OrgPolicies` port keeps the compiled copy per process.
 * Every committed change asks the actor to reload (and announces it to other
 * processes).
 *
 * Evaluation counts are tallied in memory and flushed every few seconds in one
 * UPDATE, so the authorize hot path never writes a policy row.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import { OrgPolicies, type OrgPolicySnapshot } from "./ports.js"
import { type EvaluationTally, makePoliciesStore } from "./store.js"

export { toEvaluable } from "./evaluable.js"

const FLUSH_INTERVAL_MS = 3_000

export class PolicySnapshots extends Context.Service<
  PolicySnapshots,
  {
    readonly get: (orgUuid: string) => Effect.Effect<OrgPolicySnapshot>
    /** After a committed change: the org's actor reloads and every process drops its older copy. */
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
      const orgs = yield* OrgPolicies
      let tallies = new Map<string, { n: number; at: string }>()

      const flush = Effect.suspend(() => {
        if (tallies.size === 0) return Effect.void
        const batch: Array<EvaluationTally> = [...tallies].map(([id, t]) => ({ id, n: t.n, at: t.at }))
        const taken = tallies
        tallies = new Map()
        // A failed write is a defect of the store: put the counts back so the next flush retries them.
        return store.addEvaluations(batch).pipe(
          Effect.catchCause(() =>
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
        get: orgs.get,
        invalidate: (orgUuid) => Effect.asVoid(orgs.changed(orgUuid)),
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
