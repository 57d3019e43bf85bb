/**
 * The event catalogue: webhook event names and their payloads' common fields.
 * The spec's events plus the action lifecycle events of this gateway.
 */
export const EventTypes = [
  "case.complete",
  "case.requires_human_review",
  "case.approved",
  "case.denied",
  "action.approval_requested",
  "action.approved",
  "action.denied",
  "action.authorized",
  "action.notarized",
  "action.failed",
  "action.denied_by_policy",
  "action.expired",
  "action.auto_merged",
  "drift.alert"
] as const
export type EventType = (typeof EventTypes)[number]

export const isEventType = (value: string): value is EventType => (EventTypes as ReadonlyArray<string>).includes(value)
