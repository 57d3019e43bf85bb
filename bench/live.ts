/**
 * `npm run bench:live`: the live channels of the gateway, against baselines
 * measured in the same run.
 * - push latency: 1,000 sockets (API key, subscribed to `notifications`); a
 *   `require_approval` authorize is POSTed and every socket's frame arrival is
 *   timed from the moment the POST was sent. Baseline: raw uWS publishing to
 *   1,000 subscribers, triggered by an HTTP GET and timed the same way.
 * - idle capacity: as many authenticated, subscribed, idle sockets as the
 *   server accepts (up to BENCH_IDLE_SOCKETS, default 19,000), with the server
 *   process's RSS read from /proc/<pid>/status.
 * - webhooks: N authorizes with a webhook subscribed to `action.authorized`
 *   pointing at a local node:http receiver; deliveries per second until the
 *   receiver has all N (bounded by how fast the N authorizes are made). Then
 *   the drain: the receiver holds its answers while N more authorizes pile up
 *   as due deliveries, and deliveries per second are timed from its release
 *   until it has answered all N — the sending side alone.
 *   Baseline: the receiver's own request rate under load (plain node:http
 *   client, keep-alive, 16 connections).
 * Servers run in child processes; the clients run here. The gateway is the
 * process `npm start` runs: the tsc build in dist/ (brought up to date first)
 * with its memory budget and flags (BENCH_SERVER_FLAGS replaces them). It runs
 * on its embedded PostgreSQL (separate processes, so outside the RSS measured
 * here) unless DATABASE_URL is set: then on a fresh Postgres database there
 * (and REDIS_URL when set).
 * Last line: one JSON object.
 */
import { type ChildProcess, fork, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { Agent, request } from "node:http"
import WebSocket from "ws"
import { freshDatabaseUrl } from "../test/support/database.js"
import { freePort } from "../test/support/server.js"
import { BUILD_DIRECTORY, compileServer, startEnv, startFlags } from "./support/build.js"
import { benchDataDir } from "./support/data-dir.js"
import { percentile, runLoad } from "./support/load.js"

const SOCKETS = Number(process.env.BENCH_SOCKETS ?? 1_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 40)
const IDLE_TARGET = Number(process.env.BENCH_IDLE_SOCKETS ?? 19_000)
const WEBHOOK_EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 2_000)
const IDLE_BATCH = 500

interface Target {
  readonly url: string
  readonly child: ChildProcess
  readonly stop: () => void
}

const startTarget = async (mode: "uws" | "receiver", env: Record<string, string> = {}): Promise<Target> => {
  const port = await freePort()
  const child = fork(new URL("./support/live-target.ts", import.meta.url).pathname, [mode, String(port)], {
    execArgv: ["--import", "tsx"],
    env: { ...process.env, ...env },
    stdio: ["ignore", "inherit", "inherit", "ipc"]
  })
  await new Promise<void>((resolve, reject) => {
    child.once("message", () => resolve())
    child.once("exit", (code) => reject(new Error(`${mode} target exited with ${code}`)))
  })
  return { url: `http://127.0.0.1:${port}`, child, stop: () => child.kill("SIGKILL") }
}

const dataDir = benchDataDir("bench-live")

const GATEWAY_ENV = {
  HOST: "127.0.0.1",
  DATA_DIR: dataDir.path,
  MASTER_KEY: "3333333333333333333333333333333333333333333333333333333333333333",
  RATE_LIMIT_PER_MINUTE: "100000000",
  PUBLIC_RATE_LIMIT_PER_MINUTE: "100000000",
  OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8",
  OUTBOUND_ALLOW_HTTP: "true",
  LOG_LEVEL: "error"
}

