/**
 * AgentActor(org, agent): one cluster entity per agent chain. Every terminal
 * transition of that agent's actions (the ones that mint a receipt) is a
 * `Transition` message, and the entity handles its messages one at a time, so
 * one agent's receipts are minted in order wherever the request arrived.
 *
 * Messages are data (they may cross processes in CLUSTER_MODE=sql) and
 * volatile: a lost message is a failed request the client retries, never a
 * silently replayed transition. The work itself (lock, mint, write, record
 * events, in one transaction) is the `AgentWork` service the actions area
 * provides; the `agent_chains` row lock inside that transaction stays the
 * safety net should two runners ever hold the same entity during a shard move.
 *
 * The entity keeps the chain head (`agent_sequence`, `previous_payload_hash`)
 * in memory, loaded from Postgres when it starts (memory is lost on
 * passivation and shard moves) and advanced after each committed transition.
 */

import * as Context from "effect/Context"
import * as ClusterSchema from "effect/cluster/ClusterSchema"
import * as Entity from "effect/cluster/Entity"
import type { Sharding } from "effect/cluster/Sharding"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Rpc from "effect/rpc/Rpc"
import * as Schema from "effect/Schema"
import { Conflict, Gone, NotFound } from "../protocol/errors.js"
import { DEFAULT_AGENT_ID } from "../src/actions/chain.js"
import { logLine } from "../src/platform/log.js"

const describeDefect = (defect: unknown): string => (defect instanceof Error ? (defect.stack ?? defect.message) : String(defect))

/** The entity id of an agent chain; organization uuids never contain ":". */
export const agentEntityId = (orgUuid: string, agentId: string | null): string => `${orgUuid}:${agentId ?? DEFAULT_AGENT_ID}`

export const parseAgentEntityId = (entityId: string): { readonly orgUuid: string; readonly agentId: string } => {
  const cut = entityId.indexOf(":")
  return { orgUuid: entityId.slice(0, cut), agentId: entityId.slice(cut + 1) }
}

const Flags = Schema.NullOr(Schema.Array(Schema.Record(Schema.String, Schema.Unknown)))

/** What a transition should do, as data. */
export const TransitionRequest = Schema.Union([
  Schema.TaggedStruct("Notarize", {
    action_uuid: Schema.String,
    outcome: Schema.Literals(["completed", "failed"]),
    outcome_hash: Schema.NullOr(Schema.String),
    output_scan_flags: Flags
  }),
  Schema.TaggedStruct("Expire", { action_uuid: Schema.String, at: Schema.String }),
  Schema.TaggedStruct("Deny", {
    action_uuid: Schema.String,
    by: Schema.NullOr(Schema.String),
    at: Schema.String,
    via: Schema.Literals(["code", "token", "dashboard"]),
    reason: Schema.NullOr(Schema.String),
    /** The approver's grant (code or token), spent in the same transaction; null from the dashboard. */
    grant_id: Schema.NullOr(Schema.String)
  }),
  Schema.TaggedStruct("DenyByPolicy", {
    /** The new action row, inserted and denied in the same transaction. */
    row: Schema.Record(Schema.String, Schema.Unknown),
    reasoning: Schema.String,
    policy_uuid: Schema.NullOr(Schema.String),
    idempotency_key: Schema.NullOr(Schema.String)
  })
])
export type TransitionRequest = typeof TransitionRequest.Type

export const ChainHead = Schema.Struct({ agent_sequence: Schema.Number, previous_payload_hash: Schema.NullOr(Schema.String) })
export type ChainHead = typeof ChainHead.Type

/** The result of a transition: skipped (the state had moved on), or the action and its minted receipt. */
export const TransitionResult = Schema.Union([
  Schema.TaggedStruct("Skipped", {}),
  Schema.TaggedStruct("Done", {
    action: Schema.Struct({
      org_uuid: Schema.String,
      action_uuid: Schema.String,
      action_type: Schema.String,
      agent_id: Schema.NullOr(Schema.String),
      created_at: Schema.String
    }),
    receipt: Schema.Struct({
      receipt_uuid: Schema.String,
      payload_hash: Schema.String,
      signature: Schema.String,
      public_key_id: Schema.String,
      timestamp_token: Schema.NullOr(Schema.String),
      receipt_version: Schema.String,
      verify_url: Schema.String,
      created_at: Schema.String,
      signed_payload: Schema.String
    }),
    agent_sequence: Schema.Number
  })
])
export type TransitionResult = typeof TransitionResult.Type

