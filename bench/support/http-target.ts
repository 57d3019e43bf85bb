/**
 * The server side of `bench/http.ts`, in its own process so the load generator
 * does not share its event loop: either raw uWS answering a hello JSON, or the
 * whole gateway on the embedded stores (in-process rate limiting), or the same
 * HttpApi routes and services on Effect's own node:http server (the peer).
 */

import { createServer } from "node:http"
import { NodeHttpServer } from "@effect/platform-node"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as Layer from "effect/Layer"
import { apiRoutes, appLayer, servicesLayer } from "../../src/app.js"
import { loadUws } from "../../src/gateway/uws.js"
import { type AppConfig, loadConfig } from "../../src/platform/config.js"
import { loggerLayer, setLogLevel } from "../../src/platform/log.js"

const [mode, portText] = process.argv.slice(2)

/** The gateway's routes and services served by `@effect/platform-node`'s NodeHttpServer instead of uWS. */
const nodeServerLayer = (config: AppConfig) =>
  HttpRouter.serve(apiRoutes, { disableLogger: true }).pipe(
    Layer.provide(NodeHttpServer.layer(createServer, { host: config.host, port: config.port })),
    Layer.provide(servicesLayer(config)),
    Layer.provide(loggerLayer)
  )
// Exit normally on SIGINT so `--cpu-prof` can write its profile.
process.on("SIGINT", () => process.exit(0))
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
