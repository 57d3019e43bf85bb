/**
 * A streamed call through the outbound client, for the LLM gateway: the same address checks
 * (the name resolved and checked here, the pooled connection dialled only to the checked
 * address, no redirects followed), but the answer is handed over chunk by chunk as it arrives,
 * and the reader can pause the upstream while its own client is slow (backpressure).
 */
import type { Dispatcher } from "undici"
import { OutboundError, outboundError } from "./errors.js"
import type { OutboundPolicy } from "./policy.js"
import { type LookupFunction, resolveTarget, systemLookup } from "./target.js"

export interface StreamRequest {
  readonly method: string
  /** Sent as given (Host is always the URL's; the length is the body's own). */
  readonly headers: Readonly<Record<string, string>>
  readonly body: Uint8Array | undefined
  readonly policy: OutboundPolicy
  readonly lookup?: LookupFunction
  readonly ca?: string | Buffer | ReadonlyArray<string | Buffer>
  /** TCP connect plus TLS handshake. */
  readonly connectTimeoutMs: number
  /** From the request sent to the answer's status and headers. */
  readonly headersTimeoutMs: number
  /** Longest pause between two body chunks (not counted while the reader has paused the stream). */
  readonly idleTimeoutMs: number
  /** The whole call. */
  readonly totalTimeoutMs: number
  /** Connections to one target at most (more calls wait for one). */
  readonly connections?: number
}

export interface StreamReader {
  /** The answer's status and headers (lower-case names, repeats joined with ", "; `set-cookie` kept as one line each joined by "\n"). */
  readonly onHead: (status: number, headers: Record<string, string>) => void
  /** One chunk of the body, valid only during the call (copy what you keep). Answer false to pause until `resume()`. */
  readonly onData: (chunk: Buffer) => boolean
  readonly onEnd: () => void
  /** The call failed: before the head (nothing was handed over) or in the middle of the body. */
  readonly onError: (error: OutboundError) => void
}

export interface StreamCall {
  /** Lets a paused stream go on. */
  readonly resume: () => void
  /** Stops the call (the reader hears nothing more). */
  readonly abort: () => void
}

const DEFAULT_CONNECTIONS = 256

const loadPool = async () => import("./pool.js")

/** Starts the call; the reader's callbacks say how it goes. Never throws. */
export const outboundStream = (url: string, request: StreamRequest, reader: StreamReader): StreamCall => {
  let controller: Dispatcher.DispatchController | undefined
  let settled = false
  let paused = false
  let totalTimer: ReturnType<typeof setTimeout> | undefined
  let release: (() => void) | undefined
  const abortController = new AbortController()

  const settle = () => {
    settled = true
    if (totalTimer !== undefined) clearTimeout(totalTimer)
    release?.()
    release = undefined
  }
  const fail = (error: OutboundError) => {
    if (settled) return
    settle()
    abortController.abort()
    controller?.abort(error)
    reader.onError(error)
  }
  totalTimer = setTimeout(() => fail(outboundError("timeout", `no complete answer within ${request.totalTimeoutMs} ms`)), request.totalTimeoutMs)

  const start = async () => {
    const { poolOf, flatten } = await loadPool()
    const target = await resolveTarget(url, request.policy, request.lookup ?? systemLookup, abortController.signal)
    if (settled) return
    const entry = poolOf(target, {
      connectTimeoutMs: request.connectTimeoutMs,
      connections: request.connections ?? DEFAULT_CONNECTIONS,
      pipelining: 1,
      ca: request.ca
    })
    entry.inFlight++
    entry.lastUsed = Date.now()
    release = () => {
      entry.inFlight--
      entry.lastUsed = Date.now()
    }
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(request.headers)) {
      const lower = name.toLowerCase()
      if (lower !== "host" && lower !== "content-length") headers[lower] = value
    }
    headers.host = target.checked.url.host
    const where = target.checked.hostname
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart: (started) => {
        controller = started
        if (settled) started.abort(outboundError("network", "request aborted"))
      },
      onResponseStart: (_, status, responseHeaders) => {
        if (settled || status < 200) return
        reader.onHead(status, flatten(responseHeaders as Record<string, string | Array<string> | undefined>))
      },
      onResponseData: (_, chunk) => {
        if (settled) return
        if (!reader.onData(chunk) && !settled) {
          paused = true
          controller?.pause()
        }
      },
      onResponseEnd: () => {
        if (settled) return
        settle()
        reader.onEnd()
      },
      onResponseError: (_, error: Error & { code?: string }) => {
        const code = error.code
        fail(
          code === "UND_ERR_CONNECT_TIMEOUT"
            ? outboundError("connect_timeout", `could not connect to ${where} within ${request.connectTimeoutMs} ms`)
            : code === "UND_ERR_HEADERS_TIMEOUT"
              ? outboundError("timeout", `no answer from ${where} within ${request.headersTimeoutMs} ms`)
              : code === "UND_ERR_BODY_TIMEOUT"
                ? outboundError("timeout", `the answer from ${where} stalled for ${request.idleTimeoutMs} ms`)
                : outboundError("network", `request to ${where} failed${code === undefined ? "" : ` (${code})`}: ${error.message}`)
        )
      }
    }
    entry.pool.dispatch(
      {
        path: `${target.checked.url.pathname}${target.checked.url.search}`,
        method: request.method,
        headers,
        body: request.body === undefined ? null : Buffer.from(request.body.buffer, request.body.byteOffset, request.body.byteLength),
        headersTimeout: request.headersTimeoutMs,
        bodyTimeout: request.idleTimeoutMs
      },
      handler
    )
  }
  start().catch((error: unknown) => fail(error instanceof OutboundError ? error : outboundError("network", error instanceof Error ? error.message : String(error))))

  const resume = () => {
    if (settled || !paused) return
    paused = false
    controller?.resume()
  }
  return {
    resume,
    abort: () => fail(outboundError("network", "request aborted"))
  }
}
