/**
 * Chat (CONTRACT-sdk-beyond §5): a read-only assistant over the caller's organization. The model
 * answers with the organization's own credentials or custom model; its tools are the caller's own
 * read routes, each offered only when the caller could call that route. Nothing of the
 * conversation is stored or logged.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { Authenticated } from "./auth.js"
import { accessRefusal, Forbidden, InvalidInput, refusal } from "./errors.js"

export const CHAT_MAX_CHARS = 8_000
export const CHAT_MAX_HISTORY = 20
/** Chat answers per minute per organization, besides the key's own limit. */
export const CHAT_PER_MINUTE = 20
/** Model calls one answer may take (tool rounds included). */
export const CHAT_MAX_STEPS = 8
export const CHAT_MAX_OUTPUT_TOKENS = 2_048
/** A tool result larger than this as UTF-8 JSON is cut and marked `truncated: true`. */
export const CHAT_TOOL_RESULT_MAX_BYTES = 16 * 1024

export const ChatToolNames = [
  "search_actions",
  "get_action",
  "verify_receipt",
  "list_policies",
  "analytics_summary",
  "list_agents",
  "drift_status",
  "pending_approvals"
] as const
export type ChatToolName = (typeof ChatToolNames)[number]

const Content = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(CHAT_MAX_CHARS)).annotate({ description: `1-${CHAT_MAX_CHARS} characters` })

export const ChatTurn = Schema.Struct({
  role: Schema.Literals(["user", "assistant"]).annotate({ description: "`system` and `tool` turns are refused (422)" }),
  content: Content
})
export type ChatTurn = typeof ChatTurn.Type

export const ChatRequest = Schema.Struct({
  message: Content,
  history: Schema.optionalKey(Schema.NullOr(Schema.Array(ChatTurn).check(Schema.isMaxLength(CHAT_MAX_HISTORY)))).annotate({
    description: `Earlier turns, oldest first, at most ${CHAT_MAX_HISTORY}`
  }),
  model_id: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200)))).annotate({
    description: "A catalogue model id (`custom:<model_id>` for a custom model); default: the organization's chat default, else the first available allowed model"
  })
})
export type ChatRequest = typeof ChatRequest.Type

export const ChatUsage = Schema.Struct({ input_tokens: Schema.Int, output_tokens: Schema.Int })

export const ChatAnswer = Schema.Struct({
  content: Schema.String,
  tools_used: Schema.Array(Schema.Literals(ChatToolNames)).annotate({ description: "Tool names in first-use order" }),
  model_id: Schema.String,
  usage: Schema.NullOr(ChatUsage).annotate({ description: "null when the model reported none" })
})
export type ChatAnswer = typeof ChatAnswer.Type

/** A known model the organization does not allow for chat, or cannot call (no credentials for its provider). */
export class ModelNotAllowed extends Schema.Error<ModelNotAllowed>("ModelNotAllowed")(refusal("MODEL_NOT_ALLOWED"), {
  httpApiStatus: 400,
  description: "The model is not in the organization's chat allowed list (or, without a list, not available to it)"
}) {
  readonly _tag = "ModelNotAllowed"
  static of(modelId: string, why: string) {
    return new ModelNotAllowed({ message: why, details: { model_id: modelId } })
  }
}

/** No usable model, the provider failed, or the time budget ran out. */
export class ChatModelUnavailable extends Schema.Error<ChatModelUnavailable>("ChatModelUnavailable")(refusal("MODEL_UNAVAILABLE"), {
  httpApiStatus: 503,
  description: "No usable model, a provider failure, or the time budget spent (`details.model_id`, null when no model could be chosen)"
}) {
  readonly _tag = "ChatModelUnavailable"
  static of(modelId: string | null, why: string) {
    return new ChatModelUnavailable({ message: why, details: { model_id: modelId } })
  }
}

export class ChatRateLimited extends Schema.Error<ChatRateLimited>("ChatRateLimited")(
  accessRefusal("RATE_LIMIT_EXCEEDED", "Chat is limited per minute per organization"),
  { httpApiStatus: 429, description: `More than ${CHAT_PER_MINUTE} chat messages this minute for the organization` }
) {
  readonly _tag = "ChatRateLimited"
  static of(retryAfterSeconds: number) {
    const message = `Chat is limited to ${CHAT_PER_MINUTE} messages per minute per organization; retry in ${retryAfterSeconds} s`
    return new ChatRateLimited({ message, error: message })
  }
}

const DESCRIPTION = [
  "Scope `chat:write`, any role. Read-only tools, each run as the caller (offered only when the caller could call its route):",
  "search_actions (actions:read), get_action (actions:read; hashes and receipt, never stored details), verify_receipt (receipts:read),",
  "list_policies (policies:read), analytics_summary (analytics:read, owner or admin), list_agents (agents:read), drift_status (drift:read),",
  "pending_approvals (notifications:read). Each result at most 16 KiB (cut with `truncated: true`).",
  `Models with function calling use them, at most ${CHAT_MAX_STEPS} model calls; others get the listed reads in their prompt as data.`,
  `Output at most ${CHAT_MAX_OUTPUT_TOKENS} tokens within CHAT_TIMEOUT_MS; ${CHAT_PER_MINUTE} messages per minute per organization. Nothing is stored.`
].join(" ")

export class ChatGroup extends HttpApiGroup.make("chat")
  .add(
    HttpApiEndpoint.post("send", "/api/v1/chat", {
      error: [Forbidden, InvalidInput, ModelNotAllowed, ChatRateLimited, ChatModelUnavailable],
      payload: ChatRequest,
      success: ChatAnswer
    }).annotate(OpenApi.Description, DESCRIPTION)
  )
  .middleware(Authenticated)
  .annotateMerge(OpenApi.annotations({ title: "Chat", description: "A read-only assistant over the organization's own data." }))
{}
