/**
 * Delivery through the outbox, driven by hand (no background workers) with a
 * fake clock, against a local receiver.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import { PgClient } from "@effect/sql-pg"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Queue from "effect/Queue"
import * as Random from "effect/Random"
import { SqlClient } from "effect/sql"
import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ApprovalGrantsLive } from "../src/actions/grants.js"
import { ApprovalChannels } from "../src/approvers/service.js"
import { Events } from "../src/events/service.js"
import { Flags } from "../src/flags/service.js"
import { configLayer, loadConfig } from "../src/platform/config.js"
import { databaseLayer } from "../src/platform/db/index.js"
import { newUuid } from "../src/platform/ids.js"
import { metricsText } from "../src/platform/metrics.js"
import { platformMemoryLayer } from "../src/platform/redis/index.js"
import { Secrets } from "../src/platform/secrets.js"
import { deliveryBody } from "../src/webhooks/schedule.js"
import { WebhookSettings, Webhooks } from "../src/webhooks/service.js"
import { type FreshDatabase, freshDatabaseUrl, UNUSED_DATA_DIR } from "./support/database.js"

interface Received {
  /** The client port of the connection it came on. */
  readonly connection: number
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

/** Answers each path with the queued statuses in turn (then 200); "hang" never answers. */
const startReceiver = async () => {
  const received: Array<Received> = []
  const plans = new Map<string, Array<number | "hang">>()
  const server: Server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const path = request.url ?? "/"
      received.push({ connection: request.socket.remotePort ?? 0, path, headers: request.headers, body: Buffer.concat(chunks).toString("utf8") })
      const next = plans.get(path)?.shift() ?? 200
      if (next === "hang") return
      response.writeHead(next, { "content-type": "text/plain" }).end("ok")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as { port: number }).port
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    received,
    plan: (path: string, statuses: Array<number | "hang">) => plans.set(path, statuses),
    close: () => {
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

const clock = { current: Date.parse("2026-03-01T00:00:00Z") }
/** Effect's Clock with the time this file moves by hand (sleeps and timeouts stay real), and a Random that always draws 0.5. */
const realClock = Clock.Clock.defaultValue()
const testClock: Clock.Clock = {
  ...realClock,
  currentTimeMillisUnsafe: () => clock.current,
  currentTimeMillis: Effect.sync(() => clock.current),
  currentTimeNanosUnsafe: () => BigInt(clock.current) * 1_000_000n,
  currentTimeNanos: Effect.sync(() => BigInt(clock.current) * 1_000_000n),
  sleep: (duration) => realClock.sleep(duration)
}
const testRandom: Random.Random = { nextIntUnsafe: () => 0, nextDoubleUnsafe: () => 0.5 }

let database: FreshDatabase | undefined
type Services = Webhooks | Events | SqlClient.SqlClient | PgClient.PgClient | Secrets
let runtime: ManagedRuntime.ManagedRuntime<Services, unknown>
let receiver: Awaited<ReturnType<typeof startReceiver>>
const run = <A, E>(effect: Effect.Effect<A, E, Services>) => runtime.runPromise(effect)

const record = (orgUuid: string, type: "action.approved" | "case.complete" | "action.approval_requested", data: Record<string, unknown>) =>
  run(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const events = yield* Events
      return yield* sql.withTransaction(events.record([{ orgUuid, type, data }]))
    })
  )

const deliveriesOf = (orgUuid: string, id: string) => run(Effect.flatMap(Webhooks, (w) => w.deliveries(orgUuid, id, 1, 50)))
const createHook = (orgUuid: string, path: string, events?: Array<string>) =>
  run(Effect.flatMap(Webhooks, (w) => w.create(orgUuid, { url: receiver.url(path), events })))
const dispatch = () => run(Effect.flatMap(Webhooks, (w) => w.dispatchOnce))
const send = () => run(Effect.flatMap(Webhooks, (w) => w.sendDue))

