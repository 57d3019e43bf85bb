/**
 * The one HTTP client for calls to remote, possibly customer-supplied addresses:
 * webhooks, chat notifications, DID resolution, model providers.
 *
 * It resolves the name itself, refuses the whole request if any answer is not
 * allowed, dials the checked address (Host and TLS server name stay the original
 * host name), never follows redirects, and bounds time and response size.
 */
import * as http from "node:http"
import * as https from "node:https"
import type { Socket } from "node:net"
import { Effect } from "effect"
import { loadOnce } from "../lazy.js"
import { OutboundError, outboundError } from "./errors.js"
import type { OutboundPolicy } from "./policy.js"
import { type LookupFunction, resolveTarget, systemLookup, type Target } from "./target.js"

export interface OutboundRequestOptions {
  /** Default "GET". */
  readonly method?: string
  readonly headers?: Readonly<Record<string, string>>
  readonly body?: string | Uint8Array
  /** TCP connect plus TLS handshake. Default 5,000 ms. */
  readonly connectTimeoutMs?: number
  /** Everything: DNS, connect, request, whole response body. Default 15,000 ms. */
  readonly timeoutMs?: number
  /** Default 1 MiB. */
  readonly maxResponseBytes?: number
  /** What may be called: the configuration's (`Outbound`), or a test's own. */
  readonly policy: OutboundPolicy
  /** Default: the system resolver. Tests inject answers here. */
  readonly lookup?: LookupFunction
  /** Extra trusted CA certificates (PEM), e.g. a self-hosted private CA. */
  readonly ca?: string | Buffer | ReadonlyArray<string | Buffer>
  readonly signal?: AbortSignal
  /**
   * Reuse connections (default false: a fresh connection each time).
   * Safe with the address checks: every request still resolves and checks
   * its host, and a pooled connection is only reused for the same checked
   * address, port and TLS settings (the pool is keyed by them and dials
   * nothing else), so a socket never serves an address the current check
   * did not allow.
   */
  readonly keepAlive?: boolean
  /** With `keepAlive`: connections to one target at most (default 64); more requests wait for one. */
  readonly connections?: number
  /**
   * With `keepAlive`: requests sent on one connection before their answers
   * arrive (default 1, no pipelining). Only for requests that may be sent
   * twice: a connection that breaks re-sends the ones queued behind the first.
   */
  readonly pipelining?: number
}

export interface OutboundResponse {
  readonly status: number
  /** Lower-case names; repeated headers joined with ", ". */
  readonly headers: Readonly<Record<string, string>>
  readonly body: Buffer
  /** The URL that answered (always the one asked: redirects are not followed). */
  readonly url: string
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000
export const DEFAULT_TIMEOUT_MS = 15_000
export const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024
/** Pooled connections to one target, as many as the node Agent this pool replaced allowed. */
const DEFAULT_CONNECTIONS = 64

const REDIRECT_STATUSES: ReadonlySet<number> = new Set([300, 301, 302, 303, 307, 308])

/** A redirect is handed back as it is; the caller decides (and usually treats it as a failure). */
export const isRedirect = (response: Pick<OutboundResponse, "status">): boolean =>
  REDIRECT_STATUSES.has(response.status)

export const responseText = (response: Pick<OutboundResponse, "body">): string => response.body.toString("utf8")

export const outboundRequest = async (
  url: string | URL,
  options: OutboundRequestOptions
): Promise<OutboundResponse> => {
  // Loading the pool module (once per process) is not the request's time.
  const pool = options.keepAlive === true ? await loadPool() : undefined
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
  const controller = new AbortController()
  const totalTimer = setTimeout(
    () => controller.abort(outboundError("timeout", `no complete answer within ${timeoutMs} ms`)),
    timeoutMs
  )
  const onCallerAbort = () => controller.abort(outboundError("network", "request aborted"))
  options.signal?.addEventListener("abort", onCallerAbort, { once: true })
  if (options.signal?.aborted) onCallerAbort()
  try {
    const target = await resolveTarget(
      url,
      options.policy,
      options.lookup ?? systemLookup,
      controller.signal
    )
    return pool !== undefined ? await sendKept(pool.sendPooled, target, options, controller.signal) : await send(target, options, controller.signal)
  } finally {
    clearTimeout(totalTimer)
    options.signal?.removeEventListener("abort", onCallerAbort)
  }
}

const flattenHeaders = (headers: http.IncomingHttpHeaders): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue
    out[name] = Array.isArray(value) ? value.join(", ") : value
  }
  return out
}

