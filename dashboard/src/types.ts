/** Wire types of the calls the dashboard makes, taken from protocol/ (types only: nothing of Effect reaches the bundle). */
import type { LoginResponse as LoginResponseSchema } from "../../protocol/accounts.ts"
import type { ActionDetail as ActionDetailSchema, ApprovalResult as ApprovalResultSchema } from "../../protocol/actions.ts"
import type { ServerFrame } from "../../protocol/frames.ts"
import type { NotificationEvent, NotificationItem, PendingNotifications as PendingSchema } from "../../protocol/notifications.ts"

export type LoginResponse = typeof LoginResponseSchema.Type
export type ActionDetail = typeof ActionDetailSchema.Type
export type ApprovalResult = typeof ApprovalResultSchema.Type
export type PendingNotifications = typeof PendingSchema.Type
export type { NotificationEvent, NotificationItem, ServerFrame }

/** Every error body carries these (CONTRACT.md "Errors and lists"). */
export interface ErrorBody {
  readonly code?: string
  readonly message?: string
}
