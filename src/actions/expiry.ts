/** Pending approvals past their deadline become denied_by_human ("expired"), each with its receipt. */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { ActionsContext } from "./context.js"

export interface Expirable {
  readonly orgUuid: string
  readonly agentId: string | null
  readonly actionUuid: string
}

export const makeExpiry = ({ store, announceStatus, announceNotification, transition }: ActionsContext) => {
  /** Expires one pending approval if it is (still) past its deadline; the row it left, or undefined when nothing changed. */
  const expireOne = (item: Expirable) =>
    Clock.currentTimeMillis.pipe(
      Effect.flatMap((now) => transition(item.orgUuid, item.agentId, { _tag: "Expire", action_uuid: item.actionUuid, at: new Date(now).toISOString() })),
      Effect.map((result) => (result._tag === "Done" ? result.action : undefined)),
      // Skipped: someone resolved it first; any other failure here is a defect of the sweep.
      Effect.orDie,
      Effect.tap((row) =>
        row === undefined
          ? Effect.void
          : Effect.andThen(announceStatus(row, "denied_by_human", { reason: "expired" }), announceNotification(row, "resolved", "denied_by_human"))
      )
    )

  /** Expires every pending approval past its deadline. Returns how many. */
  const expireDue = Effect.fn("Actions.expireDue")(function* () {
    let expired = 0
    for (;;) {
      const due = yield* store.expired(100)
      if (due.length === 0) return expired
      let progressed = 0
      for (const item of due) {
        if ((yield* expireOne(item)) !== undefined) {
          expired++
          progressed++
        }
      }
      if (progressed === 0) return expired
    }
  })

  return { expireOne, expireDue }
}