/** The built entry point as its own process, started with `npm start`'s flags. */
const startGateway = async (env: Record<string, string>): Promise<Target> => {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const child = spawn(process.execPath, [...startFlags(), `${BUILD_DIRECTORY}/src/main.js`], {
    env: {
      ...process.env,
      ...startEnv(),
      ...GATEWAY_ENV,
      PORT: String(port),
      BASE_URL: url,
      DATABASE_URL: env.BENCH_DATABASE_URL ?? "",
      REDIS_URL: env.BENCH_REDIS_URL ?? "",
      REDIS_KEY_PREFIX: `bench-live-${process.pid}:`
    },
    stdio: ["ignore", "ignore", "inherit"]
  })
  for (;;) {
    if (child.exitCode !== null) throw new Error(`compiled gateway exited with ${child.exitCode}`)
    try {
      if ((await fetch(`${url}/health`)).ok) break
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return { url, child, stop: () => child.kill("SIGKILL") }
}

/** VmRSS of a process in MB (Linux). */
const rssMb = (pid: number) => {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").match(/^VmRSS:\s+(\d+)\s+kB/m)
  return line ? Math.round((Number(line[1]) / 1024) * 10) / 10 : Number.NaN
}

/** The soft "Max open files" of a process. */
const openFileLimit = (pid: number | "self") => {
  const line = readFileSync(`/proc/${pid}/limits`, "utf8").match(/^Max open files\s+(\d+|unlimited)\s+(\d+|unlimited)/m)
  return line ? { soft: line[1]!, hard: line[2]! } : { soft: "?", hard: "?" }
}

const agent = new Agent({ keepAlive: true, maxSockets: 64 })

const post = (url: string, path: string, body: unknown, token?: string) =>
  new Promise<{ status: number; body: any }>((resolve, reject) => {
    const target = new URL(url)
    const text = JSON.stringify(body)
    const req = request(
      {
        agent,
        host: target.hostname,
        port: target.port,
        path,
        method: "POST",
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(text),
          ...(token ? { authorization: `Bearer ${token}` } : {})
        }
      },
      (res) => {
        let data = ""
        res.on("data", (chunk) => (data += chunk))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: data ? JSON.parse(data) : undefined }))
        res.on("error", reject)
      }
    )
    req.on("error", reject)
    req.end(text)
  })

const get = (url: string) =>
  new Promise<number>((resolve, reject) => {
    const target = new URL(url)
    const req = request({ agent, host: target.hostname, port: target.port, path: target.pathname + target.search }, (res) => {
      res.on("data", () => {})
      res.on("end", () => resolve(res.statusCode ?? 0))
    })
    req.on("error", reject)
    req.end()
  })

/**
 * Opens a socket; resolves once it is open (with `channel`: once the server
 * confirmed the subscription, which also proves authentication), or with
 * undefined when refused or closed.
 */
const openSocket = (url: string, headers: Record<string, string>, onMessage: (data: string) => void, channel?: string) =>
  new Promise<WebSocket | undefined>((resolve) => {
    const socket = new WebSocket(url, { headers, perMessageDeflate: false })
    let settled = false
    const settle = (value: WebSocket | undefined) => {
      if (settled) return
      settled = true
      resolve(value)
    }
    socket.once("unexpected-response", () => settle(undefined))
    socket.once("error", () => settle(undefined))
    socket.once("close", () => settle(undefined))
    socket.on("message", (data) => {
      const text = String(data)
      if (!settled && text.includes('"subscribed"')) settle(socket)
      onMessage(text)
    })
    socket.once("open", () => {
      if (channel) socket.send(JSON.stringify({ type: "subscribe", channel }))
      else settle(socket)
    })
  })

/**
 * Times `rounds` triggers: each sends one trigger, waits until all sockets
 * have counted a frame of that round, and records every arrival relative to
 * the moment the trigger was sent.
 */
const timeRounds = async (options: {
  sockets: number
  rounds: number
  warmup: number
  trigger: (round: number) => Promise<void>
  attach: (onArrival: () => void) => void
}) => {
  const latencies: number[] = []
  /** Hops of each round: the trigger answered, its first frame, its last frame (ms after sending). */
  const answered: number[] = []
  const firstFrames: number[] = []
  const lastFrames: number[] = []
  let sentAt = 0
  let arrived = 0
  let measuring = false
  let wake: () => void = () => {}
  options.attach(() => {
    arrived++
    const at = performance.now() - sentAt
    if (measuring) {
      latencies.push(at)
      if (arrived === 1) firstFrames.push(at)
      if (arrived === options.sockets) lastFrames.push(at)
    }
    if (arrived === options.sockets) wake()
  })
  let missed = 0
  for (let round = 0; round < options.warmup + options.rounds; round++) {
    measuring = round >= options.warmup
    arrived = 0
    const all = new Promise<void>((resolve) => {
      wake = resolve
    })
    sentAt = performance.now()
    await options.trigger(round)
    if (measuring) answered.push(performance.now() - sentAt)
    const timedOut = await Promise.race([all.then(() => false), new Promise<boolean>((resolve) => setTimeout(() => resolve(true), 5_000))])
    if (timedOut) missed += options.sockets - arrived
  }
  const sorted = Float64Array.from(latencies).sort()
  const median = (values: number[]) => Math.round(percentile(Float64Array.from(values).sort(), 50) * 1000) / 1000
  return {
    answered_p50_ms: median(answered),
    first_frame_p50_ms: median(firstFrames),
    last_frame_p50_ms: median(lastFrames),
    frames: latencies.length,
    missed,
    p50_ms: Math.round(percentile(sorted, 50) * 1000) / 1000,
    p99_ms: Math.round(percentile(sorted, 99) * 1000) / 1000,
    max_ms: Math.round((sorted[sorted.length - 1] ?? 0) * 1000) / 1000
  }
}

