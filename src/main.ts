/**
 * Entry point: `npm start`. Reads the environment, builds the service layer,
 * serves until SIGINT/SIGTERM, then drains in-flight requests and exits.
 */

import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { appLayer } from "./app.js"
import { loadedUwsBinary } from "./gateway/uws.js"
import { type AppConfig, loadConfig } from "./platform/config.js"
import { loggerLayer, logLine, setLogLevel } from "./platform/log.js"

let config: AppConfig
try {
  config = loadConfig()
} catch (error) {
  // The variable and value at fault, as a log line like every other; nothing has started yet.
  logLine("error", "invalid configuration", { error: (error as Error).message })
  process.exit(1)
}
setLogLevel(config.logLevel)

const program = Effect.gen(function* () {
  const scope = yield* Effect.scope
  // appLayer logs through the gateway's logger itself (one JSON line shape with the request log).
  yield* Layer.buildWithScope(appLayer(config), scope)
  yield* Effect.logInfo("listening").pipe(
    Effect.annotateLogs({
      url: `http://${config.host}:${config.port}`,
      base_url: config.baseUrl,
      database: config.databaseUrl ? "postgres" : "embedded postgres",
      redis: config.redisUrl ? "redis" : "in-process",
      docs: `${config.baseUrl}/docs`,
      metrics: config.metricsPort === undefined ? "off (METRICS_PORT unset)" : `http://${config.metricsHost}:${config.metricsPort}/metrics`,
      // Which native uWS file serves: the package's own, or its copy patched for glibc < 2.38.
      uws_binary: loadedUwsBinary()?.file
    })
  )
  return yield* Effect.never
}).pipe(Effect.provide(loggerLayer))

const fiber = Effect.runFork(Effect.scoped(program))
let stopping = false
const stop = (signal: string) => {
  if (stopping) return
  stopping = true
  logLine("info", "shutting down", { signal })
  fiber.interruptUnsafe()
}
process.on("SIGINT", () => stop("SIGINT"))
process.on("SIGTERM", () => stop("SIGTERM"))
fiber.addObserver((exit) => {
  if (Exit.isFailure(exit) && !Cause.hasInterruptsOnly(exit.cause)) {
    logLine("error", "the service stopped", { cause: Cause.pretty(exit.cause) })
    process.exit(1)
  }
  process.exit(0)
})
