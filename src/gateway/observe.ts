/**
 * Per-request observability: one JSON log line and Prometheus counters per
 * request. Routes are normalized (ids replaced by `:id`) so metric labels stay
 * bounded whatever paths clients send.
 */
import { logLine } from "../platform/log.js"
import { metrics } from "../platform/metrics.js"

const idLike = /^(?:[a-z]{2,6}_[A-Za-z0-9]{6,}|[0-9a-f-]{16,}|\d+|[A-Z0-9]{10}|svc_live_.*|whsec_.*)$/

const routes = new Map<string, string>()

/** Memoized: the same paths recur; the cache is cleared when it grows past 10,000 paths. */
export const normalizeRoute = (url: string): string => {
  const q = url.indexOf("?")
  const path = q === -1 ? url : url.slice(0, q)
  const known = routes.get(path)
  if (known !== undefined) return known
  if (routes.size >= 10_000) routes.clear()
  const route = normalizePath(path)
  routes.set(path, route)
  return route
}

const normalizePath = (path: string): string => {
  const parts = path.split("/")
  for (let i = 0; i < parts.length; i++) {
    if (parts[i] && idLike.test(parts[i]!)) parts[i] = ":id"
  }
  return parts.length > 12 ? parts.slice(0, 12).join("/") + "/…" : parts.join("/")
}

const requests = metrics.counter("http_requests_total", "HTTP requests served, by method, route and status", ["method", "route", "status"])
const latency = metrics.histogram(
  "http_request_duration_seconds",
  "HTTP request latency, by method, route and status",
  ["method", "route", "status"],
  [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
)

export const recordRequest = (method: string, url: string, status: number, millis: number, requestId: string) => {
  const route = normalizeRoute(url)
  const statusText = String(status)
  requests.inc([method, route, statusText])
  latency.observe([method, route, statusText], millis / 1000)
  logLine(status >= 500 ? "error" : "info", "request", {
    request_id: requestId,
    method,
    route,
    status,
    latency_ms: Math.round(millis * 1000) / 1000
  })
}
