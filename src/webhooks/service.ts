/**
 * Webhooks: registration (secret shown once, sealed at rest), the delivery
 * log, and the two halves of delivery through the `events` outbox:
 * `dispatchOnce` turns undispatched events into deliveries, `sendDue` posts due
 * deliveries. Both lock with SKIP LOCKED, so any number of fibers and
 * processes can run them without sending anything twice.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { listPage } from "../../protocol/common.js"
import { isEventType } from "../../protocol/events.js"
import { approvalRequestOf } from "../approvers/messages.js"
import { ApprovalChannels, policyOfConfig } from "../approvers/service.js"
import { webhookUrlProblem } from "../approvers/url.js"
import { Config } from "../platform/config.js"
import { InvalidInput } from "../platform/domain-error.js"
import { newId } from "../platform/ids.js"
import { DEFAULT_TIMEOUT_MS, type OutboundPolicy, outbound } from "../platform/outbound/index.js"
import { Secrets } from "../platform/secrets.js"
import { refuse, WebhookNotFound } from "./errors.js"
import { DISABLE_AFTER_MS, deliveryBody, judgeAttempt } from "./schedule.js"
import { newWebhookSecret, signedHeaders } from "./signing.js"
import { type DueDelivery, makeWebhooksStore, type NewDelivery } from "./store.js"

/** Time and randomness of delivery; tests replace them to check retry timing without waiting. */
export interface WebhookClockService {
  readonly now: () => number
  readonly random: () => number
}
export const WebhookClock = Context.Reference<WebhookClockService>("gateway/WebhookClock", {
  defaultValue: () => ({ now: () => Date.now(), random: () => Math.random() })
})

export interface WebhookSettingsService {
  /** A delivery must be answered with a 2xx within this. */
  readonly timeoutMs: number
  /** How long a claimed delivery stays reserved for its sender. */
  readonly leaseMs: number
  readonly batchSize: number
  /** Idle wait of the worker loop. */
  readonly pollMs: number
  /** Overrides the policy derived from Config (tests). */
  readonly policy?: OutboundPolicy
}
export const WebhookSettings = Context.Reference<WebhookSettingsService>("gateway/WebhookSettings", {
  defaultValue: () => ({ timeoutMs: DEFAULT_TIMEOUT_MS, leaseMs: 60_000, batchSize: 100, pollMs: 200 })
})

export interface CreateWebhookInput {
  readonly url: string
  readonly events?: ReadonlyArray<string> | undefined
}

export const webhookAad = (id: string) => `webhook:${id}`

const subscribes = (events: ReadonlyArray<string>, type: string) => events.includes("*") || events.includes(type)

