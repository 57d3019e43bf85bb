/** The metrics listener of a test server started with `METRICS_PORT: "0"`. */
import * as Effect from "effect/Effect"
import { MetricsListener } from "../../src/system/metrics-listener.js"
import type { TestServer } from "./server.js"

export const metricsUrl = async (server: TestServer): Promise<string> => {
  const { port } = await server.run(Effect.service(MetricsListener))
  if (port === undefined) throw new Error("this server has no metrics listener: start it with METRICS_PORT")
  return `http://${server.config.metricsHost}:${port}/metrics`
}

/** The Prometheus text the listener serves. */
export const scrape = async (server: TestServer): Promise<string> => {
  const response = await fetch(await metricsUrl(server))
  if (response.status !== 200) throw new Error(`metrics answered ${response.status}`)
  return response.text()
}
