/** Wire types of the calls the dashboard makes, taken from protocol/ (types only: nothing of Effect reaches the bundle). */
import type { LoginResponse as LoginResponseSchema } from "../../protocol/accounts.ts"
import type { ActionDetail as ActionDetailSchema, ActionListItem as ActionListItemSchema, ActionStatus as ActionStatusType, ApprovalResult as ApprovalResultSchema, ApprovalReview as ApprovalReviewSchema } from "../../protocol/actions.ts"
import type { Pagination } from "../../protocol/common.ts"
import type { Explanation as ExplanationSchema } from "../../protocol/explanations.ts"
import type { ServerFrame } from "../../protocol/frames.ts"
import type { NotificationEvent, NotificationItem, PendingNotifications as PendingSchema } from "../../protocol/notifications.ts"
import type { Jwks as JwksSchema, PublicJwk as PublicJwkSchema, StoredReceipt as StoredReceiptSchema } from "../../protocol/receipts.ts"

export type LoginResponse = typeof LoginResponseSchema.Type
export type ActionDetail = typeof ActionDetailSchema.Type
export type ApprovalResult = typeof ApprovalResultSchema.Type
export type ApprovalReview = typeof ApprovalReviewSchema.Type
export type PendingNotifications = typeof PendingSchema.Type
export type { NotificationEvent, NotificationItem, ServerFrame }

/** Every error body carries these (CONTRACT.md "Errors and lists"). */
export interface ErrorBody {
  readonly code?: string
  readonly message?: string
}

export type ActionStatus = ActionStatusType
export type ActionListItem = typeof ActionListItemSchema.Type
export interface ActionList {
  readonly data: ReadonlyArray<ActionListItem>
  readonly pagination: Pagination
}
export type StoredReceipt = typeof StoredReceiptSchema.Type
export type Jwks = typeof JwksSchema.Type
export type PublicJwk = typeof PublicJwkSchema.Type
export type Explanation = typeof ExplanationSchema.Type
