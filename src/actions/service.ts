/**
 * Actions: authorize an intent, notarize its outcome, human approvals (code,
 * legacy token, dashboard), expiry of pending approvals, cosignatures, legal
 * holds and parent chains. Each lives in its own module; this one assembles
 * the service and its background sweep.
 *
 * Every terminal transition (notarized, failed, denied_by_policy,
 * denied_by_human) mints its receipt inside the transaction that changes the
 * status; the transition runs in the agent's AgentActor (actors/agent.ts, one
 * message at a time per agent) and takes the (org, agent) chain row lock (see
 * transitions.ts); events are recorded in that same transaction and announced
 * to live channels after commit.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import type {
  ActionDetail,
  ActionListItem,
  ApprovalReview,
  AuthorizeRequest,
  AuthorizeResponse,
  ChainLink,
  Cosignature,
  NotarizeRequest,
  NotarizeResponse,
  ReplayContext
} from "../../protocol/actions.js"
import type { Principal } from "../../protocol/auth.js"
import type { Pagination } from "../../protocol/common.js"
import { Config } from "../platform/config.js"
import { logLine } from "../platform/log.js"
import type { TokenDecision } from "./approvals.js"
import { makeApprovalsFlow } from "./approvals-flow.js"
import { makeAuthorize } from "./authorize.js"
import { makeActionsContext } from "./context.js"
import { type Decision, makeDecide, type Resolution } from "./decide.js"
import type { ActionsError } from "./errors.js"
import { makeExpiry } from "./expiry.js"
import { IDEMPOTENCY_RETENTION_MS } from "./idempotency.js"
import { makeNotarize } from "./notarize.js"
import type { AuthorizeOptions, NotarizeOptions } from "./options.js"
import { makeOversight } from "./oversight.js"
import { ApprovalsPort, type PendingApproval } from "./ports.js"
import { type ActionFilter, makeReads } from "./reads.js"

export interface ActionsService {
  readonly authorize: (principal: Principal, input: AuthorizeRequest, options?: AuthorizeOptions) => Effect.Effect<AuthorizeResponse, ActionsError>
  readonly notarize: (principal: Principal, actionUuid: string, input: NotarizeRequest, options?: NotarizeOptions) => Effect.Effect<NotarizeResponse, ActionsError>
  readonly get: (principal: Principal, actionUuid: string) => Effect.Effect<ActionDetail, ActionsError>
  readonly list: (
    principal: Principal,
    filter: ActionFilter,
    page: number,
    perPage: number
  ) => Effect.Effect<{ readonly data: ReadonlyArray<ActionListItem>; readonly actions: ReadonlyArray<ActionListItem>; readonly pagination: Pagination }>
  readonly chain: (principal: Principal, actionUuid: string) => Effect.Effect<{ readonly action_uuid: string; readonly chain: ReadonlyArray<ChainLink> }, ActionsError>
  /** What an external replay tool needs of the action (CONTRACT-sdk-beyond §1). */
  readonly replayContext: (principal: Principal, actionUuid: string) => Effect.Effect<ReplayContext, ActionsError>
  /** Up to `limit` actions awaiting approval, newest first. */
  readonly pending: (orgUuid: string, limit: number) => Effect.Effect<ReadonlyArray<PendingApproval>>
  /** What the approval page shows for a code. */
  readonly review: (code: string) => Effect.Effect<ApprovalReview, ActionsError>
  /** The same review for a signed-in approver of the action (the dashboard), whatever its status. */
  readonly reviewFromDashboard: (principal: Principal, actionUuid: string) => Effect.Effect<ApprovalReview, ActionsError>
  readonly confirm: (code: string, decision: Decision, reason: string | null, requestId: string) => Effect.Effect<Resolution, ActionsError>
  readonly byToken: (
    actionUuid: string,
    decision: TokenDecision,
    token: string | undefined,
    reason: string | null,
    requestId: string
  ) => Effect.Effect<Resolution, ActionsError>
  readonly fromDashboard: (principal: Principal, actionUuid: string, decision: Decision, requestId: string, reason?: string | null) => Effect.Effect<Resolution, ActionsError>
  readonly cosign: (principal: Principal, actionUuid: string, requestId: string) => Effect.Effect<Cosignature, ActionsError>
  readonly setHold: (principal: Principal, actionUuid: string, hold: boolean, requestId: string) => Effect.Effect<{ readonly action_uuid: string; readonly legal_hold: boolean }, ActionsError>
  /** Expires every pending approval past its deadline; answers how many. */
  readonly expireDue: () => Effect.Effect<number>
  /** Drops idempotency records past their retention. */
  readonly pruneIdempotency: Effect.Effect<void>
}

export const makeActions = Effect.gen(function* () {
  const context = yield* makeActionsContext
  const { expireOne, expireDue } = makeExpiry(context)
  const decide = makeDecide(context, expireOne)
  return Actions.of({
    authorize: yield* makeAuthorize(context),
    notarize: yield* makeNotarize(context),
    ...makeReads(context),
    ...makeApprovalsFlow(context, decide, expireOne),
    ...makeOversight(context),
    expireDue,
    // Every sweep computes its own cut-off.
    pruneIdempotency: Effect.flatMap(Clock.currentTimeMillis, (now) =>
      context.store.pruneIdempotency(new Date(now - IDEMPOTENCY_RETENTION_MS).toISOString())
    )
  })
})

export type { AuthorizeOptions, NotarizeOptions }

export class Actions extends Context.Service<Actions, ActionsService>()("gateway/Actions") {
  /** The service, plus the background sweep that expires pending approvals (and prunes idempotency records). */
  static readonly layer = Layer.effect(Actions)(
    Effect.gen(function* () {
      const actions = yield* makeActions
      const { approvalSweepMs } = yield* Config
      const sweep = Effect.gen(function* () {
        yield* actions.expireDue()
        yield* actions.pruneIdempotency
      }).pipe(Effect.catchCause((cause) => Effect.sync(() => logLine("error", "action expiry sweep failed", { cause: String(cause) }))))
      yield* Effect.forkScoped(Effect.repeat(sweep, Schedule.spaced(approvalSweepMs)))
      return actions
    })
  )

  /** Actions and the ApprovalsPort together, as app.ts wires them. */
  static get live() {
    return Layer.provideMerge(Actions.approvalsLayer, Actions.layer)
  }

  /** The ApprovalsPort other areas (notifications, the approval page) consume. */
  static readonly approvalsLayer = Layer.effect(ApprovalsPort)(
    Effect.gen(function* () {
      const actions = yield* Actions
      return ApprovalsPort.of({
        pending: (orgUuid, limit) => actions.pending(orgUuid, limit),
        review: (code) => actions.review(code),
        confirm: (code, decision, reason, requestId) => actions.confirm(code, decision, reason ?? null, requestId)
      })
    })
  )
}
