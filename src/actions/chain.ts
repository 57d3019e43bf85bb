/**
 * The per-agent receipt chain: every terminal transition of one (org, agent)
 * mints its receipt with `agent_sequence` = previous + 1 and
 * `previous_payload_hash` = the previous receipt's `payload_hash`.
 *
 * Correctness comes from the `agent_chains` row lock taken inside the minting
 * transaction (several processes may share the database). The in-process
 * lanes below only keep one process's transitions of one agent in a queue, so
 * they do not pile up on the row lock holding pooled connections.
 */
import * as Effect from "effect/Effect"
import * as Semaphore from "effect/Semaphore"

/** Actions sent without an agent_id chain under this per-organization id. */
export const DEFAULT_AGENT_ID = "_default"

export const chainAgentId = (agentId: string | null): string => agentId ?? DEFAULT_AGENT_ID

export const laneKey = (orgUuid: string, agentId: string | null): string => `${orgUuid}\u0000${chainAgentId(agentId)}`

export interface Lanes {
  /** Runs `effect` after every earlier effect of the same key has finished. */
  readonly run: <A, E, R>(key: string, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Number of keys with work queued or running (idle keys are dropped). */
  readonly size: () => number
}

/** A keyed mutex: one semaphore per busy key, dropped when its last user leaves. */
export const makeLanes = (): Lanes => {
  const lanes = new Map<string, { readonly semaphore: Semaphore.Semaphore; users: number }>()
  return {
    run: (key, effect) =>
      Effect.suspend(() => {
        let lane = lanes.get(key)
        if (lane === undefined) {
          lane = { semaphore: Semaphore.makeUnsafe(1), users: 0 }
          lanes.set(key, lane)
        }
        const held = lane
        held.users++
        return held.semaphore.withPermits(1)(effect).pipe(
          Effect.ensuring(
            Effect.sync(() => {
              held.users--
              if (held.users === 0 && lanes.get(key) === held) lanes.delete(key)
            })
          )
        )
      }),
    size: () => lanes.size
  }
}

/** Next link of a chain given its locked head. */
export const nextLink = (head: { readonly lastSequence: number; readonly lastPayloadHash: string | null }) => ({
  agent_sequence: head.lastSequence + 1,
  previous_payload_hash: head.lastSequence === 0 ? null : head.lastPayloadHash
})
