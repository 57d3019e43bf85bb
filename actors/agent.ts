/**
 * AgentActor(org, agent): one cluster entity per agent chain. Every terminal
 * transition of that agent's actions (the ones that mint a receipt) is a
 * `Transition` message, and the entity handles its messages one at a time, so
 * one agent's receipts are minted in order wherever the request arrived.
 *
 * Messages are data (they may cross processes in CLUSTER_MODE=sql) and
 * volatile: a lost message is a failed request the client retries, never a
 * silently replayed transition. The messages and both ports (`AgentWork`, the
 * work itself: check, link, sign, commit through the process's commit pipeline;
 * and `AgentMailbox`, the callers' side implemented here) belong to the actions
 * area; the pipeline's guard on the `agent_chains` head (it moves only from
 * where this entity saw it) stays the safety net should two runners ever hold
 * the same entity during a shard move.
 *
 * The entity keeps the chain head (`agent_sequence`, `previous_payload_hash`)
 * in memory, loaded from Postgres when it starts (memory is lost on
 * passivation and shard moves) and advanced after each committed transition.
 */

import * as Cause from "effect/Cause"
import * as ClusterSchema from "effect/cluster/ClusterSchema"
import * as Entity from "effect/cluster/Entity"
import type { Sharding } from "effect/cluster/Sharding"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Queue from "effect/Queue"
import * as Rpc from "effect/rpc/Rpc"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import { ChainHead, TransitionRequest, TransitionResult } from "../src/actions/agent-messages.js"
import { DEFAULT_AGENT_ID } from "../src/actions/chain.js"
import { ActionsError } from "../src/actions/errors.js"
import { AgentMailbox, AgentWork } from "../src/actions/ports.js"
import { logLine } from "../src/platform/log.js"
import { record } from "../src/platform/metrics.js"

const describeDefect = (defect: unknown): string => (defect instanceof Error ? (defect.stack ?? defect.message) : String(defect))

/** The entity id of an agent chain; organization uuids never contain ":". */
export const agentEntityId = (orgUuid: string, agentId: string | null): string => `${orgUuid}:${agentId ?? DEFAULT_AGENT_ID}`

export const parseAgentEntityId = (entityId: string): { readonly orgUuid: string; readonly agentId: string } => {
  const cut = entityId.indexOf(":")
  return { orgUuid: entityId.slice(0, cut), agentId: entityId.slice(cut + 1) }
}

/**
 * A transition that died (a defect: the database refused, a bug). Carried back
 * to the caller as a failure, so the request answers 500 at once instead of the
 * entity restarting and retrying the same message for ever.
 */
export class TransitionDefect extends Schema.TaggedError<TransitionDefect>()("TransitionDefect", { message: Schema.String }) {}

export const AgentActor = Entity.make("AgentActor", [
  Rpc.make("Transition", { payload: { request: TransitionRequest }, success: TransitionResult, error: Schema.Union([ActionsError, TransitionDefect]) }),
  Rpc.make("Head", { success: ChainHead })
]).annotateRpcs(ClusterSchema.Persisted, false)

export interface AgentActorOptions {
  /** Idle time after which an entity is passivated (its memory is reloaded on the next message). */
  readonly maxIdleMs?: number
}

/** At most this many queued transitions of one agent are linked as one group. */
export const MAX_GROUP_COMMIT = 64

/** How many transitions each agent group carried (the commit pipeline then shares commits across agents). */
const groupSize = Metric.histogram("agent_group_size", {
  description: "Transitions of one agent linked together as one group",
  boundaries: [1, 2, 4, 8, 16, 32, 64]
})

interface Queued {
  readonly request: TransitionRequest
  readonly reply: Deferred.Deferred<TransitionResult, ActionsError | TransitionDefect>
}

/** One agent's worker: the head it keeps, its queue, and the fiber that takes groups from it. */
export interface AgentWorker {
  readonly transition: (request: TransitionRequest) => Effect.Effect<TransitionResult, ActionsError | TransitionDefect>
  readonly head: () => ChainHead
}

