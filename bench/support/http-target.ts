/**
 * The server side of `bench/http.ts`, in its own process so the load generator
 * does not share its event loop: either raw uWS answering a hello JSON, or the
 * whole gateway on the embedded stores (in-process rate limiting), or the same
 * HttpApi routes and services on Effect's own node:http server (the peer).
 *
 * BENCH_PROFILE=<dir>: CPU-profiles this process from start to SIGINT, writes
 * `<dir>/<mode>.cpuprofile` and prints the 15 functions with the most self time.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import { Session } from "node:inspector/promises"
import { join } from "node:path"
import { NodeHttpServer } from "@effect/platform-node"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as Layer from "effect/Layer"
import type { AppConfig } from "../../src/platform/config.js"
import { type CpuProfile, selfTimes } from "./profile.js"

/**
 * The server runs what `npm start` runs: the tsc build in dist/ (bench/http.ts builds it before it
 * starts a target). The same sources run through tsx measured 30–45 % more CPU per request.
 */
const built = <Module>(path: string): Promise<Module> => import(new URL(`../../dist/src/${path}`, import.meta.url).href)
const { apiRoutes, appLayer, servicesLayer } = await built<typeof import("../../src/app.js")>("app.js")
const { loadUws } = await built<typeof import("../../src/gateway/uws.js")>("gateway/uws.js")
const { loadConfig } = await built<typeof import("../../src/platform/config.js")>("platform/config.js")
const { loggerLayer, setLogLevel } = await built<typeof import("../../src/platform/log.js")>("platform/log.js")

const [mode, portText] = process.argv.slice(2)

/** The gateway's routes and services served by `@effect/platform-node`'s NodeHttpServer instead of uWS. */
const nodeServerLayer = (config: AppConfig) =>
  HttpRouter.serve(apiRoutes, { disableLogger: true }).pipe(
    Layer.provide(NodeHttpServer.layer(createServer, { host: config.host, port: config.port })),
    Layer.provide(servicesLayer(config)),
    Layer.provide(loggerLayer)
  )

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
    const { profile } = (await profiler.post("Profiler.stop")) as { profile: CpuProfile }
    mkdirSync(profileDir, { recursive: true })
    const file = join(profileDir, `${mode}.cpuprofile`)
    writeFileSync(file, JSON.stringify(profile))
    console.log(`\n${mode} target: profile ${file}; top 15 by self time`)
    for (const { frame, ms, share } of selfTimes(profile).slice(0, 15)) {
      console.log(`${(share * 100).toFixed(1).padStart(5)}%  ${ms.toFixed(0).padStart(6)} ms  ${frame}`)
    }
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
  Effect.runFork(Layer.launch(mode === "node" ? nodeServerLayer(config) : appLayer(config)))
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
