/**
 * The LLM gateway's transport (CONTRACT-sdk-beyond §6): `/gateway/*` as one native uWS route,
 * outside the HttpApi (the providers' protocols, byte for byte). Per call: read the body under
 * its cap, check the `X-Aira-Api-Key`, authorize (service.ts), forward through the outbound
 * client, and answer — a JSON answer up to 8 MiB buffered, notarized, then sent with its
 * receipt minted; an SSE (or larger) answer streamed chunk by chunk with backpressure, its
 * receipt minted when it ends and named in a closing SSE comment.
 */
import { STATUS_CODES } from "node:http"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Principal } from "../../protocol/auth.js"
import { hasScope } from "../access/guards.js"
import { Access } from "../access/service.js"
import { BodyClock } from "../gateway/body-clock.js"
import { newRequestId } from "../gateway/exchange.js"
import { recordRequest } from "../gateway/observe.js"
import { UwsApp } from "../gateway/server.js"
import type { HttpRequest, HttpResponse } from "../gateway/uws.js"
import { Config } from "../platform/config.js"
import { Outbound, type OutboundError, outboundStream, type StreamCall } from "../platform/outbound/index.js"
import { RateLimits } from "../platform/redis/index.js"
import { UsageMeter } from "../platform/usage.js"
import { requestFacts } from "./facts.js"
import { type GatewayRoute, isRoute, type Provider, routeOf } from "./paths.js"
import { type Refusal, refusalBody, statusOf } from "./refusals.js"
import { type End, LlmGateway, type Started } from "./service.js"
import { AnswerReader } from "./usage.js"

/** Non-SSE answers up to this size are buffered and sent with their receipt minted. */
const BUFFER_LIMIT = 8 * 1024 * 1024
/** Calls in flight per key at most. */
const MAX_IN_FLIGHT_PER_KEY = 32
const MINUTE_MS = 60_000
/** `agent_id`, `agent_version` and `parent_action_uuid` on authorize are at most this long. */
const MAX_HEADER_FIELD = 200
const ROUTE_LABEL = "/gateway/*"

/** Headers that belong to one connection, never forwarded either way. */
const HOP_BY_HOP: ReadonlySet<string> = new Set(["connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"])
/**
 * Not forwarded upstream besides the hop-by-hop ones: answers come uncompressed so usage can be
 * read; the length is the body's own; `Expect: 100-continue` is answered by no one (the body is
 * already read).
 */
const NOT_UPSTREAM: ReadonlySet<string> = new Set(["host", "accept-encoding", "content-length", "expect"])
/** Not passed back besides the hop-by-hop ones: uWS writes its own length and date. */
const NOT_BACK: ReadonlySet<string> = new Set(["set-cookie", "content-length", "date"])

const statusLine = (status: number): string => `${status} ${STATUS_CODES[status] ?? "Unknown"}`

const upstreamHeadersOf = (headers: Record<string, string>): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const name in headers) {
    if (HOP_BY_HOP.has(name) || NOT_UPSTREAM.has(name) || name.startsWith("x-aira-")) continue
    out[name] = headers[name]!
  }
  return out
}

type Mode = "buffer" | "stream"

/** One call through the gateway, from the first byte of its request to its receipt. */
class Call {
  aborted = false
  /** The answer's last byte is written (or the connection closed). */
  done = false
  headSent = false
  principal: Principal | undefined = undefined
  keyId: string | undefined = undefined
  started: Started | undefined = undefined
  upstream: StreamCall | undefined = undefined
  clock: BodyClock | undefined = undefined
  body: Uint8Array = new Uint8Array(0)
  route: GatewayRoute | undefined = undefined
  readonly startedAt = performance.now()
  /** The source `recordRequest` logs. */
  readonly source: { requestId: string; method: string; url: string; headers: Record<string, string>; remoteAddress: undefined; body: Uint8Array; route: string }
  constructor(
    readonly res: HttpResponse,
    readonly requestId: string,
    readonly method: string,
    readonly url: string,
    readonly query: string,
    readonly headers: Record<string, string>,
    readonly provider: Provider
  ) {
    this.source = { requestId, method, url, headers, remoteAddress: undefined, body: this.body, route: ROUTE_LABEL }
  }
}