const send = (target: Target, options: OutboundRequestOptions, signal: AbortSignal): Promise<OutboundResponse> =>
  new Promise<OutboundResponse>((resolve, reject) => {
    const { checked } = target
    const maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES
    const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS
    const body = options.body === undefined ? undefined : Buffer.from(options.body)

    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      // Host always names the URL's host (the connection goes to the checked address
      // anyway); the length is always the body's own.
      const lower = name.toLowerCase()
      if (lower !== "host" && lower !== "content-length") headers[name] = value
    }
    headers.host = checked.url.host
    if (body !== undefined) headers["content-length"] = String(body.byteLength)

    let settled = false
    let connectTimer: ReturnType<typeof setTimeout> | undefined
    const finish = () => {
      settled = true
      if (connectTimer !== undefined) clearTimeout(connectTimer)
      signal.removeEventListener("abort", onAbort)
    }
    const fail = (error: OutboundError) => {
      if (settled) return
      finish()
      request.destroy()
      reject(error)
    }
    const onAbort = () => fail(signal.reason as OutboundError)

    const requestOptions: https.RequestOptions = {
      method: (options.method ?? "GET").toUpperCase(),
      hostname: target.connectHost,
      port: checked.port,
      path: `${checked.url.pathname}${checked.url.search}`,
      headers,
      // A fresh connection each time (pooled requests go through `sendKept`).
      agent: false
    }
    if (checked.secure) {
      if (target.servername !== undefined) requestOptions.servername = target.servername
      if (options.ca !== undefined) requestOptions.ca = options.ca as Array<string | Buffer>
    }
    let request: http.ClientRequest
    try {
      request = checked.secure ? https.request(requestOptions) : http.request(requestOptions)
    } catch (error) {
      // Node refuses malformed methods or header values before any I/O.
      settled = true
      reject(outboundError("network", `request not sent: ${error instanceof Error ? error.message : String(error)}`))
      return
    }

    const where = `${checked.hostname}${checked.hostname === target.connectHost ? "" : ` (${target.connectHost})`}`
    connectTimer = setTimeout(
      () => fail(outboundError("connect_timeout", `could not connect to ${where} within ${connectTimeoutMs} ms`)),
      connectTimeoutMs
    )
    request.on("socket", (socket: Socket) => {
      // Already connected: nothing left to time.
      if (!socket.connecting) {
        if (connectTimer !== undefined) clearTimeout(connectTimer)
        connectTimer = undefined
        return
      }
      socket.once(checked.secure ? "secureConnect" : "connect", () => {
        if (connectTimer !== undefined) clearTimeout(connectTimer)
        connectTimer = undefined
      })
    })
    request.on("error", (error: NodeJS.ErrnoException) => {
      const code = error.code === undefined ? "" : ` (${error.code})`
      fail(outboundError("network", `request to ${where} failed${code}: ${error.message}`))
    })
    request.on("response", (response) => {
      // A HEAD answer declares the length of a body it does not send.
      const declared = requestOptions.method === "HEAD" ? 0 : Number(response.headers["content-length"])
      if (Number.isFinite(declared) && declared > maxBytes) {
        fail(outboundError("response_too_large", `response of ${declared} bytes exceeds the ${maxBytes} byte limit`))
        return
      }
      const chunks: Array<Buffer> = []
      let received = 0
      response.on("data", (chunk: Buffer) => {
        received += chunk.byteLength
        if (received > maxBytes) {
          fail(outboundError("response_too_large", `response exceeds the ${maxBytes} byte limit`))
          return
        }
        chunks.push(chunk)
      })
      response.on("error", (error) => fail(outboundError("network", `response from ${where} broke off: ${error.message}`)))
      response.on("end", () => {
        if (settled) return
        if (!response.complete) {
          fail(outboundError("network", `response from ${where} ended early`))
          return
        }
        finish()
        resolve({
          status: response.statusCode ?? 0,
          headers: flattenHeaders(response.headers),
          body: Buffer.concat(chunks, received),
          url: checked.url.href
        })
      })
    })

    if (signal.aborted) {
      onAbort()
      return
    }
    signal.addEventListener("abort", onAbort, { once: true })
    request.end(body)
  })

/** undici, at the first pooled request (src/platform/lazy.ts): a process that never sends a webhook or calls a model does not hold it. */
const loadPool = loadOnce(() => import("./pool.js"))

/** The same request over a pooled connection of the checked target. */
const sendKept = async (
  sendPooled: typeof import("./pool.js").sendPooled,
  target: Target,
  options: OutboundRequestOptions,
  signal: AbortSignal
): Promise<OutboundResponse> => {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    // As in `send`: Host names the URL's host; the length is the body's own (undici sets it).
    const lower = name.toLowerCase()
    if (lower !== "host" && lower !== "content-length") headers[name] = value
  }
  headers.host = target.checked.url.host
  const response = await sendPooled(
    target,
    {
      method: (options.method ?? "GET").toUpperCase(),
      path: `${target.checked.url.pathname}${target.checked.url.search}`,
      headers,
      body: options.body === undefined ? undefined : Buffer.from(options.body),
      maxResponseBytes: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
      connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      connections: Math.max(1, Math.floor(options.connections ?? DEFAULT_CONNECTIONS)),
      pipelining: Math.max(1, Math.floor(options.pipelining ?? 1)),
      ca: options.ca
    },
    signal
  )
  return { ...response, url: target.checked.url.href }
}

const asOutboundError = (error: unknown): OutboundError =>
  error instanceof OutboundError
    ? error
    : outboundError("network", error instanceof Error ? error.message : String(error))

/** The same request as an Effect; interrupting it aborts the request. */
export const outbound = (
  url: string | URL,
  options: Omit<OutboundRequestOptions, "signal">
): Effect.Effect<OutboundResponse, OutboundError> =>
  Effect.tryPromise({
    try: (signal) => outboundRequest(url, { ...options, signal }),
    catch: asOutboundError
  })
