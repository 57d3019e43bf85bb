/**
 * SQL of webhooks and deliveries. Times are passed in (from the injectable
 * clock) rather than taken from `now()`, so retry timing can be tested.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient } from "effect/sql"
import { DeliveryStatuses, WebhookStatuses } from "../../protocol/webhooks.js"
import { Count, Json, JsonObject, NullableCount, NullableJson, NullableTimestamp, Timestamp } from "../platform/columns.js"
import { jsonb } from "../platform/db/index.js"
import * as Rows from "../platform/db/rows.js"
import { sqlDefects } from "../platform/db/store.js"

const WebhookRow = Schema.Struct({
  id: Schema.String,
  org_uuid: Schema.String,
  url: Schema.String,
  secret_sealed: Schema.String,
  events: Json(Schema.Array(Schema.String)),
  status: Schema.Literals(WebhookStatuses),
  created_at: Timestamp
})
export type WebhookRow = typeof WebhookRow.Type

const DeliveryView = Schema.Struct({
  id: Schema.String,
  event: Schema.String,
  payload: JsonObject,
  status_code: NullableCount,
  attempt: Count,
  status: Schema.Literals(DeliveryStatuses),
  delivered_at: NullableTimestamp,
  created_at: Timestamp
})
export type DeliveryView = typeof DeliveryView.Type

/** A row of a dispatch round: a delivery (`type` null), or a claimed event (`id` its event id, `payload` its data). */
const DispatchedRow = Schema.Struct({
  id: Schema.String,
  webhook_id: Schema.NullOr(Schema.String),
  org_uuid: Schema.String,
  payload: NullableJson(Schema.Record(Schema.String, Schema.Unknown)),
  url: Schema.NullOr(Schema.String),
  secret_sealed: Schema.NullOr(Schema.String),
  leased: Schema.NullOr(Schema.Boolean),
  type: Schema.NullOr(Schema.String),
  /** How long a claimed event waited in the outbox (null on delivery rows). */
  lag_ms: Schema.NullOr(Schema.Number)
})

