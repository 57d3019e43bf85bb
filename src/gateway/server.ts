/**
 * Effect's `HttpServer` service implemented on uWebSockets.js.
 *
 * Every API endpoint is a native uWS route (registered through `UwsApp.serveNative`
 * by compiled/routes.ts); one `app.any("/*")` route feeds everything else (pages,
 * OpenAPI, unmatched paths) to the Effect app. Either way the body is read with its
 * cap and pace enforced while it streams (body-clock.ts), input no handler can
 * store is refused (screen.ts), then one fiber runs per request (interrupted by
 * `res.onAborted`), and the response is written inside `res.cork`. Native
 * WebSocket routes are registered on the same app by the sockets module.
 */
import { getRandomValues } from "node:crypto"
import { STATUS_CODES } from "node:http"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as Cookies from "effect/http/Cookies"
import * as Headers from "effect/http/Headers"
import * as HttpEffect from "effect/http/HttpEffect"
import * as HttpServer from "effect/http/HttpServer"
import { causeResponse } from "effect/http/HttpServerError"
import { HttpServerRequest, ParsedSearchParams } from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as NetAddress from "effect/net/NetAddress"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { BodyClock, UWS_PROGRESS_BYTES } from "./body-clock.js"
import { openFileLimit } from "./limits.js"
import { failureText, recordRequest } from "./observe.js"
import { decodeUtf8, emptyBody, newHeaders, type RequestSource, searchParamsOf, UwsRequest } from "./request.js"
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
}>()("gateway/UwsApp") {}

/** Longest path parameter the Effect router accepts (its `maxParamLength`); longer ones are left to it (404). */
const MAX_PARAM_LENGTH = 100

const decoder = new TextDecoder()

/** The headers object `collectHeader` fills: one module-level function instead of a closure per request. */
let collecting: Record<string, string> = {}
const collectHeader = (key: string, value: string) => {
  const previous = collecting[key]
  collecting[key] = previous === undefined ? value : `${previous}, ${value}`
}
const statusLines = new Map<number, string>()
const statusLine = (status: number): string => {
  let line = statusLines.get(status)
  if (line === undefined) {
    line = `${status} ${STATUS_CODES[status] ?? "Unknown"}`
    statusLines.set(status, line)
  }
  return line
}

const HEX: string[] = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"))
/** Random bytes drawn 4 KiB at a time: one CSPRNG call serves 256 request ids. */
const idPool = new Uint8Array(4096)
let idOffset = idPool.length

/** 128 random bits as 32 hex digits, like a UUID without its dashes and version bits. */
export const newRequestId = (): string => {
  if (idOffset === idPool.length) {
    getRandomValues(idPool)
    idOffset = 0
  }
  let id = "req_"
  for (let end = idOffset + 16; idOffset < end; idOffset++) id += HEX[idPool[idOffset]!]
  return id
}

/** Every JSON object body carries its request id; bodies that already name one are left alone. */
const withRequestId = (json: string, requestId: string): string => {
  if (json.charCodeAt(0) !== 123 /* { */ || json.includes('"request_id"')) return json
  return json.length === 2 ? `{"request_id":"${requestId}"}` : `{"request_id":"${requestId}",${json.slice(1)}`
}

/** Error bodies the transport answers itself, before the app sees the request. */
export const transportError = (code: string, message: string, requestId: string): string =>
  JSON.stringify({ error: message, code, message, request_id: requestId })

const emptyErrors: Record<number, [string, string]> = {
  400: ["BAD_REQUEST", "The request could not be understood"],
  404: ["NOT_FOUND", "No such route"],
  405: ["METHOD_NOT_ALLOWED", "Method not allowed on this route"],
  500: ["INTERNAL_ERROR", "Internal error; quote the request_id when reporting it"],
  503: ["SERVICE_UNAVAILABLE", "Service unavailable"]
}

/** What a request's exchange shares with the server that accepted it. */
interface ServerState {
  readonly inFlight: Set<Exchange>
  readonly connections: { open: number; readonly cap: number }
}

/**
 * What the transport knows about one request. A class, not an object literal: V8 builds an
 * instance of a class with a prototype getter in a few nanoseconds, while a literal with an
 * accessor (the lazy address below) cost microseconds per request on the bench.
 */
class Source implements RequestSource {
  body: Uint8Array = emptyBody
  text: string | undefined = undefined
  route: string | undefined = undefined
  responseHeaders: Record<string, string> | undefined = undefined
  exchange: Exchange | undefined = undefined
  private address: string | undefined | null = null
  constructor(
    readonly requestId: string,
    readonly method: string,
    readonly url: string,
    readonly headers: Record<string, string>,
    readonly params: Record<string, string> | undefined
  ) {}

  /** Read when first asked for (a system call), and only while the response can still be used. */
  get remoteAddress(): string | undefined {
    if (this.address === null) {
      const exchange = this.exchange
      this.address = exchange === undefined || exchange.aborted || exchange.done ? undefined : decoder.decode(exchange.res.getRemoteAddressAsText()) || undefined
    }
    return this.address
  }
}

