/**
 * `npm run bench:http`: a hello route served raw by uWS, through the adapter
 * (HttpApi, no auth), through the full chain (API-key auth + rate limit
 * with the in-process store), and a realistic read (GET /api/v1/actions/{id}:
 * a cached key and one indexed row), all in this run, with the ratios to raw;
 * and the same routes and services on Effect's own node:http server (the
 * peer), to say what uWS and the compiled routes buy us.
 * Last line: one JSON object with every figure.
 * BENCH_PROFILE=<dir>: each target writes a CPU profile there and prints its top frames.
 * The targets run the tsc build (dist/), compiled from the current sources at the start.
 */
import { type ChildProcess, fork } from "node:child_process"
import { freePort } from "../test/support/server.js"
import { compileServer } from "./support/build.js"
import { benchDataDir } from "./support/data-dir.js"
import { hasWrk, type LoadResult, runLoad, runWrk } from "./support/load.js"

const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64)
/** Runs per figure: this VM's throughput varies by ±20 % from run to run, so each figure is the median run. */
const runs = Math.max(1, Number(process.env.BENCH_RUNS ?? 3))

// The targets run the tsc build in dist/, as `npm start` does: compile the current sources first.
compileServer()

const dataDir = benchDataDir("bench-http")

const startTarget = async (mode: "raw" | "app" | "node") => {
  const port = await freePort()
  const child: ChildProcess = fork(new URL("./support/http-target.ts", import.meta.url).pathname, [mode, String(port)], {
    execArgv: ["--import", "tsx"],
    env: { ...process.env, BENCH_DATA_DIR: dataDir.path },
    stdio: ["ignore", "inherit", "inherit", "ipc"]
  })
  await new Promise<void>((resolve, reject) => {
    child.once("message", () => resolve())
    child.once("exit", (code) => reject(new Error(`${mode} target exited with ${code}`)))
  })
  // With BENCH_PROFILE the target writes its profile on SIGINT; wait for it.
  const stop = process.env.BENCH_PROFILE
    ? () => new Promise<void>((resolve) => child.once("exit", () => resolve()).kill("SIGINT"))
    : async () => void child.kill("SIGKILL")
  const cpuMicros = () =>
    new Promise<number>((resolve) => {
      child.once("message", (message: any) => resolve(message.cpuMicros))
      child.send("cpu")
    })
  return { url: `http://127.0.0.1:${port}`, stop, cpuMicros }
}

const row = (name: string, r: Measured, ratio?: number) =>
  console.log(
    `${name.padEnd(34)} ${String(r.rps).padStart(8)} req/s   p50 ${r.p50_ms.toFixed(3).padStart(7)} ms   p99 ${r.p99_ms
      .toFixed(3)
      .padStart(7)} ms   server CPU ${r.cpu_us_per_request.toFixed(1).padStart(6)} µs/req${
      ratio === undefined ? "" : `   ${ratio.toFixed(2)}× raw`
    }${r.errors ? `   errors ${r.errors}` : ""}${r.runs_rps && r.runs_rps.length > 1 ? `   (runs ${r.runs_rps.join(", ")})` : ""}`
  )

type Measured = LoadResult & { readonly cpu_us_per_request: number; readonly runs_rps?: ReadonlyArray<number> }

/** One measured run: wrk when installed (a C client measures uWS, not the client), else the Node client. */
const measureOnce = async (target: { url: string; cpuMicros: () => Promise<number> }, path: string, headers?: Record<string, string>): Promise<Measured> => {
  const url = target.url
  const before = await target.cpuMicros()
  const result = runWrk({ url, path, headers, connections, seconds }) ?? (await runLoad({ url, path, headers, connections, seconds }))
  const cpu = (await target.cpuMicros()) - before
  return { ...result, cpu_us_per_request: Math.round((cpu / Math.max(1, result.requests)) * 10) / 10 }
}

/** One second of warm-up (JIT, caches), then `runs` measured runs; the median run by throughput, with every run's throughput. */
const measure = async (
  target: { url: string; cpuMicros: () => Promise<number> },
  path: string,
  headers?: Record<string, string>
): Promise<Measured & { readonly runs_rps: ReadonlyArray<number> }> => {
  const url = target.url
  runWrk({ url, path, headers, connections, seconds: 1 }) ?? (await runLoad({ url, path, headers, connections, seconds: 1 }))
  const results: Measured[] = []
  for (let i = 0; i < runs; i++) results.push(await measureOnce(target, path, headers))
  const sorted = [...results].sort((a, b) => a.rps - b.rps)
  return { ...sorted[Math.floor(sorted.length / 2)]!, runs_rps: results.map((result) => result.rps) }
}
const client = hasWrk() ? "wrk" : "node:http"

