/**
 * The LLM gateway's streams and limits (CONTRACT-sdk-beyond §6) against a local fake provider
 * (test/support/fake-provider.ts): SSE answers stream with their receipt pending and close with
 * the `: aira-receipt` comment; a broken or abandoned stream is notarized `failed`; a slow reader
 * pauses the provider (backpressure) instead of the gateway buffering the answer; 8 MiB bodies
 * both ways; the provider's errors and redirects pass back as sent; an unreachable or silent
 * provider, the body cap, the per-key rate limit and in-flight cap; and the sweep that closes
 * calls a dead process left open.
 */
import { once } from "node:events"
import { request as httpRequest, type IncomingMessage } from "node:http"
import OpenAI from "openai"
import { describe, expect, it } from "vitest"
import { type Org, registerOrg } from "./support/client.js"
import { eventually } from "./support/eventually.js"
import { type FakeProvider, startFakeProvider } from "./support/fake-provider.js"
import { useFixture } from "./support/fixture.js"
import {
  actionOf,
  chatBody,
  gatewayEnv,
  jcsHash,
  newKey,
  nodeCall,
  OPENAI_KEY,
  openaiHeaders,
  openaiRefusal,
  openaiVia,
  outcomeHash,
  rawCall,
  receiptOf,
  receivedWith,
  rowsContaining,
  sha256Of,
  sqlOn,
  uniqueMarker
} from "./support/llm-gateway.js"
import { freePort, type TestServer, useServer } from "./support/server.js"

const fake = useFixture(startFakeProvider, (provider) => provider.close())
/** A port nothing listens on: the unreachable provider. */
const closed = useFixture(async () => ({ port: await freePort() }))
const server = useServer(() => gatewayEnv(fake))
const tight = useServer(() =>
  gatewayEnv(fake, {
    OPENAI_UPSTREAM_URL: `http://127.0.0.1:${closed.port}/v1`,
    GATEWAY_HEADERS_TIMEOUT_MS: "500",
    GATEWAY_IDLE_TIMEOUT_MS: "400",
    GATEWAY_MAX_BODY_BYTES: "4096",
    GATEWAY_RATE_LIMIT_PER_MINUTE: "3"
  })
)
const sweeping = useServer(() => gatewayEnv(fake, { GATEWAY_SWEEP_MS: "1000" }))
const org = useFixture(() => registerOrg(server.url, "Gateway Streams"))

const CHAT = "/gateway/openai/v1/chat/completions"
const ANTHROPIC = "/gateway/anthropic/v1/messages"
const RECEIPT_NOTE = /: aira-receipt (\{[^\n]*\})\n\n$/

/** An SSE body split into the provider's bytes and our closing comment. */
const splitNote = (bytes: Buffer) => {
  const text = bytes.toString("utf8")
  const match = RECEIPT_NOTE.exec(text)
  expect(match, `no closing aira-receipt comment in …${text.slice(-200)}`).not.toBeNull()
  const upstream = bytes.subarray(0, bytes.byteLength - Buffer.byteLength(match![0]))
  return { upstream, note: JSON.parse(match![1]!) as { action_uuid: string; receipt_uuid: string; status: string } }
}

