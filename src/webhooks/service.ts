/**
 * Webhooks: registration (secret shown once, sealed at rest), the delivery
 * log, and the two halves of delivery through the `events` outbox:
 * `dispatchRound` turns undispatched events into deliveries (leasing some to
 * its caller, who sends them at once), `sendDue` posts the other due
 * deliveries. Both lock with SKIP LOCKED, so any number of fibers and
 * processes can run them without sending anything twice.
 */
import { PgClient } from "@effect/sql-pg"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Random from "effect/Random"
import * as Semaphore from "effect/Semaphore"
import { listPage, type Page } from "../../protocol/common.js"
import { isEventType } from "../../protocol/events.js"
import type { Webhook, WebhookDelivery } from "../../protocol/webhooks.js"
import { approvalRequestOf } from "../approvers/messages.js"
import { ApprovalChannels } from "../approvers/service.js"
import { webhookUrlProblem } from "../approvers/url.js"
import { reportFailure, supervisedRound } from "../platform/background.js"
import { Config } from "../platform/config.js"
import { InvalidInput } from "../platform/domain-error.js"
import { newId } from "../platform/ids.js"
import { record } from "../platform/metrics.js"
import { DEFAULT_TIMEOUT_MS, Outbound, type OutboundPolicy, outbound } from "../platform/outbound/index.js"
import { Secrets } from "../platform/secrets.js"
import { refuse, WebhookNotFound, type WebhooksError } from "./errors.js"
import { DISABLE_AFTER_MS, judgeAttempt } from "./schedule.js"
import { newWebhookSecret, type Signer, webhookSigner } from "./signing.js"
import { type DispatchedEvent, type DueDelivery, makeWebhooksStore } from "./store.js"

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
  /** Keep-alive connections to one receiver address (default 4); each carries up to `pipelining` sends at once (default 8). */
  readonly connections?: number
  readonly pipelining?: number
  /** Sender fibers, each claiming its own batch, so one batch's slow answers do not hold up the rest (default 4). */
  readonly senders?: number
  /** Deliveries the dispatcher may be sending itself at once (default `batchSize`); the senders take the rest. */
  readonly handoff?: number
  /** Pause after a round that found less than a full batch, to gather the next (default 10 ms). */
  readonly gatherMs?: number
  /** Overrides the policy derived from Config (tests). */
  readonly policy?: OutboundPolicy
}
export const WebhookSettings = Context.Reference<WebhookSettingsService>("gateway/WebhookSettings", {
  defaultValue: () => ({ timeoutMs: DEFAULT_TIMEOUT_MS, leaseMs: 60_000, batchSize: 250, pollMs: 200 })
})

/** Attempts by outcome (delivered, retry, failed, gone). */
const outcomeCounters = new Map<string, Metric.Counter<number>>()
const deliveryOutcomes = (outcome: string) => {
  let counter = outcomeCounters.get(outcome)
  if (counter === undefined) {
    counter = Metric.counter("webhook_deliveries_total", { description: "Webhook delivery attempts, by outcome", attributes: { outcome }, incremental: true })
    outcomeCounters.set(outcome, counter)
  }
  return counter
}
/** How long the oldest event of a dispatch round waited in the outbox. */
const outboxLag = Metric.histogram("webhook_outbox_lag_seconds", {
  description: "Age of the oldest event each dispatch round claimed",
  boundaries: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]
})

const DEFAULT_CONCURRENCY = 64
const DEFAULT_PER_ENDPOINT = 32
const DEFAULT_CONNECTIONS = 4
const DEFAULT_PIPELINING = 8
const DEFAULT_SENDERS = 4
const DEFAULT_GATHER_MS = 10
/** The channel the `events` trigger notifies on commit (migration 0010_events_notify). */
const EVENTS_CHANNEL = "gateway_events"

export interface CreateWebhookInput {
  readonly url: string
  readonly events?: ReadonlyArray<string> | undefined
}

export const webhookAad = (id: string) => `webhook:${id}`

