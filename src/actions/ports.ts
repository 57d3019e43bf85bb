/**
 * What other areas ask of actions (pending approvals for notification lists
 * and the approval page; implemented here), and what actions ask of the
 * AgentActor (its mailbox; implemented in actors/agent.ts).
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import type { ChainHead, TransitionRequest, TransitionResult } from "./agent-messages.js"
import type { ActionsError } from "./errors.js"

export interface PendingApproval {
  readonly action_uuid: string
  readonly org_uuid: string
  readonly action_type: string
  readonly agent_id: string | null
  readonly created_at: string
}

export interface ApprovalReview {
  readonly action_uuid: string
  readonly action_type: string
  readonly agent_id: string | null
  readonly status: string
  /** Only when the action was created with `store_details: true`. */
  readonly details: string | null
  readonly action_details_hash: string
  readonly instruction_hash: string | null
  readonly created_at: string
  readonly expires_at: string
}

export class ApprovalsPort extends Context.Service<
  ApprovalsPort,
  {
    /** Up to `limit` actions awaiting approval, newest first. */
    readonly pending: (orgUuid: string, limit: number) => Effect.Effect<ReadonlyArray<PendingApproval>>
    /** What the approval page shows for a code; fails as `GET /actions/approval/{code}`. */
    readonly review: (code: string) => Effect.Effect<ApprovalReview, ActionsError>
    /** Same as `POST /actions/approval/{code}/confirm`. */
    readonly confirm: (
      code: string,
      decision: "approve" | "deny",
      reason: string | undefined,
      requestId: string
    ) => Effect.Effect<{ status: string; action_uuid: string; approver_email: string | null }, ActionsError>
  }
>()("gateway/ApprovalsPort") {}

/** One approver's personal credentials, as sent to that approver (and nowhere else). */
export interface IssuedGrant {
  readonly email: string
  readonly code: string
  /** `{BASE_URL}/approve/{code}`: the approval page. */
  readonly approval_url: string
  readonly approve_url: string
  readonly deny_url: string
  readonly expires_at: string
}

/**
 * Personal approval credentials (CONTRACT.md "Approval secrets reach approvers
 * only"). The e-mail channel is their only consumer: without it none exist.
 */
export class ApprovalGrants extends Context.Service<
  ApprovalGrants,
  {
    /**
     * New grants for each approver of a still-pending action who holds none
     * yet; empty when the action is gone or resolved. The codes exist only in
     * the answer: store them nowhere.
     */
    readonly issue: (orgUuid: string, actionUuid: string) => Effect.Effect<ReadonlyArray<IssuedGrant>>
  }
>()("gateway/ApprovalGrants") {}

/** The transition work the AgentActor runs, in the process that holds the agent's entity. Implemented in `transitions.ts`. */
export class AgentWork extends Context.Service<
  AgentWork,
  {
    readonly head: (orgUuid: string, agentId: string) => Effect.Effect<ChainHead>
    readonly run: (orgUuid: string, request: TransitionRequest) => Effect.Effect<TransitionResult, ActionsError>
    /**
     * Several transitions of one agent, in order, linked from `head` (the committed head its
     * actor keeps): one outcome per request, all known only after their commit, and the head
     * after them. A defect (an SQL failure) surfaces as that request's `Exit.die`.
     */
    readonly runGroup: (
      orgUuid: string,
      agentId: string,
      head: ChainHead,
      requests: ReadonlyArray<TransitionRequest>
    ) => Effect.Effect<{ readonly exits: ReadonlyArray<Exit.Exit<TransitionResult, ActionsError>>; readonly head: ChainHead }>
  }
>()("gateway/AgentWork") {}

/** Sends one transition to the agent's actor and waits for its reply (after commit). Implemented in actors/agent.ts. */
export class AgentMailbox extends Context.Service<
  AgentMailbox,
  {
    readonly transition: (orgUuid: string, agentId: string | null, request: TransitionRequest) => Effect.Effect<TransitionResult, ActionsError>
    readonly head: (orgUuid: string, agentId: string | null) => Effect.Effect<ChainHead>
  }
>()("gateway/AgentMailbox") {}

/** An action as it was recorded: what an observer of new actions is told. */
export interface RecordedAction {
  readonly org_uuid: string
  readonly agent_id: string | null
  readonly action_type: string
  readonly created_at: string
}

/**
 * Told of every new action after its row committed (drift keeps its live counts with it;
 * implemented in src/drift). Optional: without one, actions tell no one.
 */
export class ActionObserver extends Context.Service<ActionObserver, { readonly recorded: (action: RecordedAction) => Effect.Effect<void> }>()(
  "gateway/ActionObserver"
) {}
