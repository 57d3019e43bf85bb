/**
 * Writing answers on uWS: the app's `HttpServerResponse` (status, headers, body with its
 * `request_id`, in one `cork`), streams with backpressure, and the transport's own answers. Every
 * answer is counted and logged once, under the request's route template (observe.ts).
 */
import { STATUS_CODES } from "node:http"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as Cookies from "effect/http/Cookies"
import * as Headers from "effect/http/Headers"
import { causeResponse } from "effect/http/HttpServerError"
import { HttpServerRequest, type ParsedSearchParams } from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Stream from "effect/Stream"
import type { Exchange, Source } from "./exchange.js"
import { recordRequest } from "./observe.js"

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

export const answerDirectly = (exchange: Exchange, status: number, body: string, close: boolean, cause?: string) => {
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

export const handleResponse = (request: HttpServerRequest, response: HttpServerResponse.HttpServerResponse) =>
  Effect.suspend(() => writeResponse((request.source as Source).exchange!, response))

const exchangeOf = (fiber: Fiber.Fiber<unknown, unknown>): Exchange => (Context.getUnsafe(fiber.context, HttpServerRequest).source as Source).exchange!

const writeFrom = (response: HttpServerResponse.HttpServerResponse) => Effect.withFiber((fiber) => writeResponse(exchangeOf(fiber), response))

/**
 * A native route's program with its answer written: the response it succeeds with, or the one
 * its failure stands for (as HttpEffect derives it). The fiber still fails with that cause, for
 * the request's log line. Writing is uninterruptible; the program keeps its own interruptibility.
 * HttpEffect's pre-response handlers are not run here: no endpoint registers one.
 */
export const answered = (program: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, HttpServerRequest | ParsedSearchParams>) =>
  Effect.uninterruptible(
    Effect.matchCauseEffect(program, {
      onSuccess: writeFrom,
      onFailure: (cause) =>
        Effect.flatMap(causeResponse(cause), ([response, rest]) =>
          rest.reasons.length === 0 ? writeFrom(response) : Effect.andThen(writeFrom(response), Effect.failCause(rest))
        )
    })
  )

