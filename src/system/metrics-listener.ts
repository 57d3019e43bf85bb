/**
 * `GET /metrics` on a listener of its own: `METRICS_PORT` on `METRICS_HOST` (default 127.0.0.1),
 * none when the port is unset. The public listener never serves it: the scrape shows every
 * route's traffic, errors and latencies, which is for operators, and keeping it on a port only the
 * scraper's network reaches asks nothing of the scraper (it would otherwise need the platform's
 * admin key, which also manages every organization's feature flags). 0 lets the system choose the
 * port (tests); the bound port is this service's.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { loadUws, type us_listen_socket } from "../gateway/uws.js"
import { Config } from "../platform/config.js"
import { metricsText } from "../platform/metrics.js"

const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

export class MetricsListener extends Context.Service<MetricsListener, { readonly port: number | undefined }>()("gateway/MetricsListener") {
  static readonly layer = Layer.effect(MetricsListener)(
    Effect.gen(function* () {
      const { metricsHost, metricsPort } = yield* Config
      if (metricsPort === undefined) return { port: undefined }
      const uws = loadUws()
      const app = uws.App()
      // The exposition is synchronous: each handler answers before it returns.
      app.get("/metrics", (res) => {
        const body = metricsText()
        res.cork(() => res.writeStatus("200 OK").writeHeader("content-type", CONTENT_TYPE).end(body))
      })
      app.any("/*", (res) => {
        res.cork(() => res.writeStatus("404 Not Found").writeHeader("content-type", "text/plain").end("this listener serves GET /metrics only\n"))
      })
      const socket = yield* Effect.callback<us_listen_socket, Error>((resume) => {
        app.listen(metricsHost, metricsPort, (listening) => {
          resume(listening ? Effect.succeed(listening) : Effect.fail(new Error(`could not listen for metrics on ${metricsHost}:${metricsPort}`)))
        })
      })
      yield* Effect.addFinalizer(() => Effect.sync(() => uws.us_listen_socket_close(socket)))
      return { port: uws.us_socket_local_port(socket as never) }
    })
  )
}
