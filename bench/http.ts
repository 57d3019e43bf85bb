/**
 * `npm run bench:http`: a hello route served raw by uWS, through the adapter
 * (HttpApi, no auth), and through the full chain (API-key auth + rate limit
 * with the in-process store), all in this run, with the ratios to raw.
 * Last line: one JSON object with every figure.
 */
import { type ChildProcess, fork } from "node:child_process"
import { freePort } from "../test/support/server.js"
import { runLoad } from "./support/load.js"

const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64)

const startTarget = async (mode: "raw" | "app") => {
  const port = await freePort()
  const child: ChildProcess = fork(new URL("./support/http-target.ts", import.meta.url).pathname, [mode, String(port)], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"]
  })
  await new Promise<void>((resolve, reject) => {
    child.once("message", () => resolve())
    child.once("exit", (code) => reject(new Error(`${mode} target exited with ${code}`)))
  })
  return { url: `http://127.0.0.1:${port}`, stop: () => child.kill("SIGKILL") }
}

const row = (name: string, r: { rps: number; p50_ms: number; p99_ms: number; errors: number }, ratio?: number) =>
  console.log(
    `${name.padEnd(34)} ${String(r.rps).padStart(8)} req/s   p50 ${r.p50_ms.toFixed(3).padStart(7)} ms   p99 ${r.p99_ms
      .toFixed(3)
      .padStart(7)} ms${ratio === undefined ? "" : `   ${ratio.toFixed(2)}× raw`}${r.errors ? `   errors ${r.errors}` : ""}`
  )

const raw = await startTarget("raw")
await runLoad({ url: raw.url, path: "/hello", connections, seconds: 1 })
const rawResult = await runLoad({ url: raw.url, path: "/hello", connections, seconds })
raw.stop()

const app = await startTarget("app")
const registered = await fetch(`${app.url}/api/v1/auth/register`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ email: "bench@example.test", password: "benchmark password", org_name: "Bench" })
}).then((r) => r.json() as Promise<any>)
const auth = { authorization: `Bearer ${registered.api_key.key}` }
await runLoad({ url: app.url, path: "/api/v1/auth/whoami", headers: auth, connections, seconds: 1 })
const adapterResult = await runLoad({ url: app.url, path: "/health", connections, seconds })
const chainResult = await runLoad({ url: app.url, path: "/api/v1/auth/whoami", headers: auth, connections, seconds })
app.stop()

console.log(`HTTP hello, ${connections} connections, ${seconds} s each (load generator in this process, server in another)`)
row("raw uWS", rawResult)
row("adapter (HttpApi, no auth)", adapterResult, adapterResult.rps / rawResult.rps)
row("full chain (key auth + rate limit)", chainResult, chainResult.rps / rawResult.rps)
console.log("target: full chain >= 0.5 × raw uWS")
console.log(
  JSON.stringify({
    connections,
    seconds,
    raw_rps: rawResult.rps,
    raw_p50_ms: rawResult.p50_ms,
    raw_p99_ms: rawResult.p99_ms,
    adapter_rps: adapterResult.rps,
    adapter_p50_ms: adapterResult.p50_ms,
    adapter_p99_ms: adapterResult.p99_ms,
    adapter_ratio: Math.round((adapterResult.rps / rawResult.rps) * 1000) / 1000,
    chain_rps: chainResult.rps,
    chain_p50_ms: chainResult.p50_ms,
    chain_p99_ms: chainResult.p99_ms,
    chain_ratio: Math.round((chainResult.rps / rawResult.rps) * 1000) / 1000,
    errors: rawResult.errors + adapterResult.errors + chainResult.errors
  })
)
process.exit(0)
