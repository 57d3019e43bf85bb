/**
 * What the gateway records of a provider request (CONTRACT-sdk-beyond §6 "Per call"): the
 * `details` the action is authorized with (never the prompt), and the text the policies may
 * read (`context.content`, evaluated and never stored). Pure.
 */
import canonicalize from "canonicalize"
import { sha256Tagged } from "../platform/digest.js"
import type { Provider } from "./paths.js"

export interface RequestFacts {
  readonly model: string | null
  readonly stream: boolean
  readonly messageCount: number | null
  readonly toolNames: ReadonlyArray<string>
  readonly maxTokens: number | null
  /** The request's message or input text, for `regex` and `content_scan` policies. */
  readonly content: string
  readonly bodySha256: string
  readonly bodyBytes: number
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/** The text parts of a message content: a string, or an array of parts with `text` (OpenAI and Anthropic alike). */
const textOf = (content: unknown, into: Array<string>): void => {
  if (typeof content === "string") {
    into.push(content)
    return
  }
  if (Array.isArray(content)) {
    for (const part of content) {
      if (typeof part === "string") into.push(part)
      else if (isRecord(part)) {
        if (typeof part.text === "string") into.push(part.text)
        else if (part.content !== undefined) textOf(part.content, into)
      }
    }
  }
}

const toolNamesOf = (tools: unknown): ReadonlyArray<string> => {
  if (!Array.isArray(tools)) return []
  const names: Array<string> = []
  for (const tool of tools) {
    if (!isRecord(tool)) continue
    const fn = tool.function
    const name = isRecord(fn) && typeof fn.name === "string" ? fn.name : typeof tool.name === "string" ? tool.name : undefined
    if (name !== undefined) names.push(name)
  }
  return names
}

const firstNumber = (...values: ReadonlyArray<unknown>): number | null => {
  for (const value of values) if (typeof value === "number" && Number.isFinite(value)) return value
  return null
}

/** Facts of a JSON body; a body that is not a JSON object gives only its digest and size. */
export const requestFacts = (body: Uint8Array, isJson: boolean): RequestFacts => {
  const bodySha256 = sha256Tagged(body)
  const none: RequestFacts = { model: null, stream: false, messageCount: null, toolNames: [], maxTokens: null, content: "", bodySha256, bodyBytes: body.byteLength }
  if (!isJson || body.byteLength === 0) return none
  let parsed: unknown
  try {
    parsed = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8"))
  } catch {
    return none
  }
  if (!isRecord(parsed)) return none
  const texts: Array<string> = []
  if (parsed.system !== undefined) textOf(parsed.system, texts)
  let messageCount: number | null = null
  if (Array.isArray(parsed.messages)) {
    messageCount = parsed.messages.length
    for (const message of parsed.messages) if (isRecord(message)) textOf(message.content, texts)
  }
  if (parsed.instructions !== undefined) textOf(parsed.instructions, texts)
  if (parsed.input !== undefined) {
    // Responses API: a string or a list of messages; embeddings and moderations: a string or strings.
    if (Array.isArray(parsed.input)) {
      messageCount ??= parsed.input.length
      for (const item of parsed.input) isRecord(item) ? textOf(item.content ?? item.text, texts) : textOf(item, texts)
    } else {
      messageCount ??= 1
      textOf(parsed.input, texts)
    }
  }
  if (parsed.prompt !== undefined) {
    messageCount ??= 1
    textOf(parsed.prompt, texts)
  }
  return {
    model: typeof parsed.model === "string" ? parsed.model : null,
    stream: parsed.stream === true,
    messageCount,
    toolNames: toolNamesOf(parsed.tools),
    maxTokens: firstNumber(parsed.max_tokens, parsed.max_completion_tokens, parsed.max_output_tokens, parsed.max_tokens_to_sample),
    content: texts.join("\n"),
    bodySha256,
    bodyBytes: body.byteLength
  }
}

/** The action's `details`: JCS text of what the call is, never what it says. */
export const detailsOf = (provider: Provider, method: string, path: string, facts: RequestFacts): string =>
  canonicalize({
    provider,
    method,
    path,
    model: facts.model,
    stream: facts.stream,
    body_sha256: facts.bodySha256,
    body_bytes: facts.bodyBytes,
    message_count: facts.messageCount,
    tool_names: facts.toolNames,
    max_tokens: facts.maxTokens
  }) as string
