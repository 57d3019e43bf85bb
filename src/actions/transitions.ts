/**
 * The terminal transitions of actions (the ones that mint a receipt), as the
 * AgentActor runs them. The fast path (notarizations, policy denials): checked
 * against the action as its service read it, linked at the head the actor keeps,
 * committed with other agents' work through the commit pipeline (commits.ts),
 * whose guards catch a stale read. The locked path (human decisions, expiries,
 * and whatever the fast path found stale): one transaction that locks the action
 * row and the `agent_chains` head, checks the state, mints the receipt at the
 * head of the agent's chain, writes the action and records the events (outbox).
 *
 * Requests are data (agent-messages.ts) so they can be handled by whichever
 * process holds the agent's entity.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { type DomainEvent, stampEvents } from "../events/service.js"
import { type MintedReceipt, type ReceiptApproval, type ReceiptContent, ReceiptMinter, type ReceiptStatus, type SignedReceipt } from "../receipts/ports.js"
import type { ChainHead, TransitionDone, TransitionRequest, TransitionResult } from "./agent-messages.js"
import { chainAgentId, DEFAULT_AGENT_ID, nextLink } from "./chain.js"
import { ActionCommits, type CommitUnit } from "./commits.js"
import { ActionNotFound, ActionsError, AgentDecommissioned, AlreadyResolved, CredentialExpired, InvalidActionState, PolicyDenied, refuse } from "./errors.js"
import { refusalBody } from "./idempotency.js"
import { AgentWork } from "./ports.js"
import { type ActionRow, makeActionsStore, type TerminalUpdate } from "./store.js"

export const pastDeadline = (row: Pick<ActionRow, "status" | "approval_expires_at">, now: number) =>
  row.status === "pending_approval" && row.approval_expires_at !== null && Date.parse(row.approval_expires_at) <= now

/** Why a decision on `row` cannot go ahead (undefined: it can): a credential is spent, a dashboard decision is too late. */
export const noLongerPending = (row: Pick<ActionRow, "status" | "approval_expires_at">, grantId: string | null, now: number) => {
  if (row.status === "pending_approval" && !pastDeadline(row, now)) return undefined
  return grantId !== null ? CredentialExpired.of("decision") : AlreadyResolved.of(pastDeadline(row, now) ? "denied_by_human" : row.status)
}

const approvalOf = (row: Pick<ActionRow, "approved_at" | "approved_by" | "approval_via">): ReceiptApproval | null =>
  row.approved_at === null
    ? null
    : { decision: "approved", by: row.approved_by, at: row.approved_at, via: (row.approval_via ?? "dashboard") as ReceiptApproval["via"], reason: null }