const inBatches = async <T>(total: number, batch: number, open: () => Promise<T | undefined>, stopEarly = false) => {
  const opened: T[] = []
  let refused = 0
  while (opened.length < total) {
    const size = Math.min(batch, total - opened.length)
    const results = await Promise.all(Array.from({ length: size }, open))
    for (const result of results) {
      if (result === undefined) refused++
      else opened.push(result)
    }
    if (refused > 0 && stopEarly) break
    if (refused > 0 && !stopEarly) throw new Error(`${refused} sockets refused`)
  }
  return { opened, refused }
}

compileServer()
const runStarted = performance.now()

// 1. Baseline: raw uWS publish to SOCKETS subscribers.
const raw = await startTarget("uws")
const rawWs = `${raw.url.replace("http", "ws")}/ws`
let rawArrival: () => void = () => {}
const rawSockets = (await inBatches(SOCKETS, 250, () => openSocket(rawWs, {}, () => rawArrival()))).opened
const rawPush = await timeRounds({
  sockets: SOCKETS,
  rounds: ROUNDS,
  warmup: 5,
  trigger: async (round) => {
    await get(`${raw.url}/publish?n=${round}`)
  },
  attach: (onArrival) => {
    rawArrival = onArrival
  }
})
for (const socket of rawSockets) socket.terminate()
raw.stop()

// 2. The gateway: push latency, webhooks, idle capacity.
const database = process.env.DATABASE_URL ? await freshDatabaseUrl() : undefined
const store = database ? `postgres${process.env.REDIS_URL ? " + redis" : ""}` : "embedded postgres"
const appEnv = {
  ...(database ? { BENCH_DATABASE_URL: database.url } : {}),
  ...(database && process.env.REDIS_URL ? { BENCH_REDIS_URL: process.env.REDIS_URL } : {})
}
const app = await startGateway(appEnv)
const runtime = `npm start build (${startFlags().join(" ") || "no flags"})`
const appPid = app.child.pid!
const rssAtStart = rssMb(appPid)
const appWs = `${app.url.replace("http", "ws")}/api/v1/ws`
const registered = await post(app.url, "/api/v1/auth/register", { email: "live@example.test", password: "benchmark password", org_name: "Live" })
if (registered.status !== 201) throw new Error(`register failed: ${registered.status}`)
const key: string = registered.body.api_key.key
const auth = { authorization: `Bearer ${key}` }

let pushArrival: () => void = () => {}
const onAppFrame = (text: string) => {
  if (text.includes('"notification.created"')) pushArrival()
}
const pushSockets = (await inBatches(SOCKETS, 250, () => openSocket(appWs, auth, onAppFrame, "notifications"))).opened
const gatewayPush = await timeRounds({
  sockets: SOCKETS,
  rounds: ROUNDS,
  warmup: 5,
  trigger: async (round) => {
    const reply = await post(app.url, "/api/v1/actions", { action_type: "payments.send", details: `round ${round}`, require_approval: true }, key)
    if (reply.status !== 201) throw new Error(`authorize failed: ${reply.status} ${JSON.stringify(reply.body)}`)
  },
  attach: (onArrival) => {
    pushArrival = onArrival
  }
})
for (const socket of pushSockets) socket.terminate()