export class Exchange {
  aborted = false
  done = false
  fiber: Fiber.Fiber<void, unknown> | undefined = undefined
  /** The scope of a native route's request (the router's requests get theirs from HttpEffect). */
  scope: Scope.Closeable | undefined = undefined
  /** The request fiber has started and not yet exited. */
  running = false
  /** A 5xx written while the fiber ran: logged when the fiber exits, with its cause. */
  failed: { readonly status: number; readonly millis: number } | undefined = undefined
  /** Wakes a streaming writer waiting for `onWritable`. */
  writable: (() => void) | undefined = undefined
  /** The body's pace and deadline, while it streams. */
  clock: BodyClock | undefined = undefined
  private released = false
  constructor(
    readonly res: HttpResponse,
    readonly source: Source,
    readonly started: number,
    private readonly server: ServerState
  ) {}

  /** The request no longer counts against the connection cap. */
  release() {
    if (this.released) return
    this.released = true
    this.server.inFlight.delete(this)
    this.server.connections.open--
  }

  /** The client went away: stop the body clock and the fiber. */
  abort() {
    this.aborted = true
    this.clock?.stop()
    this.fiber?.interruptUnsafe()
    this.release()
  }
}

const answerDirectly = (exchange: Exchange, status: number, body: string, close: boolean, cause?: string) => {
  if (exchange.aborted || exchange.done) return
  exchange.done = true
  exchange.release()
  exchange.res.cork(() => {
    exchange.res
      .writeStatus(statusLine(status))
      .writeHeader("content-type", "application/json")
      .writeHeader("x-request-id", exchange.source.requestId)
      .end(body, close)
  })
  recordRequest(exchange.source, status, performance.now() - exchange.started, cause)
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

const writeHead = (exchange: Exchange, response: HttpServerResponse.HttpServerResponse) => {
  const res = exchange.res
  res.writeStatus(statusLine(response.status))
  const headers = response.headers
  let ownContentType = false
  // Most responses carry no headers of their own: then nothing is looked up on the Headers object
  // (a miss walks its prototype, which is slow).
  if (headers !== Headers.empty) {
    for (const name of Object.keys(headers)) {
      if (name === "content-length" || name === "x-request-id") continue
      if (name === "content-type") ownContentType = true
      res.writeHeader(name, headers[name]!)
    }
  }
  const cookies = response.cookies
  if (cookies !== Cookies.empty && !Cookies.isEmpty(cookies)) {
    for (const cookie of Cookies.toSetCookieHeaders(cookies)) res.writeHeader("set-cookie", cookie)
  }
  const extra = exchange.source.responseHeaders
  if (extra !== undefined) {
    const own = headers === Headers.empty ? undefined : headers
    for (const name in extra) if (own === undefined || !Object.hasOwn(own, name)) res.writeHeader(name, extra[name]!)
  }
  res.writeHeader("x-request-id", exchange.source.requestId)
  const body = response.body
  if (!ownContentType && body._tag !== "Empty" && body.contentType) res.writeHeader("content-type", body.contentType)
}

/** The response `writeCorked` writes: module state instead of a closure per response (cork runs it at once). */
const corked: {
  exchange: Exchange | undefined
  response: HttpServerResponse.HttpServerResponse | undefined
  payload: string | Uint8Array | undefined
} = { exchange: undefined, response: undefined, payload: undefined }
const writeCorked = () => {
  writeHead(corked.exchange!, corked.response!)
  corked.exchange!.res.end(corked.payload)
}

const finish = (exchange: Exchange, status: number) => {
  exchange.done = true
  const millis = performance.now() - exchange.started
  // The cause of a 5xx is known only when the fiber exits (just after the response is written).
  if (status >= 500 && exchange.running) exchange.failed = { status, millis }
  else recordRequest(exchange.source, status, millis)
}

const writeResponse = (exchange: Exchange, response: HttpServerResponse.HttpServerResponse): Effect.Effect<void> => {
  if (exchange.aborted || exchange.done) return Effect.void
  const body = response.body
  const isHead = exchange.source.method === "HEAD"
  switch (body._tag) {
    case "Empty":
      exchange.res.cork(() => {
        writeHead(exchange, response)
        // Errors always have a body with the contract's shape (route not found, method not allowed, defects).
        if (response.status >= 400 && !isHead) {
          // An empty 400 comes from a body the app could not read (not UTF-8, not JSON).
          const [code, message] =
            response.status === 400 && exchange.source.body.byteLength > 0
              ? ["INVALID_JSON", "Request body is not valid UTF-8 JSON"]
              : (emptyErrors[response.status] ?? ["ERROR", STATUS_CODES[response.status] ?? "Error"])
          exchange.res.writeHeader("content-type", "application/json")
          exchange.res.end(transportError(code, message, exchange.source.requestId))
        } else exchange.res.end()
      })
      finish(exchange, response.status)
      return Effect.void
    case "Uint8Array": {
      let payload: string | Uint8Array = body.text ?? body.body
      if (body.contentType.startsWith("application/json")) {
        payload = withRequestId(typeof payload === "string" ? payload : decoder.decode(payload), exchange.source.requestId)
      }
      if (isHead) {
        const length = typeof payload === "string" ? Buffer.byteLength(payload) : payload.byteLength
        exchange.res.cork(() => {
          writeHead(exchange, response)
          exchange.res.endWithoutBody(length)
        })
      } else {
        corked.exchange = exchange
        corked.response = response
        corked.payload = payload
        exchange.res.cork(writeCorked)
        corked.exchange = corked.response = corked.payload = undefined
      }
      finish(exchange, response.status)
      return Effect.void
    }
    case "Raw": {
      const raw = body.body
      const payload = typeof raw === "string" || raw instanceof Uint8Array ? raw : String(raw ?? "")
      exchange.res.cork(() => {
        writeHead(exchange, response)
        exchange.res.end(payload)
      })
      finish(exchange, response.status)
      return Effect.void
    }
    case "Stream":
      return writeStream(exchange, response, body.stream)
    case "FormData":
      exchange.res.cork(() => {
        exchange.res.writeStatus(statusLine(500)).writeHeader("x-request-id", exchange.source.requestId)
        exchange.res.end(transportError("INTERNAL_ERROR", "form-data responses are not served", exchange.source.requestId))
      })
      finish(exchange, 500)
      return Effect.void
  }
}

/** Streams (SSE) honour backpressure: a refused `write` waits for `onWritable`. */
const writeStream = (
  exchange: Exchange,
  response: HttpServerResponse.HttpServerResponse,
  stream: Stream.Stream<Uint8Array, unknown>
): Effect.Effect<void> => {
  const res = exchange.res
  // One handler per response: uWS keeps the handler that is running, so one registered later would be lost.
  res.onWritable(() => {
    const wake = exchange.writable
    exchange.writable = undefined
    wake?.()
    return true
  })
  res.cork(() => writeHead(exchange, response))
  // Writing a response is uninterruptible in HttpEffect; a stream's body is not, so a client that
  // goes away (onAborted interrupts this fiber) stops the stream and whatever produces it.
  return stream.pipe(
    Stream.runForEach((chunk) => {
      if (exchange.aborted) return Effect.interrupt
      let accepted = true
      res.cork(() => {
        accepted = res.write(chunk)
      })
      if (accepted) return Effect.void
      return Effect.callback<void>((resume) => {
        exchange.writable = () => resume(Effect.void)
        return Effect.sync(() => {
          exchange.writable = undefined
        })
      })
    }),
    Effect.interruptible,
    Effect.catchCause((cause) => (Cause.hasInterruptsOnly(cause) ? Effect.void : Effect.logWarning("response stream failed", cause))),
    Effect.ensuring(
      Effect.sync(() => {
        if (!exchange.aborted && !exchange.done) res.cork(() => res.end())
        finish(exchange, response.status)
      })
    )
  )
}

const handleResponse = (request: HttpServerRequest, response: HttpServerResponse.HttpServerResponse) =>
  Effect.suspend(() => writeResponse((request.source as Source).exchange!, response))

const exchangeOf = (fiber: Fiber.Fiber<unknown, unknown>): Exchange => (Context.getUnsafe(fiber.context, HttpServerRequest).source as Source).exchange!

const writeFrom = (response: HttpServerResponse.HttpServerResponse) => Effect.withFiber((fiber) => writeResponse(exchangeOf(fiber), response))

/**
 * A native route's program with its answer written: the response it succeeds with, or the one
 * its failure stands for (as HttpEffect derives it). The fiber still fails with that cause, for
 * the request's log line. Writing is uninterruptible; the program keeps its own interruptibility.
 * HttpEffect's pre-response handlers are not run here: no endpoint registers one.
 */
const answered = (program: NativeRoute["program"]) =>
  Effect.uninterruptible(
    Effect.matchCauseEffect(program, {
      onSuccess: writeFrom,
      onFailure: (cause) =>
        Effect.flatMap(causeResponse(cause), ([response, rest]) =>
          rest.reasons.length === 0 ? writeFrom(response) : Effect.andThen(writeFrom(response), Effect.failCause(rest))
        )
    })
  )

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

  const serveNative = (route: NativeRoute) => {
    const handled = answered(route.program)
    const run = startSoon((source: RequestSource, exchange: Exchange) => {
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
  return { server, app, connections, port, serveNative }
})

/** Provides `HttpServer` on uWS plus the `UwsApp` for native socket routes. */
export const uwsServerLayer = (options: UwsServerOptions) =>
  Layer.effectContext(
    Effect.map(makeUwsServer(options), ({ server, app, connections, port, serveNative }) =>
      Context.make(HttpServer.HttpServer, server).pipe(Context.add(UwsApp, { app, connections, port, serveNative }))
    )
  )
