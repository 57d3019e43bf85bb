/**
 * A local OpenAI-compatible chat-completions server that reviews pull-request diffs, for the code
 * review tests (CONTRACT-sdk-beyond §7). The gateway reaches it as a custom model with
 * `endpoint_url = ${url}/<behaviour>/v1`; the first path segment picks the behaviour:
 * - `/review`: finds the unified diff in the last user message (from its first `diff --git` line)
 *   and answers `{"violations":[...]}`, one per added line holding a marker (first match wins):
 *   `AWS_SECRET` or `password =` → security critical; `console.log(user.email` or `ssn` →
 *   data_protection critical; `catch {}` → error_handling warning; `for (` on a line that also has
 *   `await` → performance warning; `TODO` → code_quality warning. A diff line holding
 *   `GLOBAL_FINDING` adds one code_quality warning with `line: null`.
 * - `/approve`, `/deny`: a verdict `{decision, confidence, key_factors, reasoning}`.
 * - `/error`: HTTP 500. `/slow/{ms}/<behaviour>`: answers as that behaviour `ms` later.
 * - `/many`: 250 code_quality warnings on the first added line. `/garbage`: content that is not JSON.
 * Every request is recorded (path and parsed body).
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { diffLines } from "./github-fake.js"
import { onJsonRequest, sendJson } from "./json-requests.js"

export interface ReviewCall {
  readonly path: string
  readonly body: any
}

export interface FakeReviewModel {
  readonly url: string
  readonly calls: Array<ReviewCall>
  close(): Promise<void>
}

export interface FakeViolation {
  file: string
  line: number | null
  finding: string
  category: string
  severity: "critical" | "warning"
  description: string
  fix: string | null
}

interface AddedLine {
  readonly file: string
  readonly line: number
  readonly text: string
}

/** The added lines of the unified diff starting at the first `diff --git` line, and the path of the first new-side line holding GLOBAL_FINDING. */
export const addedLines = (text: string): { added: Array<AddedLine>; global: string | undefined } => {
  const lines = diffLines(text)
  return {
    added: lines.filter((line) => line.added).map(({ file, line, text }) => ({ file, line, text })),
    global: lines.find((line) => line.text.includes("GLOBAL_FINDING"))?.file
  }
}

const RULES: Array<{ test: (text: string) => boolean; category: string; severity: "critical" | "warning"; finding: string; fix: string | null }> = [
  { test: (text) => text.includes("AWS_SECRET") || text.includes("password ="), category: "security", severity: "critical", finding: "Hard-coded secret", fix: "Read the secret from the environment or a secret store." },
  { test: (text) => text.includes("console.log(user.email") || text.includes("ssn"), category: "data_protection", severity: "critical", finding: "Personal data exposed", fix: "Do not log or expose personal data." },
  { test: (text) => text.includes("catch {}"), category: "error_handling", severity: "warning", finding: "Swallowed error", fix: "Handle or rethrow the error." },
  { test: (text) => text.includes("for (") && text.includes("await"), category: "performance", severity: "warning", finding: "Sequential awaits in a loop", fix: "Run the calls concurrently." },
  { test: (text) => text.includes("TODO"), category: "code_quality", severity: "warning", finding: "Unresolved TODO", fix: null }
]

/** The violations the `/review` behaviour finds in a diff. */
export const reviewDiff = (text: string): Array<FakeViolation> => {
  const { added, global } = addedLines(text)
  const violations: Array<FakeViolation> = []
  for (const line of added) {
    const rule = RULES.find((candidate) => candidate.test(line.text))
    if (rule) {
      violations.push({ file: line.file, line: line.line, finding: rule.finding, category: rule.category, severity: rule.severity, description: `${rule.finding} in ${line.file} at line ${line.line}: ${line.text.trim()}`, fix: rule.fix })
    }
  }
  if (global !== undefined) {
    violations.push({ file: global, line: null, finding: "Project-wide concern", category: "code_quality", severity: "warning", description: "The change as a whole needs attention (GLOBAL_FINDING).", fix: null })
  }
  return violations
}

const completion = (model: string, content: string) => ({
  id: `chatcmpl-${Math.random().toString(36).slice(2)}`,
  object: "chat.completion",
  created: Math.floor(Date.now() / 1000),
  model,
  choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
  usage: { prompt_tokens: 120, completion_tokens: 40, total_tokens: 160 }
})

const textOf = (content: unknown): string =>
  typeof content === "string" ? content : Array.isArray(content) ? content.map((part) => (typeof part?.text === "string" ? part.text : "")).join("") : ""

export const startFakeReviewModel = async (): Promise<FakeReviewModel> => {
  const calls: Array<ReviewCall> = []
  const server: Server = createServer(
    onJsonRequest((_request, response, { path, body }) => {
      calls.push({ path, body })
      const send = (status: number, payload: unknown) => sendJson(response, status, payload)
      const model = typeof body?.model === "string" ? body.model : "fake-review"
      const messages: Array<{ role: string; content?: unknown }> = Array.isArray(body?.messages) ? body.messages : []
      const lastUser = [...messages].reverse().find((message) => message.role === "user")
      const prompt = textOf(lastUser?.content)
      const answer = (content: unknown) => send(200, completion(model, typeof content === "string" ? content : JSON.stringify(content)))

      const behave = (parts: Array<string>) => {
        switch (parts[0]) {
          case "review":
            return answer({ violations: reviewDiff(prompt) })
          case "many": {
            const first = addedLines(prompt).added[0]
            const violation = (index: number): FakeViolation => ({
              file: first?.file ?? "unknown",
              line: first?.line ?? null,
              finding: `Style issue ${index + 1}`,
              category: "code_quality",
              severity: "warning",
              description: `Style issue number ${index + 1}.`,
              fix: null
            })
            return answer({ violations: Array.from({ length: 250 }, (_, index) => violation(index)) })
          }
          case "approve":
            return answer({ decision: "APPROVE", confidence: 0.9, key_factors: ["No blocking findings"], reasoning: "The change is safe to merge." })
          case "deny":
            return answer({ decision: "DENY", confidence: 0.9, key_factors: ["Risky change"], reasoning: "The change should not be merged." })
          case "garbage":
            return answer("I looked at it and it seems fine, more or less.")
          case "error":
            return send(500, { error: { message: "internal failure", type: "server_error" } })
          case "slow": {
            const timer = setTimeout(() => behave(parts.slice(2)), Number(parts[1]))
            response.on("close", () => clearTimeout(timer))
            return
          }
          default:
            return send(404, { error: { message: `no such fake path ${path}` } })
        }
      }
      behave(path.split("/").filter((part) => part !== ""))
    })
  )
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
