/**
 * The server side of `bench/http.ts`, in its own process so the load generator
 * does not share its event loop: either raw uWS answering a hello JSON, or the
 * whole gateway on the embedded stores (in-process rate limiting).
 *
 * BENCH_PROFILE=<dir>: CPU-profiles this process from start to SIGINT, writes
 * `<dir>/<mode>.cpuprofile` and prints the 15 functions with the most self time.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { Session } from "node:inspector/promises"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { appLayer } from "../../src/app.js"
import { loadUws } from "../../src/gateway/uws.js"
import { loadConfig } from "../../src/platform/config.js"
import { setLogLevel } from "../../src/platform/log.js"

const [mode, portText] = process.argv.slice(2)

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
}
interface Profile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

/** Self time per function (name + file:line), the top `count`, as printable lines. */
const topSelf = (profile: Profile, count: number): string[] => {
  const frames = new Map<number, string>()
  for (const node of profile.nodes) {
    const { functionName, url, lineNumber } = node.callFrame
    const file = url.replace(/^file:\/\//, "").replace(process.cwd() + "/", "")
    frames.set(node.id, `${functionName || "(anonymous)"} ${file ? `${file}:${lineNumber + 1}` : ""}`.trim())
  }
  const self = new Map<string, number>()
  let total = 0
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0
    total += delta
    const frame = frames.get(id)!
    self.set(frame, (self.get(frame) ?? 0) + delta)
  })
  return [...self]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([frame, micros]) => `${((micros / total) * 100).toFixed(1).padStart(5)}%  ${(micros / 1000).toFixed(0).padStart(6)} ms  ${frame}`)
}

const profileDir = process.env.BENCH_PROFILE
const profiler = profileDir ? new Session() : undefined
if (profiler) {
  profiler.connect()
  await profiler.post("Profiler.enable")
  await profiler.post("Profiler.setSamplingInterval", { interval: 100 })
  await profiler.post("Profiler.start")
}
// The bench asks for this process's CPU time around each run: CPU per request holds up when other jobs share the machine.
process.on("message", (message) => {
  if (message === "cpu") {
    const { user, system } = process.cpuUsage()
    process.send?.({ cpuMicros: user + system })
  }
})
process.on("SIGINT", async () => {
  if (profiler && profileDir) {
    const { profile } = (await profiler.post("Profiler.stop")) as { profile: Profile }
    mkdirSync(profileDir, { recursive: true })
    const file = join(profileDir, `${mode}.cpuprofile`)
    writeFileSync(file, JSON.stringify(profile))
    console.log(`\n${mode} target: profile ${file}; top 15 by self time`)
    for (const line of topSelf(profile, 15)) console.log(line)
  }
  process.exit(0)
})
const port = Number(portText)

if (mode === "raw") {
  const app = loadUws().App()
  app.get("/hello", (res) => {
    res.cork(() => {
      res.writeHeader("content-type", "application/json").end('{"hello":"world"}')
    })
  })
  app.listen("127.0.0.1", port, (socket) => {
    if (!socket) process.exit(1)
    process.send?.("ready")
  })
} else {
  setLogLevel("silent")
  const config = loadConfig({
    ...process.env,
    PORT: String(port),
    HOST: "127.0.0.1",
    // The embedded PostgreSQL under the DATA_DIR bench/http.ts made (its own processes, not in this RSS).
    DATA_DIR: process.env.BENCH_DATA_DIR,
    DATABASE_URL: "",
    REDIS_URL: "",
    MASTER_KEY: "2222222222222222222222222222222222222222222222222222222222222222",
    RATE_LIMIT_PER_MINUTE: "100000000",
    PUBLIC_RATE_LIMIT_PER_MINUTE: "100000000",
    LOG_LEVEL: "silent"
  })
  Effect.runFork(Layer.launch(appLayer(config)))
  const wait = async () => {
    for (;;) {
      try {
        if ((await fetch(`http://127.0.0.1:${port}/health`)).ok) return process.send?.("ready")
      } catch {}
      await new Promise((r) => setTimeout(r, 100))
    }
  }
  void wait()
}
