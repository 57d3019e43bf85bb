/**
 * Per-request observability: one JSON log line and Prometheus metrics (Effect
 * `Metric`s) per request, labelled by the route template the router matched (never the raw
 * path), so series stay bounded by the route table whatever paths clients send.
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Metric from "effect/Metric"
import { logLine, logs } from "../platform/log.js"
import { record } from "../platform/metrics.js"
import type { RequestSource } from "./request.js"

/** The label of every request no route matched: router 404s and what the transport answers before routing. */
export const UNMATCHED = "unmatched"

/**
 * Route middleware that copies the matched template (`/api/v1/actions/:action_uuid`)
 * onto the request's source for the transport's log line and metrics. It wraps each
 * route once at registration; per request it costs two context look-ups.
 */
export const RouteLabel = HttpRouter.middleware((effect) =>
  Effect.withFiber((fiber) => {
    const source = Context.getUnsafe(fiber.context, HttpServerRequest).source as RequestSource | undefined
    if (source !== undefined && "requestId" in source) source.route = Context.getUnsafe(fiber.context, HttpRouter.RouteContext).route.path
    return effect
  })
).layer

const LATENCY_BOUNDARIES = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/** The two metrics of one (method, route, status) series, made on its first request and reused after. */
interface Series {
  readonly requests: Metric.Counter<number>
  readonly latency: Metric.Histogram<number>
}

const makeSeries = (method: string, route: string, status: number): Series => {
  const attributes = { method, route, status: String(status) }
  return {
    requests: Metric.counter("http_requests_total", { description: "HTTP requests served, by method, route and status", attributes }),
    latency: Metric.histogram("http_request_duration_seconds", {
      description: "HTTP request latency, by method, route and status",
      boundaries: LATENCY_BOUNDARIES,
      attributes
    })
  }
}

/** method → route template → status; bounded by the labels below, so a request allocates nothing once its series exists. */
const series = new Map<string, Map<string, Map<number, Series>>>()

const seriesOf = (method: string, route: string, status: number): Series => {
  let byRoute = series.get(method)
  if (byRoute === undefined) series.set(method, (byRoute = new Map()))
  let byStatus = byRoute.get(route)
  if (byStatus === undefined) byRoute.set(route, (byStatus = new Map()))
  let found = byStatus.get(status)
  if (found === undefined) byStatus.set(status, (found = makeSeries(method, route, status)))
  return found
}

/** uWS refuses unknown methods today; should that change, they share one label rather than grow the series. */
const methods = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE"])
const methodLabel = (method: string) => (methods.has(method) ? method : "OTHER")

/** `cause`: the rendered failure behind a 5xx, logged with the line (never the body or headers). */
export const recordRequest = (source: RequestSource, status: number, millis: number, cause?: string) => {
  const route = source.route ?? UNMATCHED
  const { requests, latency } = seriesOf(methodLabel(source.method), route, status)
  record(requests, 1)
  record(latency, millis / 1000)
  const level = status >= 500 ? "error" : "info"
  if (!logs(level)) return
  const fields: Record<string, unknown> = {
    request_id: source.requestId,
    method: source.method,
    route,
    status,
    latency_ms: Math.round(millis * 1000) / 1000
  }
  if (cause !== undefined) fields.cause = cause
  logLine(level, "request", fields)
}

/**
 * What made a request fail, rendered with stacks: the responses the HTTP layer
 * adds to a failed request's cause and interruptions (client gone, shutdown) are
 * left out; undefined when nothing else is left.
 */
export const failureText = (cause: Cause.Cause<unknown>): string | undefined => {
  const reasons = cause.reasons.filter(
    (reason) => reason._tag !== "Interrupt" && !(reason._tag === "Die" && HttpServerResponse.isHttpServerResponse(reason.defect))
  )
  return reasons.length === 0 ? undefined : Cause.pretty(Cause.fromReasons(reasons))
}