export const makeWebhooks = Effect.gen(function* () {
  const store = yield* makeWebhooksStore
  const config = yield* Config
  const { envelope } = yield* Secrets
  const channels = yield* ApprovalChannels
  const clock = yield* WebhookClock
  const settings = yield* WebhookSettings
  const policy = settings.policy ?? policyOfConfig(config)
  const sql = store.sql

  const create = (orgUuid: string, input: CreateWebhookInput) =>
    Effect.gen(function* () {
      const issues: Array<{ path: string; message: string }> = []
      const problem = yield* Effect.promise(() => webhookUrlProblem(input.url, policy))
      if (problem !== undefined) issues.push({ path: "url", message: problem })
      const events = input.events === undefined ? ["*"] : [...new Set(input.events)]
      events.forEach((name, index) => {
        if (name !== "*" && !isEventType(name)) issues.push({ path: `events[${index}]`, message: `unknown event "${name}"` })
      })
      if (issues.length > 0) return yield* refuse(new InvalidInput({ issues }))
      const id = newId("wh")
      const secret = newWebhookSecret()
      const createdAt = new Date(clock.now()).toISOString()
      yield* Effect.orDie(store.insertWebhook({ id, org_uuid: orgUuid, url: input.url, secret_sealed: envelope.seal(secret, webhookAad(id)), events, created_at: createdAt }))
      return { id, url: input.url, secret: secret as string | null, events, status: "active" as const, created_at: createdAt }
    })

  const list = (orgUuid: string) =>
    Effect.map(Effect.orDie(store.listWebhooks(orgUuid)), (rows) =>
      rows.map((row) => ({ id: row.id, url: row.url, secret: null, events: [...row.events], status: row.status, created_at: row.created_at }))
    )

  const remove = (orgUuid: string, id: string) =>
    Effect.flatMap(Effect.orDie(store.deleteWebhook(orgUuid, id, clock.now())), (deleted) =>
      deleted ? Effect.void : refuse(new WebhookNotFound())
    )

  const deliveries = (orgUuid: string, id: string, page: number, perPage: number) =>
    Effect.gen(function* () {
      const webhook = yield* Effect.orDie(store.findWebhook(orgUuid, id))
      if (webhook === undefined) return yield* refuse(new WebhookNotFound())
      const { data, total } = yield* Effect.orDie(store.listDeliveries(id, page, perPage))
      return listPage(data, { page, perPage, total })
    })

  /**
   * Drains one batch of the outbox in one transaction: a delivery per
   * subscribed active webhook, the events marked dispatched as they are claimed. Approval requests
   * are then announced on the notification channels. Returns how many events.
   */
  const dispatchOnce = Effect.gen(function* () {
    const now = clock.now()
    const claimed = yield* sql.withTransaction(
      Effect.gen(function* () {
        const events = yield* store.claimEvents(settings.batchSize, now)
        if (events.length === 0) return events
        const webhooks = yield* store.activeWebhooksOf([...new Set(events.map((event) => event.orgUuid))])
        const deliveries: Array<NewDelivery> = []
        for (const event of events) {
          for (const webhook of webhooks) {
            if (webhook.org_uuid !== event.orgUuid || !subscribes(webhook.events, event.type)) continue
            const id = newId("msg")
            deliveries.push({
              id,
              webhook_id: webhook.id,
              org_uuid: event.orgUuid,
              event_id: event.eventId,
              event: event.type,
              payload: deliveryBody(event.type, id, event.createdAt, event.data)
            })
          }
        }
        yield* store.insertDeliveries(deliveries, now)
        return events
      })
    )
    const approvals = claimed.filter((event) => event.type === "action.approval_requested")
    yield* Effect.forEach(
      approvals,
      (event) => {
        const request = approvalRequestOf(event.eventId, event.orgUuid, event.data)
        return request === undefined ? Effect.void : channels.notifyApproval(request)
      },
      { concurrency: "unbounded", discard: true }
    )
    return claimed.length
  })

  const attemptOne = (delivery: DueDelivery) =>
    Effect.gen(function* () {
      const attempt = delivery.attempt + 1
      const secret = envelope.openText(delivery.secretSealed, webhookAad(delivery.webhookId))
      const body = JSON.stringify(delivery.payload)
      const headers = signedHeaders(secret, delivery.id, Math.floor(clock.now() / 1000), body)
      const answer = yield* outbound(delivery.url, { method: "POST", headers, body, policy, timeoutMs: settings.timeoutMs, maxResponseBytes: 64 * 1024 }).pipe(
        Effect.map((response) => ({ status: response.status as number | undefined, retryAfter: response.headers["retry-after"], error: null as string | null })),
        Effect.catch((error) => Effect.succeed({ status: undefined, retryAfter: undefined, error: `${error.kind}: ${error.message}` }))
      )
      const now = clock.now()
      const outcome = judgeAttempt({ attempt, status: answer.status, retryAfter: answer.retryAfter, now, random: clock.random() })
      const statusCode = answer.status ?? null
      const error = answer.error ?? (outcome.kind === "delivered" ? null : `HTTP ${answer.status}`)
      yield* store.recordAttempt({ deliveryId: delivery.id, attempt, statusCode, outcome: outcome.kind, error, now })
      switch (outcome.kind) {
        case "delivered":
          yield* store.finishDelivery({ deliveryId: delivery.id, attempt, statusCode, status: "delivered", error: null, nextAttemptAt: null, now })
          yield* store.markHealthy(delivery.webhookId)
          return outcome.kind
        case "gone":
          yield* store.finishDelivery({ deliveryId: delivery.id, attempt, statusCode, status: "failed", error, nextAttemptAt: null, now })
          yield* store.disableWebhook(delivery.webhookId, "endpoint answered 410 Gone")
          return outcome.kind
        case "retry":
        case "failed": {
          const retry = outcome.kind === "retry"
          yield* store.finishDelivery({
            deliveryId: delivery.id,
            attempt,
            statusCode,
            status: retry ? "pending" : "failed",
            error,
            nextAttemptAt: retry ? outcome.at : null,
            now
          })
          const failingSince = yield* store.markFailing(delivery.webhookId, now)
          if (now - failingSince >= DISABLE_AFTER_MS) yield* store.disableWebhook(delivery.webhookId, "failing for 5 days")
          return outcome.kind
        }
      }
    })

  /** Claims due deliveries and attempts each once, in parallel. Returns how many were attempted. */
  const sendDue = Effect.gen(function* () {
    const due = yield* store.claimDue(settings.batchSize, clock.now(), settings.leaseMs)
    yield* Effect.forEach(due, (delivery) => Effect.ignore(attemptOne(delivery)), { concurrency: 16, discard: true })
    return due.length
  })

  return { create, list, remove, deliveries, dispatchOnce, sendDue }
})

export class Webhooks extends Context.Service<Webhooks, Effect.Success<typeof makeWebhooks>>()("gateway/Webhooks") {
  static readonly layer = Layer.effect(Webhooks)(makeWebhooks)
}

/** The background loop of one process: drain the outbox, send what is due, wait when idle. */
export const webhookWorkerLoop = Effect.gen(function* () {
  const webhooks = yield* Webhooks
  const settings = yield* WebhookSettings
  const round = Effect.gen(function* () {
    const dispatched = yield* webhooks.dispatchOnce
    const sent = yield* webhooks.sendDue
    return dispatched + sent
  }).pipe(Effect.catchCause(() => Effect.succeed(0)))
  while (true) {
    const busy = yield* round
    if (busy === 0) yield* Effect.sleep(settings.pollMs)
  }
})

/** Runs the worker loop for as long as the layer lives. */
export const WebhookWorkers = Layer.effectDiscard(Effect.forkScoped(webhookWorkerLoop))

/** Everything of webhooks and approval channels, for `servicesLayer` (needs SqlClient, Config, Secrets). */
export const webhooksLayer = WebhookWorkers.pipe(Layer.provideMerge(Webhooks.layer), Layer.provideMerge(ApprovalChannels.layer))