/**
 * The worker of the agent `entityId` (org:agent), in the current scope; needs AgentWork.
 *
 * It accepts requests concurrently but one fiber handles them: it takes what has queued up (up to
 * MAX_GROUP_COMMIT), links it in order onto the head it keeps, waits for the commit and only then
 * answers each caller and moves its head (a group that did not commit leaves the head where the
 * database has it). One agent's receipts are therefore minted one after another, in arrival order.
 */
export const agentWorker = (entityId: string) =>
  Effect.gen(function* () {
    const work = yield* AgentWork
    const { orgUuid, agentId } = parseAgentEntityId(entityId)
    let head = yield* work.head(orgUuid, agentId)
    const queue = yield* Queue.unbounded<Queued>()

    const answer = (queued: Queued, exit: Exit.Exit<TransitionResult, ActionsError>) => {
      if (exit._tag === "Success" || !Exit.hasDies(exit)) return Deferred.done(queued.reply, exit)
      const defect = Cause.squash(exit.cause)
      logLine("error", "agent transition failed", { entity: entityId, request: queued.request._tag, cause: describeDefect(defect) })
      return Deferred.fail(queued.reply, new TransitionDefect({ message: defect instanceof Error ? defect.message : String(defect) }))
    }

    const writeBatch = Effect.gen(function* () {
      const batch = yield* Queue.takeBetween(queue, 1, MAX_GROUP_COMMIT)
      const group = yield* Effect.exit(
        work.runGroup(
          orgUuid,
          agentId,
          head,
          batch.map((queued) => queued.request)
        )
      )
      record(groupSize, batch.length)
      if (group._tag === "Failure") {
        // The group died as a whole (the database went away): every caller gets the defect, and the head is read again.
        for (const queued of batch) yield* answer(queued, Exit.failCause(group.cause) as Exit.Exit<TransitionResult, ActionsError>)
        const reloaded = yield* Effect.exit(work.head(orgUuid, agentId))
        if (reloaded._tag === "Success") head = reloaded.value
        return
      }
      head = group.value.head
      for (let index = 0; index < batch.length; index++) yield* answer(batch[index]!, group.value.exits[index]!)
    })
    yield* Effect.forkScoped(Effect.forever(writeBatch))

    return {
      transition: (request) =>
        Effect.flatMap(Deferred.make<TransitionResult, ActionsError | TransitionDefect>(), (reply) =>
          Effect.andThen(Queue.offer(queue, { request, reply }), Deferred.await(reply))
        ),
      head: () => head
    } satisfies AgentWorker
  })

/** Registers the entity with Sharding (its worker per agent, above); needs AgentWork and Sharding. */
export const agentActorLayer = (options: AgentActorOptions = {}) =>
  AgentActor.toLayer(
    Effect.gen(function* () {
      const worker = yield* agentWorker((yield* Entity.CurrentAddress).entityId)
      return AgentActor.of({
        Transition: ({ payload }) => worker.transition(payload.request),
        Head: () => Effect.sync(worker.head)
      })
    }),
    { maxIdleTime: options.maxIdleMs ?? 60_000, concurrency: "unbounded" }
  )

/** A transition's own failure stays typed; a worker's defect and the cluster's failures become defects (500 with a request_id). */
const asCallerFailure = (error: unknown) =>
  error instanceof ActionsError
    ? Effect.fail(error)
    : Effect.die(error instanceof TransitionDefect ? new Error(`agent transition failed: ${error.message}`) : error)

/**
 * The AgentMailbox of a process that owns every agent (the in-memory runner): the same worker per
 * agent, kept in a map instead of behind the cluster's RPC, which cost ~12 % of a notarization's
 * CPU for a message that never leaves the process. A worker idle for `maxIdleMs` is dropped (its
 * head is read again from the database when the agent's next request comes), as the cluster
 * passivates an idle entity.
 */
