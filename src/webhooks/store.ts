/**
 * SQL of webhooks and deliveries. Times are passed in (from the injectable
 * clock) rather than taken from `now()`, so retry timing can be tested.
 */
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql"
import { jsonb } from "../platform/db/index.js"
import { count, iso, isoRequired, jsonValue } from "../platform/sql.js"

export interface WebhookRow {
  readonly id: string
  readonly org_uuid: string
  readonly url: string
  readonly secret_sealed: string
  readonly events: ReadonlyArray<string>
  readonly status: "active" | "disabled"
  readonly created_at: string
}

export interface DeliveryView {
  readonly id: string
  readonly event: string
  readonly payload: Record<string, unknown>
  readonly status_code: number | null
  readonly attempt: number
  readonly status: "pending" | "delivered" | "failed"
  readonly delivered_at: string | null
  readonly created_at: string
}

/** A claimed delivery with what sending needs. */
export interface DueDelivery {
  readonly id: string
  readonly webhookId: string
  readonly orgUuid: string
  readonly url: string
  readonly secretSealed: string
  readonly payload: Record<string, unknown>
  readonly attempt: number
}

export interface NewDelivery {
  readonly id: string
  readonly webhook_id: string
  readonly org_uuid: string
  readonly event_id: string
  readonly event: string
  readonly payload: Record<string, unknown>
}

export interface ClaimedEvent {
  readonly eventId: string
  readonly orgUuid: string
  readonly type: string
  readonly data: Record<string, unknown>
  readonly createdAt: string
}

const at = (ms: number) => new Date(ms).toISOString()

const webhookOf = (row: any): WebhookRow => ({
  id: row.id,
  org_uuid: row.org_uuid,
  url: row.url,
  secret_sealed: row.secret_sealed,
  events: jsonValue<Array<string>>(row.events, ["*"]),
  status: row.status,
  created_at: isoRequired(row.created_at)
})

