/**
 * Domain events. `record` writes events with the SqlClient in scope, so called
 * inside a transaction they commit or roll back with the change that caused
 * them (the webhook outbox drains the `events` table). `announce` tells live
 * channels on every gateway process once the change has committed.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql"
import type { EventType } from "../../protocol/events.js"
import { jsonb } from "../platform/db/index.js"
import { newId } from "../platform/ids.js"
import { Fanout } from "../platform/redis/index.js"

export interface DomainEvent {
  readonly orgUuid: string
  readonly type: EventType
  readonly data: Record<string, unknown>
}

export interface RecordedEvent extends DomainEvent {
  readonly eventId: string
  readonly timestamp: string
}

/**
 * Stamps events with ids and one timestamp (`now`, epoch ms), ready for `eventRowsJson`. The
 * default reads the system clock for callers outside an Effect.
 */
export const stampEvents = (events: ReadonlyArray<DomainEvent>, now: number = Date.now()): ReadonlyArray<RecordedEvent> => {
  const timestamp = new Date(now).toISOString()
  return events.map((event) => ({ ...event, eventId: newId("evt"), timestamp }))
}

/** The jsonb parameter for `INSERT INTO events ... FROM jsonb_to_recordset(...)` (stores that fold the outbox insert into their own statement use it). */
export const eventRowsJson = (recorded: ReadonlyArray<RecordedEvent>) =>
  jsonb(recorded.map((event) => ({ event_id: event.eventId, org_uuid: event.orgUuid, type: event.type, data: event.data, created_at: event.timestamp })))

/** Live-channel topics, always prefixed by the organization so tenants never share one. */
export const orgTopic = (orgUuid: string, channel: string) => `org:${orgUuid}:${channel}`

export interface EventsService {
  /** Writes with the SqlClient in scope; a failed insert is a defect: it rolls back the caller's transaction. */
  readonly record: (events: ReadonlyArray<DomainEvent>) => Effect.Effect<ReadonlyArray<RecordedEvent>, never, SqlClient.SqlClient>
  readonly announce: (orgUuid: string, channel: string, frame: Record<string, unknown>) => Effect.Effect<void>
}

export class Events extends Context.Service<Events, EventsService>()("gateway/Events") {
  static readonly layer = Layer.effect(Events)(
    Effect.gen(function* () {
      const fanout = yield* Fanout
      // Called with every status change: no span of its own on the hot path.
      const record = Effect.fnUntraced(function* (events: ReadonlyArray<DomainEvent>) {
        if (events.length === 0) return []
        const sql = yield* SqlClient.SqlClient
        const recorded = stampEvents(events, yield* Clock.currentTimeMillis)
        // The outbox insert reads no rows; it fails only with the database.
        yield* Effect.orDie(sql`INSERT INTO events (event_id, org_uuid, type, data, created_at)
                   SELECT event_id, org_uuid, type, data, created_at
                   FROM jsonb_to_recordset(${eventRowsJson(recorded)})
                     AS r(event_id text, org_uuid text, type text, data jsonb, created_at timestamptz)`)
        return recorded
      })
      return Events.of({
        record,
        // Every status change announces: no span of its own on the hot path.
        announce: (orgUuid, channel, frame) => fanout.publish(orgTopic(orgUuid, channel), JSON.stringify(frame))
      })
    })
  )
}
