/**
 * Effect's `HttpServer` service implemented on uWebSockets.js.
 *
 * Every API endpoint is a native uWS route (registered through `UwsApp.serveNative`
 * by compiled/routes.ts); one `app.any("/*")` route feeds everything else (pages,
 * OpenAPI, unmatched paths) to the Effect app. Either way the body is read with its
 * cap and pace enforced while it streams (body-clock.ts), input no handler can
 * store is refused (screen.ts), then one fiber runs per request (interrupted by
 * `res.onAborted`), and the response is written inside `res.cork` (respond.ts). A
 * request's state lives in exchange.ts. Native WebSocket routes are registered on the
 * same app by the sockets module.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as HttpEffect from "effect/http/HttpEffect"
import * as HttpServer from "effect/http/HttpServer"
import { HttpServerRequest, ParsedSearchParams } from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as NetAddress from "effect/net/NetAddress"
import * as Scope from "effect/Scope"
import { BodyClock, UWS_PROGRESS_BYTES } from "./body-clock.js"
import { Exchange, newRequestId, type ServerState, Source } from "./exchange.js"
import { openFileLimit } from "./limits.js"
import { failureText, recordRequest } from "./observe.js"
import { decodeUtf8, newHeaders, type RequestSource, searchParamsOf, UwsRequest } from "./request.js"
import { answerDirectly, answered, handleResponse, transportError } from "./respond.js"
import { formIssues, jsonIssues, MAX_ISSUES, urlIssues, validationBody } from "./screen.js"
import { type HttpRequest, type HttpResponse, loadUws, type TemplatedApp, type us_listen_socket } from "./uws.js"

export interface UwsServerOptions {
  readonly host: string
  readonly port: number
  readonly maxJsonBodyBytes: number
  readonly maxMultipartBodyBytes: number
  /** Paths (by prefix) whose JSON bodies may be larger than `maxJsonBodyBytes`, and their cap. */
  readonly largeJsonBodies?: ReadonlyArray<{ readonly pathPrefix: string; readonly maxBytes: number }>
  readonly bodyTimeoutMs: number
  /** A body with less than 160 KB of progress in this window is 408 (below uWS's own 8–12 s cut; see body-clock.ts). */
  readonly bodyIdleTimeoutMs: number
  /** 0 = derive from the open-file limit. */
  readonly maxConnections: number
  readonly shutdownGraceMs: number
}

/**
 * One endpoint served by its own uWS route. `program` answers the request; it reads the
 * request, its query and its path parameters from the fiber's context, which is `context`
 * plus the request (built once at startup, so nothing is merged per request).
 */
export interface NativeRoute {
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
  /** uWS pattern: `/api/v1/actions/:action_uuid`. */
  readonly pattern: string
  /** The route template for metrics and logs (the same text the router's label gives). */
  readonly label: string
  /** Names of the pattern's parameters, in order. */
  readonly paramNames: ReadonlyArray<string>
  readonly context: Context.Context<never>
  readonly program: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, HttpServerRequest | ParsedSearchParams>
}

/** The uWS app, for modules that register native routes (WebSockets, compiled endpoints). */
export class UwsApp extends Context.Service<UwsApp, {
  readonly app: TemplatedApp
  /** Sockets and requests currently open, shared with the WebSocket cap. */
  readonly connections: { open: number; readonly cap: number }
  /** The port bound: the configured one, or the one the system chose for port 0. */
  readonly port: number
  /** Serves one endpoint on its own uWS route, with the transport's body, screening and response handling. */
  readonly serveNative: (route: NativeRoute) => void
  /** How many requests native routes have started (the catch-all's are not counted). */
  readonly nativeStarted: () => number
}>()("gateway/UwsApp") {}

/** Longest path parameter the Effect router accepts (its `maxParamLength`); longer ones are left to it (404). */
const MAX_PARAM_LENGTH = 100

