/**
 * Metering (CONTRACT-sdk-beyond "Conventions"): one `usage_events` row per metered event.
 * No plan quota reads these rows; they are the organization's usage record.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import { SqlClient } from "effect/sql"
import { logLine } from "./log.js"

/** Writes one `usage_events` row `(org_uuid, event_type, subject)` now. */
export const meterUsage = (orgUuid: string, eventType: string, subject: string | null) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO usage_events (org_uuid, event_type, subject) VALUES (${orgUuid}, ${eventType}, ${subject})`.pipe(Effect.orDie)
  })

interface PendingUsage {
  readonly orgUuid: string
  readonly eventType: string
  readonly subject: string | null
  readonly at: string
}

/** Rows written per statement at most. */
const BATCH_ROWS = 1_000

/**
 * Metering for hot paths (the LLM gateway meters every forwarded call): `meter` only queues the
 * row; a fiber writes what queued every `flushMs` in one statement, and whatever is left when
 * the service stops. A crash loses at most the last `flushMs` of rows, never a call's receipt.
 */
export class UsageMeter extends Context.Service<UsageMeter, { readonly meter: (orgUuid: string, eventType: string, subject: string | null) => void }>()(
  "platform/UsageMeter"
) {
  static readonly layer = (flushMs = 500) =>
    Layer.effect(UsageMeter)(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        let pending: Array<PendingUsage> = []
        const flush = Effect.gen(function* () {
          while (pending.length > 0) {
            const batch = pending.slice(0, BATCH_ROWS)
            pending = pending.slice(batch.length)
            yield* sql`INSERT INTO usage_events (org_uuid, event_type, subject, created_at)
                       SELECT * FROM unnest(${batch.map((row) => row.orgUuid)}::text[], ${batch.map((row) => row.eventType)}::text[],
                                            ${batch.map((row) => row.subject)}::text[], ${batch.map((row) => row.at)}::timestamptz[])`
          }
        }).pipe(Effect.catchCause((cause) => Effect.sync(() => logLine("error", "usage metering failed", { cause: String(cause) }))))
        yield* Effect.forkScoped(Effect.repeat(flush, Schedule.spaced(flushMs)))
        yield* Effect.addFinalizer(() => flush)
        return {
          meter: (orgUuid: string, eventType: string, subject: string | null) => {
            pending.push({ orgUuid, eventType, subject, at: new Date().toISOString() })
          }
        }
      })
    )
}
