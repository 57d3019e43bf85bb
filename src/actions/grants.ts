/**
 * Issues personal approval grants: for each approver a code (its keyed
 * digest stored) and approve/deny tokens that name the grant.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Config } from "../platform/config.js"
import { newId } from "../platform/ids.js"
import { Secrets } from "../platform/secrets.js"
import { actionApprovers, approvalCodeDigest, newApprovalCode, signApprovalToken } from "./approvals.js"
import { ApprovalGrants, type IssuedGrant } from "./ports.js"
import { makeActionsStore, type NewGrant } from "./store.js"

export const ApprovalGrantsLive = Layer.effect(ApprovalGrants)(
  Effect.gen(function* () {
    const { baseUrl } = yield* Config
    const { tokenKey } = yield* Secrets
    const store = yield* makeActionsStore

    const issue = Effect.fn("ApprovalGrants.issue")(function* (orgUuid: string, actionUuid: string) {
      const action = yield* store.byId(orgUuid, actionUuid)
      if (action === undefined || action.status !== "pending_approval" || action.approval_expires_at === null) return []
      const expiresAt = new Date(action.approval_expires_at)
      if (expiresAt.getTime() <= (yield* Clock.currentTimeMillis)) return []
      const emails = actionApprovers(action, yield* store.defaultApprovers(orgUuid), yield* store.activeMembers(orgUuid))
      const fresh = emails.map((email) => ({ email, code: newApprovalCode(), grantId: newId("apg") }))
      const inserted = yield* store.insertGrants(
        fresh.map(
          (grant): NewGrant => ({
            grant_id: grant.grantId,
            org_uuid: orgUuid,
            action_uuid: actionUuid,
            approver_email: grant.email,
            code_digest: approvalCodeDigest(tokenKey, grant.code),
            expires_at: action.approval_expires_at!
          })
        )
      )
      const link = (decision: "approve" | "deny", grantId: string) =>
        `${baseUrl}/api/v1/actions/${actionUuid}/${decision}?token=${signApprovalToken(tokenKey, actionUuid, grantId, decision, expiresAt)}`
      return fresh
        .filter((grant) => inserted.has(grant.grantId))
        .map(
          (grant): IssuedGrant => ({
            email: grant.email,
            code: grant.code,
            approval_url: `${baseUrl}/approve/${grant.code}`,
            approve_url: link("approve", grant.grantId),
            deny_url: link("deny", grant.grantId),
            expires_at: action.approval_expires_at!
          })
        )
    })

    return ApprovalGrants.of({ issue })
  })
)
