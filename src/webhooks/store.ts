/**
 * SQL of webhooks and deliveries. Times are passed in (from the injectable
 * clock) rather than taken from `now()`, so retry timing can be tested.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient, SqlSchema } from "effect/sql"
import { DeliveryStatuses, WebhookStatuses } from "../../protocol/webhooks.js"
import { Count, Json, NullableCount, NullableTimestamp, Serial, Timestamp } from "../platform/columns.js"
import { jsonb } from "../platform/db/index.js"

const Payload = Json(Schema.Record(Schema.String, Schema.Unknown), {})

const WebhookRow = Schema.Struct({
  id: Schema.String,
  org_uuid: Schema.String,
  url: Schema.String,
  secret_sealed: Schema.String,
  events: Json(Schema.Array(Schema.String), ["*"]),
  status: Schema.Literals(WebhookStatuses),
  created_at: Timestamp
})
export type WebhookRow = typeof WebhookRow.Type

const DeliveryView = Schema.Struct({
  id: Schema.String,
  event: Schema.String,
  payload: Payload,
  status_code: NullableCount,
  attempt: Count,
  status: Schema.Literals(DeliveryStatuses),
  delivered_at: NullableTimestamp,
  created_at: Timestamp
})
export type DeliveryView = typeof DeliveryView.Type

const ClaimedRow = Schema.Struct({ id: Serial, event_id: Schema.String, org_uuid: Schema.String, type: Schema.String, data: Payload, created_at: Timestamp })

const DueRow = Schema.Struct({
  id: Schema.String,
  webhook_id: Schema.String,
  org_uuid: Schema.String,
  url: Schema.String,
  secret_sealed: Schema.String,
  payload: Payload,
  attempt: Count
})

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

export const makeWebhooksStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const insertWebhook = (row: Omit<WebhookRow, "status">) =>
    sql`INSERT INTO webhooks (id, org_uuid, url, secret_sealed, events, status, created_at)
        VALUES (${row.id}, ${row.org_uuid}, ${row.url}, ${row.secret_sealed}, ${jsonb(row.events)}, 'active', ${row.created_at})`.pipe(Effect.asVoid)

  const listWebhooks = SqlSchema.findAll({
    Request: Schema.String,
    Result: WebhookRow,
    execute: (orgUuid) => sql`SELECT * FROM webhooks WHERE org_uuid = ${orgUuid} AND deleted_at IS NULL ORDER BY created_at, id`
  })

  const findWebhookRow = SqlSchema.findOneOption({
    Request: Schema.Struct({ orgUuid: Schema.String, id: Schema.String }),
    Result: WebhookRow,
    execute: ({ orgUuid, id }) => sql`SELECT * FROM webhooks WHERE id = ${id} AND org_uuid = ${orgUuid} AND deleted_at IS NULL`
  })
  const findWebhook = (orgUuid: string, id: string) => Effect.map(findWebhookRow({ orgUuid, id }), Option.getOrUndefined)

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

  const deliveryCount = SqlSchema.findOne({
    Request: Schema.String,
    Result: Schema.Struct({ n: Count }),
    execute: (webhookId) => sql`SELECT count(*) AS n FROM webhook_deliveries WHERE webhook_id = ${webhookId}`
  })
  const deliveryPage = SqlSchema.findAll({
    Request: Schema.Struct({ webhookId: Schema.String, page: Schema.Number, perPage: Schema.Number }),
    Result: DeliveryView,
    execute: ({ webhookId, page, perPage }) =>
      sql`SELECT id, event, payload, status_code, attempt, status, delivered_at, created_at
          FROM webhook_deliveries WHERE webhook_id = ${webhookId}
          ORDER BY created_at DESC, id DESC LIMIT ${perPage} OFFSET ${(page - 1) * perPage}`
  })
  const listDeliveries = (webhookId: string, page: number, perPage: number) =>
    Effect.gen(function* () {
      const { n } = yield* deliveryCount(webhookId)
      return { data: yield* deliveryPage({ webhookId, page, perPage }), total: n }
    })

  /**
   * Claims a batch of undispatched events and marks them dispatched in one
   * statement; call inside the transaction that also writes their deliveries,
   * so a rollback leaves them undispatched. Oldest first.
   */
  const claimEventRows = SqlSchema.findAll({
    Request: Schema.Struct({ limit: Schema.Number, now: Schema.Number }),
    Result: ClaimedRow,
    execute: ({ limit, now }) =>
      sql`UPDATE events SET dispatched_at = ${at(now)}
          WHERE id IN (SELECT id FROM events WHERE dispatched_at IS NULL ORDER BY id LIMIT ${limit} FOR UPDATE SKIP LOCKED)
          RETURNING id, event_id, org_uuid, type, data, created_at`
  })
  const claimEvents = (limit: number, now: number) =>
    Effect.map(claimEventRows({ limit, now }), (rows): Array<ClaimedEvent> =>
      rows
        .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        .map((row) => ({ eventId: row.event_id, orgUuid: row.org_uuid, type: row.type, data: row.data, createdAt: row.created_at }))
    )

  const activeWebhookRows = SqlSchema.findAll({
    Request: Schema.Array(Schema.String),
    Result: WebhookRow,
    execute: (orgUuids) => sql`SELECT * FROM webhooks WHERE status = 'active' AND deleted_at IS NULL AND org_uuid IN ${sql.in(orgUuids)}`
  })
  const activeWebhooksOf = (orgUuids: ReadonlyArray<string>) =>
    orgUuids.length === 0 ? Effect.succeed([] as Array<WebhookRow>) : activeWebhookRows(orgUuids)

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
  const leaseDue = SqlSchema.findAll({
    Request: Schema.Struct({ ids: Schema.Array(Schema.String), until: Schema.Number }),
    Result: DueRow,
    execute: ({ ids, until }) =>
      sql`UPDATE webhook_deliveries d SET lease_until = ${at(until)}
          FROM webhooks w WHERE w.id = d.webhook_id AND d.id IN ${sql.in(ids)}
          RETURNING d.id, d.webhook_id, d.org_uuid, d.payload, d.attempt, w.url, w.secret_sealed`
  })

  const claimDue = (limit: number, now: number, leaseMs: number) =>
    sql.withTransaction(
      Effect.gen(function* () {
        const rows = yield* sql<{ readonly id: string }>`
          SELECT d.id FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
          WHERE d.status = 'pending' AND d.next_attempt_at <= ${at(now)}
            AND (d.lease_until IS NULL OR d.lease_until <= ${at(now)})
            AND w.status = 'active' AND w.deleted_at IS NULL
          ORDER BY d.next_attempt_at LIMIT ${limit}
          FOR UPDATE OF d SKIP LOCKED`
        if (rows.length === 0) return [] as Array<DueDelivery>
        const claimed = yield* leaseDue({ ids: rows.map((row) => row.id), until: now + leaseMs })
        return claimed.map(
          (row): DueDelivery => ({
            id: row.id,
            webhookId: row.webhook_id,
            orgUuid: row.org_uuid,
            url: row.url,
            secretSealed: row.secret_sealed,
            payload: row.payload,
            attempt: row.attempt
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

  /**
   * Records a batch of attempts and their deliveries' new state in one
   * statement (the per-row equivalent of `recordAttempt` + `finishDelivery`),
   * and clears `failing_since` of every webhook with a delivered row.
   */
  const finishBatch = (rows: ReadonlyArray<{
    readonly deliveryId: string
    readonly webhookId: string
    readonly attempt: number
    readonly statusCode: number | null
    readonly status: "pending" | "delivered" | "failed"
    readonly outcome: string
    readonly error: string | null
    readonly nextAttemptAt: number | null
    readonly now: number
  }>) =>
    rows.length === 0
      ? Effect.void
      : sql`WITH r AS (
              SELECT * FROM jsonb_to_recordset(${jsonb(
                rows.map((row) => ({
                  id: row.deliveryId,
                  webhook_id: row.webhookId,
                  attempt: row.attempt,
                  status_code: row.statusCode,
                  status: row.status,
                  outcome: row.outcome,
                  error: row.error,
                  at: at(row.now),
                  next_at: at(row.nextAttemptAt ?? row.now)
                }))
              )}) AS r(id text, webhook_id text, attempt int, status_code int, status text, outcome text, error text, at timestamptz, next_at timestamptz)
            ), attempts AS (
              INSERT INTO webhook_delivery_attempts (delivery_id, attempt, status_code, outcome, error, attempted_at)
              SELECT id, attempt, status_code, outcome, error, at FROM r
              ON CONFLICT (delivery_id, attempt) DO NOTHING
            ), healthy AS (
              UPDATE webhooks SET failing_since = NULL
              WHERE id IN (SELECT webhook_id FROM r WHERE status = 'delivered') AND failing_since IS NOT NULL
            )
            UPDATE webhook_deliveries d SET
              attempt = r.attempt, status_code = r.status_code, status = r.status,
              last_error = r.error, lease_until = NULL, last_attempt_at = r.at,
              delivered_at = CASE WHEN r.status = 'delivered' THEN r.at ELSE NULL END,
              next_attempt_at = r.next_at
            FROM r WHERE d.id = r.id`.pipe(Effect.asVoid)

  const markHealthy = (webhookId: string) =>
    sql`UPDATE webhooks SET failing_since = NULL WHERE id = ${webhookId} AND failing_since IS NOT NULL`.pipe(Effect.asVoid)

  /** Notes a failure; returns when the endpoint started failing without a success since. */
  const failingSince = SqlSchema.findOneOption({
    Request: Schema.Struct({ webhookId: Schema.String, now: Schema.Number }),
    Result: Schema.Struct({ failing_since: Timestamp }),
    execute: ({ webhookId, now }) =>
      sql`UPDATE webhooks SET failing_since = COALESCE(failing_since, ${at(now)}) WHERE id = ${webhookId} RETURNING failing_since`
  })
  const markFailing = (webhookId: string, now: number) =>
    Effect.map(failingSince({ webhookId, now }), Option.match({ onNone: () => now, onSome: (row) => Date.parse(row.failing_since) }))

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
    finishBatch,
    markHealthy,
    markFailing,
    disableWebhook
  }
})

export type WebhooksStore = Effect.Success<typeof makeWebhooksStore>
