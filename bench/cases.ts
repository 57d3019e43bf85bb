/**
 * `npm run bench:cases`: consensus cases (POST /api/v1/cases, two custom models
 * each) over HTTP against the real server (`src/main.ts` in its own process),
 * the models being the local fake OpenAI-compatible server
 * (test/support/fake-llm.ts) in a child process of its own, so that neither
 * the load client nor the fake shares an event loop with the other.
 *
 * Two settings: models answering at once (`approve` + `lower`) and after
 * BENCH_SLOW_MS (default 200) ms (`slow/<ms>/approve` + `slow/<ms>/lower`, the
 * same verdicts, so only the latency differs). For each: cases per second,
 * p50/p99 of the latency seen by the client, and the gateway overhead per
 * case = client latency − the slowest model call of that case (its
 * `case_results[].latency_ms`, timed by the gateway); also the server-side
 * overhead = the case's own `latency_ms` − its slowest model call. Target:
 * p99 overhead <= 5 ms. The model latencies are whole milliseconds, so the
 * overhead figures are good to about ±1 ms.
 *
 * Baseline, measured in the same run at the same concurrency: this process
 * calling the fake itself, the same two chat-completions POSTs in parallel per
 * "case"; its rate and latency are compared with the gateway's.
 *
 * The gateway runs on its embedded PostgreSQL (a temporary DATA_DIR) unless
 * DATABASE_URL is set: then on a fresh database there, dropped after.
 * BENCH_SECONDS (default 5) per setting, BENCH_CONNECTIONS (default 8),
 * BENCH_GATEWAY_DIST=<dir> runs a build (`npm run build` output) instead of
 * the sources; BENCH_PROFILE=1 (or a directory) runs the server with
 * `--cpu-prof` and prints its top 15 frames by self time.
 * The last output line is one JSON object.
 */
import { type ChildProcess, fork } from "node:child_process"
import { readFileSync } from "node:fs"
import { Agent, request } from "node:http"
import { fileURLToPath } from "node:url"
import { freshDatabaseUrl } from "../test/support/database.js"
import { startFakeLlm } from "../test/support/fake-llm.js"
import { benchDataDir } from "./support/data-dir.js"
import { post, startGateway } from "./support/gateway.js"
import { percentile, round3 } from "./support/load.js"
import { printProfileSummary, profileDirectory } from "./support/profile.js"

const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 8)
const slowMs = Number(process.env.BENCH_SLOW_MS ?? 200)
const WARMUP_SECONDS = 1
const TARGET_OVERHEAD_P99_MS = 5

/** CPU seconds (user + system) the process `pid` has used so far, from /proc. */
const cpuSeconds = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** The fake model server, run as `cases.ts fake` in a child process: sends its URL over IPC. */
const runFake = async () => {
  const fake = await startFakeLlm()
  // The fake records every call; nobody reads them here, so keep memory flat.
  setInterval(() => fake.calls.splice(0), 1_000).unref()
  process.send?.({ url: fake.url })
  process.on("disconnect", () => process.exit(0))
}

const startFake = async (): Promise<{ url: string; child: ChildProcess }> => {
  const child = fork(fileURLToPath(import.meta.url), ["fake"], { execArgv: ["--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"] })
  const url = await new Promise<string>((resolve, reject) => {
    child.once("message", (message: { url: string }) => resolve(message.url))
    child.once("exit", (code) => reject(new Error(`fake model server exited with ${code}`)))
  })
  return { url, child }
}

/** One POST over a keep-alive agent; the answer's status and text, and the time it took as seen here. */
const timedPost = (agent: Agent, url: URL, body: string, headers: Record<string, string> = {}) =>
  new Promise<{ status: number; text: string; ms: number }>((resolve, reject) => {
    const started = performance.now()
    const req = request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: "POST",
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...headers }
      },
      (res) => {
        let text = ""
        res.setEncoding("utf8")
        res.on("data", (chunk) => (text += chunk))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text, ms: performance.now() - started }))
        res.on("error", reject)
      }
    )
    req.on("error", reject)
    req.end(body)
  })