beforeAll(async () => {
  receiver = await startReceiver()
  database = await freshDatabaseUrl()
  const config = loadConfig({
    DATA_DIR: UNUSED_DATA_DIR,
    DATABASE_URL: database.url,
    MASTER_KEY: "0000000000000000000000000000000000000000000000000000000000000002",
    OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8",
    OUTBOUND_ALLOW_HTTP: "true"
  })
  const base = Layer.mergeAll(
    configLayer(config),
    databaseLayer({ url: config.databaseUrl, dataDir: config.dataDir }),
    platformMemoryLayer()
  )
  const services = Webhooks.layer.pipe(
    Layer.provideMerge(ApprovalChannels.layer),
    Layer.provideMerge(ApprovalGrantsLive),
    Layer.provideMerge(Flags.layer),
    Layer.provideMerge(Layer.mergeAll(Events.layer, Secrets.layer)),
    Layer.provideMerge(Layer.mergeAll(Layer.succeed(Clock.Clock)(testClock), Layer.succeed(Random.Random)(testRandom), Layer.succeed(WebhookSettings)({ timeoutMs: 400, leaseMs: 60_000, batchSize: 100, pollMs: 50, connections: 2, pipelining: 8 }))),
    Layer.provideMerge(base)
  )
  runtime = ManagedRuntime.make(services as Layer.Layer<Services, unknown>)
  await runtime.runPromise(Effect.void)
})

afterAll(async () => {
  await runtime?.dispose()
  await receiver?.close()
  await database?.drop()
})