/**
 * A transition that died (a defect: the database refused, a bug). Carried back
 * to the caller as a failure, so the request answers 500 at once instead of the
 * entity restarting and retrying the same message for ever.
 */
export class TransitionDefect extends Schema.TaggedError<TransitionDefect>()("TransitionDefect", { message: Schema.String }) {}

export const TransitionError = Schema.Union([NotFound, Conflict, Gone])
export type TransitionError = typeof TransitionError.Type

const isTransitionError = (error: unknown): error is TransitionError => error instanceof NotFound || error instanceof Conflict || error instanceof Gone

export const AgentActor = Entity.make("AgentActor", [
  Rpc.make("Transition", { payload: { request: TransitionRequest }, success: TransitionResult, error: Schema.Union([NotFound, Conflict, Gone, TransitionDefect]) }),
  Rpc.make("Head", { success: ChainHead })
]).annotateRpcs(ClusterSchema.Persisted, false)

/** The transition work, implemented by the actions area; runs in the process that holds the entity. */
export class AgentWork extends Context.Service<
  AgentWork,
  {
    readonly head: (orgUuid: string, agentId: string) => Effect.Effect<ChainHead>
    readonly run: (orgUuid: string, request: TransitionRequest) => Effect.Effect<TransitionResult, TransitionError>
  }
>()("gateway/AgentWork") {}

export interface AgentActorOptions {
  /** Idle time after which an entity is passivated (its memory is reloaded on the next message). */
  readonly maxIdleMs?: number
}

/** Registers the entity with Sharding; needs AgentWork and Sharding. */
export const agentActorLayer = (options: AgentActorOptions = {}) =>
  AgentActor.toLayer(
    Effect.gen(function* () {
      const address = yield* Entity.CurrentAddress
      const work = yield* AgentWork
      const { orgUuid, agentId } = parseAgentEntityId(address.entityId)
      let head = yield* work.head(orgUuid, agentId)
      return AgentActor.of({
        Transition: ({ payload }) =>
          work.run(orgUuid, payload.request).pipe(
            Effect.tap((result) =>
              Effect.sync(() => {
                if (result._tag === "Done") head = { agent_sequence: result.agent_sequence, previous_payload_hash: result.receipt.payload_hash }
              })
            ),
            Effect.catchDefect((defect) =>
              Effect.andThen(
                Effect.sync(() => logLine("error", "agent transition failed", { entity: address.entityId, request: payload.request._tag, cause: describeDefect(defect) })),
                // The chain head may have moved in a transaction that failed after commit: reload it from the database.
                Effect.andThen(
                  Effect.map(Effect.exit(work.head(orgUuid, agentId)), (exit) => {
                    if (exit._tag === "Success") head = exit.value
                  }),
                  Effect.fail(new TransitionDefect({ message: defect instanceof Error ? defect.message : String(defect) }))
                )
              )
            )
          ),
        Head: () => Effect.sync(() => head)
      })
    }),
    { maxIdleTime: options.maxIdleMs ?? 60_000 }
  )

/** The callers' side: send one transition to the agent's entity and wait for its reply (after commit). */
export class AgentMailbox extends Context.Service<
  AgentMailbox,
  {
    readonly transition: (orgUuid: string, agentId: string | null, request: TransitionRequest) => Effect.Effect<TransitionResult, TransitionError>
    readonly head: (orgUuid: string, agentId: string | null) => Effect.Effect<ChainHead>
  }
>()("gateway/AgentMailbox") {
  static readonly layer: Layer.Layer<AgentMailbox, never, Sharding> = Layer.effect(AgentMailbox)(
    Effect.gen(function* () {
      const client = yield* AgentActor.client
      return AgentMailbox.of({
        // Cluster failures (mailbox full, runner gone) are defects: a 500 with a request_id, and the client retries.
        transition: (orgUuid, agentId, request) =>
          client(agentEntityId(orgUuid, agentId))
            .Transition({ request })
            .pipe(
              Effect.catch((error) =>
                isTransitionError(error)
                  ? Effect.fail(error)
                  : Effect.die(error instanceof TransitionDefect ? new Error(`agent transition failed: ${error.message}`) : error)
              )
            ),
        head: (orgUuid, agentId) =>
          client(agentEntityId(orgUuid, agentId))
            .Head()
            .pipe(Effect.orDie)
      })
    })
  )
}