type ReceiptPart = Pick<ReceiptContent, "receipt_status" | "outcome" | "outcome_hash" | "output_scan_flags" | "approval" | "receipt_uuid">

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
  const commits = yield* ActionCommits

  const head_ = (orgUuid: string, agentId: string): Effect.Effect<ChainHead> => store.chainHead(orgUuid, agentId)

  type Signable = Pick<
    ActionRow,
    | "org_uuid"
    | "action_uuid"
    | "agent_id"
    | "agent_version"
    | "action_type"
    | "action_details_hash"
    | "instruction_hash"
    | "model_id"
    | "model_version"
    | "policy_uuid"
    | "replay_context_hash"
  >

  /** Signs the receipt of `row` as link `link` of its agent's chain; reads and stores nothing. */
  const signAt = (row: Signable, part: ReceiptPart, link: ChainHead, parentPayloadHash: string | null) =>
    minter.sign({
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
      previous_payload_hash: link.previous_payload_hash,
      replay_context_hash: row.replay_context_hash,
      receipt_uuid: part.receipt_uuid ?? null
    })

  /** Signs the receipt of `row` at the head of its agent chain (locked here unless the caller locked it); stores nothing. */
  const signFor = (
    row: Signable & Pick<ActionRow, "parent_action_uuid">,
    part: ReceiptPart,
    lockedHead?: { readonly lastSequence: number; readonly lastPayloadHash: string | null }
  ) =>
    Effect.gen(function* () {
      const agent = chainAgentId(row.agent_id)
      const head = lockedHead ?? (yield* store.lockChain(row.org_uuid, agent))
      const link = nextLink(head)
      const parentPayloadHash = yield* store.parentPayloadHash(row.org_uuid, row.parent_action_uuid)
      const signed = yield* signAt(row, part, link, parentPayloadHash)
      // Receipt, head and action are written by the one statement that finishes the action.
      return { signed, minted: signed.minted, sequence: link.agent_sequence, chain: { orgUuid: row.org_uuid, agentId: agent } }
    })

  const done = (row: Pick<ActionRow, "org_uuid" | "action_uuid" | "action_type" | "agent_id" | "created_at">, minted: MintedReceipt, sequence: number): TransitionDone => ({
    _tag: "Done",
    action: { org_uuid: row.org_uuid, action_uuid: row.action_uuid, action_type: row.action_type, agent_id: row.agent_id, created_at: row.created_at },
    receipt: minted,
    agent_sequence: sequence
  })

  /** Lock the action, let `plan` check its state, mint, write, record events. */
  const onExisting = <E>(orgUuid: string, actionUuid: string, plan: (row: ActionRow, agentDecommissioned: boolean) => Effect.Effect<Plan, E>) =>
    Effect.gen(function* () {
      const locked = yield* store.lockActionAndChain(orgUuid, actionUuid)
      if (locked === undefined) return yield* refuse(new ActionNotFound({}))
      const row = locked.row
      const planned = yield* plan(row, locked.agentDecommissioned)
      const receipt = yield* signFor(row, planned.receipt, locked.head)
      yield* store.finishAndAdvance(
        row.action_uuid,
        { ...planned.update, receipt: receipt.minted, agent_sequence: receipt.sequence },
        receipt.chain,
        stampEvents(planned.events(row, receipt.minted), yield* Clock.currentTimeMillis),
        minter.insertion(receipt.signed)
      )
      return done(row, receipt.minted, receipt.sequence)
    })

  type NotarizeRequest = Extract<TransitionRequest, { _tag: "Notarize" }>
  type PolicyDenialRequest = Extract<TransitionRequest, { _tag: "DenyByPolicy" }>

  const policyDenialEvents = (orgUuid: string, request: PolicyDenialRequest, receipt: MintedReceipt): ReadonlyArray<DomainEvent> => [
    {
      orgUuid,
      type: "action.denied_by_policy",
      data: {
        action_uuid: request.row.action_uuid,
        action_type: request.row.action_type,
        agent_id: request.row.agent_id,
        policy_uuid: request.policy_uuid,
        receipt_uuid: receipt.receipt_uuid,
        reason: request.reasoning
      }
    }
  ]

  /** What a retried authorize with the same idempotency key answers: the 403 of the denial. */
  const policyDenialAnswer = (request: PolicyDenialRequest, receipt: MintedReceipt) =>
    refusalBody(
      PolicyDenied.of({ action_uuid: request.row.action_uuid, policy_uuid: request.policy_uuid, reasoning: request.reasoning, receipt_uuid: receipt.receipt_uuid })
    )
  type NotarizedRow = Pick<ActionRow, "approved_at" | "approved_by" | "approval_via"> & { readonly status: string }

  const notarizing = (orgUuid: string, request: NotarizeRequest, row: NotarizedRow) => {
    if (row.status !== "authorized" && row.status !== "approved") return refuse(InvalidActionState.of(row.status))
    const status = request.outcome === "completed" ? "notarized" : "failed"
    return Effect.succeed<Plan>({
      update: { status, outcome: request.outcome, outcome_hash: request.outcome_hash, output_scan_flags: request.output_scan_flags },
      receipt: {
        receipt_status: status as ReceiptStatus,
        outcome: request.outcome,
        outcome_hash: request.outcome_hash,
        output_scan_flags: request.output_scan_flags,
        approval: approvalOf(row),
        receipt_uuid: request.receipt_uuid ?? null
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
          agentDecommissioned ? refuse(AgentDecommissioned.of(row.agent_id ?? "")) : notarizing(orgUuid, request, row)
        )
      case "Expire":
        return onExisting(orgUuid, request.action_uuid, (row) =>
          Effect.flatMap(Clock.currentTimeMillis, (now) =>
            !pastDeadline(row, now)
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
        )
      case "Deny": {
        const { by, at, via, reason } = request
        return onExisting(orgUuid, request.action_uuid, (locked) =>
          Effect.gen(function* () {
            const refused = noLongerPending(locked, request.grant_id, yield* Clock.currentTimeMillis)
            if (refused !== undefined) return yield* refuse(refused)
            if (request.grant_id !== null && !(yield* store.useGrant(request.grant_id))) {
              return yield* refuse(CredentialExpired.of("credential"))
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
            stampEvents(policyDenialEvents(orgUuid, request, receipt.minted), yield* Clock.currentTimeMillis),
            minter.insertion(receipt.signed)
          )
          if (request.idempotency_key !== null) {
            yield* store.completeIdempotency(orgUuid, request.idempotency_key, 403, policyDenialAnswer(request, receipt.minted))
          }
          return done(row, receipt.minted, receipt.sequence)
        })
      }
    }
  }

  type Planned = Effect.Effect<TransitionResult, ActionsError | typeof SKIP>

  /** A request's own outcome: a refusal or a skip is its answer (SQL failures are defects: they fail the transaction). */
  const settle = (orgUuid: string, request: TransitionRequest) =>
    (plan(orgUuid, request) satisfies Planned).pipe(
      Effect.catch((error) => (error === SKIP ? Effect.succeed<TransitionResult>({ _tag: "Skipped" }) : Effect.fail(error)))
    )

  const run = (orgUuid: string, request: TransitionRequest): Effect.Effect<TransitionResult, ActionsError> =>
    sql.withTransaction(settle(orgUuid, request)).pipe(Effect.catch((error) => (error instanceof ActionsError ? Effect.fail(error) : Effect.die(error))))

  /** What one request of a fast group adds to the group's commit unit once its receipt is linked. */
  interface Linked {
    readonly index: number
    readonly request: TransitionRequest
    readonly result: TransitionDone
    readonly signed: SignedReceipt
    readonly unit: CommitUnit
  }

  /**
   * The fast path of one request: checks it against what it carries (the action as its service
   * read it, or the new row of a policy denial) and signs its receipt at `link`. Undefined: the
   * request needs the locked path (a human decision or an expiry, rare and checked under locks).
   */
  const linkFast = (orgUuid: string, index: number, request: TransitionRequest, link: ChainHead, finishedHere: Map<string, string>) =>
    Effect.gen(function* () {
      if (request._tag === "Notarize") {
        const read = request.read
        if (read.agent_decommissioned) return yield* refuse(AgentDecommissioned.of(read.agent_id ?? ""))
        const planned = yield* notarizing(orgUuid, request, { ...read, status: finishedHere.get(read.action_uuid) ?? read.status })
        const signed = yield* signAt(read, planned.receipt, link, read.parent_payload_hash)
        const status = planned.update.status
        finishedHere.set(read.action_uuid, status)
        return {
          index,
          request,
          signed,
          result: done(read, signed.minted, link.agent_sequence),
          unit: {
            finished: [
              {
                org_uuid: orgUuid,
                action_uuid: read.action_uuid,
                expected_status: read.status,
                status,
                outcome: planned.update.outcome ?? null,
                outcome_hash: planned.update.outcome_hash ?? null,
                output_scan_flags: planned.update.output_scan_flags ?? null,
                receipt: signed.minted,
                agent_sequence: link.agent_sequence
              }
            ],
            events: stampEvents(planned.events(read, signed.minted), yield* Clock.currentTimeMillis)
          }
        } satisfies Linked
      }
      if (request._tag === "DenyByPolicy") {
        const row = request.row
        const part: ReceiptPart = { receipt_status: "denied", outcome: null, outcome_hash: null, output_scan_flags: null, approval: null }
        const signed = yield* signAt(row, part, link, request.parent_payload_hash)
        return {
          index,
          request,
          signed,
          result: done(row, signed.minted, link.agent_sequence),
          unit: {
            inserted: [{ row, finished: { denial_reason: request.reasoning, receipt: signed.minted, agent_sequence: link.agent_sequence } }],
            events: stampEvents(policyDenialEvents(orgUuid, request, signed.minted), yield* Clock.currentTimeMillis),
            idempotency:
              request.idempotency_key === null
                ? []
                : [{ org_uuid: orgUuid, idempotency_key: request.idempotency_key, status_code: 403, response: policyDenialAnswer(request, signed.minted) }]
          }
        } satisfies Linked
      }
      return undefined
    })

  /** One commit unit for a fast group: its rows, receipts and events, and the head moved from `from` to `to`. */
  const unitOf = (orgUuid: string, agentId: string, linked: ReadonlyArray<Linked>, from: ChainHead, to: ChainHead): CommitUnit => ({
    inserted: linked.flatMap((entry) => entry.unit.inserted ?? []),
    finished: linked.flatMap((entry) => entry.unit.finished ?? []),
    receipts: linked.map((entry) => entry.signed),
    events: linked.flatMap((entry) => entry.unit.events ?? []),
    idempotency: linked.flatMap((entry) => entry.unit.idempotency ?? []),
    head: { org_uuid: orgUuid, agent_id: agentId, expected_sequence: from.agent_sequence, last_sequence: to.agent_sequence, last_payload_hash: to.previous_payload_hash ?? "" },
    // A registered agent decommissioned meanwhile stops its notarizations (locked until they commit).
    liveAgents: linked.some((entry) => entry.request._tag === "Notarize") && agentId !== DEFAULT_AGENT_ID ? [{ org_uuid: orgUuid, agent_id: agentId }] : []
  })

  /**
   * A group of one agent's transitions, in order, from the chain head its actor keeps (`head`).
   * Notarizations and policy denials are checked against what they carry, linked and signed here
   * and committed together through the process's commit pipeline; human decisions and expiries
   * run on the locked path (one transaction each, row locks). When the pipeline reports the
   * group stale (an action or the head moved under it) or failed, nothing of it committed: its
   * requests run again on the locked path, which checks them under locks. Answers each request
   * and the head after the group.
   */
  const runGroup = (orgUuid: string, agentId: string, head: ChainHead, requests: ReadonlyArray<TransitionRequest>) =>
    Effect.gen(function* () {
      const exits = new Array<Exit.Exit<TransitionResult, ActionsError>>(requests.length)
      let committed = head
      let current = head
      let linked: Array<Linked> = []
      // Actions this group already finished: a second notarization of one is refused, as under a lock.
      const finishedHere = new Map<string, string>()

      const runLocked = (index: number, request: TransitionRequest) =>
        Effect.map(Effect.exit(run(orgUuid, request)), (exit) => {
          exits[index] = exit
          if (exit._tag === "Success" && exit.value._tag === "Done") {
            committed = current = { agent_sequence: exit.value.agent_sequence, previous_payload_hash: exit.value.receipt.payload_hash }
          }
        })

      const flush = Effect.gen(function* () {
        if (linked.length === 0) return
        const group = linked
        linked = []
        const outcome = yield* Effect.exit(commits.commit(unitOf(orgUuid, agentId, group, committed, current)))
        if (outcome._tag === "Success") {
          for (const entry of group) exits[entry.index] = Exit.succeed(entry.result)
          committed = current
          return
        }
        // Nothing of the group committed; the head in the database is the truth from here on (the locked path reads it anyway).
        const reloaded = yield* Effect.exit(head_(orgUuid, agentId))
        committed = current = reloaded._tag === "Success" ? reloaded.value : committed
        for (const entry of group) yield* runLocked(entry.index, entry.request)
      })

      for (let index = 0; index < requests.length; index++) {
        const request = requests[index]!
        const link = { agent_sequence: current.agent_sequence + 1, previous_payload_hash: current.agent_sequence === 0 ? null : current.previous_payload_hash }
        const fast = yield* Effect.exit(linkFast(orgUuid, index, request, link, finishedHere))
        if (fast._tag === "Failure") {
          exits[index] = Exit.failCause(fast.cause)
          continue
        }
        if (fast.value !== undefined) {
          linked.push(fast.value)
          current = { agent_sequence: link.agent_sequence, previous_payload_hash: fast.value.signed.minted.payload_hash }
          continue
        }
        yield* flush
        yield* runLocked(index, request)
      }
      yield* flush
      return { exits: exits as ReadonlyArray<Exit.Exit<TransitionResult, ActionsError>>, head: current }
    })

  return AgentWork.of({ run, runGroup, head: head_ })
})

/** AgentWork for the entity handler; needs SqlClient and ReceiptMinter. */
export const agentWorkLayer = Layer.effect(AgentWork)(makeTransitions)
