/**
 * Effect's `HttpServer` service implemented on uWebSockets.js.
 *
 * One `app.any("/*")` route feeds every request to the Effect app: the body is
 * read with its cap and pace enforced while it streams (body-clock.ts), input no
 * handler can store is refused (screen.ts), then one fiber runs per request
 * (interrupted by `res.onAborted`), and the response is written inside
 * `res.cork`. Native WebSocket routes are registered on the same app by the
 * sockets module through the `UwsApp` service.
 */
import { randomUUID } from "node:crypto"
import { STATUS_CODES } from "node:http"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as Cookies from "effect/http/Cookies"
import * as HttpEffect from "effect/http/HttpEffect"
import * as HttpServer from "effect/http/HttpServer"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as NetAddress from "effect/net/NetAddress"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { BodyClock, UWS_PROGRESS_BYTES } from "./body-clock.js"
import { openFileLimit } from "./limits.js"
import { failureText, recordRequest } from "./observe.js"
import { decodeUtf8, type RequestSource, UwsRequest } from "./request.js"
import { formIssues, jsonIssues, MAX_ISSUES, urlIssues, validationBody } from "./screen.js"
import { type HttpResponse, loadUws, type TemplatedApp, type us_listen_socket } from "./uws.js"

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

/** The uWS app, for modules that register native routes (WebSockets). */
export class UwsApp extends Context.Service<UwsApp, {
  readonly app: TemplatedApp
  /** Sockets and requests currently open, shared with the WebSocket cap. */
  readonly connections: { open: number; readonly cap: number }
  /** The port bound: the configured one, or the one the system chose for port 0. */
  readonly port: number
}>()("gateway/UwsApp") {}

const decoder = new TextDecoder()
const statusLines = new Map<number, string>()
const statusLine = (status: number): string => {
  let line = statusLines.get(status)
  if (line === undefined) {
    line = `${status} ${STATUS_CODES[status] ?? "Unknown"}`
    statusLines.set(status, line)
  }
  return line
}

export const newRequestId = (): string => `req_${randomUUID().replaceAll("-", "")}`

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

