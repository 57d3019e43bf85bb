/**
 * `npm run bench:gateway`: what the LLM gateway adds to a provider call. A local fake provider
 * (test/support/fake-provider.ts) answers in this process; the gateway runs in its own process
 * (the tsc build, as `npm start` runs it) on Postgres. In the same run, the same requests go to
 * the provider directly and through the gateway, interleaved one by one (one connection each,
 * no queueing), so the difference is the gateway's own time: authorize, forward, notarize.
 *
 * 1. JSON chat completion: added latency at p50 and p99 (target ≤ 1 ms and ≤ 3 ms).
 * 2. Streamed chat completion: added time to the first body byte (target ≤ 1 ms).
 * 3. 64 concurrent streams for BENCH_SECONDS: calls per second and the gateway's CPU per call.
 * For reference, the same process's authorize + notarize over the API, one at a time: the two
 * durable writes (each its commit) every gateway call makes, whatever the transport.
 *
 * DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres) names the server; a fresh
 * database is created for the run. BENCH_REQUESTS (default 2,000 per side), BENCH_SECONDS
 * (default 5). The last output line is one JSON object.
 */
import { readFileSync } from "node:fs"
import { Agent, request } from "node:http"
import { freshDatabaseUrl } from "../test/support/database.js"
import { startFakeProvider } from "../test/support/fake-provider.js"
import { BUILD_DIRECTORY, compileServer, startFlags } from "./support/build.js"
import { startGateway } from "./support/gateway.js"
import { percentile, round3 } from "./support/load.js"

const serverUrl = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres"
const requests = Number(process.env.BENCH_REQUESTS ?? 2_000)
const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const STREAMS = 64

const cpuSeconds = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) / 100
}

interface Timing {
  /** Until the first body byte. */
  readonly firstByteMs: number
  /** Until the last. */
  readonly totalMs: number
  readonly status: number
}

/** One POST over a kept-alive connection of `agent`; times the first and last body byte. */
const timed = (agent: Agent, url: URL, headers: Record<string, string>, body: string): Promise<Timing> =>
  new Promise((resolve, reject) => {
    const start = performance.now()
    let firstByteMs = -1
    const outgoing = request(
      { agent, host: url.hostname, port: url.port, path: url.pathname, method: "POST", headers: { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
      (incoming) => {
        incoming.on("data", () => {
          if (firstByteMs < 0) firstByteMs = performance.now() - start
        })
        incoming.on("end", () => resolve({ firstByteMs, totalMs: performance.now() - start, status: incoming.statusCode ?? 0 }))
        incoming.on("error", reject)
      }
    )
    outgoing.on("error", reject)
    outgoing.end(body)
  })

const summary = (values: Array<number>) => {
  const sorted = Float64Array.from(values).sort()
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) }
}

const chatBody = (stream: boolean) =>
  JSON.stringify({
    model: "gpt-bench",
    messages: [
      { role: "system", content: "You are a careful assistant." },
      { role: "user", content: "Summarize the quarterly supplier report in three sentences." }
    ],
    max_tokens: 200,
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {})
  })

