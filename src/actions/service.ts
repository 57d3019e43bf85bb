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
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import { Config } from "../platform/config.js"
import { logLine } from "../platform/log.js"
import { makeApprovalsFlow } from "./approvals-flow.js"
import { makeAuthorize } from "./authorize.js"
import { makeActionsContext } from "./context.js"
import { makeDecide } from "./decide.js"
import { makeExpiry } from "./expiry.js"
import { IDEMPOTENCY_RETENTION_MS } from "./idempotency.js"
import { makeNotarize } from "./notarize.js"
import { makeOversight } from "./oversight.js"
import { ApprovalsPort } from "./ports.js"
import { makeReads } from "./reads.js"

export const makeActions = Effect.gen(function* () {
  const context = yield* makeActionsContext
  const { expireOne, expireDue } = makeExpiry(context)
  const decide = makeDecide(context, expireOne)
  return {
    authorize: yield* makeAuthorize(context),
    notarize: yield* makeNotarize(context),
    ...makeReads(context),
    ...makeApprovalsFlow(context, decide, expireOne),
    ...makeOversight(context),
    expireDue,
    // Suspended so every sweep computes its own cut-off.
    pruneIdempotency: Effect.suspend(() => Effect.orDie(context.store.pruneIdempotency(new Date(Date.now() - IDEMPOTENCY_RETENTION_MS).toISOString())))
  }
})

export class Actions extends Context.Service<Actions, Effect.Success<typeof makeActions>>()("gateway/Actions") {
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
