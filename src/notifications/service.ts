/**
 * What needs a human in the caller's organization (pending approvals, cases in review), with read state per
 * dashboard user. API-key callers have no read state: everything is unread
 * and marking does nothing.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Principal } from "../../protocol/auth.js"
import { NOTIFICATIONS_PER_TYPE, type NotificationItem } from "../../protocol/notifications.js"
import { approvalNotificationItem } from "../actions/approvals.js"
import { ApprovalsPort } from "../actions/ports.js"
import { caseReviewItem } from "../cases/views.js"
import { makeNotificationsStore } from "./store.js"

/** Newest first; items without a time go last. */
const newestFirst = (a: NotificationItem, b: NotificationItem) => (b.created_at ?? "").localeCompare(a.created_at ?? "")

export interface PendingNotifications {
  readonly items: Array<NotificationItem>
  readonly total: number
  readonly unread_count: number
}

export interface NotificationsService {
  readonly pending: (principal: Principal) => Effect.Effect<PendingNotifications>
  /** Only keys of items the organization currently has pending count, so foreign or made-up keys mark nothing. */
  readonly markRead: (principal: Principal, keys: ReadonlyArray<string>) => Effect.Effect<{ readonly marked: number }>
  readonly markAllRead: (principal: Principal) => Effect.Effect<{ readonly marked: number }>
}

export const makeNotifications = Effect.gen(function* () {
  const store = yield* makeNotificationsStore
  const approvals = yield* ApprovalsPort

  const pendingKeys = Effect.fnUntraced(function* (orgUuid: string) {
    const actions = yield* approvals.pending(orgUuid, NOTIFICATIONS_PER_TYPE)
    const cases = yield* store.casesInReview(orgUuid, NOTIFICATIONS_PER_TYPE)
    return [...actions.map((row) => `action:${row.action_uuid}`), ...cases.map((row) => `case:${row.case_id}`)]
  })

  const pending = Effect.fn("Notifications.pending")(function* (principal: Principal) {
    const rows = yield* approvals.pending(principal.orgUuid, NOTIFICATIONS_PER_TYPE)
    const cases = yield* store.casesInReview(principal.orgUuid, NOTIFICATIONS_PER_TYPE)
    const keys = [...rows.map((row) => `action:${row.action_uuid}`), ...cases.map((row) => `case:${row.case_id}`)]
    const read = principal.kind === "jwt" ? yield* store.readKeys(principal.userUuid, keys) : new Set<string>()
    const items = [
      ...rows.map((row): NotificationItem => approvalNotificationItem(row, read.has(`action:${row.action_uuid}`))),
      ...cases.map((row): NotificationItem => caseReviewItem(row, read.has(`case:${row.case_id}`)))
    ].sort(newestFirst)
    return { items, total: items.length, unread_count: items.filter((item) => !item.read).length }
  })

  const markRead = Effect.fn("Notifications.markRead")(function* (principal: Principal, keys: ReadonlyArray<string>) {
    if (principal.kind !== "jwt") return { marked: 0 }
    const known = new Set(yield* pendingKeys(principal.orgUuid))
    const wanted = keys.filter((key) => known.has(key))
    return { marked: yield* store.markRead(principal.userUuid, wanted) }
  })

  const markAllRead = Effect.fn("Notifications.markAllRead")(function* (principal: Principal) {
    if (principal.kind !== "jwt") return { marked: 0 }
    return { marked: yield* store.markRead(principal.userUuid, yield* pendingKeys(principal.orgUuid)) }
  })

  return Notifications.of({ pending, markRead, markAllRead })
})

export class Notifications extends Context.Service<Notifications, NotificationsService>()("gateway/Notifications") {
  static readonly layer = Layer.effect(Notifications)(makeNotifications)
}