export const makeWebhooks = Effect.gen(function* () {
  const store = yield* makeWebhooksStore
  const _config = yield* Config
  const { envelope } = yield* Secrets
  const channels = yield* ApprovalChannels
  const settings = yield* WebhookSettings
  const policy = settings.policy ?? (yield* Outbound).policy

  const create = Effect.fn("Webhooks.create")(function* (orgUuid: string, input: CreateWebhookInput) {
      const issues: Array<{ path: string; message: string }> = []
      const problem = yield* Effect.promise(() => webhookUrlProblem(input.url, policy))
      if (problem !== undefined) issues.push({ path: "url", message: problem })
      const events = input.events === undefined ? ["*"] : [...new Set(input.events)]
      events.forEach((name, index) => {
        if (name !== "*" && !isEventType(name)) issues.push({ path: `events[${index}]`, message: `unknown event "${name}"` })
      })
      if (issues.length > 0) return yield* refuse(InvalidInput.of(issues))
      const id = newId("wh")
      const secret = newWebhookSecret()
      const createdAt = new Date(yield* Clock.currentTimeMillis).toISOString()
      yield* store.insertWebhook({ id, org_uuid: orgUuid, url: input.url, secret_sealed: envelope.seal(secret, webhookAad(id)), events, created_at: createdAt })
      return { id, url: input.url, secret: secret as string | null, events, status: "active" as const, created_at: createdAt }
  })

  const list = Effect.fn("Webhooks.list")(function* (orgUuid: string) {
    const rows = yield* store.listWebhooks(orgUuid)
    return rows.map((row): Webhook => ({ id: row.id, url: row.url, secret: null, events: [...row.events], status: row.status, created_at: row.created_at }))
  })

  const remove = Effect.fn("Webhooks.remove")(function* (orgUuid: string, id: string) {
    const deleted = yield* store.deleteWebhook(orgUuid, id, yield* Clock.currentTimeMillis)
    if (!deleted) return yield* refuse(new WebhookNotFound({}))
  })

  const deliveries = Effect.fn("Webhooks.deliveries")(function* (orgUuid: string, id: string, page: number, perPage: number) {
    const webhook = yield* store.findWebhook(orgUuid, id)
    if (webhook === undefined) return yield* refuse(new WebhookNotFound({}))
    const { data, total } = yield* store.listDeliveries(id, page, perPage)
    return listPage(data, { page, perPage, total })
  })

  /**
   * One round of the outbox in one statement (`store.dispatchEvents`): a delivery per claimed
   * event and subscribed active webhook, the first `lease` of them leased to the caller to send
   * at once, the rest due now for any sender. Approval requests are then announced on the
   * notification channels.
   */
  const dispatchRound = (lease: number) =>
    Effect.gen(function* () {
      const round = yield* store.dispatchEvents({ limit: settings.batchSize, now: yield* Clock.currentTimeMillis, lease, leaseMs: settings.leaseMs })
      if (round.events.length > 0) record(outboxLag, round.oldestLagMs / 1000)
      yield* Effect.forEach(
        round.events,
        (event) => {
          const request = event.type === "action.approval_requested" ? approvalRequestOf(event.eventId, event.orgUuid, event.data) : undefined
          return request === undefined ? Effect.void : channels.notifyApproval(request)
        },
        { concurrency: "unbounded", discard: true }
      )
      return round
    })
  /** One round of the dispatcher, leaving every delivery to the senders; answers how many events it took. */
  const dispatchOnce = Effect.map(dispatchRound(0), (round) => round.events.length)

  /**
   * Posts one claimed delivery through the outbound client and judges the answer; writes nothing.
   * Sends to one receiver share a few keep-alive connections and are pipelined on them: a
   * receiver may see a delivery twice when a connection breaks, which the `webhook-id` covers.
   */
  const attemptOne = (delivery: DueDelivery, sign: Signer) =>
    Effect.gen(function* () {
      const attempt = delivery.attempt + 1
      const body = JSON.stringify(delivery.payload)
      const headers = sign(delivery.id, Math.floor((yield* Clock.currentTimeMillis) / 1000), body)
      const answer = yield* outbound(delivery.url, {
        method: "POST",
        headers,
        body,
        policy,
        timeoutMs: settings.timeoutMs,
        maxResponseBytes: 64 * 1024,
        keepAlive: true,
        connections,
        pipelining
      }).pipe(
        Effect.map((response) => ({ status: response.status as number | undefined, retryAfter: response.headers["retry-after"], error: null as string | null })),
        Effect.catch((error) => Effect.succeed({ status: undefined, retryAfter: undefined, error: `${error.kind}: ${error.message}` }))
      )
      const now = yield* Clock.currentTimeMillis
      const outcome = judgeAttempt({ attempt, status: answer.status, retryAfter: answer.retryAfter, now, random: yield* Random.next })
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
      for (const row of attempted) record(deliveryOutcomes(row.outcome), 1)
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
  const connections = settings.connections ?? DEFAULT_CONNECTIONS
  const pipelining = settings.pipelining ?? DEFAULT_PIPELINING
  const endpoints = new Map<string, { readonly semaphore: Semaphore.Semaphore; users: number }>()
  const limited = (delivery: DueDelivery, sign: Signer) =>
    Effect.suspend(() => {
      let entry = endpoints.get(delivery.webhookId)
      if (entry === undefined) {
        entry = { semaphore: Semaphore.makeUnsafe(perEndpoint), users: 0 }
        endpoints.set(delivery.webhookId, entry)
      }
      const held = entry
      held.users++
      return attemptOne(delivery, sign).pipe(
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
   * A batch by webhook, with the webhook's signer: each secret is unsealed once per batch. A
   * secret that does not open leaves its deliveries out (they stay leased and are tried again
   * when the lease runs out).
   */
  const byWebhook = (due: ReadonlyArray<DueDelivery>) => {
    const groups = new Map<string, { readonly sign: Signer | undefined; readonly deliveries: Array<DueDelivery> }>()
    for (const delivery of due) {
      let group = groups.get(delivery.webhookId)
      if (group === undefined) {
        let sign: Signer | undefined
        try {
          sign = webhookSigner(envelope.openText(delivery.secretSealed, webhookAad(delivery.webhookId)))
        } catch {
          sign = undefined
        }
        group = { sign, deliveries: [] }
        groups.set(delivery.webhookId, group)
      }
      group.deliveries.push(delivery)
    }
    return [...groups.values()].flatMap((group) => (group.sign === undefined ? [] : [{ sign: group.sign, deliveries: group.deliveries }]))
  }

  /**
   * Attempts each delivery of a batch once, concurrently (bounded overall and per endpoint; no
   * order between deliveries is promised), then records the outcomes together. A webhook's
   * deliveries start no more fibers than may send to it at once: the semaphores scan their
   * waiters on every release.
   */
  const sendBatch = (due: ReadonlyArray<DueDelivery>) =>
    Effect.gen(function* () {
      if (due.length === 0) return
      // A delivery whose attempt broke (not a failed send: those are outcomes) stays leased and is retried when the lease runs out.
      const attempted = yield* Effect.forEach(
        byWebhook(due),
        ({ sign, deliveries }) => Effect.forEach(deliveries, (delivery) => Effect.exit(limited(delivery, sign)), { concurrency: perEndpoint }),
        { concurrency: "unbounded" }
      )
      yield* settle(attempted.flat().flatMap((exit) => (Exit.isSuccess(exit) ? [exit.value] : [])))
    })

  /** Claims due deliveries (retries, and what no dispatcher took on) and sends them. Returns how many. */
  const sendDue = Effect.gen(function* () {
    const due = yield* store.claimDue(settings.batchSize, yield* Clock.currentTimeMillis, settings.leaseMs)
    yield* sendBatch(due)
    return due.length
  })

  /** A dispatcher round whose deliveries (up to `lease`) are sent by the caller at once; answers how many events. */
  const dispatchAndSend = (lease: number) => Effect.flatMap(dispatchRound(lease), (round) => Effect.as(sendBatch(round.leased), round.events.length))

  return Webhooks.of({ create, list, remove, deliveries, dispatchRound, dispatchOnce, sendBatch, sendDue, dispatchAndSend })
})

/** A dispatcher round: the events it claimed, the deliveries it created, and those leased to the caller. */
export interface DispatchRound {
  readonly events: ReadonlyArray<DispatchedEvent>
  readonly deliveries: number
  readonly leased: ReadonlyArray<DueDelivery>
  /** How long the oldest claimed event waited in the outbox. */
  readonly oldestLagMs: number
}

export interface WebhooksService {
  readonly create: (orgUuid: string, input: CreateWebhookInput) => Effect.Effect<Webhook, WebhooksError>
  readonly list: (orgUuid: string) => Effect.Effect<ReadonlyArray<Webhook>>
  /** Soft delete (the delivery log stays; pending deliveries stop). */
  readonly remove: (orgUuid: string, id: string) => Effect.Effect<void, WebhooksError>
  readonly deliveries: (orgUuid: string, id: string, page: number, perPage: number) => Effect.Effect<Page<WebhookDelivery>, WebhooksError>
  readonly dispatchRound: (lease: number) => Effect.Effect<DispatchRound>
  readonly dispatchOnce: Effect.Effect<number>
  readonly sendBatch: (due: ReadonlyArray<DueDelivery>) => Effect.Effect<void>
  readonly sendDue: Effect.Effect<number>
  readonly dispatchAndSend: (lease: number) => Effect.Effect<number>
}

export class Webhooks extends Context.Service<Webhooks, WebhooksService>()("gateway/Webhooks") {
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
 * deliveries and sends them; several senders post what else is due (retries,
 * what the dispatcher had no room for, other processes' leftovers). Each
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
  const loop = <E>(name: string, round: Effect.Effect<number, E>, wakeUp: ReturnType<typeof makeWakeUp>) =>
    Effect.gen(function* () {
      while (true) {
        const wake = wakeUp.next()
        const busy = yield* supervisedRound(name, round, 0)
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
        Effect.catchCause((cause) => reportFailure("webhook outbox listener", cause)),
        Effect.andThen(Effect.sleep(5_000)),
        Effect.forever
      )
  })
  // The dispatcher sends the deliveries it creates itself (leased to it by the same statement, so
  // neither a second claim nor a second read of the payload), up to `handoff` in flight; beyond
  // that they are left due and the senders are woken for them.
  const handoff = settings.handoff ?? settings.batchSize
  let handing = 0
  const dispatcher = loop(
    "webhook dispatcher",
    Effect.gen(function* () {
      const round = yield* webhooks.dispatchRound(Math.max(0, handoff - handing))
      const handed = round.leased.length
      if (handed > 0) {
        handing += handed
        yield* Effect.forkChild(
          webhooks.sendBatch(round.leased).pipe(
            Effect.catchCause((cause) => reportFailure("webhook dispatcher send", cause)),
            Effect.ensuring(Effect.sync(() => (handing -= handed)))
          )
        )
      }
      if (round.deliveries > handed) work.signal()
      return round.events.length
    }),
    outbox
  )
  const senders = Array.from({ length: settings.senders ?? DEFAULT_SENDERS }, () => loop("webhook sender", webhooks.sendDue, work))
  yield* Effect.all([listener, dispatcher, ...senders], { concurrency: "unbounded", discard: true })
})

/** Runs the worker loop for as long as the layer lives. */
export const WebhookWorkers = Layer.effectDiscard(Effect.forkScoped(webhookWorkerLoop))

/** Everything of webhooks and approval channels, for `servicesLayer` (needs SqlClient, Config, Secrets). */
export const webhooksLayer = WebhookWorkers.pipe(Layer.provideMerge(Webhooks.layer), Layer.provideMerge(ApprovalChannels.layer))
