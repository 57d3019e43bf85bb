/**
 * The terminal transitions of actions (the ones that mint a receipt), as the
 * AgentActor runs them: one transaction that locks the action row and the
 * `agent_chains` head, checks the state, mints the receipt at the head of the
 * agent's chain, writes the action and records the events (outbox).
 *
 * Requests are data (agent-messages.ts) so they can be handled by whichever
 * process holds the agent's entity.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { type DomainEvent, stampEvents } from "../events/service.js"
import { type MintedReceipt, type ReceiptApproval, type ReceiptContent, ReceiptMinter, type ReceiptStatus } from "../receipts/ports.js"
import type { ChainHead, TransitionRequest, TransitionResult } from "./agent-messages.js"
import { chainAgentId, nextLink } from "./chain.js"
import { ActionNotFound, ActionsError, AgentDecommissioned, AlreadyResolved, CredentialExpired, InvalidActionState, PolicyDenied, refuse } from "./errors.js"
import { refusalBody } from "./idempotency.js"
import { AgentWork } from "./ports.js"
import { type ActionRow, makeActionsStore, type TerminalUpdate } from "./store.js"

export const pastDeadline = (row: Pick<ActionRow, "status" | "approval_expires_at">) =>
  row.status === "pending_approval" && row.approval_expires_at !== null && Date.parse(row.approval_expires_at) <= Date.now()

/** Why a decision on `row` cannot go ahead (undefined: it can): a credential is spent, a dashboard decision is too late. */
export const noLongerPending = (row: Pick<ActionRow, "status" | "approval_expires_at">, grantId: string | null) => {
  if (row.status === "pending_approval" && !pastDeadline(row)) return undefined
  return grantId !== null ? new CredentialExpired({ what: "decision" }) : new AlreadyResolved({ status: pastDeadline(row) ? "denied_by_human" : row.status })
}

const approvalOf = (row: Pick<ActionRow, "approved_at" | "approved_by" | "approval_via">): ReceiptApproval | null =>
  row.approved_at === null
    ? null
    : { decision: "approved", by: row.approved_by, at: row.approved_at, via: (row.approval_via ?? "dashboard") as ReceiptApproval["via"], reason: null }

type ReceiptPart = Pick<ReceiptContent, "receipt_status" | "outcome" | "outcome_hash" | "output_scan_flags" | "approval">

interface Plan {
  readonly update: Omit<TerminalUpdate, "receipt" | "agent_sequence">
  readonly receipt: ReceiptPart
  readonly events: (row: Pick<ActionRow, "org_uuid" | "action_uuid" | "action_type" | "agent_id">, receipt: MintedReceipt) => ReadonlyArray<DomainEvent>
}

/** Marker: the row changed under us (e.g. a human resolved it before expiry); nothing to do. */
const SKIP = Symbol("skip")

