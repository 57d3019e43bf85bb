/**
 * Shared pieces of the LLM gateway's end-to-end tests (CONTRACT-sdk-beyond §6): the provider SDK
 * clients configured as the published SDK helpers configure them, raw calls that keep the bytes,
 * a node:http request for paths `fetch` would normalize, and the hashes a receipt commits to,
 * computed from what the test itself sent and received.
 */
import { createHash } from "node:crypto"
import { request as httpRequest, type IncomingHttpHeaders } from "node:http"
import Anthropic from "@anthropic-ai/sdk"
import canonicalize from "canonicalize"
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql"
import OpenAI from "openai"
import { expect } from "vitest"
import { call, type Org } from "./client.js"
import { rowsContainingIn } from "./database.js"
import type { FakeProvider, ReceivedCall } from "./fake-provider.js"
import type { ServerEnv, TestServer } from "./server.js"

/** The provider credentials the agent sends; the gateway forwards them and must keep them nowhere. */
export const OPENAI_KEY = "sk-test-provider-key-5f1c9e27a3"
export const ANTHROPIC_KEY = "sk-ant-test-7d0b44e1c8"

/** The server's settings for a fake provider on loopback. */
export const gatewayEnv = (fake: FakeProvider, extra: ServerEnv = {}): ServerEnv => ({
  OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8",
  OUTBOUND_ALLOW_HTTP: "true",
  OPENAI_UPSTREAM_URL: `${fake.url}/v1`,
  ANTHROPIC_UPSTREAM_URL: fake.url,
  ...extra
})

/** The OpenAI client as the `aira-sdk` gateway helper builds it. */
export const openaiVia = (server: TestServer, key: string, headers: Record<string, string> = {}) =>
  new OpenAI({ baseURL: `${server.url}/gateway/openai/v1`, defaultHeaders: { "X-Aira-Api-Key": key, ...headers }, apiKey: OPENAI_KEY, maxRetries: 0 })

/** The Anthropic client as the `aira-sdk` gateway helper builds it (the SDK appends `/v1/messages`). */
export const anthropicVia = (server: TestServer, key: string, headers: Record<string, string> = {}) =>
  new Anthropic({ baseURL: `${server.url}/gateway/anthropic/v1`, defaultHeaders: { "X-Aira-Api-Key": key, ...headers }, apiKey: ANTHROPIC_KEY, maxRetries: 0 })

export const sha256Of = (bytes: Uint8Array | string): string => `sha256:${createHash("sha256").update(bytes).digest("hex")}`
export const jcsHash = (value: unknown): string => sha256Of(canonicalize(value) as string)

export interface Outcome {
  readonly status_code: number | null
  readonly stream: boolean
  readonly input_tokens: number | null
  readonly output_tokens: number | null
  readonly finish_reason: string | null
  readonly response_sha256: string | null
  readonly response_bytes: number
  readonly end: "complete" | "client_aborted" | "upstream_aborted" | "timeout"
}

/** The outcome hash of an answer the test received whole, from its bytes. */
export const outcomeHash = (fields: Omit<Outcome, "response_sha256" | "response_bytes">, bytes: Uint8Array | null): string =>
  jcsHash({ ...fields, response_sha256: bytes === null ? null : sha256Of(bytes), response_bytes: bytes === null ? 0 : bytes.byteLength })

export interface Details {
  readonly provider: "openai" | "anthropic"
  readonly method: string
  readonly path: string
  readonly model: string | null
  readonly stream: boolean
  readonly message_count: number | null
  readonly tool_names: ReadonlyArray<string>
  readonly max_tokens: number | null
}

/** The details hash of a call whose body the provider received as `body`. */
export const detailsHash = (details: Details, body: Uint8Array): string => jcsHash({ ...details, body_sha256: sha256Of(body), body_bytes: body.byteLength })

export interface RawAnswer {
  readonly status: number
  readonly headers: Headers
  readonly bytes: Buffer
  readonly text: string
  readonly json: any
}

/** A call with `fetch`, the answer's bytes kept. */
export const rawCall = async (server: TestServer, method: string, path: string, options: { headers?: Record<string, string>; body?: string | Uint8Array; signal?: AbortSignal; redirect?: "follow" | "manual" | "error" } = {}
): Promise<RawAnswer> => {
  const response = await fetch(`${server.url}${path}`, { method, headers: options.headers, body: options.body, signal: options.signal, redirect: options.redirect })
  const bytes = Buffer.from(await response.arrayBuffer())
  const text = bytes.toString("utf8")
  let json: any
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: response.status, headers: response.headers, bytes, text, json }
}

