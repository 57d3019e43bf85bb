/**
 * The ways a human reaches a decision: a personal code (the approval page and its API), a legacy
 * approve/deny token, or the dashboard. Each checks its credential, then `decide` does the rest.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { Principal } from "../../protocol/auth.js"
import { mayApprove } from "../access/approvers.js"
import { actionApprovers, approvalCodeDigest, authorizingMember, checkApprovalToken, type TokenDecision, vouchedAddresses } from "./approvals.js"
import type { ActionsContext } from "./context.js"
import type { Decision, makeDecide, Via } from "./decide.js"
import { ActionNotFound, AlreadyResolved, ApprovalExpired, CodeNotFound, CredentialExpired, NotAllowedToDecide, refuse } from "./errors.js"
import type { Expirable } from "./expiry.js"
import type { ActionRow, GrantRow } from "./store.js"
import { pastDeadline } from "./transitions.js"

export const makeApprovalsFlow = (
  { secrets, store }: ActionsContext,
  decide: ReturnType<typeof makeDecide>,
  expireOne: (item: Expirable) => Effect.Effect<unknown>
) => {
  const expire = (row: ActionRow) => expireOne({ orgUuid: row.org_uuid, agentId: row.agent_id, actionUuid: row.action_uuid })

  /**
   * A grant's holder must still be someone the organization vouches for (a member who left is not),
   * and never the member who authorized the action (a grant issued before a role change, say).
   */
  const stillEntitled = Effect.fnUntraced(function* (grant: GrantRow, row: ActionRow) {
    const members = yield* store.activeMembers(grant.org_uuid)
    const vouched = vouchedAddresses(yield* store.defaultApprovers(grant.org_uuid), members)
    if (!vouched.has(grant.approver_email)) return yield* refuse(NotAllowedToDecide.of("no_longer_approver"))
    if (authorizingMember(row, members)?.email.toLowerCase() === grant.approver_email.toLowerCase()) return yield* refuse(NotAllowedToDecide.of("own_action"))
  })

  /** A signed-in caller may decide on the action: an approver of it, and not the member who authorized it. */
  const mayDecide = (principal: Principal, row: ActionRow) =>
    Effect.gen(function* () {
      if (principal.role === "member" && row.authorized_by === principal.userUuid) return yield* refuse(NotAllowedToDecide.of("own_action"))
      const approvers = actionApprovers(row, yield* store.defaultApprovers(row.org_uuid), yield* store.activeMembers(row.org_uuid))
      if (!mayApprove(principal, approvers)) return yield* refuse(NotAllowedToDecide.of("not_an_approver"))
    })

  /** The pending action a code grants a decision on, with the grant. */
  const liveCode = (code: string) =>
    Effect.gen(function* () {
      const grant = yield* store.grantByCodeDigest(approvalCodeDigest(secrets.tokenKey, code))
      const row = grant === undefined ? undefined : yield* store.byId(grant.org_uuid, grant.action_uuid)
      if (grant === undefined || row === undefined) return yield* refuse(new CodeNotFound({}))
      const expired = pastDeadline(row, yield* Clock.currentTimeMillis)
      if (expired) yield* expire(row)
      if (grant.used_at !== null || row.status !== "pending_approval" || expired) return yield* refuse(CredentialExpired.of("code"))
      return { grant, row }
    })

  /** What an approver reads: the action and, when the agent stored them, its details (opened from the envelope). */
  const reviewOf = (row: ActionRow) =>
    Effect.gen(function* () {
      let details: string | null = null
      if (row.details_sealed !== null) {
        details = yield* Effect.try({
          try: () => secrets.envelope.openText(row.details_sealed!, `action-details:${row.action_uuid}`),
          catch: (cause) => cause
        }).pipe(Effect.orDie)
      }
      return {
        action_uuid: row.action_uuid,
        action_type: row.action_type,
        agent_id: row.agent_id,
        status: row.status,
        details,
        action_details_hash: row.action_details_hash,
        instruction_hash: row.instruction_hash,
        created_at: row.created_at,
        expires_at: row.approval_expires_at ?? row.created_at
      }
    })

  const review = Effect.fn("Actions.review")(function* (code: string) {
    const { row } = yield* liveCode(code)
    return yield* reviewOf(row)
  })

  /** The same review for a signed-in approver of the action (the dashboard), whatever its status. */
  const reviewFromDashboard = Effect.fn("Actions.reviewFromDashboard")(function* (principal: Principal, actionUuid: string) {
    const row = yield* store.byId(principal.orgUuid, actionUuid)
    if (row === undefined) return yield* refuse(new ActionNotFound({}))
    yield* mayDecide(principal, row)
    return yield* reviewOf(row)
  })

  const decideAndAudit = (row: ActionRow, decision: Decision, actor: string, via: Via, reason: string | null, grantId: string | null, requestId: string) =>
    Effect.gen(function* () {
      const result = yield* decide(row, decision, actor, via, reason, grantId)
      const event = `action.${decision === "approve" ? "approved" : "denied"}`
      yield* store.audit({ orgUuid: row.org_uuid, actor, event, target: row.action_uuid, details: { via }, requestId })
      return result
    })

  const confirm = Effect.fn("Actions.confirm")(function* (code: string, decision: Decision, reason: string | null, requestId: string) {
    const { grant, row } = yield* liveCode(code)
    yield* stillEntitled(grant, row)
    return yield* decideAndAudit(row, decision, grant.approver_email, "code", decision === "deny" ? reason : null, grant.grant_id, requestId)
  })

  const byToken = Effect.fn("Actions.byToken")(function* (actionUuid: string, decision: TokenDecision, token: string | undefined, reason: string | null, requestId: string) {
    const now = yield* Clock.currentTimeMillis
    const check = checkApprovalToken(secrets.tokenKey, actionUuid, decision, token, new Date(now))
    if (check.result === "invalid") return yield* refuse(NotAllowedToDecide.of("token_mismatch"))
    const grant = yield* store.grantById(check.grantId)
    const row = grant === undefined ? undefined : yield* store.byId(grant.org_uuid, actionUuid)
    if (grant === undefined || row === undefined) return yield* refuse(new ActionNotFound({}))
    if (row.status !== "pending_approval") return yield* refuse(AlreadyResolved.of(row.status))
    if (check.result === "expired" || pastDeadline(row, now)) {
      yield* expire(row)
      return yield* refuse(CredentialExpired.of("token"))
    }
    yield* stillEntitled(grant, row)
    return yield* decideAndAudit(row, decision, grant.approver_email, "token", decision === "deny" ? reason : null, grant.grant_id, requestId)
  })

  const fromDashboard = Effect.fn("Actions.fromDashboard")(function* (principal: Principal, actionUuid: string, decision: Decision, requestId: string, reason: string | null = null) {
    const row = yield* store.byId(principal.orgUuid, actionUuid)
    if (row === undefined) return yield* refuse(new ActionNotFound({}))
    yield* mayDecide(principal, row)
    if (row.status !== "pending_approval") return yield* refuse(AlreadyResolved.of(row.status))
    if (pastDeadline(row, yield* Clock.currentTimeMillis)) {
      yield* expire(row)
      return yield* refuse(ApprovalExpired.of())
    }
    return yield* decideAndAudit(row, decision, principal.email, "dashboard", decision === "deny" ? reason : null, null, requestId)
  })

  return { review, reviewFromDashboard, confirm, byToken, fromDashboard }
}
