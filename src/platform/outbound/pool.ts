/**
 * Keep-alive, optionally pipelined, connections for the outbound client (undici `Pool`).
 *
 * One pool per checked target: the address the check allowed, the port, the scheme, the TLS
 * server name, the extra CA and the connect timeout. The pool's connector ignores the host
 * undici would dial and always dials the pool's own checked address, so a pooled connection
 * only ever goes where a check allowed; every request still resolves and checks its host
 * first (`resolveTarget`) and then picks the pool of the address that check chose.
 * Redirects are never followed (a bare Pool does not), and time and size bounds are the
 * caller's, applied here per request. Pools idle for a while are closed.
 */
import { createHash } from "node:crypto"
import { buildConnector, type Dispatcher, Pool } from "undici"
import { type OutboundError, outboundError } from "./errors.js"
import type { Target } from "./target.js"

export interface PooledRequest {
  readonly method: string
  readonly path: string
  readonly headers: Record<string, string>
  readonly body: Buffer | undefined
  readonly maxResponseBytes: number
  readonly connectTimeoutMs: number
  /** Connections to the target at most. */
  readonly connections: number
  /** Requests in flight on one connection (1: no pipelining). */
  readonly pipelining: number
  readonly ca: string | Buffer | ReadonlyArray<string | Buffer> | undefined
}

export interface PooledResponse {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: Buffer
}

/** Idle sockets close after 4 s, under the common 5 s server keep-alive, so a reused socket is rarely one the server is closing. */
const KEEP_ALIVE_MS = 4_000
/** A pool with nothing in flight for this long is closed (its sockets are long gone by then). */
const IDLE_POOL_MS = 30_000

export interface Entry {
  readonly pool: Pool
  inFlight: number
  lastUsed: number
}

const pools = new Map<string, Entry>()
let sweeper: ReturnType<typeof setInterval> | undefined

/** Closes the pools that had nothing in flight for `idleMs`; answers how many. */
export const closeIdlePools = (idleMs: number): number => {
  const now = Date.now()
  let closed = 0
  for (const [key, entry] of pools) {
    if (entry.inFlight > 0 || now - entry.lastUsed < idleMs) continue
    pools.delete(key)
    entry.pool.close().catch(() => {})
    closed++
  }
  if (pools.size === 0 && sweeper !== undefined) {
    clearInterval(sweeper)
    sweeper = undefined
  }
  return closed
}

const caKey = (ca: PooledRequest["ca"]): string => {
  if (ca === undefined) return ""
  const hash = createHash("sha256")
  for (const item of Array.isArray(ca) ? ca : [ca]) hash.update(item).update("\0")
  return hash.digest("base64")
}

/** What a pool is keyed by besides the target. */
export type PoolSettings = Pick<PooledRequest, "connectTimeoutMs" | "connections" | "pipelining" | "ca">

/** The target's pool (made on first use) with its in-flight count; streaming callers count themselves. */
export const poolOf = (target: Target, request: PoolSettings): Entry => {
  const { checked } = target
  const key = [checked.secure ? "https" : "http", target.connectHost, checked.port, target.servername ?? "", caKey(request.ca), request.connectTimeoutMs, request.connections, request.pipelining].join("|")
  const existing = pools.get(key)
  if (existing !== undefined) return existing
  const dial = buildConnector({
    timeout: request.connectTimeoutMs,
    ...(checked.secure && request.ca !== undefined ? { ca: request.ca as Array<string | Buffer> } : {})
  })
  const host = target.connectHost.includes(":") ? `[${target.connectHost}]` : target.connectHost
  const pool = new Pool(`${checked.secure ? "https" : "http"}://${host}:${checked.port}`, {
    connections: request.connections,
    pipelining: request.pipelining,
    keepAliveTimeout: KEEP_ALIVE_MS,
    // The caller's total timeout bounds every request; undici's own would only cut it shorter.
    headersTimeout: 0,
    bodyTimeout: 0,
    // Whatever undici asks for, the socket goes to the checked address with the URL's server name.
    connect: (options, callback) =>
      dial({ ...options, hostname: target.connectHost, host: target.connectHost, ...(target.servername === undefined ? {} : { servername: target.servername }) }, callback)
  })
  const entry: Entry = { pool, inFlight: 0, lastUsed: Date.now() }
  pools.set(key, entry)
  sweeper ??= setInterval(() => closeIdlePools(IDLE_POOL_MS), IDLE_POOL_MS / 2).unref()
  return entry
}