/** The headers object `collectHeader` fills: one module-level function instead of a closure per request. */
let collecting: Record<string, string> = {}
const collectHeader = (key: string, value: string) => {
  const previous = collecting[key]
  collecting[key] = previous === undefined ? value : `${previous}, ${value}`
}
/** Bodies the app reads as text: JSON (also when untyped, as HttpApi assumes) and forms. */
const bodyKind = (contentType: string): "json" | "form" | undefined => {
  const type = contentType.toLowerCase()
  if (type === "" || type.includes("json")) return "json"
  return type.startsWith("application/x-www-form-urlencoded") ? "form" : undefined
}

/**
 * Refuses with 422 what no handler can store (see screen.ts) and returns false.
 * A text body is decoded here once; the app reads the kept text.
 */
const screened = (exchange: Exchange, contentType: string | undefined): boolean => {
  const source = exchange.source
  let issues = urlIssues(source.url)
  const kind = contentType === undefined ? undefined : bodyKind(contentType)
  if (kind !== undefined) {
    const text = decodeUtf8(source.body)
    if (text !== undefined) {
      source.text = text
      const bodyIssues = kind === "json" ? jsonIssues(text) : formIssues(text)
      if (bodyIssues !== undefined) issues = issues === undefined ? bodyIssues : [...issues, ...bodyIssues].slice(0, MAX_ISSUES)
    }
  }
  if (issues === undefined) return true
  answerDirectly(exchange, 422, validationBody(issues, source.requestId), false)
  return false
}

