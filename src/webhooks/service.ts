/**
 * Webhooks: registration (secret shown once, sealed at rest), the delivery
 * log, and the two halves of delivery through the `events` outbox:
 * `dispatchOnce` turns undispatched events into deliveries, `sendDue` posts due
 * deliveries. Both lock with SKIP LOCKED, so any number of fibers and
 * processes can run them without sending anything twice.
 */
import { PgClient } from "@effect/sql-pg"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Semaphore from "effect/Semaphore"
import { listPage } from "../../protocol/common.js"
import { isEventType } from "../../protocol/events.js"
import { approvalRequestOf } from "../approvers/messages.js"
import { ApprovalChannels } from "../approvers/service.js"
import { webhookUrlProblem } from "../approvers/url.js"
import { Config } from "../platform/config.js"
import { InvalidInput } from "../platform/domain-error.js"
import { newId } from "../platform/ids.js"
import { DEFAULT_TIMEOUT_MS, type OutboundPolicy, outbound, outboundPolicyOfConfig } from "../platform/outbound/index.js"
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
  /** Idle wait of the worker loops: the safety net when no wake-up arrives. */
  readonly pollMs: number
  /** Sends in flight in this process, over all endpoints (default 64). */
  readonly concurrency?: number
  /** Sends in flight to one webhook (default 32). */
  readonly perEndpoint?: number
  /** Sender fibers, each claiming its own batch, so one batch's slow answers do not hold up the rest (default 4). */
  readonly senders?: number
  /** Pause after a round that found less than a full batch, to gather the next (default 10 ms). */
  readonly gatherMs?: number
  /** Overrides the policy derived from Config (tests). */
  readonly policy?: OutboundPolicy
}
export const WebhookSettings = Context.Reference<WebhookSettingsService>("gateway/WebhookSettings", {
  defaultValue: () => ({ timeoutMs: DEFAULT_TIMEOUT_MS, leaseMs: 60_000, batchSize: 250, pollMs: 200 })
})

const DEFAULT_CONCURRENCY = 64
const DEFAULT_PER_ENDPOINT = 32
const DEFAULT_SENDERS = 4
const DEFAULT_GATHER_MS = 10
/** The channel the `events` trigger notifies on commit (migration 0010_events_notify). */
const EVENTS_CHANNEL = "gateway_events"

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
  const policy = settings.policy ?? outboundPolicyOfConfig(config)
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
  const dispatchRound = Effect.gen(function* () {
    const now = clock.now()
    let created = 0
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
        created = deliveries.length
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
    return { events: claimed.length, deliveries: created }
  })
  /** One round of the dispatcher; answers how many events it took. */
  const dispatchOnce = Effect.map(dispatchRound, (round) => round.events)

  /** Posts one claimed delivery through the outbound client and judges the answer; writes nothing. */
  const attemptOne = (delivery: DueDelivery) =>
    Effect.gen(function* () {
      const attempt = delivery.attempt + 1
      const secret = envelope.openText(delivery.secretSealed, webhookAad(delivery.webhookId))
      const body = JSON.stringify(delivery.payload)
      const headers = signedHeaders(secret, delivery.id, Math.floor(clock.now() / 1000), body)
      const answer = yield* outbound(delivery.url, {
        method: "POST",
        headers,
        body,
        policy,
        timeoutMs: settings.timeoutMs,
        maxResponseBytes: 64 * 1024,
        keepAlive: true
      }).pipe(
        Effect.map((response) => ({ status: response.status as number | undefined, retryAfter: response.headers["retry-after"], error: null as string | null })),
        Effect.catch((error) => Effect.succeed({ status: undefined, retryAfter: undefined, error: `${error.kind}: ${error.message}` }))
      )
      const now = clock.now()
      const outcome = judgeAttempt({ attempt, status: answer.status, retryAfter: answer.retryAfter, now, random: clock.random() })
      const statusCode = answer.status ?? null
      const error = answer.error ?? (outcome.kind === "delivered" ? null : `HTTP ${answer.status}`)
      const status = outcome.kind === "delivered" ? "delivered" : outcome.kind === "retry" ? "pending" : "failed"
      return {
        deliveryId: delivery.id,
        webhookId: delivery.webhookId,
        attempt,
        statusCode,
        status,
        outcome: outcome.kind,
        error,
        nextAttemptAt: outcome.kind === "retry" ? outcome.at : null,
        now
      } as const
    })

  type Attempted = Effect.Success<ReturnType<typeof attemptOne>>

  /**
   * Writes the outcomes of a batch: attempts and delivery states in one
   * statement, then what follows a failure (an endpoint answering 410, or
   * failing for 5 days, is disabled).
   */
  const settle = (attempted: ReadonlyArray<Attempted>) =>
    Effect.gen(function* () {
      yield* store.finishBatch(attempted)
      const gone = new Set(attempted.filter((row) => row.outcome === "gone").map((row) => row.webhookId))
      for (const webhookId of gone) yield* store.disableWebhook(webhookId, "endpoint answered 410 Gone")
      const failing = new Map<string, number>()
      for (const row of attempted) if ((row.outcome === "retry" || row.outcome === "failed") && !gone.has(row.webhookId)) failing.set(row.webhookId, row.now)
      for (const [webhookId, now] of failing) {
        const failingSince = yield* store.markFailing(webhookId, now)
        if (now - failingSince >= DISABLE_AFTER_MS) yield* store.disableWebhook(webhookId, "failing for 5 days")
      }
    })

  /** Sends in flight: at most `concurrency` in all, at most `perEndpoint` to one webhook, across every sender fiber. */
  const overall = Semaphore.makeUnsafe(settings.concurrency ?? DEFAULT_CONCURRENCY)
  const perEndpoint = settings.perEndpoint ?? DEFAULT_PER_ENDPOINT
  const endpoints = new Map<string, { readonly semaphore: Semaphore.Semaphore; users: number }>()
  const limited = (delivery: DueDelivery) =>
    Effect.suspend(() => {
      let entry = endpoints.get(delivery.webhookId)
      if (entry === undefined) {
        entry = { semaphore: Semaphore.makeUnsafe(perEndpoint), users: 0 }
        endpoints.set(delivery.webhookId, entry)
      }
      const held = entry
      held.users++
      return attemptOne(delivery).pipe(
        overall.withPermit,
        held.semaphore.withPermit,
        Effect.ensuring(
          Effect.sync(() => {
            held.users--
            if (held.users === 0) endpoints.delete(delivery.webhookId)
          })
        )
      )
    })

  /**
   * Claims due deliveries and attempts each once, concurrently (bounded
   * overall and per endpoint; no order between deliveries is promised), then
   * records the outcomes together. Returns how many were attempted.
   */
  const sendDue = Effect.gen(function* () {
    const due = yield* store.claimDue(settings.batchSize, clock.now(), settings.leaseMs)
    if (due.length === 0) return 0
    // A delivery whose attempt broke (not a failed send: those are outcomes) stays leased and is retried when the lease runs out.
    const attempted = yield* Effect.forEach(due, (delivery) => Effect.exit(limited(delivery)), { concurrency: "unbounded" })
    yield* settle(attempted.flatMap((exit) => (Exit.isSuccess(exit) ? [exit.value] : [])))
    return due.length
  })

  return { create, list, remove, deliveries, dispatchRound, dispatchOnce, sendDue }
})

