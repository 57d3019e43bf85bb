/**
 * The event catalogue: webhook event names and their payloads' common fields.
 * The spec's events plus the action lifecycle events of this gateway.
 */
import { EventTypes } from "./lists.js"

export { EventTypes }
export type EventType = (typeof EventTypes)[number]

export const isEventType = (value: string): value is EventType => (EventTypes as ReadonlyArray<string>).includes(value)