interface Sample {
  /** Latency seen by the client. */
  readonly ms: number
  /** The slowest model call as the gateway timed it (cases only). */
  readonly modelMs?: number
  /** Client latency − slowest model call (cases only). */
  readonly overheadMs?: number
  /** The case's own latency_ms − slowest model call (cases only). */
  readonly serverOverheadMs?: number
}

/** `connections` workers, each running `once` again as soon as it answered, for `duration` seconds. */
const closedLoop = async (duration: number, once: () => Promise<Sample | undefined>) => {
  const samples: Array<Sample> = []
  let errors = 0
  const deadline = performance.now() + duration * 1000
  const worker = async () => {
    while (performance.now() < deadline) {
      try {
        const sample = await once()
        if (sample === undefined) errors++
        else samples.push(sample)
      } catch {
        errors++
      }
    }
  }
  const started = performance.now()
  await Promise.all(Array.from({ length: connections }, worker))
  const elapsed = (performance.now() - started) / 1000
  const stats = (values: Array<number>) => {
    const sorted = Float64Array.from(values).sort()
    return { p50: round3(percentile(sorted, 50)), p99: round3(percentile(sorted, 99)), max: round3(sorted[sorted.length - 1] ?? 0) }
  }
  return {
    count: samples.length,
    errors,
    rate: Math.round(samples.length / elapsed),
    latency: stats(samples.map((sample) => sample.ms)),
    model: stats(samples.flatMap((sample) => (sample.modelMs === undefined ? [] : [sample.modelMs]))),
    overhead: stats(samples.flatMap((sample) => (sample.overheadMs === undefined ? [] : [sample.overheadMs]))),
    serverOverhead: stats(samples.flatMap((sample) => (sample.serverOverheadMs === undefined ? [] : [sample.serverOverheadMs])))
  }
}
type Phase = Awaited<ReturnType<typeof closedLoop>>

/** Roughly what the gateway sends a model: the case prompt and a JSON schema for the verdict. */
const chatBody = (model: string, details: string) =>
  JSON.stringify({
    model,
    temperature: 0,
    messages: [
      {
        role: "system",
        content:
          "You are one of several independent reviewers in a multi-model consensus for an accountability gateway. Read the case between the markers and decide: APPROVE, DENY or REVIEW. Answer only with the JSON object {decision, confidence, key_factors, reasoning}."
      },
      { role: "user", content: `<case>\n${details}\n</case>` }
    ],
    response_format: {
      type: "json_schema",
      json_schema: {
        name: "verdict",
        strict: true,
        schema: {
          type: "object",
          properties: {
            decision: { type: "string", enum: ["APPROVE", "DENY", "REVIEW"] },
            confidence: { type: "number" },
            key_factors: { type: "array", items: { type: "string" } },
            reasoning: { type: "string" }
          },
          required: ["decision", "confidence", "key_factors", "reasoning"],
          additionalProperties: false
        }
      }
    }
  })

let counter = 0
const details = () => `Refund order #${++counter} (19.99 EUR) to the original card; the customer returned the parcel unopened.`