const raw = await startTarget("raw")
const rawResult = await measure(raw, "/hello")
await raw.stop()

/**
 * `/health`, the authenticated `/api/v1/auth/whoami` and GET /api/v1/actions/{id} on one server
 * (each run registers its own account and records one action to read).
 */
const measureApp = async (mode: "app" | "node", email: string) => {
  const server = await startTarget(mode)
  const registered = await fetch(`${server.url}/api/v1/auth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password: "benchmark password", org_name: "Bench" })
  }).then((r) => r.json() as Promise<any>)
  const auth = { authorization: `Bearer ${registered.api_key.key}` }
  const action = await fetch(`${server.url}/api/v1/actions`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ action_type: "read_report", details: "quarterly numbers" })
  }).then((r) => r.json() as Promise<any>)
  if (typeof action.action_uuid !== "string") throw new Error(`could not record the action to read: ${JSON.stringify(action)}`)
  const adapter = await measure(server, "/health")
  const chain = await measure(server, "/api/v1/auth/whoami", auth)
  const read = await measure(server, `/api/v1/actions/${action.action_uuid}`, auth)
  await server.stop()
  return { adapter, chain, read }
}

const { adapter: adapterResult, chain: chainResult, read: readResult } = await measureApp("app", "bench@example.test")
const { adapter: nodeAdapterResult, chain: nodeChainResult, read: nodeReadResult } = await measureApp("node", "bench-node@example.test")
await dataDir.remove()

console.log(
  `HTTP hello, ${connections} connections, ${seconds} s each, median of ${runs} runs, client ${client} (server in another process)`
)
row("raw uWS", rawResult)
row("adapter (HttpApi, no auth)", adapterResult, adapterResult.rps / rawResult.rps)
row("full chain (key auth + rate limit)", chainResult, chainResult.rps / rawResult.rps)
row("read: GET /api/v1/actions/{id}", readResult, readResult.rps / rawResult.rps)
row("node:http peer, /health", nodeAdapterResult, nodeAdapterResult.rps / rawResult.rps)
row("node:http peer, full chain", nodeChainResult, nodeChainResult.rps / rawResult.rps)
row("node:http peer, read", nodeReadResult, nodeReadResult.rps / rawResult.rps)
const chainOverNode = chainResult.rps / nodeChainResult.rps
console.log(
  `our uWS path / node:http peer: full chain ${chainOverNode.toFixed(2)}×, /health ${(adapterResult.rps / nodeAdapterResult.rps).toFixed(2)}×, read ${(readResult.rps / nodeReadResult.rps).toFixed(2)}×`
)
console.log(
  "targets: adapter >= 0.7 × raw uWS; full chain >= 0.5 × raw, >= 2 × the node:http peer, p99 <= 2 ms, <= 16 µs CPU; read >= 0.3 × raw, p99 <= 5 ms"
)
console.log(
  JSON.stringify({
    client,
    connections,
    seconds,
    runs,
    raw_rps: rawResult.rps,
    raw_p50_ms: rawResult.p50_ms,
    raw_p99_ms: rawResult.p99_ms,
    raw_cpu_us: rawResult.cpu_us_per_request,
    adapter_rps: adapterResult.rps,
    adapter_p50_ms: adapterResult.p50_ms,
    adapter_p99_ms: adapterResult.p99_ms,
    adapter_cpu_us: adapterResult.cpu_us_per_request,
    adapter_ratio: Math.round((adapterResult.rps / rawResult.rps) * 1000) / 1000,
    chain_rps: chainResult.rps,
    chain_p50_ms: chainResult.p50_ms,
    chain_p99_ms: chainResult.p99_ms,
    chain_cpu_us: chainResult.cpu_us_per_request,
    chain_ratio: Math.round((chainResult.rps / rawResult.rps) * 1000) / 1000,
    read_rps: readResult.rps,
    read_p50_ms: readResult.p50_ms,
    read_p99_ms: readResult.p99_ms,
    read_cpu_us: readResult.cpu_us_per_request,
    read_ratio: Math.round((readResult.rps / rawResult.rps) * 1000) / 1000,
    node_server_rps: nodeChainResult.rps,
    node_server_health_rps: nodeAdapterResult.rps,
    node_server_read_rps: nodeReadResult.rps,
    node_server_read_p99_ms: nodeReadResult.p99_ms,
    chain_over_node: Math.round(chainOverNode * 1000) / 1000,
    errors:
      rawResult.errors + adapterResult.errors + chainResult.errors + readResult.errors + nodeAdapterResult.errors + nodeChainResult.errors + nodeReadResult.errors
  })
)
process.exit(0)