describe("webhook delivery", () => {
  it("delivers a signed event the first time", async () => {
    clock.current = Date.now() // the receiver's verifier checks the timestamp is recent
    const org = newUuid()
    const hook = await createHook(org, "/ok")
    const [event] = await record(org, "action.approved", { action_uuid: "act_1", status: "approved" })
    expect(await dispatch()).toBeGreaterThanOrEqual(1)
    expect(await send()).toBe(1)
    const got = receiver.received.filter((r) => r.path === "/ok")
    expect(got).toHaveLength(1)
    const body = new Webhook(hook.secret!).verify(got[0]!.body, got[0]!.headers as Record<string, string>) as Record<string, any>
    expect(body).toMatchObject({ event: "action.approved", action_uuid: "act_1", data: { action_uuid: "act_1", status: "approved" }, timestamp: event!.timestamp })
    expect(got[0]!.headers["webhook-id"]).toBe(body.delivery_id)
    // The body built by the dispatcher's statement is the one `deliveryBody` describes.
    expect(body).toEqual(deliveryBody("action.approved", body.delivery_id, event!.timestamp, { action_uuid: "act_1", status: "approved" }))
    expect(body.delivery_id).toMatch(/^msg_[0-9a-z]{24}$/)
    const { data } = await deliveriesOf(org, hook.id)
    expect(data).toHaveLength(1)
    expect(data[0]).toMatchObject({ id: body.delivery_id, event: "action.approved", status: "delivered", status_code: 200, attempt: 1 })
    expect(data[0]!.delivered_at).not.toBeNull()
    // Nothing is left to send.
    expect(await send()).toBe(0)
    // The attempt and the round's outbox lag are on /metrics.
    expect(metricsText()).toMatch(/^webhook_deliveries_total\{outcome="delivered"\} [1-9]/m)
    expect(metricsText()).toMatch(/^webhook_outbox_lag_seconds_count [1-9]/m)
  })

  it("retries a 500 after the scheduled wait, with the same delivery id", async () => {
    const org = newUuid()
    const hook = await createHook(org, "/flaky")
    receiver.plan("/flaky", [500, 200])
    await record(org, "action.approved", { action_uuid: "act_2" })
    await dispatch()
    expect(await send()).toBe(1)
    let [delivery] = (await deliveriesOf(org, hook.id)).data
    expect(delivery).toMatchObject({ status: "pending", status_code: 500, attempt: 1 })
    clock.current += 4_000
    expect(await send()).toBe(0)
    clock.current += 1_500
    expect(await send()).toBe(1)
    ;[delivery] = (await deliveriesOf(org, hook.id)).data
    expect(delivery).toMatchObject({ status: "delivered", status_code: 200, attempt: 2 })
    const got = receiver.received.filter((r) => r.path === "/flaky")
    expect(got.map((r) => r.headers["webhook-id"])).toEqual([delivery!.id, delivery!.id])
    const attempts = await run(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT attempt, status_code FROM webhook_delivery_attempts WHERE delivery_id = ${delivery!.id} ORDER BY attempt`)
    )
    expect(attempts.map((a: any) => [a.attempt, a.status_code])).toEqual([[1, 500], [2, 200]])
  })

  it("disables the endpoint on 410", async () => {
    const org = newUuid()
    const hook = await createHook(org, "/gone")
    receiver.plan("/gone", [410])
    await record(org, "action.approved", { action_uuid: "a" })
    await dispatch()
    await send()
    const list = await run(Effect.flatMap(Webhooks, (w) => w.list(org)))
    expect(list[0]).toMatchObject({ id: hook.id, status: "disabled", secret: null })
    // A disabled endpoint gets no new deliveries.
    await record(org, "action.approved", { action_uuid: "b" })
    await dispatch()
    clock.current += 3600 * 1000
    await send()
    const { data } = await deliveriesOf(org, hook.id)
    expect(data).toHaveLength(1)
    expect(data[0]).toMatchObject({ status: "failed", status_code: 410, attempt: 1 })
    expect(receiver.received.filter((r) => r.path === "/gone")).toHaveLength(1)
  })

  it("counts no answer within the timeout as a failure", async () => {
    const org = newUuid()
    const hook = await createHook(org, "/slow")
    receiver.plan("/slow", ["hang"])
    await record(org, "action.approved", { action_uuid: "slow" })
    await dispatch()
    const started = Date.now()
    await send()
    expect(Date.now() - started).toBeLessThan(5_000)
    const [delivery] = (await deliveriesOf(org, hook.id)).data
    expect(delivery).toMatchObject({ status: "pending", status_code: null, attempt: 1 })
  })

  it("gives up after the last retry", async () => {
    const org = newUuid()
    const hook = await createHook(org, "/broken")
    receiver.plan("/broken", Array(20).fill(503))
    await record(org, "action.approved", { action_uuid: "broken" })
    await dispatch()
    for (let attempt = 1; attempt <= 9; attempt++) {
      await send()
      clock.current += 11 * 3600 * 1000
    }
    expect(receiver.received.filter((r) => r.path === "/broken")).toHaveLength(8)
    const [delivery] = (await deliveriesOf(org, hook.id)).data
    expect(delivery).toMatchObject({ status: "failed", attempt: 8, status_code: 503 })
    // 8 attempts over 77 h: not yet 5 days of failure, so the endpoint stays active.
    expect((await run(Effect.flatMap(Webhooks, (w) => w.list(org))))[0]!.status).toBe("active")
  })

  it("disables an endpoint that has failed for 5 days", async () => {
    const org = newUuid()
    const hook = await createHook(org, "/down")
    receiver.plan("/down", Array(20).fill(503))
    await record(org, "action.approved", { action_uuid: "down" })
    await dispatch()
    for (let attempt = 1; attempt <= 8; attempt++) {
      await send()
      clock.current += 20 * 3600 * 1000
    }
    // Attempt 7 comes 120 h after the first failure.
    expect(receiver.received.filter((r) => r.path === "/down")).toHaveLength(7)
    const [delivery] = (await deliveriesOf(org, hook.id)).data
    expect(delivery).toMatchObject({ status: "failed", attempt: 7 })
    expect((await run(Effect.flatMap(Webhooks, (w) => w.list(org))))[0]!.status).toBe("disabled")
  })

  it("only sends subscribed events", async () => {
    const org = newUuid()
    const hook = await createHook(org, "/cases", ["case.complete"])
    await record(org, "action.approved", { action_uuid: "x" })
    await record(org, "case.complete", { case_id: "c" })
    await dispatch()
    await send()
    const { data } = await deliveriesOf(org, hook.id)
    expect(data.map((d) => d.event)).toEqual(["case.complete"])
  })

  it("never sends events of a rolled-back transaction", async () => {
    const org = newUuid()
    const hook = await createHook(org, "/rollback")
    await run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const events = yield* Events
        yield* sql.withTransaction(Effect.andThen(events.record([{ orgUuid: org, type: "action.approved", data: { action_uuid: "r" } }]), Effect.fail("abort")))
      }).pipe(Effect.ignore)
    )
    await dispatch()
    await send()
    expect((await deliveriesOf(org, hook.id)).data).toHaveLength(0)
    expect(receiver.received.filter((r) => r.path === "/rollback")).toHaveLength(0)
  })

  it("two dispatchers and senders racing send each delivery once", async () => {
    const org = newUuid()
    const hook = await createHook(org, "/race")
    for (let i = 0; i < 10; i++) await record(org, "action.approved", { action_uuid: `race_${i}` })
    await Promise.all([dispatch(), dispatch(), dispatch()])
    await Promise.all([send(), send(), send()])
    const got = receiver.received.filter((r) => r.path === "/race")
    expect(got).toHaveLength(10)
    expect(new Set(got.map((r) => r.headers["webhook-id"])).size).toBe(10)
    expect((await deliveriesOf(org, hook.id)).data).toHaveLength(10)
  })

  it("sends a batch to one receiver over a few pipelined connections, each delivery signed", async () => {
    clock.current = Date.now()
    const org = newUuid()
    const hook = await createHook(org, "/batch")
    for (let i = 0; i < 40; i++) await record(org, "action.approved", { action_uuid: `batch_${i}` })
    await dispatch()
    expect(await send()).toBe(40)
    const got = receiver.received.filter((r) => r.path === "/batch")
    expect(got).toHaveLength(40)
    const verifier = new Webhook(hook.secret!)
    const actions = got.map((r) => (verifier.verify(r.body, r.headers as Record<string, string>) as { action_uuid: string }).action_uuid)
    expect(new Set(actions).size).toBe(40)
    expect(new Set(got.map((r) => r.headers["webhook-id"])).size).toBe(40)
    // The test's settings: 2 connections of 8 pipelined sends.
    expect(new Set(got.map((r) => r.connection)).size).toBeLessThanOrEqual(2)
    expect((await deliveriesOf(org, hook.id)).data.every((d) => d.status === "delivered")).toBe(true)
  })

  it("a dispatcher round sends what it leased itself and leaves the rest due", async () => {
    clock.current = Date.now()
    const org = newUuid()
    const hook = await createHook(org, "/handoff")
    for (let i = 0; i < 5; i++) await record(org, "action.approved", { action_uuid: `handoff_${i}` })
    expect(await run(Effect.flatMap(Webhooks, (w) => w.dispatchAndSend(3)))).toBe(5)
    expect(receiver.received.filter((r) => r.path === "/handoff")).toHaveLength(3)
    expect(await send()).toBe(2)
    expect(receiver.received.filter((r) => r.path === "/handoff")).toHaveLength(5)
    expect((await deliveriesOf(org, hook.id)).data.map((d) => d.status)).toEqual(Array(5).fill("delivered"))
  })

  it("deliveries leased to a dispatcher that never sent them go out once the lease runs out", async () => {
    const org = newUuid()
    const hook = await createHook(org, "/orphaned")
    for (let i = 0; i < 3; i++) await record(org, "action.approved", { action_uuid: `orphan_${i}` })
    const round = await run(Effect.flatMap(Webhooks, (w) => w.dispatchRound(10)))
    expect(round.leased).toHaveLength(3)
    // The dispatcher "dies" here: nobody else may take them while the lease holds.
    expect(await send()).toBe(0)
    clock.current += 60_000
    expect(await send()).toBe(3)
    expect(new Set(receiver.received.filter((r) => r.path === "/orphaned").map((r) => r.headers["webhook-id"]))).toEqual(new Set(round.leased.map((d) => d.id)))
    expect((await deliveriesOf(org, hook.id)).data.map((d) => d.status)).toEqual(Array(3).fill("delivered"))
  })

  it("another organization's webhook is not found", async () => {
    const hook = await createHook(newUuid(), "/mine")
    const failure = await run(Effect.flip(Effect.flatMap(Webhooks, (w) => w.deliveries(newUuid(), hook.id, 1, 20))))
    expect(failure.reason).toMatchObject({ code: "NOT_FOUND" })
    const removal = await run(Effect.flip(Effect.flatMap(Webhooks, (w) => w.remove(newUuid(), hook.id))))
    expect(removal.reason).toMatchObject({ code: "NOT_FOUND" })
  })
})

describe("events nobody wants", () => {
  const dispatchedOf = (eventId: string) =>
    run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ dispatched: boolean }>`SELECT dispatched_at IS NOT NULL AS dispatched FROM events WHERE event_id = ${eventId}`)).then(
      (rows) => rows[0]?.dispatched
    )

  it("are stored dispatched; an event a webhook subscribes to waits for the dispatcher", async () => {
    const org = newUuid()
    const [before] = await record(org, "action.approved", { action_uuid: "nobody" })
    expect(await dispatchedOf(before!.eventId)).toBe(true)
    const hook = await createHook(org, "/wanted", ["case.complete"])
    const [other] = await record(org, "action.approved", { action_uuid: "other type" })
    expect(await dispatchedOf(other!.eventId)).toBe(true)
    const [wanted] = await record(org, "case.complete", { case_id: "wanted" })
    expect(await dispatchedOf(wanted!.eventId)).toBe(false)
    await dispatch()
    expect(await dispatchedOf(wanted!.eventId)).toBe(true)
    await send()
    const { data } = await deliveriesOf(org, hook.id)
    expect(data.map((delivery) => delivery.payload.case_id)).toEqual(["wanted"])
    // A deleted webhook wants nothing more.
    await run(Effect.flatMap(Webhooks, (w) => w.remove(org, hook.id)))
    const [after] = await record(org, "case.complete", { case_id: "after delete" })
    expect(await dispatchedOf(after!.eventId)).toBe(true)
  })

  it("an approval request waits for the dispatcher when a notification channel is on", async () => {
    const org = newUuid()
    const [silent] = await record(org, "action.approval_requested", { action_uuid: "silent" })
    expect(await dispatchedOf(silent!.eventId)).toBe(true)
    await run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`INSERT INTO notification_channels (org_uuid, email_enabled) VALUES (${org}, false)`))
    const [off] = await record(org, "action.approval_requested", { action_uuid: "off" })
    expect(await dispatchedOf(off!.eventId)).toBe(true)
    await run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE notification_channels SET email_enabled = true WHERE org_uuid = ${org}`))
    const [on] = await record(org, "action.approval_requested", { action_uuid: "on" })
    expect(await dispatchedOf(on!.eventId)).toBe(false)
    // Other types still need a webhook.
    const [approved] = await record(org, "action.approved", { action_uuid: "approved" })
    expect(await dispatchedOf(approved!.eventId)).toBe(true)
    await dispatch()
    expect(await dispatchedOf(on!.eventId)).toBe(true)
  })

  it("wake the dispatchers only when something is left to dispatch", async () => {
    const org = newUuid()
    await createHook(org, "/notify", ["case.complete"])
    const heard = await run(
      Effect.scoped(
        Effect.gen(function* () {
          const pg = yield* PgClient.PgClient
          const sql = yield* SqlClient.SqlClient
          const events = yield* Events
          const notifications = yield* pg.listen("gateway_events")
          // How many wake-ups the commits so far sent: PostgreSQL delivers notifications in commit order, so a
          // marker notified after them arrives after all of theirs.
          const heardSoFar = Effect.gen(function* () {
            const marker = `marker-${newUuid()}`
            yield* sql`SELECT pg_notify('gateway_events', ${marker})`
            let heard = 0
            while ((yield* Queue.take(notifications)).payload !== marker) heard++
            return heard
          })
          yield* sql.withTransaction(events.record([{ orgUuid: org, type: "action.approved", data: { action_uuid: "unwanted" } }]))
          const afterUnwanted = yield* heardSoFar
          yield* sql.withTransaction(events.record([{ orgUuid: org, type: "case.complete", data: { case_id: "wanted" } }]))
          const afterWanted = yield* heardSoFar
          return { afterUnwanted, afterWanted }
        })
      ).pipe(Effect.timeout("10 seconds"))
    )
    expect(heard).toEqual({ afterUnwanted: 0, afterWanted: 1 })
  })
})