const main = async () => {
  compileServer()
  const provider = await startFakeProvider()
  const database = await freshDatabaseUrl(serverUrl)
  const gateway = await startGateway({
    env: {
      DATABASE_URL: database.url,
      OPENAI_UPSTREAM_URL: `${provider.url}/v1`,
      OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8",
      OUTBOUND_ALLOW_HTTP: "true",
      GATEWAY_RATE_LIMIT_PER_MINUTE: "1000000000"
    },
    dist: BUILD_DIRECTORY,
    nodeArgs: startFlags()
  })
  try {
    const registered = (await (
      await fetch(`${gateway.url}/api/v1/auth/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: "bench@example.test", password: "benchmark password", org_name: "Bench" })
      })
    ).json()) as { api_key: { key: string } }
    const key = registered.api_key.key
    // A key may have 32 calls in flight: the 64 concurrent streams use two keys.
    const second = (await (
      await fetch(`${gateway.url}/api/v1/api-keys`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify({ name: "second", scopes: ["actions:write"] })
      })
    ).json()) as { key: string }
    const direct = new URL(`${provider.url}/v1/chat/completions`)
    const through = new URL(`${gateway.url}/gateway/openai/v1/chat/completions`)
    const providerHeaders = { authorization: "Bearer sk-bench" }
    const gatewayHeaders = { ...providerHeaders, "x-aira-api-key": key }
    const directAgent = new Agent({ keepAlive: true, maxSockets: STREAMS })
    const gatewayAgent = new Agent({ keepAlive: true, maxSockets: STREAMS })

    /** Interleaved pairs: the same moment of the machine for both sides. */
    const pairs = async (stream: boolean, count: number) => {
      const body = chatBody(stream)
      const sides = { direct: [] as Array<Timing>, gateway: [] as Array<Timing> }
      for (let i = 0; i < count; i++) {
        sides.direct.push(await timed(directAgent, direct, providerHeaders, body))
        const answer = await timed(gatewayAgent, through, gatewayHeaders, body)
        if (answer.status !== 200) throw new Error(`gateway answered ${answer.status}`)
        sides.gateway.push(answer)
      }
      return sides
    }

    await pairs(false, 300)
    const json = await pairs(false, requests)
    const jsonDirect = summary(json.direct.map((t) => t.totalMs))
    const jsonGateway = summary(json.gateway.map((t) => t.totalMs))
    const added = { p50: jsonGateway.p50 - jsonDirect.p50, p99: jsonGateway.p99 - jsonDirect.p99 }
    console.log(`JSON chat completion, ${requests} each, one at a time`)
    console.log(`  direct   p50 ${jsonDirect.p50.toFixed(3)} ms   p99 ${jsonDirect.p99.toFixed(3)} ms`)
    console.log(`  gateway  p50 ${jsonGateway.p50.toFixed(3)} ms   p99 ${jsonGateway.p99.toFixed(3)} ms`)
    console.log(`  added    p50 ${added.p50.toFixed(3)} ms (target ≤ 1)   p99 ${added.p99.toFixed(3)} ms (target ≤ 3)`)

    // The floor of the design: one committed authorize and one committed notarization per call.
    const actionsUrl = new URL(`${gateway.url}/api/v1/actions`)
    const apiHeaders = { authorization: `Bearer ${key}` }
    const floor: Array<number> = []
    for (let i = 0; i < Math.max(200, Math.floor(requests / 2)); i++) {
      const started = performance.now()
      const authorized = await new Promise<string>((resolve, reject) => {
        const body = JSON.stringify({ action_type: "llm.openai.chat.completions", details: `reference ${i}` })
        const outgoing = request(
          { agent: gatewayAgent, host: actionsUrl.hostname, port: actionsUrl.port, path: actionsUrl.pathname, method: "POST", headers: { ...apiHeaders, "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
          (incoming) => {
            let text = ""
            incoming.on("data", (chunk) => (text += chunk))
            incoming.on("end", () => resolve((JSON.parse(text) as { action_uuid: string }).action_uuid))
          }
        )
        outgoing.on("error", reject)
        outgoing.end(body)
      })
      await timed(gatewayAgent, new URL(`${gateway.url}/api/v1/actions/${authorized}/notarize`), apiHeaders, JSON.stringify({ outcome: "completed" }))
      floor.push(performance.now() - started)
    }
    const writes = summary(floor.slice(50))
    console.log(`  for reference: authorize + notarize over the API, one at a time: p50 ${writes.p50.toFixed(3)} ms   p99 ${writes.p99.toFixed(3)} ms`)

    await pairs(true, 100)
    const streamed = await pairs(true, Math.max(100, Math.floor(requests / 2)))
    const ttfbDirect = summary(streamed.direct.map((t) => t.firstByteMs))
    const ttfbGateway = summary(streamed.gateway.map((t) => t.firstByteMs))
    const ttfbAdded = ttfbGateway.p50 - ttfbDirect.p50
    console.log(`Streamed chat completion, time to the first body byte`)
    console.log(`  direct   p50 ${ttfbDirect.p50.toFixed(3)} ms   p99 ${ttfbDirect.p99.toFixed(3)} ms`)
    console.log(`  gateway  p50 ${ttfbGateway.p50.toFixed(3)} ms   p99 ${ttfbGateway.p99.toFixed(3)} ms`)
    console.log(`  added    p50 ${ttfbAdded.toFixed(3)} ms (target ≤ 1)`)

    /** `STREAMS` clients streaming back to back for `seconds`. */
    const concurrent = async (agent: Agent, url: URL, headersOf: (client: number) => Record<string, string>) => {
      const body = chatBody(true)
      const deadline = performance.now() + seconds * 1000
      let calls = 0
      const totals: Array<number> = []
      await Promise.all(
        Array.from({ length: STREAMS }, async (_, client) => {
          const headers = headersOf(client)
          while (performance.now() < deadline) {
            const answer = await timed(agent, url, headers, body)
            if (answer.status !== 200) throw new Error(`answered ${answer.status}`)
            totals.push(answer.totalMs)
            calls++
          }
        })
      )
      return { calls, perSecond: Math.round(calls / seconds), ...summary(totals) }
    }
    const directLoad = await concurrent(directAgent, direct, () => providerHeaders)
    const cpuBefore = cpuSeconds(gateway.pid)
    const gatewayLoad = await concurrent(gatewayAgent, through, (client) => (client % 2 === 0 ? gatewayHeaders : { ...providerHeaders, "x-aira-api-key": second.key }))
    const cpuPerCallUs = Math.round(((cpuSeconds(gateway.pid) - cpuBefore) * 1e6) / gatewayLoad.calls)
    console.log(`${STREAMS} concurrent streams for ${seconds} s`)
    console.log(`  direct   ${directLoad.perSecond} calls/s   p50 ${directLoad.p50.toFixed(2)} ms   p99 ${directLoad.p99.toFixed(2)} ms`)
    console.log(`  gateway  ${gatewayLoad.perSecond} calls/s   p50 ${gatewayLoad.p50.toFixed(2)} ms   p99 ${gatewayLoad.p99.toFixed(2)} ms   gateway CPU ${cpuPerCallUs} µs per call`)
    const met = added.p50 <= 1 && added.p99 <= 3 && ttfbAdded <= 1
    console.log(`targets: ${met ? "met" : "missed"}`)
    console.log(
      JSON.stringify({
        bench: "gateway",
        json_direct_p50_ms: round3(jsonDirect.p50),
        json_direct_p99_ms: round3(jsonDirect.p99),
        json_gateway_p50_ms: round3(jsonGateway.p50),
        json_gateway_p99_ms: round3(jsonGateway.p99),
        json_added_p50_ms: round3(added.p50),
        json_added_p99_ms: round3(added.p99),
        api_authorize_notarize_p50_ms: round3(writes.p50),
        api_authorize_notarize_p99_ms: round3(writes.p99),
        ttfb_direct_p50_ms: round3(ttfbDirect.p50),
        ttfb_gateway_p50_ms: round3(ttfbGateway.p50),
        ttfb_added_p50_ms: round3(ttfbAdded),
        streams: STREAMS,
        streams_direct_per_s: directLoad.perSecond,
        streams_gateway_per_s: gatewayLoad.perSecond,
        gateway_cpu_us_per_call: cpuPerCallUs,
        targets_met: met
      })
    )
  } finally {
    await gateway.stop()
    await provider.close()
    await database.drop()
  }
}

await main()
process.exit(0)