interface Exchange {
  readonly res: HttpResponse
  readonly source: RequestSource
  readonly started: number
  aborted: boolean
  done: boolean
  /** Set once the request no longer counts against the connection cap. */
  release: () => void
  fiber: Fiber.Fiber<void, never> | undefined
  /** The request fiber has started and not yet exited. */
  running: boolean
  /** A 5xx written while the fiber ran: logged when the fiber exits, with its cause. */
  failed: { readonly status: number; readonly millis: number } | undefined
  /** Wakes a streaming writer waiting for `onWritable`. */
  writable: (() => void) | undefined
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
  for (const name in headers) {
    if (name === "content-length" || name === "x-request-id") continue
    res.writeHeader(name, headers[name]!)
  }
  if (!Cookies.isEmpty(response.cookies)) {
    for (const cookie of Cookies.toSetCookieHeaders(response.cookies)) res.writeHeader("set-cookie", cookie)
  }
  const extra = exchange.source.responseHeaders
  if (extra !== undefined) {
    for (const name in extra) if (headers[name] === undefined) res.writeHeader(name, extra[name]!)
  }
  res.writeHeader("x-request-id", exchange.source.requestId)
  const body = response.body
  if (body._tag !== "Empty" && body.contentType && headers["content-type"] === undefined) {
    res.writeHeader("content-type", body.contentType)
  }
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
      exchange.res.cork(() => {
        writeHead(exchange, response)
        if (isHead) exchange.res.endWithoutBody(typeof payload === "string" ? Buffer.byteLength(payload) : payload.byteLength)
        else exchange.res.end(payload)
      })
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
  Effect.suspend(() => writeResponse((request.source as RequestSource & { exchange: Exchange }).exchange, response))

export const makeUwsServer = Effect.fnUntraced(function* (options: UwsServerOptions) {
  const uws = loadUws()
  const app = uws.App()
  const limit = openFileLimit()
  // Leave room for the database pool, Redis, log files and outbound calls.
  const derivedCap = Math.max(64, limit - 512)
  const connections = { open: 0, cap: options.maxConnections > 0 ? Math.min(options.maxConnections, derivedCap) : derivedCap }
  let handler: ((res: HttpResponse, source: RequestSource, exchange: Exchange) => void) | undefined
  let draining = false
  const inFlight = new Set<Exchange>()

  app.any("/*", (res, req) => {
    const method = req.getCaseSensitiveMethod().toUpperCase()
    const query = req.getQuery()
    const url = query ? `${req.getUrl()}?${query}` : req.getUrl()
    const headers: Record<string, string> = {}
    req.forEach((key, value) => {
      headers[key] = headers[key] === undefined ? value : `${headers[key]}, ${value}`
    })
    const requestId = newRequestId()
    headers["x-request-id"] = requestId
    const source: RequestSource & { exchange?: Exchange } = {
      requestId,
      method,
      url,
      headers,
      remoteAddress: decoder.decode(res.getRemoteAddressAsText()) || undefined,
      body: new Uint8Array(0)
    }
    let released = false
    const exchange: Exchange = {
      res,
      source,
      started: performance.now(),
      aborted: false,
      done: false,
      fiber: undefined,
      running: false,
      failed: undefined,
      writable: undefined,
      release: () => {
        if (released) return
        released = true
        inFlight.delete(exchange)
        connections.open--
      }
    }
    source.exchange = exchange
    res.onAborted(() => {
      exchange.aborted = true
      clock?.stop()
      exchange.fiber?.interruptUnsafe()
      exchange.release()
    })
    let clock: BodyClock | undefined
    connections.open++
    inFlight.add(exchange)
    if (draining || handler === undefined) {
      return answerDirectly(exchange, 503, transportError("SERVICE_UNAVAILABLE", "the server is shutting down", requestId), true)
    }
    if (connections.open > connections.cap) {
      return answerDirectly(exchange, 503, transportError("SERVER_BUSY", "too many open connections; retry shortly", requestId), true)
    }
    const contentType = headers["content-type"] ?? ""
    const cap = contentType.startsWith("multipart/form-data")
      ? options.maxMultipartBodyBytes
      : (options.largeJsonBodies?.find((large) => url.startsWith(large.pathPrefix))?.maxBytes ?? options.maxJsonBodyBytes)
    const declared = headers["content-length"]
    const hasBody = (declared !== undefined && declared !== "0") || headers["transfer-encoding"] !== undefined
    if (!hasBody) {
      if (screened(exchange, undefined)) handler(res, source, exchange)
      return
    }
    if (declared !== undefined && Number(declared) > cap) {
      return answerDirectly(exchange, 413, transportError("PAYLOAD_TOO_LARGE", `request body exceeds ${cap} bytes`, requestId), true)
    }
    const chunks: Uint8Array[] = []
    let received = 0
    const bodyClock = new BodyClock(options.bodyIdleTimeoutMs, options.bodyTimeoutMs, (reason) => {
      const message =
        reason === "total"
          ? `request body was not complete within ${options.bodyTimeoutMs} ms`
          : `request body stalled: less than ${UWS_PROGRESS_BYTES} bytes arrived in ${options.bodyIdleTimeoutMs} ms`
      answerDirectly(exchange, 408, transportError("REQUEST_TIMEOUT", message, requestId), true)
    })
    clock = bodyClock
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
      if (screened(exchange, contentType)) handler!(res, source, exchange)
    })
  })

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
        handler = (_res, source, exchange) => {
          const request = new UwsRequest(source)
          exchange.running = true
          const fiber = Effect.runForkWith(Context.add(context, HttpServerRequest, request))(handled)
          exchange.fiber = fiber
          fiber.addObserver((exit) => {
            exchange.running = false
            // Rendered only for 5xx: 4xx answers fail the fiber too (a 404 is a failure), and rendering costs.
            const cause = () => (exit._tag === "Failure" ? failureText(exit.cause) : undefined)
            if (exchange.failed !== undefined) recordRequest(source, exchange.failed.status, exchange.failed.millis, cause())
            else if (!exchange.done && !exchange.aborted) {
              answerDirectly(exchange, 500, transportError("INTERNAL_ERROR", "the request failed", source.requestId), false, cause())
            }
            exchange.release()
          })
        }
        yield* Scope.addFinalizer(scope, Effect.sync(() => {
          handler = undefined
        }))
      })
  })
  return { server, app, connections, port }
})

/** Provides `HttpServer` on uWS plus the `UwsApp` for native socket routes. */
export const uwsServerLayer = (options: UwsServerOptions) =>
  Layer.effectContext(
    Effect.map(makeUwsServer(options), ({ server, app, connections, port }) =>
      Context.make(HttpServer.HttpServer, server).pipe(Context.add(UwsApp, { app, connections, port }))
    )
  )