// Webhooks: a receiver process, a webhook on action.authorized, N authorizes.
const receiver = await startTarget("receiver")
const hook = await post(app.url, "/api/v1/webhooks", { url: `${receiver.url}/hook`, events: ["action.authorized"] }, key)
if (hook.status !== 201) throw new Error(`webhook create failed: ${hook.status} ${JSON.stringify(hook.body)}`)
const allReceived = new Promise<{ arrivals?: Record<string, number> }>((resolve) => receiver.child.once("message", resolve))
receiver.child.send({ expect: WEBHOOK_EVENTS, record: true })
const webhookStarted = performance.now()
let produced = 0
/** When each authorize was answered (epoch ms, by action), for the delivery lag. */
const answeredAt = new Map<string, number>()
const producer = async () => {
  while (produced < WEBHOOK_EVENTS) {
    produced++
    const reply = await post(app.url, "/api/v1/actions", { action_type: "email.send", details: `event ${produced}` }, key)
    if (reply.status !== 201) throw new Error(`authorize failed: ${reply.status} ${JSON.stringify(reply.body)}`)
    answeredAt.set(reply.body.action_uuid, performance.timeOrigin + performance.now())
  }
}
await Promise.all(Array.from({ length: 16 }, producer))
const producedIn = (performance.now() - webhookStarted) / 1000
const webhookTimedOut = await Promise.race([allReceived.then(() => false), new Promise<boolean>((resolve) => setTimeout(() => resolve(true), 60_000))])
const webhookSeconds = (performance.now() - webhookStarted) / 1000
const webhookRate = webhookTimedOut ? 0 : Math.round(WEBHOOK_EVENTS / webhookSeconds)
// Delivery lag: authorize answered → the receiver has the delivery (both clocks are this machine's).
const arrivals = webhookTimedOut ? {} : ((await allReceived).arrivals ?? {})
const lags = Float64Array.from(Object.entries(arrivals).flatMap(([action, at]) => (answeredAt.has(action) ? [at - answeredAt.get(action)!] : []))).sort()
const webhookLag = { p50_ms: Math.round(percentile(lags, 50) * 10) / 10, p99_ms: Math.round(percentile(lags, 99) * 10) / 10 }

// Drain: a backlog of N due deliveries (the receiver holds its answers meanwhile), timed from the release.
const drained = new Promise<void>((resolve) => receiver.child.once("message", () => resolve()))
receiver.child.send({ expect: WEBHOOK_EVENTS, hold: true })
produced = 0
await Promise.all(Array.from({ length: 16 }, producer))
// Held sends time out after 15 s; the backlog is complete once the last events are dispatched.
await new Promise((resolve) => setTimeout(resolve, 1_000))
const drainStarted = performance.now()
receiver.child.send({ release: true })
const drainTimedOut = await Promise.race([drained.then(() => false), new Promise<boolean>((resolve) => setTimeout(() => resolve(true), 60_000))])
const drainSeconds = (performance.now() - drainStarted) / 1000
const drainRate = drainTimedOut ? 0 : Math.round(WEBHOOK_EVENTS / drainSeconds)

// Idle capacity: authenticated, subscribed sockets that then say nothing.
await new Promise((resolve) => setTimeout(resolve, 500))
const rssBefore = rssMb(appPid)
const idleStarted = performance.now()
const idle = await inBatches(
  IDLE_TARGET,
  IDLE_BATCH,
  () => openSocket(appWs, auth, () => {}, "notifications"),
  true
)
const idleSeconds = (performance.now() - idleStarted) / 1000
await new Promise((resolve) => setTimeout(resolve, 1_000))
const idleRss = rssMb(appPid)
const stillOpen = idle.opened.filter((socket) => socket.readyState === WebSocket.OPEN).length
const serverFiles = openFileLimit(appPid)
const clientFiles = openFileLimit("self")
for (const socket of idle.opened) socket.terminate()
app.stop()
await new Promise((resolve) => app.child.once("exit", resolve))
await database?.drop()
await dataDir.remove()

// Baseline: the receiver's own request rate, same kind of body.
const receiverLoad = await runLoad({
  url: receiver.url,
  path: "/hook",
  method: "POST",
  body: JSON.stringify({ event: "action.authorized", data: { action_uuid: "act_x" } }),
  connections: 16,
  seconds: 3
})
receiver.stop()
agent.destroy()