export const makeUwsServer = Effect.fnUntraced(function* (options: UwsServerOptions) {
  const uws = loadUws()
  const app = uws.App()
  const limit = openFileLimit()
  // Leave room for the database pool, Redis, log files and outbound calls.
  const derivedCap = Math.max(64, limit - 512)
  const connections = { open: 0, cap: options.maxConnections > 0 ? Math.min(options.maxConnections, derivedCap) : derivedCap }
  let handler: ((source: RequestSource, exchange: Exchange) => void) | undefined
  let draining = false
  const inFlight = new Set<Exchange>()
  const state: ServerState = { inFlight, connections }

  /** Called with every request, from the catch-all or a native route; runs before anything awaits. */
  const accept = (res: HttpResponse, req: HttpRequest, route: NativeRoute | undefined, run: (source: RequestSource, exchange: Exchange) => void) => {
    let params: Record<string, string> | undefined
    if (route !== undefined) {
      params = {}
      for (let i = 0; i < route.paramNames.length; i++) {
        const value = req.getParameter(i) ?? ""
        // What the Effect router would decode, refuse or route elsewhere is left to it (the catch-all).
        if (value === "" || value.length > MAX_PARAM_LENGTH || value.includes("%") || value.includes(";")) {
          req.setYield(true)
          return
        }
        params[route.paramNames[i]!] = value
      }
    }
    const method = req.getCaseSensitiveMethod().toUpperCase()
    const query = req.getQuery()
    const url = query ? `${req.getUrl()}?${query}` : req.getUrl()
    const headers = newHeaders()
    collecting = headers
    req.forEach(collectHeader)
    const requestId = newRequestId()
    headers["x-request-id"] = requestId
    const source = new Source(requestId, method, url, headers, params)
    const exchange = new Exchange(res, source, performance.now(), state)
    source.exchange = exchange
    res.onAborted(() => exchange.abort())
    connections.open++
    inFlight.add(exchange)
    if (draining || handler === undefined) {
      return answerDirectly(exchange, 503, transportError("SERVICE_UNAVAILABLE", "the server is shutting down", requestId), true)
    }
    if (connections.open > connections.cap) {
      return answerDirectly(exchange, 503, transportError("SERVER_BUSY", "too many open connections; retry shortly", requestId), true)
    }
    const contentType = headers["content-type"] ?? ""
    const declared = headers["content-length"]
    const hasBody = (declared !== undefined && declared !== "0") || headers["transfer-encoding"] !== undefined
    if (!hasBody) {
      if (screened(exchange, undefined)) run(source, exchange)
      return
    }
    const cap = contentType.startsWith("multipart/form-data")
      ? options.maxMultipartBodyBytes
      : (options.largeJsonBodies?.find((large) => url.startsWith(large.pathPrefix))?.maxBytes ?? options.maxJsonBodyBytes)
    if (declared !== undefined && Number(declared) > cap) {
      return answerDirectly(exchange, 413, transportError("PAYLOAD_TOO_LARGE", `request body exceeds ${cap} bytes`, requestId), true)
    }
    readBody(exchange, contentType, cap, run)
  }

  /** Reads the body with its cap and pace enforced while it streams; then screens it and runs the request. */
  const readBody = (exchange: Exchange, contentType: string, cap: number, run: (source: RequestSource, exchange: Exchange) => void) => {
    const { res, source } = exchange
    const requestId = source.requestId
    const chunks: Uint8Array[] = []
    let received = 0
    const bodyClock = new BodyClock(options.bodyIdleTimeoutMs, options.bodyTimeoutMs, (reason) => {
      const message =
        reason === "total"
          ? `request body was not complete within ${options.bodyTimeoutMs} ms`
          : `request body stalled: less than ${UWS_PROGRESS_BYTES} bytes arrived in ${options.bodyIdleTimeoutMs} ms`
      answerDirectly(exchange, 408, transportError("REQUEST_TIMEOUT", message, requestId), true)
    })
    exchange.clock = bodyClock
    res.onData((chunk, isLast) => {
      if (exchange.done || exchange.aborted) return
      received += chunk.byteLength
      if (received > cap) {
        bodyClock.stop()
        return answerDirectly(exchange, 413, transportError("PAYLOAD_TOO_LARGE", `request body exceeds ${cap} bytes`, requestId), true)
      }
      // uWS reuses the chunk's memory after this callback returns.
      chunks.push(new Uint8Array(chunk.slice(0)))
      if (!isLast) {
        bodyClock.add(chunk.byteLength)
        return
      }
      bodyClock.stop()
      source.body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
      if (screened(exchange, contentType)) run(source, exchange)
    })
  }

  /** Logs and counts the request when its fiber exits, and answers 500 if nothing was written. */
  const exited = (exchange: Exchange, exit: Exit.Exit<void, unknown>) => {
    exchange.running = false
    const scope = exchange.scope
    if (scope !== undefined) {
      const closing = Scope.closeUnsafe(scope, exit)
      if (closing !== undefined) Effect.runFork(closing)
    }
    // Rendered only for 5xx: 4xx answers fail the fiber too (a 404 is a failure), and rendering costs.
    const cause = () => (exit._tag === "Failure" ? failureText(exit.cause) : undefined)
    if (exchange.failed !== undefined) recordRequest(exchange.source, exchange.failed.status, exchange.failed.millis, cause())
    else if (!exchange.done && !exchange.aborted) {
      answerDirectly(exchange, 500, transportError("INTERNAL_ERROR", "the request failed", exchange.source.requestId), false, cause())
    }
    exchange.release()
  }

  /** Most requests finish before `runFork` returns; the others are watched until they exit. */
  const watch = (exchange: Exchange, fiber: Fiber.Fiber<void, unknown>) => {
    const exit = fiber.pollUnsafe()
    if (exit !== undefined) return exited(exchange, exit)
    exchange.fiber = fiber
    fiber.addObserver((exit) => exited(exchange, exit))
  }

  const toApp = (source: RequestSource, exchange: Exchange) => handler!(source, exchange)
  app.any("/*", (res, req) => accept(res, req, undefined, toApp))

  /**
   * Native requests start together, once per turn of the event loop (`setImmediate`), instead of
   * one by one inside uWS's callbacks: the statements they send to PostgreSQL then leave in one
   * write per connection (the client flushes in a microtask, which Node runs after every uWS
   * callback), and a read costs a third less CPU. A request whose client left meanwhile is skipped.
   */
  let starting: Array<{ readonly start: (source: RequestSource, exchange: Exchange) => void; readonly source: RequestSource; readonly exchange: Exchange }> = []
  const startAll = () => {
    const batch = starting
    starting = []
    for (const { start, source, exchange } of batch) {
      if (exchange.aborted || exchange.done) {
        exchange.release()
        continue
      }
      try {
        start(source, exchange)
      } catch (cause) {
        answerDirectly(exchange, 500, transportError("INTERNAL_ERROR", "the request failed", exchange.source.requestId), false, String(cause))
      }
    }
  }
  const startSoon = (start: (source: RequestSource, exchange: Exchange) => void) => (source: RequestSource, exchange: Exchange) => {
    if (starting.length === 0) setImmediate(startAll)
    starting.push({ start, source, exchange })
  }

  let nativeStarted = 0
  const serveNative = (route: NativeRoute) => {
    const handled = answered(route.program)
    const run = startSoon((source: RequestSource, exchange: Exchange) => {
      nativeStarted++
      // Labelled only once it reaches the endpoint, as the router labels: the transport's own answers stay unmatched.
      source.route = route.label
      const request = new UwsRequest(source)
      // The request's scope, closed once the fiber exits (HttpEffect gives the router's requests one too).
      const scope = Scope.makeUnsafe()
      exchange.scope = scope
      const context = Context.add(route.context, HttpServerRequest, request).pipe(
        Context.add(ParsedSearchParams, searchParamsOf(source.url)),
        Context.add(Scope.Scope, scope)
      )
      exchange.running = true
      watch(exchange, Effect.runForkWith(context)(handled))
    })
    registerRoute[route.method](route.pattern, (res, req) => accept(res, req, route, run))
  }
  type Register = (pattern: string, handler: (res: HttpResponse, req: HttpRequest) => void) => void
  const registerRoute: Record<NativeRoute["method"], Register> = {
    GET: (pattern, handler) => app.get(pattern, handler),
    POST: (pattern, handler) => app.post(pattern, handler),
    PUT: (pattern, handler) => app.put(pattern, handler),
    PATCH: (pattern, handler) => app.patch(pattern, handler),
    DELETE: (pattern, handler) => app.del(pattern, handler)
  }

  const listenSocket = yield* Effect.callback<us_listen_socket, Error>((resume) => {
    app.listen(options.host, options.port, (socket) => {
      if (socket) resume(Effect.succeed(socket))
      else resume(Effect.fail(new Error(`could not listen on ${options.host}:${options.port}`)))
    })
  })
  const port = uws.us_socket_local_port(listenSocket as any)

  yield* Effect.addFinalizer(() =>
    Effect.gen(function* () {
      draining = true
      uws.us_listen_socket_close(listenSocket)
      const deadline = Date.now() + options.shutdownGraceMs
      while (inFlight.size > 0 && Date.now() < deadline) yield* Effect.sleep(20)
      for (const exchange of inFlight) exchange.fiber?.interruptUnsafe()
    })
  )

  const server = HttpServer.make({
    address: NetAddress.inetAddressFromHostString(options.host === "localhost" ? "127.0.0.1" : options.host, port).pipe((result) =>
      result._tag === "Success" ? result.success : NetAddress.inetAddressFromIpStringUnsafe("127.0.0.1", port)
    ),
    serve: (httpApp, middleware) =>
      Effect.gen(function* () {
        const handled = HttpEffect.toHandled(httpApp, handleResponse, middleware)
        const scope = yield* Effect.scope
        const context = yield* Effect.context<never>()
        handler = (source, exchange) => {
          const request = new UwsRequest(source)
          exchange.running = true
          watch(exchange, Effect.runForkWith(Context.add(context, HttpServerRequest, request))(handled))
        }
        yield* Scope.addFinalizer(scope, Effect.sync(() => {
          handler = undefined
        }))
      })
  })
  return { server, app, connections, port, serveNative, nativeStarted: () => nativeStarted }
})

/** Provides `HttpServer` on uWS plus the `UwsApp` for native socket routes. */
export const uwsServerLayer = (options: UwsServerOptions) =>
  Layer.effectContext(
    Effect.map(makeUwsServer(options), ({ server, app, connections, port, serveNative, nativeStarted }) =>
      Context.make(HttpServer.HttpServer, server).pipe(Context.add(UwsApp, { app, connections, port, serveNative, nativeStarted }))
    )
  )
