/**
 * `GET /dashboard` and `GET /dashboard/*`: the single-page dashboard built from `dashboard/`.
 * Hashed assets under `assets/` are cached for a year; every other path under `/dashboard` is a
 * client-side route and answers index.html (no-cache, strict CSP). Not rate limited: the files are
 * in memory and cost no more than a 404.
 */
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { Config } from "../platform/config.js"
import { chooseEncoding, loadSite, type Site, type SiteFile } from "./site.js"

/** No inline script or style anywhere (Vite emits files only); sockets go to the same origin ('self' covers ws:/wss: there). */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'"
].join("; ")

const common = { "x-content-type-options": "nosniff", "referrer-policy": "no-referrer" }

const indexHeaders = {
  ...common,
  "cache-control": "no-cache",
  "content-security-policy": DASHBOARD_CSP,
  "x-frame-options": "DENY"
}

/** The file in the encoding the client takes best (brotli, gzip, plain), its entity tag per encoding. */
const serveFile = (file: SiteFile, headers: Record<string, string>, request: { readonly headers: Record<string, string | undefined> }) => {
  const encoding = chooseEncoding(request.headers["accept-encoding"])
  const encoded = encoding === undefined ? undefined : file.encoded[encoding]
  const etag = encoded?.etag ?? file.etag
  const varies = Object.keys(file.encoded).length > 0 ? { vary: "accept-encoding" } : {}
  const all = { ...headers, ...varies, etag, ...(encoded === undefined ? {} : { "content-encoding": encoding! }) }
  return request.headers["if-none-match"] === etag
    ? HttpServerResponse.empty({ status: 304, headers: all })
    : HttpServerResponse.uint8Array(encoded?.body ?? file.body, { contentType: file.contentType, headers: all })
}

const notBuilt = (wantsJson: boolean) => {
  const message = "The dashboard is not built. Run `npm run build` (or `npm start`, which builds it), then restart the gateway."
  const headers = { ...common, "cache-control": "no-store", "retry-after": "60" }
  if (wantsJson) {
    return HttpServerResponse.text(JSON.stringify({ error: message, code: "DASHBOARD_NOT_BUILT", message }), {
      status: 503,
      contentType: "application/json",
      headers
    })
  }
  return HttpServerResponse.text(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Dashboard not built</title></head><body><main><h1>Dashboard not built</h1><p>${message.replace(/`([^`]+)`/g, "<code>$1</code>")}</p></main></body></html>\n`,
    { status: 503, contentType: "text/html; charset=utf-8", headers: { ...headers, "content-security-policy": "default-src 'none'" } }
  )
}

const notFound = () =>
  HttpServerResponse.text(JSON.stringify({ error: "Not found", code: "NOT_FOUND", message: "Not found" }), {
    status: 404,
    contentType: "application/json",
    headers: { ...common, "cache-control": "no-store" }
  })

const handler = (site: Site) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest
    const rest = (yield* HttpRouter.params)["*"] ?? ""
    if (site.index === undefined) return notBuilt(/application\/json/.test(request.headers.accept ?? "") && !/text\/html/.test(request.headers.accept ?? ""))
    if (rest.startsWith("assets/")) {
      const file = site.files.get(rest)
      return file === undefined ? notFound() : serveFile(file, { ...common, "cache-control": "public, max-age=31536000, immutable" }, request)
    }
    // Other built files (icons) by exact name; anything else is a client-side route.
    const file = site.files.get(rest)
    if (file !== undefined) return serveFile(file, { ...common, "cache-control": "no-cache" }, request)
    return serveFile(site.index, indexHeaders, request)
  })

export const DashboardRoutes = HttpRouter.use((router) =>
  Effect.gen(function* () {
    const config = yield* Config
    const site = loadSite(config.dashboardDir)
    if (site.index === undefined) yield* Effect.logWarning(`dashboard not built (no index.html in ${config.dashboardDir}); /dashboard answers 503 until \`npm run build\``)
    const serve = handler(site)
    // Also matches `/dashboard` itself (with an empty wildcard).
    yield* router.add("GET", "/dashboard/*", serve)
  })
)
