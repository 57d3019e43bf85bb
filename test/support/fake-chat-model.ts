/**
 * A local OpenAI-compatible chat-completions server that converses, for chat tests. The first path
 * segment of the endpoint picks its behaviour:
 * - `/tools`: function calling. The last user message may hold lines `call <tool> <json arguments>`;
 *   while no tool result follows that message it asks for each such call whose tool was offered (all
 *   in one step; `force <tool> ...` asks even for a tool that was not offered), then answers
 *   `Tool results:` and each tool message's content, one per line.
 * - `/loop`: asks for a call of the first offered tool every time, until `tool_choice` is `none`;
 *   then answers how many tool results it has seen.
 * - `/plain`: no function calling: answers how many characters of system prompt it got, reports no usage.
 * - `/error`: HTTP 500. `/slow/{ms}`: answers as `/plain`, `ms` later.
 * Every request is recorded (path and body).
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { onJsonRequest, sendJson } from "./json-requests.js"

export interface ChatCall {
  readonly path: string
  readonly body: any
}

export interface FakeChatModel {
  readonly url: string
  readonly calls: Array<ChatCall>
  close(): Promise<void>
}

interface Message {
  readonly role: string
  readonly content?: unknown
  readonly tool_call_id?: string
}

const completion = (model: string, message: Record<string, unknown>, finish: string, usage = true) => ({
  id: `chatcmpl-${Math.random().toString(36).slice(2)}`,
  object: "chat.completion",
  created: Math.floor(Date.now() / 1000),
  model,
  choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: finish }],
  ...(usage ? { usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } } : {})
})

const textOf = (content: unknown): string =>
  typeof content === "string" ? content : Array.isArray(content) ? content.map((part) => (typeof part?.text === "string" ? part.text : "")).join("") : ""

/** The `call <tool> <json>` and `force <tool> <json>` lines of a message. */
const directives = (text: string) =>
  text
    .split("\n")
    .map((line) => /^(call|force) (\w+)\s*(.*)$/.exec(line.trim()))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => ({ forced: match[1] === "force", name: match[2]!, args: match[3]!.trim() === "" ? "{}" : match[3]!.trim() }))

const toolCall = (index: number, name: string, args: string) => ({ id: `call_${index}_${name}`, type: "function", function: { name, arguments: args } })

export const startFakeChatModel = async (): Promise<FakeChatModel> => {
  const calls: Array<ChatCall> = []
  const server: Server = createServer(
    onJsonRequest((_request, response, { path, body }) => {
      calls.push({ path, body })
      const send = (status: number, payload: unknown) => sendJson(response, status, payload)
      const parts = path.split("/").filter((part) => part !== "")
      const model = typeof body?.model === "string" ? body.model : "fake"
      const messages: Array<Message> = Array.isArray(body?.messages) ? body.messages : []
      const offered = new Set<string>((Array.isArray(body?.tools) ? body.tools : []).map((tool: any) => tool?.function?.name))
      const lastUser = messages.map((message) => message.role).lastIndexOf("user")
      const results = messages.slice(lastUser + 1).filter((message) => message.role === "tool")
      const plain = () => {
        const system = messages.filter((message) => message.role === "system").map((message) => textOf(message.content)).join("")
        send(200, completion(model, { content: `I read ${system.length} characters of instructions and data.` }, "stop", false))
      }
      switch (parts[0]) {
        case "error":
          return send(500, { error: { message: "internal failure", type: "server_error" } })
        case "slow": {
          const timer = setTimeout(plain, Number(parts[1]))
          response.on("close", () => clearTimeout(timer))
          return
        }
        case "plain":
          return plain()
        case "loop": {
          const first = [...offered][0]
          if (body?.tool_choice === "none" || first === undefined) return send(200, completion(model, { content: `Stopped after ${results.length} tool results.` }, "stop"))
          return send(200, completion(model, { content: null, tool_calls: [toolCall(results.length, first, "{}")] }, "tool_calls"))
        }
        case "tools": {
          const wanted = directives(textOf(messages[lastUser]?.content)).filter((call) => call.forced || offered.has(call.name))
          if (results.length === 0 && wanted.length > 0) {
            return send(200, completion(model, { content: null, tool_calls: wanted.map((call, index) => toolCall(index, call.name, call.args)) }, "tool_calls"))
          }
          const lines = results.map((message) => textOf(message.content))
          return send(200, completion(model, { content: lines.length === 0 ? "No tools were needed." : `Tool results:\n${lines.join("\n")}` }, "stop"))
        }
        default:
          return send(404, { error: { message: `no such fake path ${path}` } })
      }
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