export const localAgentMailboxLayer = (options: AgentActorOptions = {}): Layer.Layer<AgentMailbox, never, AgentWork> =>
  Layer.effect(AgentMailbox)(
    Effect.gen(function* () {
      const maxIdleMs = options.maxIdleMs ?? 60_000
      const services = yield* Effect.context<AgentWork>()
      const layerScope = yield* Effect.scope
      interface Entry {
        readonly worker: Deferred.Deferred<AgentWorker>
        readonly scope: Scope.Closeable
        busy: number
        lastUsed: number
      }
      const entries = new Map<string, Entry>()

      const entryFor = (entityId: string) =>
        Effect.suspend(() => {
          const known = entries.get(entityId)
          if (known !== undefined) return Effect.succeed(known)
          const worker = Deferred.makeUnsafe<AgentWorker>()
          const scope = Scope.forkUnsafe(layerScope)
          const entry: Entry = { worker, scope, busy: 0, lastUsed: Date.now() }
          entries.set(entityId, entry)
          // Started apart from the request that asked first, so its client leaving does not fail the others waiting.
          const start = agentWorker(entityId).pipe(
            Scope.provide(scope),
            Effect.provideContext(services),
            Effect.exit,
            Effect.flatMap((exit) => {
              if (exit._tag === "Success") return Deferred.succeed(worker, exit.value)
              // The head could not be read: forget the entry, so the next request tries again.
              entries.delete(entityId)
              return Effect.andThen(Scope.close(scope, Exit.void), Deferred.die(worker, Cause.squash(exit.cause)))
            })
          )
          return Effect.as(Effect.forkIn(start, layerScope), entry)
        })

      /** Runs `use` with the agent's worker, keeping it from being dropped meanwhile. */
      const withWorker = <A, E>(orgUuid: string, agentId: string | null, use: (worker: AgentWorker) => Effect.Effect<A, E>) =>
        Effect.flatMap(entryFor(agentEntityId(orgUuid, agentId)), (entry) => {
          entry.busy++
          return Effect.ensuring(
            Effect.flatMap(Deferred.await(entry.worker), use),
            Effect.sync(() => {
              entry.busy--
              entry.lastUsed = Date.now()
            })
          )
        })

      const dropIdle = Effect.suspend(() => {
        const now = Date.now()
        const idle: Array<Scope.Closeable> = []
        for (const [entityId, entry] of entries) {
          if (entry.busy === 0 && now - entry.lastUsed >= maxIdleMs && Deferred.isDoneUnsafe(entry.worker)) {
            entries.delete(entityId)
            idle.push(entry.scope)
          }
        }
        return Effect.forEach(idle, (scope) => Scope.close(scope, Exit.void), { discard: true })
      })
      yield* Effect.forkScoped(Effect.repeat(dropIdle, Schedule.spaced(Math.max(50, Math.min(maxIdleMs, 5_000)))))

      return AgentMailbox.of({
        transition: (orgUuid, agentId, request) =>
          withWorker(orgUuid, agentId, (worker) => worker.transition(request)).pipe(Effect.catch(asCallerFailure)),
        head: (orgUuid, agentId) => withWorker(orgUuid, agentId, (worker) => Effect.sync(worker.head))
      })
    })
  )

/** The callers' side (the actions area's AgentMailbox): send one transition to the agent's entity and wait for its reply. */
export const agentMailboxLayer: Layer.Layer<AgentMailbox, never, Sharding> = Layer.effect(AgentMailbox)(
  Effect.gen(function* () {
    const client = yield* AgentActor.client
    return AgentMailbox.of({
      // Cluster failures (mailbox full, runner gone) are defects: a 500 with a request_id, and the client retries.
      transition: (orgUuid, agentId, request) =>
        client(agentEntityId(orgUuid, agentId))
          .Transition({ request })
          .pipe(Effect.catch(asCallerFailure)),
      head: (orgUuid, agentId) =>
        client(agentEntityId(orgUuid, agentId))
          .Head()
          .pipe(Effect.orDie)
    })
  })
)