export const makeTransitions = Effect.gen(function* () {
  const minter = yield* ReceiptMinter
  const store = yield* makeActionsStore
  const sql = store.sql

  /** Signs the receipt of `row` at the head of its agent chain (locked here unless the caller locked it); stores nothing. */
  const signFor = (
    row: Pick<ActionRow, "org_uuid" | "action_uuid" | "agent_id" | "agent_version" | "action_type" | "action_details_hash" | "instruction_hash" | "model_id" | "model_version" | "policy_uuid" | "parent_action_uuid">,
    part: ReceiptPart,
    lockedHead?: { readonly lastSequence: number; readonly lastPayloadHash: string | null }
  ) =>
    Effect.gen(function* () {
      const agent = chainAgentId(row.agent_id)
      const head = lockedHead ?? (yield* store.lockChain(row.org_uuid, agent))
      const link = nextLink(head)
      const parentPayloadHash = yield* store.parentPayloadHash(row.org_uuid, row.parent_action_uuid)
      const signed = yield* minter.sign({
        receipt_status: part.receipt_status,
        action_uuid: row.action_uuid,
        org_uuid: row.org_uuid,
        agent_id: row.agent_id,
        agent_version: row.agent_version,
        action_type: row.action_type,
        action_details_hash: row.action_details_hash,
        instruction_hash: row.instruction_hash,
        model_id: row.model_id,
        model_version: row.model_version,
        outcome: part.outcome,
        outcome_hash: part.outcome_hash,
        output_scan_flags: part.output_scan_flags,
        policy_uuid: row.policy_uuid,
        approval: part.approval,
        parent_payload_hash: parentPayloadHash,
        agent_sequence: link.agent_sequence,
        previous_payload_hash: link.previous_payload_hash
      })
      // Receipt, head and action are written by the one statement that finishes the action.
      return { signed, minted: signed.minted, sequence: link.agent_sequence, chain: { orgUuid: row.org_uuid, agentId: agent } }
    })

  const done = (row: Pick<ActionRow, "org_uuid" | "action_uuid" | "action_type" | "agent_id" | "created_at">, minted: MintedReceipt, sequence: number): TransitionResult => ({
    _tag: "Done",
    action: { org_uuid: row.org_uuid, action_uuid: row.action_uuid, action_type: row.action_type, agent_id: row.agent_id, created_at: row.created_at },
    receipt: minted,
    agent_sequence: sequence
  })

  /** Lock the action, let `plan` check its state, mint, write, record events. */
  const onExisting = <E>(orgUuid: string, actionUuid: string, plan: (row: ActionRow, agentDecommissioned: boolean) => Effect.Effect<Plan, E>) =>
    Effect.gen(function* () {
      const locked = yield* store.lockActionAndChain(orgUuid, actionUuid)
      if (locked === undefined) return yield* refuse(new ActionNotFound({ action_uuid: actionUuid }))
      const row = locked.row
      const planned = yield* plan(row, locked.agentDecommissioned)
      const receipt = yield* signFor(row, planned.receipt, locked.head)
      yield* store.finishAndAdvance(
        row.action_uuid,
        { ...planned.update, receipt: receipt.minted, agent_sequence: receipt.sequence },
        receipt.chain,
        stampEvents(planned.events(row, receipt.minted)),
        minter.insertion(receipt.signed)
      )
      return done(row, receipt.minted, receipt.sequence)
    })

  type NotarizeRequest = Extract<TransitionRequest, { _tag: "Notarize" }>
  type NotarizedRow = Pick<ActionRow, "status" | "approved_at" | "approved_by" | "approval_via">

  const notarizing = (orgUuid: string, request: NotarizeRequest, row: NotarizedRow) => {
    if (row.status !== "authorized" && row.status !== "approved") return refuse(new InvalidActionState({ status: row.status }))
    const status = request.outcome === "completed" ? "notarized" : "failed"
    return Effect.succeed<Plan>({
      update: { status, outcome: request.outcome, outcome_hash: request.outcome_hash, output_scan_flags: request.output_scan_flags },
      receipt: {
        receipt_status: status as ReceiptStatus,
        outcome: request.outcome,
        outcome_hash: request.outcome_hash,
        output_scan_flags: request.output_scan_flags,
        approval: approvalOf(row)
      },
      events: (r, receipt) => [
        {
          orgUuid,
          type: status === "notarized" ? "action.notarized" : "action.failed",
          data: { action_uuid: r.action_uuid, action_type: r.action_type, agent_id: r.agent_id, outcome: request.outcome, receipt_uuid: receipt.receipt_uuid, payload_hash: receipt.payload_hash }
        }
      ]
    })
  }

  const plan = (orgUuid: string, request: TransitionRequest) => {
    switch (request._tag) {
      case "Notarize":
        return onExisting(orgUuid, request.action_uuid, (row, agentDecommissioned) =>
          agentDecommissioned ? refuse(new AgentDecommissioned({ agent_id: row.agent_id ?? "" })) : notarizing(orgUuid, request, row)
        )
      case "Expire":
        return onExisting(orgUuid, request.action_uuid, (row) =>
          !pastDeadline(row)
            ? Effect.fail(SKIP)
            : Effect.succeed<Plan>({
                update: { status: "denied_by_human", approval_via: "expiry", denial_reason: "expired" },
                receipt: {
                  receipt_status: "denied_by_human",
                  outcome: null,
                  outcome_hash: null,
                  output_scan_flags: null,
                  approval: { decision: "denied", by: null, at: request.at, via: "expiry", reason: "expired" }
                },
                events: (r, receipt) => [
                  {
                    orgUuid: r.org_uuid,
                    type: "action.expired",
                    data: { action_uuid: r.action_uuid, action_type: r.action_type, agent_id: r.agent_id, reason: "expired", receipt_uuid: receipt.receipt_uuid }
                  }
                ]
              })
        )
      case "Deny": {
        const { by, at, via, reason } = request
        return onExisting(orgUuid, request.action_uuid, (locked) =>
          Effect.gen(function* () {
            const refused = noLongerPending(locked, request.grant_id)
            if (refused !== undefined) return yield* refuse(refused)
            if (request.grant_id !== null && !(yield* store.useGrant(request.grant_id))) {
              return yield* refuse(new CredentialExpired({ what: "credential" }))
            }
            return {
              update: { status: "denied_by_human", approved_by: by, approved_at: at, approval_via: via, denial_reason: reason },
              receipt: {
                receipt_status: "denied_by_human",
                outcome: null,
                outcome_hash: null,
                output_scan_flags: null,
                approval: { decision: "denied", by, at, via, reason }
              },
              events: (r, receipt) => [
                {
                  orgUuid: r.org_uuid,
                  type: "action.denied",
                  data: { action_uuid: r.action_uuid, action_type: r.action_type, agent_id: r.agent_id, denied_by: by, via, reason, receipt_uuid: receipt.receipt_uuid }
                }
              ]
            } satisfies Plan
          })
        )
      }
      case "DenyByPolicy": {
        const row = request.row
        return Effect.gen(function* () {
          yield* store.insert(row)
          const receipt = yield* signFor(row, { receipt_status: "denied", outcome: null, outcome_hash: null, output_scan_flags: null, approval: null })
          yield* store.finishAndAdvance(
            row.action_uuid,
            { status: "denied_by_policy", denial_reason: request.reasoning, receipt: receipt.minted, agent_sequence: receipt.sequence },
            receipt.chain,
            stampEvents([
              {
                orgUuid,
                type: "action.denied_by_policy",
                data: {
                  action_uuid: row.action_uuid,
                  action_type: row.action_type,
                  agent_id: row.agent_id,
                  policy_uuid: request.policy_uuid,
                  receipt_uuid: receipt.minted.receipt_uuid,
                  reason: request.reasoning
                }
              }
            ]),
            minter.insertion(receipt.signed)
          )
          if (request.idempotency_key !== null) {
            const denied = new PolicyDenied({ action_uuid: row.action_uuid, policy_uuid: request.policy_uuid, reasoning: request.reasoning, receipt_uuid: receipt.minted.receipt_uuid })
            yield* store.completeIdempotency(orgUuid, request.idempotency_key, 403, refusalBody(denied))
          }
          return done(row, receipt.minted, receipt.sequence)
        })
      }
    }
  }

  type Planned = Effect.Effect<TransitionResult, ActionsError | typeof SKIP | { readonly _tag: "SqlError" }, never>

  /** A request's own outcome: a refusal or a skip is its answer; anything else (SQL) fails the transaction. */
  const settle = (orgUuid: string, request: TransitionRequest) =>
    (plan(orgUuid, request) as Planned).pipe(
      Effect.catch((error) =>
        error === SKIP ? Effect.succeed<TransitionResult>({ _tag: "Skipped" }) : error instanceof ActionsError ? Effect.fail(error) : Effect.die(error)
      )
    )

  const run = (orgUuid: string, request: TransitionRequest): Effect.Effect<TransitionResult, ActionsError> =>
    sql.withTransaction(settle(orgUuid, request)).pipe(Effect.catch((error) => (error instanceof ActionsError ? Effect.fail(error) : Effect.die(error))))

  /**
   * Group commit. Every refusal is decided before its request writes anything (plans check
   * state first), so a refused request leaves nothing behind in the shared transaction and
   * needs no savepoint. If the transaction itself fails, nothing of it committed: each request
   * runs again alone, so one bad request costs the others only time.
   */
  const runBatch = (
    orgUuid: string,
    requests: ReadonlyArray<TransitionRequest>
  ): Effect.Effect<ReadonlyArray<Exit.Exit<TransitionResult, ActionsError>>> => {
    if (requests.length === 1) return Effect.map(Effect.exit(run(orgUuid, requests[0]!)), (exit) => [exit])
    const together = sql.withTransaction(
      // Refusals become their request's answer; a defect aborts the whole transaction.
      Effect.forEach(requests, (request) =>
        settle(orgUuid, request).pipe(
          Effect.map((result) => Exit.succeed(result) as Exit.Exit<TransitionResult, ActionsError>),
          Effect.catch((error) => Effect.succeed(Exit.fail(error)))
        )
      )
    )
    return together.pipe(
      Effect.catchCause(() => Effect.forEach(requests, (request) => Effect.exit(run(orgUuid, request))))
    )
  }

  const head = (orgUuid: string, agentId: string): Effect.Effect<ChainHead> =>
    sql`SELECT last_sequence, last_payload_hash FROM agent_chains WHERE org_uuid = ${orgUuid} AND agent_id = ${agentId}`.pipe(
      Effect.map((rows: ReadonlyArray<any>) => ({
        agent_sequence: Number(rows[0]?.last_sequence ?? 0),
        previous_payload_hash: (rows[0]?.last_payload_hash ?? null) as string | null
      })),
      Effect.orDie
    )

  return AgentWork.of({ run, runBatch, head })
})

/** AgentWork for the entity handler; needs SqlClient and ReceiptMinter. */
export const agentWorkLayer = Layer.effect(AgentWork)(makeTransitions)
