/**
 * Metering (CONTRACT-sdk-beyond "Conventions"): one `usage_events` row per metered event.
 * No plan quota reads these rows; they are the organization's usage record.
 */
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql"

/** Writes one `usage_events` row `(org_uuid, event_type, subject)` now. */
export const meterUsage = (orgUuid: string, eventType: string, subject: string | null) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO usage_events (org_uuid, event_type, subject) VALUES (${orgUuid}, ${eventType}, ${subject})`.pipe(Effect.orDie)
  })
