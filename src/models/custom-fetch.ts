/**
 * What a custom model's `request_schema` / `response_schema` change about a chat-completions
 * call (docs/decisions.md "Custom models"): `guided_json` adds the verdict schema for engines that
 * decode against it (vLLM), `extra_body` adds fields, and a `content_path` other than the default
 * reads the answer text from elsewhere in the response, which is then handed to the AI SDK as an
 * ordinary chat completion.
 */
import type { FetchLike } from "../platform/outbound/index.js"

export const DEFAULT_CONTENT_PATH = "choices.0.message.content"

interface Settings {
  readonly request_schema: Readonly<Record<string, unknown>>
  readonly response_schema: Readonly<Record<string, unknown>>
}

/** The value at a dot path (`choices.0.message.content`); undefined when any step is missing. */
export const valueAtPath = (value: unknown, path: string): unknown => {
  let current = value
  for (const step of path.split(".")) {
    if (current === null || typeof current !== "object") return undefined
    current = Array.isArray(current) ? current[Number(step)] : (current as Record<string, unknown>)[step]
  }
  return current
}

const asObject = (value: unknown) => (typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined)

export const customFetch =
  (fetch: FetchLike, settings: Settings, verdictSchema: unknown): FetchLike =>
  async (input, init) => {
    const request = settings.request_schema
    const extra = asObject(request.extra_body)
    let body = init?.body
    if (typeof body === "string" && (request.guided_json === true || extra !== undefined)) {
      const parsed = JSON.parse(body) as Record<string, unknown>
      body = JSON.stringify({ ...parsed, ...(extra ?? {}), ...(request.guided_json === true ? { guided_json: verdictSchema } : {}) })
    }
    const response = await fetch(input, { ...init, body })
    const path = typeof settings.response_schema.content_path === "string" ? settings.response_schema.content_path : DEFAULT_CONTENT_PATH
    if (path === DEFAULT_CONTENT_PATH || !response.ok) return response
    let content: unknown
    try {
      content = valueAtPath(await response.json(), path)
    } catch {
      content = undefined
    }
    const text = typeof content === "string" ? content : content === undefined ? "" : JSON.stringify(content)
    const completion = {
      id: "custom",
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }]
    }
    return new Response(JSON.stringify(completion), { status: 200, headers: { "content-type": "application/json" } })
  }