const main = async () => {
  const profileDir = profileDirectory()
  const fake = await startFake()
  const database = process.env.DATABASE_URL ? await freshDatabaseUrl(process.env.DATABASE_URL) : undefined
  const dataDir = database ? undefined : benchDataDir("bench-cases")
  const store = database ? "postgres" : "embedded postgres"
  const dist = process.env.BENCH_GATEWAY_DIST
  let server: Awaited<ReturnType<typeof startGateway>> | undefined
  try {
    server = await startGateway({
      env: {
        DATABASE_URL: database?.url ?? "",
        ...(dataDir ? { DATA_DIR: dataDir.path } : {}),
        RATE_LIMIT_PER_MINUTE: "100000000",
        PUBLIC_RATE_LIMIT_PER_MINUTE: "100000000",
        // The fake listens on plain HTTP on loopback.
        OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8",
        OUTBOUND_ALLOW_HTTP: "true"
      },
      dist,
      timeoutMs: 120_000,
      ...(profileDir ? { nodeArgs: ["--cpu-prof", "--cpu-prof-dir", profileDir] } : {})
    })
    const url = server.url
    const registered = await fetch(`${url}/api/v1/auth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "cases@example.test", password: "benchmark password", org_name: "Cases Bench" })
    }).then((r) => r.json() as Promise<any>)
    const token: string = registered.api_key.key
    const model = async (path: string) => {
      const modelId = path.replace(/\//g, "-")
      await post(url, "/api/v1/models/custom", token, { name: path, model_id: modelId, endpoint_url: `${fake.url}/${path}/v1`, timeout_ms: 10_000 })
      return `custom:${modelId}`
    }
    const settings = [
      { name: "0 ms models", delayMs: 0, paths: ["approve", "lower"] },
      { name: `${slowMs} ms models`, delayMs: slowMs, paths: [`slow/${slowMs}/approve`, `slow/${slowMs}/lower`] }
    ]

    const gatewayAgent = new Agent({ keepAlive: true, maxSockets: connections })
    const fakeAgent = new Agent({ keepAlive: true, maxSockets: connections * 2 })
    const casesUrl = new URL(`${url}/api/v1/cases`)
    const auth = { authorization: `Bearer ${token}` }
    const results: Array<{ name: string; delayMs: number; direct: Phase; cases: Phase; cpuUs: number }> = []
    for (const setting of settings) {
      const models = await Promise.all(setting.paths.map(model))
      const oneCase = async (): Promise<Sample | undefined> => {
        const answer = await timedPost(gatewayAgent, casesUrl, JSON.stringify({ details: details(), models }), auth)
        if (answer.status !== 201) return undefined
        const body = JSON.parse(answer.text)
        // A model that failed would make the case look cheaper than it is: count it as an error.
        if (body.status !== "complete" || body.case_results.some((result: any) => result.error !== null)) return undefined
        const slowest = Math.max(...body.case_results.map((result: any) => result.latency_ms as number))
        return { ms: answer.ms, modelMs: slowest, overheadMs: answer.ms - slowest, serverOverheadMs: body.latency_ms - slowest }
      }
      // The baseline: both chat completions straight to the fake, in parallel, as the gateway asks them.
      const fakeUrls = setting.paths.map((path) => new URL(`${fake.url}/${path}/v1/chat/completions`))
      const oneDirect = async (): Promise<Sample | undefined> => {
        const text = details()
        const started = performance.now()
        const answers = await Promise.all(fakeUrls.map((target, index) => timedPost(fakeAgent, target, chatBody(setting.paths[index]!, text))))
        if (answers.some((answer) => answer.status !== 200)) return undefined
        return { ms: performance.now() - started }
      }
      await closedLoop(WARMUP_SECONDS, oneDirect)
      const direct = await closedLoop(seconds, oneDirect)
      await closedLoop(WARMUP_SECONDS, oneCase)
      // The gateway's CPU time per case tells a busy gateway from one that waits (on Postgres, say).
      const cpuBefore = cpuSeconds(server.pid)
      const cases = await closedLoop(seconds, oneCase)
      const cpuUs = cases.count > 0 ? Math.round(((cpuSeconds(server.pid) - cpuBefore) * 1e6) / cases.count) : 0
      results.push({ name: setting.name, delayMs: setting.delayMs, direct, cases, cpuUs })
    }
    gatewayAgent.destroy()
    fakeAgent.destroy()

    const ms = (value: number) => `${value.toFixed(2).padStart(7)} ms`
    const verdict = (ok: boolean) => (ok ? "met" : "MISSED")
    console.log(`consensus cases over HTTP: 2 custom models each (local fake), ${connections} connections, ${seconds} s per setting, gateway on ${store}${dist ? `, compiled ${dist}` : ""}`)
    for (const { name, direct, cases, cpuUs } of results) {
      console.log(`${name}:`)
      console.log(
        `  ${"direct to the fake, 2 in parallel".padEnd(36)} ${String(direct.rate).padStart(6)} /s    p50 ${ms(direct.latency.p50)}   p99 ${ms(direct.latency.p99)}${direct.errors ? `   errors ${direct.errors}` : ""}`
      )
      console.log(
        `  ${"POST /api/v1/cases".padEnd(36)} ${String(cases.rate).padStart(6)} /s    p50 ${ms(cases.latency.p50)}   p99 ${ms(cases.latency.p99)}   ` +
          `${(cases.rate / Math.max(1, direct.rate)).toFixed(2)}× direct rate, p99 +${(cases.latency.p99 - direct.latency.p99).toFixed(2)} ms${cases.errors ? `   errors ${cases.errors}` : ""}`
      )
      console.log(
        `  ${"overhead (client − slowest model)".padEnd(36)}            p50 ${ms(cases.overhead.p50)}   p99 ${ms(cases.overhead.p99)}   max ${ms(cases.overhead.max)}   ` +
          `server-side p50 ${cases.serverOverhead.p50.toFixed(2)} ms, p99 ${cases.serverOverhead.p99.toFixed(2)} ms`
      )
      console.log(
        `  ${"slowest model call, gateway-timed".padEnd(36)}            p50 ${ms(cases.model.p50)}   p99 ${ms(cases.model.p99)}   gateway CPU ${cpuUs} µs per case`
      )
    }
    console.log(`target: p99 overhead <= ${TARGET_OVERHEAD_P99_MS} ms (${results.map(({ name, cases }) => `${name} ${verdict(cases.overhead.p99 <= TARGET_OVERHEAD_P99_MS)}`).join(", ")})`)
    const figures: Record<string, unknown> = { connections, seconds, slow_ms: slowMs, store }
    for (const { delayMs, direct, cases, cpuUs } of results) {
      const key = delayMs === 0 ? "fast" : "slow"
      Object.assign(figures, {
        [`${key}_direct_rps`]: direct.rate,
        [`${key}_direct_p50_ms`]: direct.latency.p50,
        [`${key}_direct_p99_ms`]: direct.latency.p99,
        [`${key}_cases_per_s`]: cases.rate,
        [`${key}_rate_ratio`]: round3(cases.rate / Math.max(1, direct.rate)),
        [`${key}_p50_ms`]: cases.latency.p50,
        [`${key}_p99_ms`]: cases.latency.p99,
        [`${key}_p99_over_direct_ms`]: round3(cases.latency.p99 - direct.latency.p99),
        [`${key}_overhead_p50_ms`]: cases.overhead.p50,
        [`${key}_overhead_p99_ms`]: cases.overhead.p99,
        [`${key}_server_overhead_p50_ms`]: cases.serverOverhead.p50,
        [`${key}_server_overhead_p99_ms`]: cases.serverOverhead.p99,
        [`${key}_model_p50_ms`]: cases.model.p50,
        [`${key}_model_p99_ms`]: cases.model.p99,
        [`${key}_cpu_us_per_case`]: cpuUs,
        [`${key}_errors`]: cases.errors + direct.errors
      })
    }
    figures.overhead_target_met = results.every(({ cases }) => cases.overhead.p99 <= TARGET_OVERHEAD_P99_MS)
    // The JSON line must come last: print the profile summary before it.
    await server.stop()
    server = undefined
    if (profileDir) printProfileSummary(profileDir)
    console.log(JSON.stringify(figures))
  } finally {
    await server?.stop()
    fake.child.kill("SIGKILL")
    await database?.drop()
    await dataDir?.remove()
  }
}

if (process.argv[2] === "fake") await runFake()
else {
  await main()
  process.exit(0)
}