export const makeWebhooksStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const insertWebhook = (row: Omit<WebhookRow, "status">) =>
    sql`INSERT INTO webhooks (id, org_uuid, url, secret_sealed, events, status, created_at)
        VALUES (${row.id}, ${row.org_uuid}, ${row.url}, ${row.secret_sealed}, ${jsonb(row.events)}, 'active', ${row.created_at})`.pipe(Effect.asVoid)

  const listWebhooks = (orgUuid: string) =>
    Effect.map(
      sql`SELECT * FROM webhooks WHERE org_uuid = ${orgUuid} AND deleted_at IS NULL ORDER BY created_at, id`,
      (rows) => rows.map(webhookOf)
    )

  const findWebhook = (orgUuid: string, id: string) =>
    Effect.map(
      sql`SELECT * FROM webhooks WHERE id = ${id} AND org_uuid = ${orgUuid} AND deleted_at IS NULL`,
      (rows) => (rows[0] === undefined ? undefined : webhookOf(rows[0]))
    )

  /** Soft delete: the delivery log stays; pending deliveries stop. True when something was deleted. */
  const deleteWebhook = (orgUuid: string, id: string, now: number) =>
    sql.withTransaction(
      Effect.gen(function* () {
        const rows = yield* sql`UPDATE webhooks SET deleted_at = ${at(now)}, status = 'disabled', disabled_reason = 'deleted'
                                WHERE id = ${id} AND org_uuid = ${orgUuid} AND deleted_at IS NULL RETURNING id`
        if (rows.length === 0) return false
        yield* sql`UPDATE webhook_deliveries SET status = 'failed', last_error = 'webhook deleted' WHERE webhook_id = ${id} AND status = 'pending'`
        return true
      })
    )

  const listDeliveries = (webhookId: string, page: number, perPage: number) =>
    Effect.gen(function* () {
      const total = yield* sql`SELECT count(*) AS n FROM webhook_deliveries WHERE webhook_id = ${webhookId}`
      const rows = yield* sql`SELECT id, event, payload, status_code, attempt, status, delivered_at, created_at
                              FROM webhook_deliveries WHERE webhook_id = ${webhookId}
                              ORDER BY created_at DESC, id DESC LIMIT ${perPage} OFFSET ${(page - 1) * perPage}`
      const data: Array<DeliveryView> = rows.map((row: any) => ({
        id: row.id,
        event: row.event,
        payload: jsonValue<Record<string, unknown>>(row.payload, {}),
        status_code: row.status_code === null ? null : Number(row.status_code),
        attempt: Number(row.attempt),
        status: row.status,
        delivered_at: iso(row.delivered_at),
        created_at: isoRequired(row.created_at)
      }))
      return { data, total: count(total[0]?.n) }
    })

  /**
   * Claims a batch of undispatched events and marks them dispatched in one
   * statement; call inside the transaction that also writes their deliveries,
   * so a rollback leaves them undispatched. Oldest first.
   */
  const claimEvents = (limit: number, now: number) =>
    Effect.map(
      sql`UPDATE events SET dispatched_at = ${at(now)}
          WHERE id IN (SELECT id FROM events WHERE dispatched_at IS NULL ORDER BY id LIMIT ${limit} FOR UPDATE SKIP LOCKED)
          RETURNING id, event_id, org_uuid, type, data, created_at`,
      (rows): Array<ClaimedEvent> =>
        [...rows]
          .sort((a: any, b: any) => (BigInt(a.id) < BigInt(b.id) ? -1 : BigInt(a.id) > BigInt(b.id) ? 1 : 0))
          .map((row: any) => ({
            eventId: row.event_id,
            orgUuid: row.org_uuid,
            type: row.type,
            data: jsonValue<Record<string, unknown>>(row.data, {}),
            createdAt: isoRequired(row.created_at)
          }))
    )

  const activeWebhooksOf = (orgUuids: ReadonlyArray<string>) =>
    orgUuids.length === 0
      ? Effect.succeed([] as Array<WebhookRow>)
      : Effect.map(
          sql`SELECT * FROM webhooks WHERE status = 'active' AND deleted_at IS NULL AND org_uuid IN ${sql.in(orgUuids)}`,
          (rows) => rows.map(webhookOf)
        )

  const insertDeliveries = (deliveries: ReadonlyArray<NewDelivery>, now: number) =>
    deliveries.length === 0
      ? Effect.void
      : sql`INSERT INTO webhook_deliveries (id, webhook_id, org_uuid, event_id, event, payload, status, attempt, next_attempt_at, created_at)
            SELECT id, webhook_id, org_uuid, event_id, event, payload, 'pending', 0, ${at(now)}, ${at(now)}
            FROM jsonb_to_recordset(${jsonb(deliveries)})
              AS r(id text, webhook_id text, org_uuid text, event_id text, event text, payload jsonb)
            ON CONFLICT (webhook_id, event_id) DO NOTHING`.pipe(Effect.asVoid)

  /**
   * Takes a lease on due deliveries of active webhooks (committed at once, so
   * other senders skip them; an expired lease means a sender died mid-send).
   */
  const claimDue = (limit: number, now: number, leaseMs: number) =>
    sql.withTransaction(
      Effect.gen(function* () {
        const rows = yield* sql`
          SELECT d.id FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
          WHERE d.status = 'pending' AND d.next_attempt_at <= ${at(now)}
            AND (d.lease_until IS NULL OR d.lease_until <= ${at(now)})
            AND w.status = 'active' AND w.deleted_at IS NULL
          ORDER BY d.next_attempt_at LIMIT ${limit}
          FOR UPDATE OF d SKIP LOCKED`
        if (rows.length === 0) return [] as Array<DueDelivery>
        const ids = rows.map((row: any) => row.id as string)
        const claimed = yield* sql`
          UPDATE webhook_deliveries d SET lease_until = ${at(now + leaseMs)}
          FROM webhooks w WHERE w.id = d.webhook_id AND d.id IN ${sql.in(ids)}
          RETURNING d.id, d.webhook_id, d.org_uuid, d.payload, d.attempt, w.url, w.secret_sealed`
        return claimed.map(
          (row: any): DueDelivery => ({
            id: row.id,
            webhookId: row.webhook_id,
            orgUuid: row.org_uuid,
            url: row.url,
            secretSealed: row.secret_sealed,
            payload: jsonValue<Record<string, unknown>>(row.payload, {}),
            attempt: Number(row.attempt)
          })
        )
      })
    )

  const recordAttempt = (options: {
    readonly deliveryId: string
    readonly attempt: number
    readonly statusCode: number | null
    readonly outcome: string
    readonly error: string | null
    readonly now: number
  }) =>
    sql`INSERT INTO webhook_delivery_attempts (delivery_id, attempt, status_code, outcome, error, attempted_at)
        VALUES (${options.deliveryId}, ${options.attempt}, ${options.statusCode}, ${options.outcome}, ${options.error}, ${at(options.now)})
        ON CONFLICT (delivery_id, attempt) DO NOTHING`.pipe(Effect.asVoid)

  const finishDelivery = (options: {
    readonly deliveryId: string
    readonly attempt: number
    readonly statusCode: number | null
    readonly status: "pending" | "delivered" | "failed"
    readonly error: string | null
    readonly nextAttemptAt: number | null
    readonly now: number
  }) =>
    sql`UPDATE webhook_deliveries SET
          attempt = ${options.attempt}, status_code = ${options.statusCode}, status = ${options.status},
          last_error = ${options.error}, lease_until = NULL, last_attempt_at = ${at(options.now)},
          delivered_at = ${options.status === "delivered" ? at(options.now) : null},
          next_attempt_at = ${at(options.nextAttemptAt ?? options.now)}
        WHERE id = ${options.deliveryId}`.pipe(Effect.asVoid)

  const markHealthy = (webhookId: string) =>
    sql`UPDATE webhooks SET failing_since = NULL WHERE id = ${webhookId} AND failing_since IS NOT NULL`.pipe(Effect.asVoid)

  /** Notes a failure; returns when the endpoint started failing without a success since. */
  const markFailing = (webhookId: string, now: number) =>
    Effect.map(
      sql`UPDATE webhooks SET failing_since = COALESCE(failing_since, ${at(now)}) WHERE id = ${webhookId} RETURNING failing_since`,
      (rows) => (rows[0] === undefined ? now : new Date(isoRequired((rows[0] as any).failing_since)).getTime())
    )

  const disableWebhook = (webhookId: string, reason: string) =>
    sql.withTransaction(
      Effect.gen(function* () {
        yield* sql`UPDATE webhooks SET status = 'disabled', disabled_reason = ${reason} WHERE id = ${webhookId}`
        yield* sql`UPDATE webhook_deliveries SET status = 'failed', last_error = ${`webhook disabled: ${reason}`}, lease_until = NULL
                   WHERE webhook_id = ${webhookId} AND status = 'pending'`
      })
    )

  return {
    sql,
    insertWebhook,
    listWebhooks,
    findWebhook,
    deleteWebhook,
    listDeliveries,
    claimEvents,
    activeWebhooksOf,
    insertDeliveries,
    claimDue,
    recordAttempt,
    finishDelivery,
    markHealthy,
    markFailing,
    disableWebhook
  }
})

export type WebhooksStore = Effect.Success<typeof makeWebhooksStore>