export const flatten = (headers: Record<string, string | Array<string> | undefined>): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value
  }
  return out
}

/** What went wrong on the wire, in the client's terms. */
const wireError = (error: Error & { code?: string }, where: string, connectTimeoutMs: number): OutboundError =>
  error.code === "UND_ERR_CONNECT_TIMEOUT"
    ? outboundError("connect_timeout", `could not connect to ${where} within ${connectTimeoutMs} ms`)
    : outboundError("network", `request to ${where} failed${error.code === undefined ? "" : ` (${error.code})`}: ${error.message}`)

/**
 * Sends one request over the target's pool and reads the whole answer (at most
 * `maxResponseBytes`). `signal` aborts it (its reason is the rejection).
 */
export const sendPooled = (target: Target, request: PooledRequest, signal: AbortSignal): Promise<PooledResponse> =>
  new Promise<PooledResponse>((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason)
      return
    }
    const entry = poolOf(target, request)
    const where = `${target.checked.hostname}${target.checked.hostname === target.connectHost ? "" : ` (${target.connectHost})`}`
    const max = request.maxResponseBytes
    let controller: Dispatcher.DispatchController | undefined
    let settled = false
    let status = 0
    let headers: Record<string, string> = {}
    const chunks: Array<Buffer> = []
    let received = 0

    const finish = () => {
      settled = true
      entry.inFlight--
      entry.lastUsed = Date.now()
      signal.removeEventListener("abort", onAbort)
    }
    /** Settles with an error and stops the request (undici closes the connection of a request stopped mid-way). */
    const fail = (error: OutboundError) => {
      if (settled) return
      finish()
      controller?.abort(error)
      reject(error)
    }
    const onAbort = () => fail(signal.reason as OutboundError)

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart: (started) => {
        controller = started
        // Stopped while it waited in the pool's queue.
        if (settled) started.abort(outboundError("network", "request aborted"))
      },
      onResponseStart: (_, statusCode, responseHeaders) => {
        if (statusCode < 200) return // 1xx: the real answer follows
        status = statusCode
        headers = flatten(responseHeaders as Record<string, string | Array<string> | undefined>)
        // A HEAD answer declares the length of a body it does not send.
        const declared = request.method === "HEAD" ? 0 : Number(headers["content-length"])
        if (Number.isFinite(declared) && declared > max) fail(outboundError("response_too_large", `response of ${declared} bytes exceeds the ${max} byte limit`))
      },
      onResponseData: (_, chunk) => {
        if (settled) return
        received += chunk.byteLength
        if (received > max) {
          fail(outboundError("response_too_large", `response exceeds the ${max} byte limit`))
          return
        }
        chunks.push(chunk)
      },
      onResponseEnd: () => {
        if (settled) return
        finish()
        resolve({ status, headers, body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, received) })
      },
      onResponseError: (_, error) => fail(wireError(error, where, request.connectTimeoutMs))
    }

    signal.addEventListener("abort", onAbort, { once: true })
    entry.inFlight++
    entry.lastUsed = Date.now()
    entry.pool.dispatch(
      {
        path: request.path,
        method: request.method,
        headers: request.headers,
        body: request.body ?? null,
        // Pipelined requests must be marked so: undici otherwise waits for each answer before sending the next.
        ...(request.pipelining > 1 ? { idempotent: true, blocking: false } : {})
      },
      handler
    )
  })

/** How many pools are open, for tests. */
export const openPools = (): number => pools.size