const ratio = (value: number, base: number) => (base > 0 ? Math.round((value / base) * 100) / 100 : 0)
const totalSeconds = Math.round((performance.now() - runStarted) / 100) / 10
console.log(`Live channels (${SOCKETS} sockets, ${ROUNDS} rounds; clients in this process, servers in child processes; gateway on ${store}, ${runtime})`)
console.log(
  `raw uWS publish → frame            p50 ${rawPush.p50_ms.toFixed(2).padStart(7)} ms   p99 ${rawPush.p99_ms.toFixed(2).padStart(7)} ms   (${rawPush.frames} frames, ${rawPush.missed} missed)`
)
console.log(
  `gateway authorize → push frame     p50 ${gatewayPush.p50_ms.toFixed(2).padStart(7)} ms   p99 ${gatewayPush.p99_ms
    .toFixed(2)
    .padStart(7)} ms   (${gatewayPush.frames} frames, ${gatewayPush.missed} missed)   p99 ${ratio(gatewayPush.p99_ms, rawPush.p99_ms)}× raw   target <= 2× raw`
)
console.log(
  `  hops (median of rounds)          trigger answered ${gatewayPush.answered_p50_ms} ms, first frame ${gatewayPush.first_frame_p50_ms} ms, last frame ${gatewayPush.last_frame_p50_ms} ms   (raw: ${rawPush.answered_p50_ms} / ${rawPush.first_frame_p50_ms} / ${rawPush.last_frame_p50_ms} ms)`
)
console.log(
  `idle authenticated sockets         ${stillOpen} of ${IDLE_TARGET} (refused ${idle.refused}) in ${idleSeconds.toFixed(1)} s   server RSS ${idleRss} MB (before ${rssBefore} MB, ${
    stillOpen ? Math.round(((idleRss - rssBefore) * 1024 * 1024) / stillOpen / 102.4) / 10 : 0
  } KB/socket; ${rssAtStart} MB fresh)   target <= 150 MB at 19k`
)
console.log(`  open-file limit: server ${serverFiles.soft} (hard ${serverFiles.hard}), client ${clientFiles.soft} (hard ${clientFiles.hard})`)
console.log(
  `webhook deliveries                 ${webhookRate} /s   (${WEBHOOK_EVENTS} events produced in ${producedIn.toFixed(1)} s, all received after ${webhookSeconds.toFixed(1)} s${
    webhookTimedOut ? ", TIMED OUT" : ""
  })   ${ratio(webhookRate, receiverLoad.rps)}× raw receiver`
)
console.log(
  `webhook delivery lag               p50 ${webhookLag.p50_ms} ms   p99 ${webhookLag.p99_ms} ms   (authorize answered → receiver has it; ${WEBHOOK_EVENTS} events produced at ${Math.round(WEBHOOK_EVENTS / producedIn)} /s)`
)
console.log(
  `webhook backlog drain              ${drainRate} /s   (${WEBHOOK_EVENTS} due deliveries in ${drainSeconds.toFixed(1)} s${drainTimedOut ? ", TIMED OUT" : ""})   ${ratio(
    drainRate,
    receiverLoad.rps
  )}× raw receiver`
)
console.log(`raw node:http receiver            ${receiverLoad.rps} req/s   (16 connections, 3 s)`)
console.log(`total ${totalSeconds} s`)
console.log(
  JSON.stringify({
    sockets: SOCKETS,
    rounds: ROUNDS,
    push_p50_ms: gatewayPush.p50_ms,
    push_p99_ms: gatewayPush.p99_ms,
    push_max_ms: gatewayPush.max_ms,
    push_missed: gatewayPush.missed,
    raw_uws_publish_p50_ms: rawPush.p50_ms,
    raw_uws_publish_p99_ms: rawPush.p99_ms,
    push_p99_ratio: ratio(gatewayPush.p99_ms, rawPush.p99_ms),
    push_answered_p50_ms: gatewayPush.answered_p50_ms,
    push_first_frame_p50_ms: gatewayPush.first_frame_p50_ms,
    push_last_frame_p50_ms: gatewayPush.last_frame_p50_ms,
    raw_answered_p50_ms: rawPush.answered_p50_ms,
    raw_first_frame_p50_ms: rawPush.first_frame_p50_ms,
    idle_target: IDLE_TARGET,
    idle_sockets: stillOpen,
    idle_refused: idle.refused,
    idle_rss_mb: idleRss,
    idle_rss_before_mb: rssBefore,
    rss_at_start_mb: rssAtStart,
    store,
    runtime,
    server_open_files: serverFiles.soft,
    client_open_files: clientFiles.soft,
    webhook_events: WEBHOOK_EVENTS,
    webhook_deliveries_per_s: webhookRate,
    webhook_timed_out: webhookTimedOut,
    raw_receiver_rps: receiverLoad.rps,
    webhook_ratio: ratio(webhookRate, receiverLoad.rps),
    webhook_lag_p50_ms: webhookLag.p50_ms,
    webhook_lag_p99_ms: webhookLag.p99_ms,
    webhook_drain_per_s: drainRate,
    webhook_drain_timed_out: drainTimedOut,
    webhook_drain_ratio: ratio(drainRate, receiverLoad.rps),
    seconds: totalSeconds
  })
)
process.exit(0)