export const makeLlmGatewayRoutes = Effect.gen(function* () {
  const { app, connections } = yield* UwsApp
  const gateway = yield* LlmGateway
  const access = yield* Access
  const limits = yield* RateLimits
  const config = yield* Config
  const { policy } = yield* Outbound
  const usage = yield* UsageMeter
  const context = yield* Effect.context<never>()
  const run = Effect.runPromiseWith(context)
  const calls = new Set<Call>()
  const inFlightByKey = new Map<string, number>()
  const decoder = new TextDecoder()

  /** Releases what the call holds; idempotent. */
  const close = (call: Call) => {
    if (!calls.delete(call)) return
    connections.open--
    call.clock?.stop()
    if (call.keyId !== undefined) {
      const left = (inFlightByKey.get(call.keyId) ?? 1) - 1
      if (left <= 0) inFlightByKey.delete(call.keyId)
      else inFlightByKey.set(call.keyId, left)
    }
  }

  /** Answers with a refusal in the provider's format, if nothing was sent yet. */
  const refuse = (call: Call, refusal: Refusal) => {
    if (call.aborted || call.done || call.headSent) return
    call.done = true
    const status = statusOf(refusal.code)
    const body = refusalBody(call.provider, refusal, call.requestId)
    call.res.cork(() => {
      call.res.writeStatus(statusLine(status)).writeHeader("content-type", "application/json").writeHeader("x-aira-request-id", call.requestId)
      if (refusal.actionUuid) call.res.writeHeader("x-aira-action-id", refusal.actionUuid)
      if (refusal.retryAfter !== undefined) call.res.writeHeader("retry-after", String(refusal.retryAfter))
      call.res.end(body)
    })
    recordRequest(call.source, status, performance.now() - call.startedAt)
    close(call)
  }

  const writeHead = (call: Call, status: number, headers: Record<string, string>, receiptStatus: "minted" | "pending" | "failed") => {
    const res = call.res
    res.writeStatus(statusLine(status))
    for (const name in headers) {
      if (HOP_BY_HOP.has(name) || NOT_BACK.has(name)) continue
      res.writeHeader(name, headers[name]!)
    }
    res.writeHeader("x-aira-request-id", call.requestId)
    res.writeHeader("x-aira-action-id", call.started!.actionUuid)
    res.writeHeader("x-aira-receipt-id", call.started!.receiptUuid)
    res.writeHeader("x-aira-receipt-status", receiptStatus)
    call.headSent = true
  }

  /** Notarizes the call once; answers what became of its receipt (never rejects: at shutdown the sweep takes over). */
  const notarize = (call: Call, status: number | null, stream: boolean, reader: AnswerReader | undefined, end: End): Promise<"minted" | "failed"> =>
    run(gateway.finish(call.principal!, call.started!, { statusCode: status, stream, answer: reader?.finish() ?? null, end })).catch(() => "failed" as const)

  const upstreamRefusal = (call: Call, error: OutboundError): Refusal =>
    error.kind === "timeout" || error.kind === "connect_timeout"
      ? { code: "UPSTREAM_TIMEOUT", message: `The provider did not answer in time: ${error.message}`, actionUuid: call.started?.actionUuid, receiptUuid: call.started?.receiptUuid }
      : { code: "UPSTREAM_UNAVAILABLE", message: `The provider could not be reached: ${error.message}`, actionUuid: call.started?.actionUuid, receiptUuid: call.started?.receiptUuid }

  /** Forwards the authorized call and answers; notarizes when the answer ends, however it ends. */
  const forward = (call: Call) => {
    const route = call.route!
    let mode: Mode = "buffer"
    let sse = false
    let status = 0
    let upstreamHeaders: Record<string, string> = {}
    let reader: AnswerReader | undefined
    const buffered: Array<Buffer> = []
    let bufferedBytes = 0
    let finished = false

    /** Ends the call with its receipt: `end` says how the answer ended. */
    const conclude = (end: End, error?: OutboundError) => {
      if (finished) return
      finished = true
      const statusForReceipt = status === 0 ? null : status
      if (mode === "buffer" || !call.headSent) {
        // Nothing sent yet: the answer goes with its receipt minted (or a 5xx when the provider failed).
        void notarize(call, statusForReceipt, sse, reader, end).then((minted) => {
          if (call.aborted) return close(call)
          if (error !== undefined || end !== "complete") return refuse(call, upstreamRefusal(call, error ?? ({ kind: "network", message: "the answer broke off" } as OutboundError)))
          call.done = true
          const payload = bufferedBytes === 0 ? undefined : buffered.length === 1 ? buffered[0]! : Buffer.concat(buffered, bufferedBytes)
          call.res.cork(() => {
            writeHead(call, status, upstreamHeaders, minted)
            if (call.method === "HEAD") call.res.endWithoutBody()
            else call.res.end(payload)
          })
          recordRequest(call.source, status, performance.now() - call.startedAt)
          close(call)
        })
        return
      }
      // Streaming: the head went out with the receipt pending; it is minted now and named at the end.
      void notarize(call, statusForReceipt, sse, reader, end).then((minted) => {
        if (call.aborted || call.done) return close(call)
        call.done = true
        call.res.cork(() => {
          if (sse) {
            const note = JSON.stringify({ action_uuid: call.started!.actionUuid, receipt_uuid: call.started!.receiptUuid, status: minted })
            call.res.write(`: aira-receipt ${note}\n\n`)
          }
          // A stream the provider cut short is cut short here too, so the client cannot take it for whole.
          if (end === "complete" || sse) call.res.end()
          else call.res.close()
        })
        recordRequest(call.source, status, performance.now() - call.startedAt)
        close(call)
      })
    }

    const startStreaming = () => {
      mode = "stream"
      call.res.onWritable(() => {
        call.upstream?.resume()
        return true
      })
      call.res.cork(() => {
        writeHead(call, status, upstreamHeaders, "pending")
        for (const chunk of buffered) call.res.write(chunk)
      })
      buffered.length = 0
      bufferedBytes = 0
    }

    call.upstream = outboundStream(
      route.upstreamUrl,
      {
        method: call.method,
        headers: upstreamHeadersOf(call.headers),
        body: call.body.byteLength === 0 && (call.method === "GET" || call.method === "HEAD") ? undefined : call.body,
        policy,
        connectTimeoutMs: config.gatewayConnectTimeoutMs,
        headersTimeoutMs: config.gatewayHeadersTimeoutMs,
        idleTimeoutMs: config.gatewayIdleTimeoutMs,
        totalTimeoutMs: config.gatewayTotalTimeoutMs
      },
      {
        onHead: (answerStatus, headers) => {
          status = answerStatus
          upstreamHeaders = headers
          sse = (headers["content-type"] ?? "").toLowerCase().includes("text/event-stream")
          const declared = Number(headers["content-length"])
          const large = Number.isFinite(declared) && declared > BUFFER_LIMIT
          // An answer too large to buffer is digested, not kept for its usage.
          reader = new AnswerReader(sse, large ? 0 : BUFFER_LIMIT)
          if (call.aborted) return
          if (sse || large) startStreaming()
        },
        onData: (chunk) => {
          if (call.aborted) return true
          if (mode === "buffer") {
            // One copy, shared with the reader, which reads the usage from the same bytes at the end.
            const owned = Buffer.from(chunk)
            reader!.add(owned)
            buffered.push(owned)
            bufferedBytes += chunk.byteLength
            if (bufferedBytes > BUFFER_LIMIT) startStreaming()
            return true
          }
          reader!.add(chunk)
          let ok = true
          call.res.cork(() => {
            ok = call.res.write(chunk)
          })
          return ok
        },
        onEnd: () => conclude("complete"),
        onError: (error) => conclude(error.kind === "timeout" || error.kind === "connect_timeout" ? "timeout" : call.aborted ? "client_aborted" : "upstream_aborted", error)
      }
    )
  }

  /** After the body: who is calling, may they, and what the policies say; then forward. */
  const handle = async (call: Call) => {
    const token = call.headers["x-aira-api-key"] ?? ""
    // A dashboard JWT (three dot-separated parts) is not a gateway credential.
    if (token === "" || token.split(".").length === 3) {
      return refuse(call, { code: "UNAUTHORIZED", message: "X-Aira-Api-Key is missing or is not an API key" })
    }
    const cached = access.now?.cachedSession(token)
    let principal: Principal
    if (cached !== undefined) principal = cached.principal
    else {
      const session = await run(Effect.result(access.authenticateClient(token, () => decoder.decode(call.res.getRemoteAddressAsText()))))
      if (call.aborted) return close(call)
      if (session._tag === "Failure") {
        const reason = session.failure as { readonly _tag?: string; readonly state?: { retryAfterSeconds: number } }
        return reason._tag === "CredentialsThrottled"
          ? refuse(call, { code: "RATE_LIMIT_EXCEEDED", message: "Too many failed authentications", retryAfter: reason.state?.retryAfterSeconds ?? 60 })
          : refuse(call, { code: "UNAUTHORIZED", message: "X-Aira-Api-Key is invalid, expired or revoked" })
      }
      principal = session.success.principal
    }
    if (principal.kind !== "api_key") return refuse(call, { code: "UNAUTHORIZED", message: "X-Aira-Api-Key must be an API key" })
    if (!hasScope(principal, "actions:write")) return refuse(call, { code: "FORBIDDEN", message: "This key lacks the actions:write scope" })
    const keyId = principal.keyId ?? principal.userUuid
    const rateKey = `gateway:${keyId}`
    const limit = limits.consumeNow?.(rateKey, config.gatewayRateLimitPerMinute, MINUTE_MS) ?? (await run(limits.consume(rateKey, config.gatewayRateLimitPerMinute, MINUTE_MS)))
    if (!limit.allowed) return refuse(call, { code: "RATE_LIMIT_EXCEEDED", message: `More than ${config.gatewayRateLimitPerMinute} gateway calls per minute with this key`, retryAfter: limit.retryAfterSeconds })
    const inFlight = inFlightByKey.get(keyId) ?? 0
    if (inFlight >= MAX_IN_FLIGHT_PER_KEY) return refuse(call, { code: "RATE_LIMIT_EXCEEDED", message: `More than ${MAX_IN_FLIGHT_PER_KEY} gateway calls in flight with this key`, retryAfter: 1 })
    inFlightByKey.set(keyId, inFlight + 1)
    call.keyId = keyId
    call.principal = principal
    if (!(await run(gateway.enabled(principal.orgUuid)))) return refuse(call, { code: "NOT_FOUND", message: "The LLM gateway is not enabled for this organization" })
    const agentId = call.headers["x-aira-agent-id"] || null
    const agentVersion = call.headers["x-aira-agent-version"] || null
    const parentActionUuid = call.headers["x-aira-parent-action-id"] || null
    // The limits the authorize route's schema sets on these fields.
    if ([agentId, agentVersion, parentActionUuid].some((value) => value !== null && value.length > MAX_HEADER_FIELD)) {
      return refuse(call, { code: "VALIDATION_ERROR", message: `X-Aira-Agent-Id, X-Aira-Agent-Version and X-Aira-Parent-Action-Id are at most ${MAX_HEADER_FIELD} characters` })
    }
    const contentType = (call.headers["content-type"] ?? "").toLowerCase()
    const facts = requestFacts(call.body, contentType.includes("json") || (contentType === "" && call.body[0] === 0x7b))
    const started = await run(
      Effect.result(
        gateway.start(principal, {
          route: call.route!,
          method: call.method,
          facts,
          body: call.body,
          agentId,
          agentVersion,
          parentActionUuid,
          approvedActionUuid: call.headers["x-aira-action-id"] || null
        })
      )
    )
    if (started._tag === "Failure") return refuse(call, started.failure)
    call.started = started.success
    if (call.aborted) {
      // The client left between authorize and forward: the action still gets its receipt.
      void notarize(call, null, facts.stream, undefined, "client_aborted").finally(() => close(call))
      return
    }
    usage.meter(principal.orgUuid, "gateway_request", facts.model ?? call.route!.path)
    forward(call)
  }

  const safely = (call: Call) =>
    handle(call).catch((cause: unknown) => {
      recordRequest(call.source, 500, performance.now() - call.startedAt, String(cause))
      refuse(call, { code: "UPSTREAM_UNAVAILABLE", message: "The gateway failed to handle the call" })
      close(call)
    })

  const accept = (res: HttpResponse, req: HttpRequest) => {
    const method = req.getCaseSensitiveMethod().toUpperCase()
    const url = req.getUrl()
    const query = req.getQuery() ?? ""
    const headers: Record<string, string> = {}
    req.forEach((name, value) => {
      headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`
    })
    const requestId = newRequestId()
    const found = routeOf(method, url, query, { openai: config.openaiUpstreamUrl, anthropic: config.anthropicUpstreamUrl })
    const call = new Call(res, requestId, method, url, query, headers, isRoute(found) ? found.provider : found.provider)
    calls.add(call)
    connections.open++
    res.onAborted(() => {
      call.aborted = true
      call.clock?.stop()
      if (call.upstream !== undefined) call.upstream.abort()
      else if (call.started === undefined) close(call)
    })
    if (connections.open > connections.cap) return refuse(call, { code: "SERVICE_UNAVAILABLE", message: "Too many open connections; retry shortly" })
    if (!isRoute(found)) {
      return refuse(call, found._tag === "InvalidPath" ? { code: "INVALID_PATH", message: "The path may not contain '..', an encoded '/' or a '\\'" } : { code: "NOT_FOUND", message: "No such gateway route" })
    }
    call.route = found
    const declared = headers["content-length"]
    const hasBody = (declared !== undefined && declared !== "0") || headers["transfer-encoding"] !== undefined
    if (!hasBody) {
      void safely(call)
      return
    }
    const cap = (headers["content-type"] ?? "").startsWith("multipart/form-data") ? Math.max(config.gatewayMaxBodyBytes, config.maxMultipartBodyBytes) : config.gatewayMaxBodyBytes
    if (declared !== undefined && Number(declared) > cap) return refuse(call, { code: "PAYLOAD_TOO_LARGE", message: `The request body exceeds ${cap} bytes` })
    const chunks: Array<Uint8Array> = []
    let received = 0
    call.clock = new BodyClock(config.bodyIdleTimeoutMs, config.bodyTimeoutMs, () =>
      refuse(call, { code: "REQUEST_TIMEOUT", message: "The request body did not arrive in time" })
    )
    res.onData((chunk, isLast) => {
      if (call.done || call.aborted) return
      received += chunk.byteLength
      if (received > cap) {
        call.clock?.stop()
        return refuse(call, { code: "PAYLOAD_TOO_LARGE", message: `The request body exceeds ${cap} bytes` })
      }
      // uWS reuses the chunk's memory after this callback returns.
      chunks.push(new Uint8Array(chunk.slice(0)))
      if (!isLast) {
        call.clock?.add(chunk.byteLength)
        return
      }
      call.clock?.stop()
      call.body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received)
      void safely(call)
    })
  }

  app.any("/gateway/*", accept)

  yield* Effect.addFinalizer(() =>
    Effect.sync(() => {
      // Calls still running are cut; the sweep notarizes them (this process stops heart-beating).
      for (const call of calls) call.upstream?.abort()
    })
  )
})

/** Registers `/gateway/*` on the uWS app. */
export const LlmGatewayRoutes = Layer.effectDiscard(makeLlmGatewayRoutes)