/** The provider's own answer to `body` at `path`, asked directly. */
const direct = async (path: string, body: string): Promise<Buffer> => {
  const response = await fetch(`${fake.url}${path}`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${OPENAI_KEY}` }, body })
  return Buffer.from(await response.arrayBuffer())
}

const settled = (on: TestServer, owner: Org, actionUuid: string, status: "notarized" | "failed") =>
  eventually(
    async () => {
      const action = await actionOf(on, owner, actionUuid)
      expect(action.status).toBe(status)
      return action
    },
    { timeoutMs: 15_000 }
  )

/** A streamed call over node:http whose answer is not read until the test says so. */
const heldCall = async (on: TestServer, key: string, body: string, path = CHAT): Promise<{ response: IncomingMessage; rest: () => Promise<Buffer> }> => {
  const url = new URL(on.url)
  const sent = httpRequest({ host: url.hostname, port: url.port, method: "POST", path, agent: false, headers: openaiHeaders(key, { "content-length": String(Buffer.byteLength(body)) }) })
  sent.end(body)
  const [response] = (await once(sent, "response")) as [IncomingMessage]
  response.pause()
  return {
    response,
    rest: () =>
      new Promise((resolve, reject) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("end", () => resolve(Buffer.concat(chunks)))
        response.on("error", reject)
        response.resume()
      })
  }
}

/** Waits until the provider's `count` stream has written nothing new for `quietMs`: it is held back. */
const untilWriterStalls = (provider: FakeProvider, quietMs = 300) => {
  let last = -1
  let since = Date.now()
  return eventually(
    () => {
      const now = provider.counters.countWritten
      if (now !== last) {
        last = now
        since = Date.now()
        return false
      }
      return Date.now() - since >= quietMs && now
    },
    { timeoutMs: 30_000, intervalMs: 50 }
  )
}

describe("LLM gateway: streamed answers", () => {
  it("an OpenAI stream with include_usage: every piece, receipt pending, the closing comment, and the usage in the outcome", async () => {
    const body = chatBody("gpt-test", uniqueMarker("stream"), { stream: true, stream_options: { include_usage: true } })
    const { data: stream, response } = await openaiVia(server, org.key).chat.completions.create({ ...body, stream: true }).withResponse()
    const pieces: Array<string> = []
    let usage: unknown
    for await (const chunk of stream) {
      for (const choice of chunk.choices) if (choice.delta.content) pieces.push(choice.delta.content)
      if (chunk.usage) usage = chunk.usage
    }
    expect(pieces).toEqual(["piece 0 ", "piece 1 ", "piece 2 ", "piece 3 ", "piece 4 "])
    expect(usage).toEqual({ prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 })
    expect(response.headers.get("x-aira-receipt-status")).toBe("pending")
    await settled(server, org, response.headers.get("x-aira-action-id")!, "notarized")

    // Raw: the provider's bytes as sent, then our comment naming the receipt.
    const text = JSON.stringify(chatBody("gpt-test", uniqueMarker("stream-raw"), { stream: true, stream_options: { include_usage: true } }))
    const answer = await rawCall(server, "POST", CHAT, { headers: openaiHeaders(org.key), body: text })
    expect(answer.status).toBe(200)
    expect(answer.headers.get("content-type")).toContain("text/event-stream")
    expect(answer.headers.get("x-aira-receipt-status")).toBe("pending")
    const actionUuid = answer.headers.get("x-aira-action-id")!
    const receiptUuid = answer.headers.get("x-aira-receipt-id")!
    const { upstream, note } = splitNote(answer.bytes)
    expect(note).toEqual({ action_uuid: actionUuid, receipt_uuid: receiptUuid, status: "minted" })
    expect(upstream.equals(await direct("/v1/chat/completions", text))).toBe(true)
    const receipt = await eventually(async () => {
      const found = await receiptOf(server, org, receiptUuid)
      expect(found.status).toBe(200)
      return found
    })
    expect(receipt.body.action_uuid).toBe(actionUuid)
    const expected = outcomeHash({ status_code: 200, stream: true, input_tokens: 12, output_tokens: 5, finish_reason: "stop", end: "complete" }, upstream)
    expect(receipt.body.signed_payload.outcome_hash).toBe(expected)
    const action = await settled(server, org, actionUuid, "notarized")
    expect(action.outcome_hash).toBe(expected)
    expect(action.receipt?.receipt_uuid).toBe(receiptUuid)
  })

  it("an Anthropic stream: the provider's events as sent, the closing comment, and its usage in the outcome", async () => {
    const text = JSON.stringify({ model: "claude-test", max_tokens: 50, stream: true, messages: [{ role: "user", content: uniqueMarker("anthropic-stream") }] })
    const answer = await rawCall(server, "POST", "/gateway/anthropic/v1/v1/messages", {
      headers: { "content-type": "application/json", "x-aira-api-key": org.key, "x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01" },
      body: text
    })
    expect(answer.status).toBe(200)
    expect(answer.headers.get("x-aira-receipt-status")).toBe("pending")
    const { upstream, note } = splitNote(answer.bytes)
    expect(note).toEqual({ action_uuid: answer.headers.get("x-aira-action-id"), receipt_uuid: answer.headers.get("x-aira-receipt-id"), status: "minted" })
    expect(upstream.equals(await direct("/v1/messages", text))).toBe(true)
    const action = await settled(server, org, note.action_uuid, "notarized")
    expect(action.action_type).toBe("llm.anthropic.messages")
    expect(action.outcome_hash).toBe(outcomeHash({ status_code: 200, stream: true, input_tokens: 11, output_tokens: 5, finish_reason: "end_turn", end: "complete" }, upstream))
  })

  it("a stream the provider breaks off ends for the client and its action fails", async () => {
    const pieces: Array<string> = []
    const { data: stream, response } = await openaiVia(server, org.key).chat.completions.create({ ...chatBody("break", uniqueMarker("break")), stream: true }).withResponse()
    // However the client's reading ends (quietly or with an error), it ends.
    await (async () => {
      for await (const chunk of stream) for (const choice of chunk.choices) if (choice.delta.content) pieces.push(choice.delta.content)
    })().catch(() => undefined)
    expect(pieces).toEqual(["piece 0 ", "piece 1 "])
    await settled(server, org, response.headers.get("x-aira-action-id")!, "failed")

    const text = JSON.stringify(chatBody("break", uniqueMarker("break-raw"), { stream: true }))
    const response2 = await fetch(`${server.url}${CHAT}`, { method: "POST", headers: openaiHeaders(org.key), body: text })
    const chunks: Array<Buffer> = []
    try {
      for await (const chunk of response2.body!) chunks.push(Buffer.from(chunk))
    } catch {
      // Cut short: what arrived is what counts.
    }
    const received = Buffer.concat(chunks)
    const action = await settled(server, org, response2.headers.get("x-aira-action-id")!, "failed")
    const match = RECEIPT_NOTE.exec(received.toString("utf8"))
    const upstream = match === null ? received : received.subarray(0, received.byteLength - Buffer.byteLength(match[0]))
    expect(upstream.toString("utf8")).not.toContain("[DONE]")
    expect(action.outcome_hash).toBe(outcomeHash({ status_code: 200, stream: true, input_tokens: null, output_tokens: null, finish_reason: null, end: "upstream_aborted" }, upstream))
  })

  it("a client that goes away mid-stream: the provider's stream is aborted and the action fails", async () => {
    const abandonedBefore = fake.abandoned.filter((model) => model === "slow-stream").length
    const controller = new AbortController()
    const response = await fetch(`${server.url}${CHAT}`, {
      method: "POST",
      headers: openaiHeaders(org.key),
      body: JSON.stringify(chatBody("slow-stream", uniqueMarker("abort"), { stream: true })),
      signal: controller.signal
    })
    expect(response.headers.get("x-aira-receipt-status")).toBe("pending")
    const reader = response.body!.getReader()
    const first = await reader.read()
    expect(Buffer.from(first.value!).toString("utf8")).toContain("piece 0")
    controller.abort()
    await reader.cancel().catch(() => undefined)
    await eventually(() => expect(fake.abandoned.filter((model) => model === "slow-stream").length).toBe(abandonedBefore + 1), { timeoutMs: 15_000 })
    const action = await settled(server, org, response.headers.get("x-aira-action-id")!, "failed")
    expect(action.receipt?.receipt_uuid).toBe(response.headers.get("x-aira-receipt-id"))
    expect((await receiptOf(server, org, response.headers.get("x-aira-receipt-id")!)).status).toBe(200)
  })

  it("a client that goes away before the provider answers: its action fails with end client_aborted", async () => {
    const marker = uniqueMarker("abort-early")
    const controller = new AbortController()
    const pending = fetch(`${server.url}${CHAT}`, { method: "POST", headers: openaiHeaders(org.key), body: JSON.stringify(chatBody("hang", marker)), signal: controller.signal }).catch(
      (error: unknown) => error
    )
    await eventually(() => receivedWith(fake, marker).length === 1, { timeoutMs: 15_000 })
    const [open] = await sqlOn(server, (db) => db<{ action_uuid: string }>`SELECT action_uuid FROM actions WHERE org_uuid = ${org.orgUuid} AND status = 'authorized' AND model_id = 'hang'`)
    controller.abort()
    await pending
    const action = await settled(server, org, open!.action_uuid, "failed")
    expect(action.outcome_hash).toBe(
      jcsHash({ status_code: null, stream: false, input_tokens: null, output_tokens: null, finish_reason: null, response_sha256: null, response_bytes: 0, end: "client_aborted" })
    )
  })

  it("a slow reader pauses the provider (backpressure), then receives every event and the receipt comment", async () => {
    // 20,000 events of 4 KB: far more than the sockets on the way hold.
    const text = JSON.stringify(chatBody("count-wide", uniqueMarker("count"), { stream: true }))
    const held = await heldCall(server, org.key, text)
    const actionUuid = held.response.headers["x-aira-action-id"] as string
    const receiptUuid = held.response.headers["x-aira-receipt-id"] as string
    expect(held.response.headers["x-aira-receipt-status"]).toBe("pending")
    const written = await untilWriterStalls(fake)
    // The gateway holds back the provider instead of reading the whole answer into memory.
    expect(written).toBeLessThan(10_000)
    expect(fake.counters.countPaused).toBeGreaterThan(0)
    // The answer is not over: no receipt yet.
    expect((await receiptOf(server, org, receiptUuid)).status).toBe(404)
    expect((await actionOf(server, org, actionUuid)).status).toBe("authorized")

    const bytes = await held.rest()
    const { upstream, note } = splitNote(bytes)
    expect(note).toEqual({ action_uuid: actionUuid, receipt_uuid: receiptUuid, status: "minted" })
    const events = upstream.toString("utf8").split("\n\n").filter((event) => event !== "")
    expect(events).toHaveLength(20_001)
    expect(events.at(-1)).toBe("data: [DONE]")
    events.slice(0, -1).forEach((event, i) => {
      expect(JSON.parse(event.slice("data: ".length)).choices[0].delta.content.startsWith(`count:${i}:`)).toBe(true)
    })
    const action = await settled(server, org, actionUuid, "notarized")
    expect(action.outcome_hash).toBe(outcomeHash({ status_code: 200, stream: true, input_tokens: null, output_tokens: null, finish_reason: null, end: "complete" }, upstream))
  })

  it("a 2,000-event stream arrives whole, in order", async () => {
    const { data: stream, response } = await openaiVia(server, org.key).chat.completions.create({ ...chatBody("long-stream", uniqueMarker("long")), stream: true }).withResponse()
    const pieces: Array<string> = []
    for await (const chunk of stream) for (const choice of chunk.choices) if (choice.delta.content) pieces.push(choice.delta.content)
    expect(pieces).toEqual(Array.from({ length: 2_000 }, (_, i) => `piece ${i} `))
    await settled(server, org, response.headers.get("x-aira-action-id")!, "notarized")

    const text = JSON.stringify(chatBody("long-stream", uniqueMarker("long-raw"), { stream: true }))
    const answer = await rawCall(server, "POST", CHAT, { headers: openaiHeaders(org.key), body: text })
    expect(splitNote(answer.bytes).upstream.equals(await direct("/v1/chat/completions", text))).toBe(true)
  })
})

describe("LLM gateway: large bodies and the provider's own answers", () => {
  it("an 8 MiB request body reaches the provider byte for byte", async () => {
    const marker = uniqueMarker("eight")
    const text = JSON.stringify(chatBody("gpt-test", `${marker} ${"lorem ipsum ".repeat((8 * 1024 * 1024) / 12)}`))
    expect(Buffer.byteLength(text)).toBeGreaterThan(8 * 1024 * 1024)
    const answer = await rawCall(server, "POST", CHAT, { headers: openaiHeaders(org.key), body: text })
    expect(answer.status, answer.text.slice(0, 300)).toBe(200)
    const [sent] = receivedWith(fake, marker)
    expect(sha256Of(sent!.body)).toBe(sha256Of(text))
    const action = await actionOf(server, org, answer.headers.get("x-aira-action-id")!)
    expect(action.status).toBe("notarized")
  })

  it("a 9 MiB answer streams with its receipt pending and arrives intact", async () => {
    const text = JSON.stringify(chatBody("big", uniqueMarker("big")))
    const answer = await rawCall(server, "POST", CHAT, { headers: openaiHeaders(org.key), body: text })
    expect(answer.status).toBe(200)
    expect(answer.headers.get("x-aira-receipt-status")).toBe("pending")
    const expected = await direct("/v1/chat/completions", text)
    expect(answer.bytes.byteLength).toBe(expected.byteLength)
    expect(sha256Of(answer.bytes)).toBe(sha256Of(expected))
    const action = await settled(server, org, answer.headers.get("x-aira-action-id")!, "notarized")
    const receipt = await eventually(async () => {
      const found = await receiptOf(server, org, answer.headers.get("x-aira-receipt-id")!)
      expect(found.status).toBe(200)
      return found
    })
    expect(receipt.body.signed_payload.outcome_hash).toBe(action.outcome_hash)
    // Usage is read from a body this large or not: either way the hash covers the bytes received.
    const fields = { status_code: 200, stream: false, end: "complete" } as const
    expect([
      outcomeHash({ ...fields, input_tokens: 12, output_tokens: 7, finish_reason: "stop" }, answer.bytes),
      outcomeHash({ ...fields, input_tokens: null, output_tokens: null, finish_reason: null }, answer.bytes)
    ]).toContain(action.outcome_hash)
  })

  it("the provider's 400 passes back byte for byte with its status; the action fails", async () => {
    const text = JSON.stringify(chatBody("status-400", uniqueMarker("400")))
    const answer = await rawCall(server, "POST", CHAT, { headers: openaiHeaders(org.key), body: text })
    expect(answer.status).toBe(400)
    const expected = await direct("/v1/chat/completions", text)
    expect(answer.bytes.equals(expected)).toBe(true)
    expect(answer.headers.get("x-aira-receipt-status")).toBe("minted")
    const action = await actionOf(server, org, answer.headers.get("x-aira-action-id")!)
    expect(action).toMatchObject({ status: "failed", outcome: "failed" })
    expect(action.outcome_hash).toBe(outcomeHash({ status_code: 400, stream: false, input_tokens: null, output_tokens: null, finish_reason: null, end: "complete" }, answer.bytes))
    const error = await openaiVia(server, org.key)
      .chat.completions.create(chatBody("status-400", uniqueMarker("400-sdk")))
      .catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(OpenAI.BadRequestError)
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toEqual({ message: "bad model", type: "invalid_request_error", param: "model", code: null })
  })

  it("a provider's redirect passes back as it is, not followed; the action fails", async () => {
    const before = fake.received.length
    const answer = await rawCall(server, "POST", CHAT, { headers: openaiHeaders(org.key), body: JSON.stringify(chatBody("redirect", uniqueMarker("redirect"))), redirect: "manual" })
    expect(answer.status).toBe(307)
    expect(answer.headers.get("location")).toBe("/v1/elsewhere")
    expect(fake.received.slice(before).map((sent) => sent.url)).toEqual(["/v1/chat/completions"])
    expect((await actionOf(server, org, answer.headers.get("x-aira-action-id")!)).status).toBe("failed")
  })
})

describe("LLM gateway: unreachable and silent providers, limits", () => {
  it("an unreachable provider: 502 api_error UPSTREAM_UNAVAILABLE, the action notarized failed", async () => {
    const owner = await registerOrg(tight.url, "Gateway Unreachable")
    const answer = await rawCall(tight, "POST", CHAT, { headers: openaiHeaders(owner.key), body: JSON.stringify(chatBody("gpt-test", uniqueMarker("closed"))) })
    expect(answer.status).toBe(502)
    expect(answer.json.error).toMatchObject({ type: "api_error", param: null, code: "UPSTREAM_UNAVAILABLE", aira: { code: "UPSTREAM_UNAVAILABLE", action_uuid: expect.any(String) } })
    expect(answer.text).not.toContain(OPENAI_KEY)
    const actionUuid = answer.json.error.aira.action_uuid
    await settled(tight, owner, actionUuid, "failed")
    const verified = await eventually(async () => {
      const found = await fetch(`${tight.url}/api/v1/verify/action/${actionUuid}`)
      expect(found.status).toBe(200)
      return (await found.json()) as { valid: boolean }
    })
    expect(verified.valid).toBe(true)
  })

  it("a provider that never answers: 504 api_error UPSTREAM_TIMEOUT after GATEWAY_HEADERS_TIMEOUT_MS, the action failed with end timeout", async () => {
    const owner = await registerOrg(tight.url, "Gateway Timeout")
    const answer = await rawCall(tight, "POST", ANTHROPIC, {
      headers: { "content-type": "application/json", "x-aira-api-key": owner.key, "x-api-key": "sk-ant-test" },
      body: JSON.stringify({ model: "hang", max_tokens: 5, messages: [{ role: "user", content: uniqueMarker("hang") }] })
    })
    expect(answer.status).toBe(504)
    expect(answer.json).toMatchObject({ type: "error", error: { type: "api_error", aira: { code: "UPSTREAM_TIMEOUT", action_uuid: expect.any(String) } } })
    const action = await settled(tight, owner, answer.json.error.aira.action_uuid, "failed")
    expect(action.outcome_hash).toBe(
      jcsHash({ status_code: null, stream: false, input_tokens: null, output_tokens: null, finish_reason: null, response_sha256: null, response_bytes: 0, end: "timeout" })
    )
  })

  it("a reader paused longer than GATEWAY_IDLE_TIMEOUT_MS does not make the stream idle: it still arrives whole", async () => {
    const owner = await registerOrg(tight.url, "Gateway Idle")
    const held = await heldCall(tight, owner.key, JSON.stringify(chatBody("count-wide", uniqueMarker("idle"), { stream: true })), ANTHROPIC)
    // Held back well past the idle limit (400 ms) while the provider waits on the paused reader.
    await untilWriterStalls(fake, 1_500)
    const { upstream, note } = splitNote(await held.rest())
    expect(note.status).toBe("minted")
    expect(upstream.toString("utf8").split("\n\n").filter((event) => event !== "")).toHaveLength(20_001)
    await settled(tight, owner, held.response.headers["x-aira-action-id"] as string, "notarized")
  })

  it("413 request_too_large for a body over GATEWAY_MAX_BODY_BYTES, declared or chunked; at the cap it passes", async () => {
    const owner = await registerOrg(tight.url, "Gateway Body Cap")
    const sized = (bytes: number) => {
      const base = JSON.stringify({ model: "claude-test", max_tokens: 5, messages: [{ role: "user", content: "" }] })
      return JSON.stringify({ model: "claude-test", max_tokens: 5, messages: [{ role: "user", content: "a".repeat(bytes - base.length) }] })
    }
    const headers = { "content-type": "application/json", "x-aira-api-key": owner.key, "x-api-key": "sk-ant-test" }
    expect(Buffer.byteLength(sized(4096))).toBe(4096)
    expect((await rawCall(tight, "POST", ANTHROPIC, { headers, body: sized(4096) })).status).toBe(200)
    const declared = await nodeCall(tight, "POST", ANTHROPIC, { ...headers, "content-length": 4097 }, sized(4097))
    expect(declared.status).toBe(413)
    expect(JSON.parse(declared.body.toString("utf8"))).toMatchObject({ type: "error", error: { type: "request_too_large", aira: { code: "PAYLOAD_TOO_LARGE" } } })
    const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const url = new URL(tight.url)
      const sent = httpRequest({ host: url.hostname, port: url.port, method: "POST", path: ANTHROPIC, agent: false, headers: { ...headers, "transfer-encoding": "chunked" } }, (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }))
      })
      sent.on("error", reject)
      const body = sized(6000)
      sent.write(body.slice(0, 3000))
      sent.end(body.slice(3000))
    })
    expect(chunked.status).toBe(413)
    expect(JSON.parse(chunked.body).error.aira.code).toBe("PAYLOAD_TOO_LARGE")
  })

  it("429 rate_limit_error with Retry-After past GATEWAY_RATE_LIMIT_PER_MINUTE calls of one key, nothing forwarded", async () => {
    const owner = await registerOrg(tight.url, "Gateway Rate")
    const headers = { "content-type": "application/json", "x-aira-api-key": owner.key, "x-api-key": "sk-ant-test" }
    const send = (marker: string) => rawCall(tight, "POST", ANTHROPIC, { headers, body: JSON.stringify({ model: "claude-test", max_tokens: 5, messages: [{ role: "user", content: marker }] }) })
    for (let i = 0; i < 3; i++) expect((await send(uniqueMarker("rate"))).status).toBe(200)
    const marker = uniqueMarker("rate-over")
    const over = await send(marker)
    expect(over.status).toBe(429)
    expect(over.json).toEqual({
      type: "error",
      error: { type: "rate_limit_error", message: expect.any(String), aira: { code: "RATE_LIMIT_EXCEEDED", action_uuid: null, policy_uuid: null, receipt_uuid: null, request_id: expect.any(String) } }
    })
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
    expect(receivedWith(fake, marker)).toEqual([])
    // Another key has its own budget.
    const other = await registerOrg(tight.url, "Gateway Rate Other")
    const fresh = await rawCall(tight, "POST", ANTHROPIC, { headers: { ...headers, "x-aira-api-key": other.key }, body: JSON.stringify({ model: "claude-test", max_tokens: 5, messages: [{ role: "user", content: "x" }] }) })
    expect(fresh.status).toBe(200)
  })

  it("429 RATE_LIMIT_EXCEEDED past 32 calls in flight with one key; a call that ends frees its place", async () => {
    const owner = await registerOrg(server.url, "Gateway In Flight")
    const controller = new AbortController()
    const markers = Array.from({ length: 32 }, () => uniqueMarker("in-flight"))
    const hanging = markers.map((marker) =>
      fetch(`${server.url}${CHAT}`, { method: "POST", headers: openaiHeaders(owner.key), body: JSON.stringify(chatBody("hang", marker)), signal: controller.signal }).catch((error: unknown) => error)
    )
    try {
      await eventually(() => markers.every((marker) => receivedWith(fake, marker).length === 1), { timeoutMs: 30_000 })
      const marker = uniqueMarker("in-flight-over")
      const over = await rawCall(server, "POST", CHAT, { headers: openaiHeaders(owner.key), body: JSON.stringify(chatBody("gpt-test", marker)) })
      expect(over.status).toBe(429)
      expect(over.json).toEqual(openaiRefusal("rate_limit_error", "RATE_LIMIT_EXCEEDED"))
      expect(Number(over.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
      expect(receivedWith(fake, marker)).toEqual([])
      // Another key of the same organization has its own 32.
      const other = await newKey(server, owner, ["actions:write"])
      expect((await rawCall(server, "POST", CHAT, { headers: openaiHeaders(other), body: JSON.stringify(chatBody("gpt-test", uniqueMarker("other-key"))) })).status).toBe(200)
    } finally {
      controller.abort()
      await Promise.all(hanging)
    }
    await eventually(async () => {
      const reply = await rawCall(server, "POST", CHAT, { headers: openaiHeaders(owner.key), body: JSON.stringify(chatBody("gpt-test", uniqueMarker("freed"))) })
      expect(reply.status).toBe(200)
    })
  })

  it("413 PAYLOAD_TOO_LARGE for a declared length over GATEWAY_MAX_BODY_BYTES (32 MiB), before reading it", async () => {
    const url = new URL(server.url)
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const sent = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          method: "POST",
          path: CHAT,
          agent: false,
          headers: { "content-type": "application/json", "content-length": 40 * 1024 * 1024, "x-aira-api-key": org.key }
        },
        (response) => {
          const chunks: Array<Buffer> = []
          response.on("data", (chunk: Buffer) => chunks.push(chunk))
          response.on("end", () => {
            resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") })
            sent.destroy()
          })
        }
      )
      sent.on("error", reject)
      // The head only: the answer must not wait for 40 MiB.
      sent.write("{")
    })
    expect(answer.status).toBe(413)
    expect(JSON.parse(answer.body)).toEqual(openaiRefusal("request_too_large", "PAYLOAD_TOO_LARGE"))
  })
})

describe("LLM gateway: the sweep of calls a dead process left open", () => {
  it("notarizes failed, under the receipt id the head promised, a stream whose process looks dead; the live stream still ends", async () => {
    const owner = await registerOrg(sweeping.url, "Gateway Sweep")
    const held = await heldCall(sweeping, owner.key, JSON.stringify(chatBody("count-wide", uniqueMarker("sweep"), { stream: true })))
    const actionUuid = held.response.headers["x-aira-action-id"] as string
    const receiptUuid = held.response.headers["x-aira-receipt-id"] as string
    expect(held.response.headers["x-aira-receipt-status"]).toBe("pending")
    // The stream is held open by its paused reader; its process now looks gone.
    await sqlOn(sweeping, (db) => db`UPDATE actions SET context = jsonb_set(context, '{gateway_instance}', '"gwi_dead"') WHERE action_uuid = ${actionUuid}`)
    const action = await settled(sweeping, owner, actionUuid, "failed")
    expect(action.receipt?.receipt_uuid).toBe(receiptUuid)
    const timedOut = jcsHash({ status_code: null, stream: true, input_tokens: null, output_tokens: null, finish_reason: null, response_sha256: null, response_bytes: 0, end: "timeout" })
    expect(action.outcome_hash).toBe(timedOut)
    const receipt = await receiptOf(sweeping, owner, receiptUuid)
    expect(receipt.status).toBe(200)
    expect(receipt.body.signed_payload.outcome_hash).toBe(timedOut)

    // The in-process call fails to notarize a second time: the stream still ends, naming the same receipt.
    const { note } = splitNote(await held.rest())
    expect(note).toMatchObject({ action_uuid: actionUuid, receipt_uuid: receiptUuid })
    expect((await actionOf(sweeping, owner, actionUuid)).outcome_hash).toBe(timedOut)
    const next = await rawCall(sweeping, "POST", CHAT, { headers: openaiHeaders(owner.key), body: JSON.stringify(chatBody("gpt-test", uniqueMarker("after-sweep"))) })
    expect(next.status).toBe(200)
    expect(next.headers.get("x-aira-receipt-status")).toBe("minted")
  })

  it("notarizes failed a call still waiting for the provider once its process looks dead; the client leaving later breaks nothing", async () => {
    const owner = await registerOrg(sweeping.url, "Gateway Sweep Hang")
    const marker = uniqueMarker("sweep-hang")
    const controller = new AbortController()
    const pending = fetch(`${sweeping.url}${CHAT}`, { method: "POST", headers: openaiHeaders(owner.key), body: JSON.stringify(chatBody("hang", marker)), signal: controller.signal }).catch(
      (error: unknown) => error
    )
    await eventually(() => receivedWith(fake, marker).length === 1, { timeoutMs: 15_000 })
    const [open] = await sqlOn(sweeping, (db) => db<{ action_uuid: string; status: string }>`SELECT action_uuid, status FROM actions WHERE org_uuid = ${owner.orgUuid}`)
    expect(open!.status).toBe("authorized")
    await sqlOn(sweeping, (db) => db`UPDATE actions SET context = jsonb_set(context, '{gateway_instance}', '"gwi_dead"') WHERE action_uuid = ${open!.action_uuid}`)
    const action = await settled(sweeping, owner, open!.action_uuid, "failed")
    expect(action.outcome_hash).toBe(
      jcsHash({ status_code: null, stream: false, input_tokens: null, output_tokens: null, finish_reason: null, response_sha256: null, response_bytes: 0, end: "timeout" })
    )
    expect((await receiptOf(sweeping, owner, action.receipt.receipt_uuid)).status).toBe(200)
    controller.abort()
    await pending
    const next = await rawCall(sweeping, "POST", CHAT, { headers: openaiHeaders(owner.key), body: JSON.stringify(chatBody("gpt-test", uniqueMarker("after-hang"))) })
    expect(next.status).toBe(200)
    const receipts = await sqlOn(sweeping, (db) => db<{ n: number }>`SELECT count(*)::int AS n FROM receipts WHERE action_uuid = ${open!.action_uuid}`)
    expect(receipts[0]!.n).toBe(1)
  })
})

describe("LLM gateway: what is kept", () => {
  it("the provider keys are in no table of any server", async () => {
    for (const on of [server, tight, sweeping]) {
      expect(await rowsContaining(on, OPENAI_KEY)).toEqual({})
      expect(await rowsContaining(on, "sk-ant-test")).toEqual({})
    }
  })
})