export class Webhooks extends Context.Service<Webhooks, Effect.Success<typeof makeWebhooks>>()("gateway/Webhooks") {
  static readonly layer = Layer.effect(Webhooks)(makeWebhooks)
}

/**
 * A wake-up call: `signal` wakes every fiber waiting on the call taken before
 * it, so a signal between a round and its wait is not lost.
 */
const makeWakeUp = () => {
  let current = Deferred.makeUnsafe<void>()
  return {
    next: () => current,
    signal: () => {
      const woken = current
      current = Deferred.makeUnsafe<void>()
      Deferred.doneUnsafe(woken, Effect.void)
    }
  }
}

/**
 * The background loops of one process: a dispatcher turns outbox events into
 * deliveries and wakes the senders; several senders post what is due. Each
 * loop goes on at once while it finds work and otherwise waits for a wake-up
 * or `pollMs` (the safety net for retries coming due and other processes' work).
 */
export const webhookWorkerLoop = Effect.gen(function* () {
  const webhooks = yield* Webhooks
  const settings = yield* WebhookSettings
  const pg = yield* Effect.serviceOption(PgClient.PgClient)
  const outbox = makeWakeUp()
  const work = makeWakeUp()
  const gatherMs = settings.gatherMs ?? DEFAULT_GATHER_MS
  /**
   * Runs `round` while it finds work. A round that found less than a full batch waits `gatherMs`
   * before the next, so a stream of commits is taken in batches rather than one transaction per
   * commit (each round is a transaction; under load they cost more than the requests).
   */
  const loop = <E>(round: Effect.Effect<number, E>, wakeUp: ReturnType<typeof makeWakeUp>) =>
    Effect.gen(function* () {
      while (true) {
        const wake = wakeUp.next()
        const busy = yield* round.pipe(Effect.catchCause(() => Effect.succeed(0)))
        if (busy === 0) yield* Effect.timeoutOption(Deferred.await(wake), settings.pollMs)
        else if (busy < settings.batchSize && gatherMs > 0) yield* Effect.sleep(gatherMs)
      }
    })
  // Commits that insert into `events` NOTIFY (migration 0010); a broken listener is reopened, and polling covers the gap.
  const listener = Option.match(pg, {
    onNone: () => Effect.void,
    onSome: (client) =>
      Effect.scoped(
        Effect.gen(function* () {
          const notifications = yield* client.listen(EVENTS_CHANNEL)
          outbox.signal()
          while (true) {
            yield* Queue.take(notifications)
            outbox.signal()
          }
        })
      ).pipe(
        Effect.catchCause(() => Effect.void),
        Effect.andThen(Effect.sleep(5_000)),
        Effect.forever
      )
  })
  // Senders are woken only when a round created deliveries: most events have no webhook.
  const dispatcher = loop(
    Effect.map(webhooks.dispatchRound, (round) => {
      if (round.deliveries > 0) work.signal()
      return round.events
    }),
    outbox
  )
  const senders = Array.from({ length: settings.senders ?? DEFAULT_SENDERS }, () => loop(webhooks.sendDue, work))
  yield* Effect.all([listener, dispatcher, ...senders], { concurrency: "unbounded", discard: true })
})

/** Runs the worker loop for as long as the layer lives. */
export const WebhookWorkers = Layer.effectDiscard(Effect.forkScoped(webhookWorkerLoop))

/** Everything of webhooks and approval channels, for `servicesLayer` (needs SqlClient, Config, Secrets). */
export const webhooksLayer = WebhookWorkers.pipe(Layer.provideMerge(Webhooks.layer), Layer.provideMerge(ApprovalChannels.layer))