/** Headers of a gateway call with the Aira key and the provider's key. */
export const openaiHeaders = (key: string, extra: Record<string, string> = {}): Record<string, string> => ({
  "content-type": "application/json",
  "x-aira-api-key": key,
  authorization: `Bearer ${OPENAI_KEY}`,
  ...extra
})

export interface NodeAnswer {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly body: Buffer
}

/** A request over node:http: the path is sent exactly as written (no `..` or `%2F` normalization). */
export const nodeCall = (server: TestServer, method: string, path: string, headers: Record<string, string | number> = {}, body?: Buffer | string): Promise<NodeAnswer> =>
  new Promise((resolve, reject) => {
    const url = new URL(server.url)
    const request = httpRequest({ host: url.hostname, port: url.port, method, path, headers, agent: false }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }))
      response.on("error", reject)
    })
    request.on("error", reject)
    request.end(body)
  })

/** Runs SQL on the server's database. */
export const sqlOn = <A>(server: TestServer, run: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>): Promise<A> =>
  server.run(Effect.flatMap(SqlClient.SqlClient, run))

/** Rows of every table whose text contains `needle`, counted by table. */
export const rowsContaining = (server: TestServer, needle: string): Promise<Record<string, number>> =>
  sqlOn(server, (db) => rowsContainingIn(db, needle))

/** Creates an active rules policy of `org`; its id. */
export const createPolicy = async (server: TestServer, org: Org, body: Record<string, unknown>): Promise<string> => {
  const reply = await call(server.url, "POST", "/api/v1/policies", { token: org.key, body: { mode: "rules", activate: true, ...body } })
  expect(reply.status, reply.text).toBe(201)
  return reply.body.id as string
}

/** `GET /api/v1/actions/{id}` as `org`'s key. */
export const actionOf = async (server: TestServer, org: Org, actionUuid: string) => {
  const reply = await call(server.url, "GET", `/api/v1/actions/${actionUuid}`, { token: org.key })
  expect(reply.status, reply.text).toBe(200)
  return reply.body
}

/** `GET /api/v1/receipts/{id}` as `org`'s key, answered as sent. */
export const receiptOf = (server: TestServer, org: Org, receiptUuid: string) => call(server.url, "GET", `/api/v1/receipts/${receiptUuid}`, { token: org.key })

/** The calls the provider received whose body contains `marker`. */
export const receivedWith = (fake: FakeProvider, marker: string): Array<ReceivedCall> => fake.received.filter((sent) => sent.body.includes(marker))

let markers = 0
/** A text no other call sends, to find a call among the provider's and in the database. */
export const uniqueMarker = (label = "m") => `${label}-${process.pid}-${Date.now().toString(36)}-${++markers}`

/** An OpenAI chat body with `text` as its one user message. */
export const chatBody = (model: string, text: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: "user" as const, content: text }], ...extra })

/** The `aira` object every refusal carries, with what this refusal must say. */
export const airaOf = (code: string, ids: { action_uuid?: unknown; policy_uuid?: unknown; receipt_uuid?: unknown } = {}) => ({
  code,
  action_uuid: null,
  policy_uuid: null,
  receipt_uuid: null,
  request_id: expect.any(String),
  ...ids
})
export const openaiRefusal = (type: string, code: string, ids?: Parameters<typeof airaOf>[1]) => ({
  error: { message: expect.any(String), type, param: null, code, aira: airaOf(code, ids) }
})
export const anthropicRefusal = (type: string, code: string, ids?: Parameters<typeof airaOf>[1]) => ({
  type: "error",
  error: { type, message: expect.any(String), aira: airaOf(code, ids) }
})

/** The error a provider client threw. */
export const thrown = async (promise: Promise<unknown>): Promise<any> => {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error("the call did not fail")
}

/** A new API key of `owner` with `scopes`. */
export const newKey = async (server: TestServer, owner: Org, scopes: ReadonlyArray<string>): Promise<string> => {
  const reply = await call(server.url, "POST", "/api/v1/api-keys", { token: owner.token, body: { name: `gateway ${scopes.join(" ")}`, scopes } })
  expect(reply.status, reply.text).toBe(201)
  return reply.body.key as string
}
