/**
 * Notifications: pending approvals (and, later, cases) needing a human, with
 * per-user read state (spec "Notification item", "Notifications").
 */

import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { Authenticated } from "./auth.js"
import { Forbidden } from "./errors.js"

export const NOTIFICATIONS_PER_TYPE = 50

export const NotificationItem = Schema.Struct({
  id: Schema.String,
  type: Schema.Literals(["action_approval", "case_review"]),
  notification_key: Schema.String,
  title: Schema.String,
  description: Schema.String,
  href: Schema.String,
  created_at: Schema.NullOr(Schema.String),
  read: Schema.Boolean
})
export type NotificationItem = typeof NotificationItem.Type

export const PendingNotifications = Schema.Struct({
  items: Schema.Array(NotificationItem),
  total: Schema.Int,
  unread_count: Schema.Int
})

/**
 * `data` of an `event` frame on the `notifications` WebSocket channel: an item appeared
 * (`notification.created`) or was decided or expired (`notification.resolved`). Frames carry more
 * fields per `notification_type` (action type, agent, status, review_url; a case's review status).
 */
export const NotificationEvent = Schema.Struct({
  type: Schema.Literals(["notification.created", "notification.resolved"]),
  id: Schema.String,
  notification_type: NotificationItem.fields.type,
  notification_key: Schema.String,
  event: Schema.optionalKey(Schema.String),
  status: Schema.optionalKey(Schema.String)
})
export type NotificationEvent = typeof NotificationEvent.Type

export const MarkReadRequest = Schema.Struct({
  notification_keys: Schema.Array(Schema.String.check(Schema.isMaxLength(200))).check(Schema.isMinLength(1), Schema.isMaxLength(100))
})

export const Marked = Schema.Struct({ marked: Schema.Int })

export class NotificationsGroup extends HttpApiGroup.make("notifications")
  .add(
    HttpApiEndpoint.get("pending", "/api/v1/notifications/pending", { error: Forbidden, success: PendingNotifications }),
    HttpApiEndpoint.post("markRead", "/api/v1/notifications/mark-read", { error: Forbidden, payload: MarkReadRequest, success: Marked }),
    HttpApiEndpoint.post("markAllRead", "/api/v1/notifications/mark-all-read", { error: Forbidden, success: Marked })
  )
  .middleware(Authenticated)
  .annotateMerge(
    OpenApi.annotations({
      title: "Notifications",
      description:
        "Items needing a human (pending approvals), newest first, at most 50 per type. Read state is kept per dashboard user; API-key callers see `read: false` and mark nothing."
    })
  )
{}
