/**
 * A local stand-in for the OpenAI and Anthropic HTTP APIs, for the LLM gateway's tests and
 * benchmark: answers chat completions, responses, embeddings and Anthropic messages as JSON or
 * as SSE streams in each provider's event shapes, and records what it received (method, path,
 * headers, body bytes). Special models steer it: `slow-stream` sends one event every 20 ms,
 * `long-stream` sends 2,000 events, `break` cuts the stream after two events, `big` answers
 * 9 MiB of JSON, `status-400` answers the provider's error, `hang` never answers, `count` sends a
 * stream of `count:N` events as fast as the reader takes them (for backpressure); `count-wide` is
 * `count` with 4 KB events (80 MB in all: more than the sockets between a paused reader and the
 * provider hold, so only backpressure keeps it from being written whole); `redirect` answers 307
 * to another path of the provider.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

export interface ReceivedCall {
  readonly method: string
  readonly url: string
  readonly headers: IncomingMessage["headers"]
  readonly body: Buffer
}

export interface FakeProvider {
  /** `http://127.0.0.1:<port>`: OpenAI base is `${url}/v1`, Anthropic's is `${url}`. */
  readonly url: string
  readonly received: Array<ReceivedCall>
  /** Streams whose client went away before their end. */
  readonly abandoned: Array<string>
  /** Bytes the `count` stream managed to write before its reader pushed back. */
  readonly counters: { countWritten: number; countPaused: number }
  close(): Promise<void>
}

const json = (response: ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body)
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), "x-request-id": "upstream-req-1", "set-cookie": "upstream=1" })
  response.end(text)
}

const openaiCompletion = (model: string) => ({
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1_780_000_000,
  model,
  choices: [{ index: 0, message: { role: "assistant", content: "Hello from the fake provider." }, finish_reason: "stop" }],
  usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 }
})

const anthropicMessage = (model: string) => ({
  id: "msg_1",
  type: "message",
  role: "assistant",
  model,
  content: [{ type: "text", text: "Hello from the fake provider." }],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: { input_tokens: 11, output_tokens: 6 }
})

/** The SSE events of one streamed answer, in the provider's shapes. */
const eventsOf = (provider: "openai" | "anthropic", model: string, pieces: number, includeUsage: boolean): Array<string> => {
  const events: Array<string> = []
  if (provider === "openai") {
    for (let i = 0; i < pieces; i++) {
      events.push(`data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1_780_000_000, model, choices: [{ index: 0, delta: { content: `piece ${i} ` }, finish_reason: null }] })}\n\n`)
    }
    events.push(`data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1_780_000_000, model, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\n`)
    if (includeUsage) events.push(`data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1_780_000_000, model, choices: [], usage: { prompt_tokens: 12, completion_tokens: pieces, total_tokens: 12 + pieces } })}\n\n`)
    events.push("data: [DONE]\n\n")
    return events
  }
  events.push(`event: message_start\ndata: ${JSON.stringify({ type: "message_start", message: { ...anthropicMessage(model), content: [], stop_reason: null, usage: { input_tokens: 11, output_tokens: 1 } } })}\n\n`)
  events.push(`event: content_block_start\ndata: ${JSON.stringify({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } })}\n\n`)
  for (let i = 0; i < pieces; i++) {
    events.push(`event: content_block_delta\ndata: ${JSON.stringify({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: `piece ${i} ` } })}\n\n`)
  }
  events.push(`event: content_block_stop\ndata: ${JSON.stringify({ type: "content_block_stop", index: 0 })}\n\n`)
  events.push(`event: message_delta\ndata: ${JSON.stringify({ type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: pieces } })}\n\n`)
  events.push(`event: message_stop\ndata: ${JSON.stringify({ type: "message_stop" })}\n\n`)
  return events
}

export const startFakeProvider = async (): Promise<FakeProvider> => {
  const received: Array<ReceivedCall> = []
  const abandoned: Array<string> = []
  const counters = { countWritten: 0, countPaused: 0 }
  const server: Server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const body = Buffer.concat(chunks)
      const url = request.url ?? "/"
      received.push({ method: request.method ?? "GET", url, headers: request.headers, body })
      let parsed: any = {}
      try {
        parsed = body.length > 0 ? JSON.parse(body.toString("utf8")) : {}
      } catch {
        parsed = {}
      }
      const model: string = typeof parsed.model === "string" ? parsed.model : "unknown"
      const provider = url.startsWith("/v1/messages") || url.startsWith("/v1/complete") ? "anthropic" : "openai"
      if (model === "hang") return
      if (model === "redirect") {
        response.writeHead(307, { location: "/v1/elsewhere", "content-type": "application/json", "content-length": 2 })
        return response.end("{}")
      }
      if (model === "status-400") {
        return json(response, 400, provider === "openai" ? { error: { message: "bad model", type: "invalid_request_error", param: "model", code: null } } : { type: "error", error: { type: "invalid_request_error", message: "bad model" } })
      }
      if (model === "big") {
        const filler = "x".repeat(9 * 1024 * 1024)
        return json(response, 200, { ...openaiCompletion(model), filler })
      }
      if (url.startsWith("/v1/embeddings")) {
        return json(response, 200, { object: "list", data: [{ object: "embedding", index: 0, embedding: [0.1, 0.2] }], model, usage: { prompt_tokens: 3, total_tokens: 3 } })
      }
      if (url.startsWith("/v1/models")) return json(response, 200, { object: "list", data: [{ id: "gpt-test", object: "model" }] })
      if (parsed.stream !== true) return json(response, 200, provider === "openai" ? openaiCompletion(model) : anthropicMessage(model))

      response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", "x-request-id": "upstream-req-1" })
      let finished = false
      response.on("close", () => {
        if (!finished) abandoned.push(model)
      })
      const includeUsage = parsed.stream_options?.include_usage === true
      if (model === "count" || model === "count-wide") {
        const width = model === "count-wide" ? 4_000 : 200
        // As fast as the reader takes them, until it has paused the writer 3 times or 20,000 events went out.
        let i = 0
        const pump = () => {
          while (i < 20_000) {
            const ok = response.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: `count:${i}:${"y".repeat(width)}` }, finish_reason: null }] })}\n\n`)
            i++
            counters.countWritten = i
            if (!ok) {
              counters.countPaused++
              response.once("drain", pump)
              return
            }
          }
          finished = true
          response.end("data: [DONE]\n\n")
        }
        pump()
        return
      }
      const pieces = model === "long-stream" ? 2_000 : 5
      const events = eventsOf(provider, model, pieces, includeUsage)
      if (model === "break") {
        response.write(events[0])
        response.write(events[1])
        setTimeout(() => response.destroy(), 20)
        return
      }
      if (model === "slow-stream") {
        let i = 0
        const timer = setInterval(() => {
          if (response.destroyed) return clearInterval(timer)
          response.write(events[i++])
          if (i === events.length) {
            clearInterval(timer)
            finished = true
            response.end()
          }
        }, 20)
        return
      }
      for (const event of events) response.write(event)
      finished = true
      response.end()
    })
  })
  server.keepAliveTimeout = 10_000
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    abandoned,
    counters,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
