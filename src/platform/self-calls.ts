/**
 * Calls to this server's own API routes, for features that act on a caller's behalf
 * through the public contract (chat tools, MCP tools): the route answers exactly as it
 * would answer the caller — same scopes, roles, limits, errors and JSON — because it is
 * the route. The call goes over loopback to the port this process serves; the caller's
 * credential is passed on unchanged and never stored.
 */
import { randomBytes, timingSafeEqual } from "node:crypto"
import * as http from "node:http"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Config } from "./config.js"

/** Who a self-call is made for: their credential, and the address their own request came from. */
export interface Caller {
  /** The caller's bearer credential (API key or JWT), sent as `Authorization: Bearer`. */
  readonly credential: string
  /** Public routes count their per-address limit against this, not against loopback. */
  readonly clientIp: string
}

/**
 * Proves a request came from this process's own SelfCalls: a secret drawn at start, known to no
 * client. Only with it (and only over loopback) does a route read the caller's address from
 * `x-aira-self-call-client` instead of the socket's.
 */
const SELF_CALL_SECRET = randomBytes(32).toString("base64url")
const SECRET_BYTES = Buffer.from(SELF_CALL_SECRET)

export const SELF_CALL_HEADER = "x-aira-self-call"
export const SELF_CALL_CLIENT_HEADER = "x-aira-self-call-client"

const isLoopback = (address: string): boolean => address === "127.0.0.1" || address === "::1" || address === "::ffff:127.0.0.1"

/** The client address a request stands for: the socket's, or a self-call's caller when it proves where it comes from. */
export const callerAddress = (socketAddress: string, headers: Readonly<Record<string, string | undefined>>): string => {
  const proof = headers[SELF_CALL_HEADER]
  if (proof === undefined || !isLoopback(socketAddress)) return socketAddress
  const given = Buffer.from(proof)
  if (given.byteLength !== SECRET_BYTES.byteLength || !timingSafeEqual(given, SECRET_BYTES)) return socketAddress
  return headers[SELF_CALL_CLIENT_HEADER] ?? socketAddress
}

export interface SelfCallRequest {
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
  /** Path and query, e.g. `/api/v1/actions?per_page=5`. */
  readonly path: string
  readonly caller: Caller
  /** Sent as JSON. */
  readonly body?: unknown
}

export interface SelfCallResponse {
  readonly status: number
  /** The parsed JSON answer (undefined when the body is empty or not JSON). */
  readonly body: unknown
}

/** A call that got no answer (the server is stopping, or the time budget ran out). */
export class SelfCallFailed extends Error {
  readonly _tag = "SelfCallFailed"
}

export interface SelfCallsService {
  readonly call: (request: SelfCallRequest) => Effect.Effect<SelfCallResponse, SelfCallFailed>
}

const TIMEOUT_MS = 30_000
/** Answers larger than this are cut off as a failure: no route answers a tool with more. */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024

const loopbackOf = (host: string): string => {
  if (host === "0.0.0.0" || host === "localhost" || host === "") return "127.0.0.1"
  if (host === "::" || host === "[::]") return "::1"
  return host
}

export class SelfCalls extends Context.Service<SelfCalls, SelfCallsService>()("platform/SelfCalls") {
  static readonly layer = Layer.effect(
    SelfCalls,
    Effect.gen(function* () {
      const config = yield* Config
      const host = loopbackOf(config.host)
      const agent = new http.Agent({ keepAlive: true, maxSockets: 32 })
      yield* Effect.addFinalizer(() => Effect.sync(() => agent.destroy()))
      const call = (request: SelfCallRequest) =>
        Effect.callback<SelfCallResponse, SelfCallFailed>((resume, signal) => {
          const body = request.body === undefined ? undefined : Buffer.from(JSON.stringify(request.body))
          const headers: Record<string, string> = {
            authorization: `Bearer ${request.caller.credential}`,
            accept: "application/json",
            [SELF_CALL_HEADER]: SELF_CALL_SECRET,
            [SELF_CALL_CLIENT_HEADER]: request.caller.clientIp
          }
          if (body !== undefined) {
            headers["content-type"] = "application/json"
            headers["content-length"] = String(body.byteLength)
          }
          const outgoing = http.request(
            { host, port: config.port, method: request.method, path: request.path, headers, agent, timeout: TIMEOUT_MS, signal },
            (incoming) => {
              const chunks: Array<Buffer> = []
              let size = 0
              incoming.on("data", (chunk: Buffer) => {
                size += chunk.byteLength
                if (size > MAX_ANSWER_BYTES) {
                  outgoing.destroy()
                  resume(Effect.fail(new SelfCallFailed(`the answer of ${request.path} exceeds ${MAX_ANSWER_BYTES} bytes`)))
                  return
                }
                chunks.push(chunk)
              })
              incoming.on("error", (error) => resume(Effect.fail(new SelfCallFailed(error.message))))
              incoming.on("end", () => {
                const text = Buffer.concat(chunks).toString("utf8")
                let parsed: unknown
                try {
                  parsed = text === "" ? undefined : JSON.parse(text)
                } catch {
                  parsed = undefined
                }
                resume(Effect.succeed({ status: incoming.statusCode ?? 0, body: parsed }))
              })
            }
          )
          outgoing.on("timeout", () => outgoing.destroy(new Error(`no answer from ${request.path} within ${TIMEOUT_MS} ms`)))
          outgoing.on("error", (error) => resume(Effect.fail(new SelfCallFailed(error.message))))
          outgoing.end(body)
        })
      return { call }
    })
  )
}
