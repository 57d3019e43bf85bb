/**
 * A local OpenAI-compatible chat-completions server with a fixed answer per path, for model
 * tests: `/approve`, `/deny`, `/review` answer that verdict; `/error` answers HTTP 500;
 * `/garbage` answers text that is not the verdict; `/slow/{ms}/{verdict}` waits first;
 * `/nested/{verdict}` puts the text at `output.text` instead of `choices.0.message.content`;
 * `/sanitize` answers sanitize findings in `key_factors`;
 * `/echo-auth` refuses with 401 quoting the Authorization header it got.
 * Every request is recorded (path, headers, body), and so is every client that went away
 * before its answer (`aborted`).
 */
import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { onJsonRequest } from "./json-requests.js"

export interface RecordedCall {
  readonly path: string
  readonly headers: IncomingMessage["headers"]
  readonly body: any
}

export interface FakeLlm {
  readonly url: string
  readonly calls: Array<RecordedCall>
  readonly aborted: Array<string>
  /** Requests under way right now. */
  inFlight: number
  close(): Promise<void>
}

const VERDICTS: Record<string, { decision: string; confidence: number; key_factors: Array<string>; reasoning: string }> = {
  approve: { decision: "APPROVE", confidence: 0.9, key_factors: ["low risk", "reversible"], reasoning: "The action is routine and reversible." },
  deny: { decision: "DENY", confidence: 0.85, key_factors: ["irreversible", "external transfer"], reasoning: "The action moves money outside the organization." },
  review: { decision: "REVIEW", confidence: 0.6, key_factors: ["unclear scope"], reasoning: "A human should look at the scope first." },
  // Lower-case decision: accepted and normalized.
  lower: { decision: "approve", confidence: 0.7, key_factors: ["fine"], reasoning: "Looks fine." },
  // Sanitize's AI review: findings as "<entity_type> | <exact text>" (see src/sanitize/ai-pass.ts).
  sanitize: {
    decision: "DENY",
    confidence: 0.8,
    key_factors: ["account_number | ACCT-7731-XQ", "ner_person | Zorblax Quentavius", "ner_person | Not In The Text"],
    reasoning: "An account number and a name remain."
  }
}

const completion = (model: string, content: string) => ({
  id: "chatcmpl-fake",
  object: "chat.completion",
  created: Math.floor(Date.now() / 1000),
  model: `${model}-2026-01`,
  choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
  usage: { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 }
})

export const startFakeLlm = async (): Promise<FakeLlm> => {
  const calls: Array<RecordedCall> = []
  const aborted: Array<string> = []
  const state = { inFlight: 0 }
  const server: Server = createServer(
    onJsonRequest((request, response, { path, body }) => {
      calls.push({ path, headers: request.headers, body })
      state.inFlight++
      let answered = false
      response.on("close", () => {
        state.inFlight--
        if (!answered) aborted.push(path)
      })
      const send = (status: number, payload: unknown) => {
        if (response.destroyed) return
        answered = true
        response.writeHead(status, { "content-type": "application/json" })
        response.end(JSON.stringify(payload))
      }
      const parts = path.split("/").filter((part) => part !== "" && part !== "v1" && part !== "chat" && part !== "completions")
      const model = typeof body?.model === "string" ? body.model : "fake"
      const answer = (kind: string) => {
        if (kind === "error") return send(500, { error: { message: "internal failure", type: "server_error" } })
        if (kind === "garbage") return send(200, completion(model, "I think it is probably fine, no JSON here."))
        const verdict = VERDICTS[kind]
        if (verdict === undefined) return send(404, { error: { message: `no such fake path ${path}` } })
        send(200, completion(model, JSON.stringify(verdict)))
      }
      if (parts[0] === "slow") {
        const timer = setTimeout(() => answer(parts[2] ?? "approve"), Number(parts[1]))
        response.on("close", () => clearTimeout(timer))
        return
      }
      if (parts[0] === "echo-auth") {
        // Like some vendors: the refusal quotes the credential it was given.
        return send(401, { error: { message: `Incorrect API key provided: ${request.headers.authorization ?? "none"}`, type: "invalid_request_error" } })
      }
      if (parts[0] === "nested") {
        const verdict = VERDICTS[parts[1] ?? "approve"]
        return send(200, { output: { text: JSON.stringify(verdict) } })
      }
      answer(parts[0] ?? "approve")
    })
  )
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    aborted,
    get inFlight() {
      return state.inFlight
    },
    set inFlight(_value: number) {},
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
