/**
 * `/mcp`: the Model Context Protocol over Streamable HTTP (the SDK's web-standard transport), in
 * stateless mode: every POST gets its own server and transport, no session id, so any gateway
 * process behind a load balancer answers any request. The caller is authenticated (API key or
 * dashboard JWT as `Authorization: Bearer`) and rate limited per key before any MCP processing;
 * each tool is then the caller's own call to one of our routes (tools.ts). GET (a stream for
 * server-initiated messages, which a stateless server never sends) and every other method are 405.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HttpRouter from "effect/http/HttpRouter"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import type { Principal } from "../../protocol/auth.js"
import { throttledCredentialResponse } from "../access/middleware.js"
import { Access } from "../access/service.js"
import { addResponseHeaders, requestIdOf } from "../gateway/request.js"
import { Config } from "../platform/config.js"
import { lazyImport } from "../platform/lazy.js"
import { rateLimitHeaders } from "../platform/redis/index.js"
import { SelfCalls } from "../platform/self-calls.js"
import { runTool } from "./tools.js"

export const MCP_PATH = "/mcp"

/** The SDK (and zod) load with the first MCP request. */
const loadServer = lazyImport(() => import("./server.js"))

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i

/** Headers the MCP transport reads; the credential stays out of it (tools get it from the closure). */
const HIDDEN = new Set(["authorization", "cookie"])
/** Hop-by-hop or recomputed by the writer. */
const DROPPED = new Set(["connection", "content-length", "transfer-encoding", "keep-alive"])

const unauthorized = (requestId: string) => {
  const message = "Missing, invalid or revoked credentials"
  return HttpServerResponse.jsonUnsafe(
    { error: message, code: "UNAUTHORIZED", message, request_id: requestId },
    { status: 401, headers: { "www-authenticate": 'Bearer realm="mcp"' } }
  )
}

const methodNotAllowed = HttpServerResponse.jsonUnsafe(
  { jsonrpc: "2.0", error: { code: -32000, message: "Method not allowed: this stateless MCP server takes POST only" }, id: null },
  { status: 405, headers: { allow: "POST" } }
)

/** An SSE comment (ignored by clients). */
const OPENING = new TextEncoder().encode(": open\n\n")

/** The web `Response` of the transport as ours; `close` runs once its body is written, or dropped. */
const fromTransport = (response: Response, close: () => void): HttpServerResponse.HttpServerResponse => {
  const headers: Record<string, string> = {}
  for (const [name, value] of response.headers) if (!DROPPED.has(name) && name !== "content-type") headers[name] = value
  const options = { status: response.status, headers }
  const body = response.body
  if (body === null) {
    close()
    return HttpServerResponse.empty(options)
  }
  const contentType = response.headers.get("content-type") ?? "application/json"
  // SSE answers stream as the transport writes them (keep-alive comments while a tool runs). They open with a
  // comment because uWS sends a streamed response's head with its first bytes: without it a client (or proxy)
  // would see no head until the tool answered.
  const events = Stream.fromReadableStream({ evaluate: () => body, onError: (cause) => cause })
  const stream = contentType.startsWith("text/event-stream") ? Stream.concat(Stream.make(OPENING), events) : events
  return HttpServerResponse.stream(stream.pipe(Stream.ensuring(Effect.sync(close))), { ...options, contentType })
}

export const McpRoutes = HttpRouter.use((router) =>
  Effect.gen(function* () {
    const access = yield* Access
    const selfCalls = yield* SelfCalls
    const config = yield* Config

    /** One JSON-RPC POST, answered by a server and transport made for it. */
    const exchange = (request: HttpServerRequest, credential: string) =>
      Effect.gen(function* () {
        const headers = new Headers()
        for (const [name, value] of Object.entries(request.headers)) {
          if (HIDDEN.has(name)) continue
          try {
            headers.set(name, value)
          } catch {
            // A value fetch's Headers refuses (not a byte string): the transport reads none of those.
          }
        }
        const body = yield* Effect.orElseSucceed(request.arrayBuffer, () => new ArrayBuffer(0))
        const web = new Request(new URL(MCP_PATH, config.baseUrl), { method: "POST", headers, body })
        const { openExchange } = yield* loadServer
        // The cap is the JSON routes' one; closing aborts the tool calls still running (their route calls with them).
        const caller = { credential, clientIp: Option.getOrElse(request.remoteAddress, () => "unknown") }
        const mcp = openExchange((name, args, signal) => Effect.runPromise(runTool(selfCalls, caller, name, args), { signal }), config.maxJsonBodyBytes)
        return yield* Effect.promise(() => mcp.answer(web)).pipe(
          Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : Effect.sync(mcp.close))),
          Effect.map((response) => fromTransport(response, mcp.close))
        )
      })

    const admitted = (request: HttpServerRequest, principal: Principal, credential: string) =>
      Effect.flatMap(access.rateLimitPrincipal(principal), (limit) => {
        const headers = rateLimitHeaders(limit, "per-key")
        if (!limit.allowed) {
          const message = `Rate limit of ${limit.limit} requests per minute exceeded; retry in ${limit.retryAfterSeconds} s`
          return Effect.succeed(
            HttpServerResponse.jsonUnsafe({ error: message, code: "RATE_LIMIT_EXCEEDED", message, request_id: requestIdOf(request) }, { status: 429, headers })
          )
        }
        addResponseHeaders(request, headers)
        return request.method === "POST" ? exchange(request, credential) : Effect.succeed(methodNotAllowed)
      })

    const handle = Effect.gen(function* () {
      const request = yield* HttpServerRequest
      const credential = BEARER.exec(request.headers.authorization ?? "")?.[1] ?? ""
      const session = yield* Effect.result(access.authenticateClient(credential, () => Option.getOrElse(request.remoteAddress, () => "unknown")))
      if (Result.isFailure(session)) {
        const reason = session.failure.reason
        return reason._tag === "CredentialsThrottled" ? throttledCredentialResponse(reason, requestIdOf(request)) : unauthorized(requestIdOf(request))
      }
      return yield* admitted(request, session.success.principal, credential)
    })

    yield* router.add("*", MCP_PATH, handle)
  })
)
