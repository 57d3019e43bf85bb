/** What people add to an action after the fact: cosignatures and legal holds (both audited). */
import * as Effect from "effect/Effect"
import type { Principal } from "../../protocol/auth.js"
import { newUuid } from "../platform/ids.js"
import type { ActionsContext } from "./context.js"
import { ActionNotFound, AlreadyCosigned, NotAllowedToDecide, refuse } from "./errors.js"

export const makeOversight = ({ store, transaction }: ActionsContext) => {
  const cosign = Effect.fn("Actions.cosign")(function* (principal: Principal, actionUuid: string, requestId: string) {
    const row = yield* store.byId(principal.orgUuid, actionUuid)
    if (row === undefined) return yield* refuse(new ActionNotFound({}))
    // Four eyes: a member's cosignature of their own action would vouch for nothing.
    if (principal.role === "member" && row.authorized_by === principal.userUuid) return yield* refuse(NotAllowedToDecide.of("own_action"))
    const created = yield* store.cosign({
      cosignature_uuid: newUuid(),
      org_uuid: principal.orgUuid,
      action_uuid: actionUuid,
      user_uuid: principal.userUuid,
      email: principal.email
    })
    if (created === undefined) return yield* refuse(AlreadyCosigned.of(actionUuid))
    yield* store.audit({
      orgUuid: principal.orgUuid,
      actor: principal.email,
      event: "action.cosigned",
      target: actionUuid,
      details: { cosignature_uuid: created.cosignature_uuid },
      requestId
    })
    return created
  })

  const setHold = Effect.fn("Actions.setHold")(function* (principal: Principal, actionUuid: string, hold: boolean, requestId: string) {
    const found = yield* transaction(
      Effect.gen(function* () {
        const updated = yield* store.setHold(principal.orgUuid, actionUuid, hold)
        if (updated) {
          const event = hold ? "action.legal_hold.placed" : "action.legal_hold.released"
          yield* store.audit({ orgUuid: principal.orgUuid, actor: principal.email, event, target: actionUuid, requestId })
        }
        return updated
      })
    )
    if (!found) return yield* refuse(new ActionNotFound({}))
    return { action_uuid: actionUuid, legal_hold: hold }
  })

  return { cosign, setHold }
}