const DueRow = Schema.Struct({
  id: Schema.String,
  webhook_id: Schema.String,
  org_uuid: Schema.String,
  url: Schema.String,
  secret_sealed: Schema.String,
  payload: JsonObject,
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

/** An event a dispatch round claimed; `data` only for approval requests (else empty). */
export interface DispatchedEvent {
  readonly eventId: string
  readonly orgUuid: string
  readonly type: string
  readonly data: Record<string, unknown>
}

const at = (ms: number) => new Date(ms).toISOString()

export const makeWebhooksStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const insertWebhook = (row: Omit<WebhookRow, "status">) =>
    sql`INSERT INTO webhooks (id, org_uuid, url, secret_sealed, events, status, created_at)
        VALUES (${row.id}, ${row.org_uuid}, ${row.url}, ${row.secret_sealed}, ${jsonb(row.events)}, 'active', ${row.created_at})`.pipe(Effect.asVoid)

  const listWebhooks = Rows.findAll({
    Request: Schema.String,
    Result: WebhookRow,
    execute: (orgUuid) => sql`SELECT * FROM webhooks WHERE org_uuid = ${orgUuid} AND deleted_at IS NULL ORDER BY created_at, id`
  })

  const findWebhookRow = Rows.findOneOption({
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

  const deliveryCount = Rows.findOne({
    Request: Schema.String,
    Result: Schema.Struct({ n: Count }),
    execute: (webhookId) => sql`SELECT count(*) AS n FROM webhook_deliveries WHERE webhook_id = ${webhookId}`
  })
  const deliveryPage = Rows.findAll({
    Request: Schema.Struct({ webhookId: Schema.String, page: Schema.Number, perPage: Schema.Number }),
    Result: DeliveryView,
    execute: ({ webhookId, page, perPage }) =>
      sql`SELECT id, event, payload, status_code, attempt, status, delivered_at, created_at
          FROM webhook_deliveries WHERE webhook_id = ${webhookId}
          ORDER BY created_at DESC, id DESC LIMIT ${perPage} OFFSET ${(page - 1) * perPage}`
  })
  const listDeliveries = (webhookId: string, page: number, perPage: number) =>
    Effect.gen(function* () {
      // COUNT(*) always answers one row.
      const { n } = yield* Effect.orDie(deliveryCount(webhookId))
      return { data: yield* deliveryPage({ webhookId, page, perPage }), total: n }
    })

  /**
   * One round of the outbox in one statement (so nothing is half done when a process dies):
   * claims up to `limit` undispatched events, oldest first, marking them dispatched, and inserts
   * a delivery per event and subscribed active webhook. The first `lease` deliveries are leased
   * to the caller, who sends them at once; the others are due now for any sender. Answers the
   * deliveries and the claimed events (with their data only for approval requests, which the
   * notification channels announce).
   */
  const dispatchRows = Rows.findAll({
    Request: Schema.Struct({ limit: Schema.Number, now: Schema.Number, lease: Schema.Number, until: Schema.Number }),
    Result: DispatchedRow,
    execute: ({ limit, now, lease, until }) =>
      sql`WITH claimed AS (
            UPDATE events SET dispatched_at = ${at(now)}
            WHERE id IN (SELECT id FROM events WHERE dispatched_at IS NULL ORDER BY id LIMIT ${limit} FOR UPDATE SKIP LOCKED)
            RETURNING id, event_id, org_uuid, type, data, created_at
          ), pairs AS MATERIALIZED (
            SELECT new_id('msg') AS delivery_id, c.id AS seq, c.event_id, c.org_uuid, c.type, c.data,
              to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS timestamp,
              w.id AS webhook_id, w.url, w.secret_sealed
            FROM claimed c JOIN webhooks w ON w.org_uuid = c.org_uuid
            WHERE w.status = 'active' AND w.deleted_at IS NULL AND (w.events ? c.type OR w.events ? '*')
          ), inserted AS (
            INSERT INTO webhook_deliveries (id, webhook_id, org_uuid, event_id, event, payload, status, attempt, next_attempt_at, lease_until, created_at)
            SELECT delivery_id, webhook_id, org_uuid, event_id, type,
              data || jsonb_build_object('event', type, 'delivery_id', delivery_id, 'timestamp', timestamp, 'data', data),
              'pending', 0, ${at(now)}, CASE WHEN row_number() OVER (ORDER BY seq, webhook_id) <= ${lease} THEN ${at(until)}::timestamptz END, ${at(now)}
            FROM pairs
            ON CONFLICT (webhook_id, event_id) DO NOTHING
            RETURNING id, webhook_id, org_uuid, payload, lease_until IS NOT NULL AS leased
          )
          SELECT i.id, i.webhook_id, i.org_uuid, i.payload, p.url, p.secret_sealed, i.leased, NULL AS type, NULL::float8 AS lag_ms
          FROM inserted i JOIN pairs p ON p.delivery_id = i.id
          UNION ALL
          SELECT c.event_id, NULL, c.org_uuid, CASE WHEN c.type = 'action.approval_requested' THEN c.data END, NULL, NULL, NULL, c.type,
            (extract(epoch FROM (${at(now)}::timestamptz - c.created_at)) * 1000)::float8
          FROM claimed c`
  })

  const dispatchEvents = (options: { readonly limit: number; readonly now: number; readonly lease: number; readonly leaseMs: number }) =>
    Effect.map(dispatchRows({ limit: options.limit, now: options.now, lease: options.lease, until: options.now + options.leaseMs }), (rows) => {
      const leased: Array<DueDelivery> = []
      const events: Array<DispatchedEvent> = []
      let deliveries = 0
      let oldestLagMs = 0
      for (const row of rows) {
        if (row.type !== null) {
          events.push({ eventId: row.id, orgUuid: row.org_uuid, type: row.type, data: row.payload ?? {} })
          oldestLagMs = Math.max(oldestLagMs, row.lag_ms ?? 0)
          continue
        }
        deliveries++
        if (row.leased === true && row.webhook_id !== null && row.url !== null && row.secret_sealed !== null && row.payload !== null) {
          leased.push({ id: row.id, webhookId: row.webhook_id, orgUuid: row.org_uuid, url: row.url, secretSealed: row.secret_sealed, payload: row.payload, attempt: 0 })
        }
      }
      return { events, deliveries, leased, oldestLagMs }
    })

  /**
   * Takes a lease on due deliveries of active webhooks, in one statement that
   * commits at once (so other senders skip them; an expired lease means a
   * sender died mid-send). Oldest due first.
   */
  const leaseDue = Rows.findAll({
    Request: Schema.Struct({ limit: Schema.Number, now: Schema.Number, until: Schema.Number }),
    Result: DueRow,
    execute: ({ limit, now, until }) =>
      sql`WITH due AS (
            SELECT d.id FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
            WHERE d.status = 'pending' AND d.next_attempt_at <= ${at(now)}
              AND (d.lease_until IS NULL OR d.lease_until <= ${at(now)})
              AND w.status = 'active' AND w.deleted_at IS NULL
            ORDER BY d.next_attempt_at LIMIT ${limit}
            FOR UPDATE OF d SKIP LOCKED
          )
          UPDATE webhook_deliveries d SET lease_until = ${at(until)}
          FROM due, webhooks w WHERE d.id = due.id AND w.id = d.webhook_id
          RETURNING d.id, d.webhook_id, d.org_uuid, d.payload, d.attempt, w.url, w.secret_sealed`
  })

  const claimDue = (limit: number, now: number, leaseMs: number) =>
    Effect.map(leaseDue({ limit, now, until: now + leaseMs }), (rows) =>
      rows.map(
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
  const failingSince = Rows.findOneOption({
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

  return sqlDefects({
    sql,
    insertWebhook,
    listWebhooks,
    findWebhook,
    deleteWebhook,
    listDeliveries,
    dispatchEvents,
    claimDue,
    recordAttempt,
    finishDelivery,
    finishBatch,
    markHealthy,
    markFailing,
    disableWebhook
  })
})

export type WebhooksStore = Effect.Success<typeof makeWebhooksStore>
