/**
 * A human decision on a pending action, however it arrived (code, legacy token, dashboard). An
 * approval is a status change; a denial is terminal and mints its receipt in the agent's actor.
 * A decision by code or token spends the approver's grant in the same transaction (single use).
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { ActionsContext } from "./context.js"
import { ActionNotFound, CredentialExpired, refuse } from "./errors.js"
import type { Expirable } from "./expiry.js"
import type { ActionRow } from "./store.js"
import { noLongerPending } from "./transitions.js"

export type Decision = "approve" | "deny"
export type Via = "code" | "token" | "dashboard"

export interface Resolution {
  readonly status: "approved" | "denied_by_human"
  readonly action_uuid: string
  readonly approver_email: string | null
}

export const makeDecide = (
  { store, transaction, record, announceStatus, announceNotification, transition }: ActionsContext,
  expireOne: (item: Expirable) => Effect.Effect<unknown>
) => {
  const approve = (row: ActionRow, by: string | null, via: Via, at: string, grantId: string | null) =>
    transaction(
      Effect.gen(function* () {
          const locked = yield* store.byId(row.org_uuid, row.action_uuid, true)
          if (locked === undefined) return yield* refuse(new ActionNotFound({}))
          const refused = noLongerPending(locked, grantId, Date.parse(at))
          if (refused !== undefined) return yield* refuse(refused)
          if (grantId !== null && !(yield* store.useGrant(grantId))) return yield* refuse(CredentialExpired.of("credential"))
          yield* store.approve(row.action_uuid, by, via, at)
          yield* record([
            {
              orgUuid: row.org_uuid,
              type: "action.approved",
              data: { action_uuid: row.action_uuid, action_type: row.action_type, agent_id: row.agent_id, approved_by: by, via, approved_at: at }
            }
          ])
        })
    )

  return (row: ActionRow, decision: Decision, by: string | null, via: Via, reason: string | null, grantId: string | null) =>
    Effect.gen(function* () {
      const at = new Date(yield* Clock.currentTimeMillis).toISOString()
      if (decision === "approve") {
        yield* approve(row, by, via, at, grantId)
        yield* announceStatus(row, "approved", { approved_by: by })
        yield* announceNotification(row, "resolved", "approved")
        return { status: "approved", action_uuid: row.action_uuid, approver_email: by } satisfies Resolution
      }
      yield* transition(row.org_uuid, row.agent_id, { _tag: "Deny", action_uuid: row.action_uuid, by, at, via, reason, grant_id: grantId })
      yield* announceStatus(row, "denied_by_human", { denied_by: by })
      yield* announceNotification(row, "resolved", "denied_by_human")
      return { status: "denied_by_human", action_uuid: row.action_uuid, approver_email: by } satisfies Resolution
    }).pipe(
      // A decision that lost the race against the deadline leaves the action expired, never pending past it.
      Effect.tapError(() => expireOne({ orgUuid: row.org_uuid, agentId: row.agent_id, actionUuid: row.action_uuid }))
    )
}
