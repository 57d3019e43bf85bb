/**
 * What each MCP tool does: the caller's own request(s) to our API routes (`SelfCalls`), with the
 * caller's credential, so scopes, roles, rate limits, tenant boundaries, errors and JSON are the
 * routes' own. A tool's answer is the route's JSON; a route's error is a tool error carrying the
 * route's error body (`{error?, code, message, details?, request_id}`).
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import { validationMessage } from "../../protocol/errors.js"
import { type McpToolArguments, type McpToolName, McpTools } from "../../protocol/mcp.js"
import type { Caller, SelfCallRequest, SelfCallsService } from "../platform/self-calls.js"

/** A route's answer as a tool sees it. */
interface Answer {
  readonly status: number
  readonly body: unknown
}

type Call = (method: SelfCallRequest["method"], path: string, body?: unknown) => Effect.Effect<Answer>

type Route<N extends McpToolName> = (args: McpToolArguments<N>, call: Call) => Effect.Effect<Answer>

/** One path segment; dots are encoded too, so `.` and `..` never walk to another route. */
const segment = (value: string) => encodeURIComponent(value).replaceAll(".", "%2E")

const withQuery = (path: string, query: Record<string, string | number | undefined>) => {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value))
  const text = params.toString()
  return text === "" ? path : `${path}?${text}`
}

/** Only the keys that were given (the routes tell an absent key from null). */
const present = (fields: Record<string, unknown>) => Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined))

const succeeded = (answer: Answer) => answer.status >= 200 && answer.status < 300

const routes: { readonly [N in McpToolName]: Route<N> } = {
  authorize_action: (args, call) =>
    call(
      "POST",
      "/api/v1/actions",
      present({
        action_type: args.action_type,
        details: args.details,
        agent_id: args.agent_id,
        model_id: args.model_id,
        require_approval: args.require_approval,
        approvers: args.approvers
      })
    ),
  notarize_action: (args, call) =>
    call("POST", `/api/v1/actions/${segment(args.action_id)}/notarize`, present({ outcome: args.outcome ?? "completed", outcome_details: args.outcome_details })),
  get_action: (args, call) => call("GET", `/api/v1/actions/${segment(args.action_id)}`),
  verify_action: (args, call) => call("GET", `/api/v1/verify/action/${segment(args.action_id)}`),
  get_receipt: (args, call) => call("GET", `/api/v1/receipts/${segment(args.receipt_id)}`),
  resolve_did: (args, call) => call("POST", "/api/v1/dids/resolve", { did: args.did }),
  // The credential route's answer (`{credential, message}`) is what the verify route takes, as the SDKs send it.
  verify_credential: (args, call) =>
    Effect.flatMap(call("GET", `/api/v1/agents/${segment(args.agent_id)}/credential`), (current) =>
      succeeded(current) ? call("POST", "/api/v1/credentials/verify", { credential: current.body }) : Effect.succeed(current)
    ),
  get_reputation: (args, call) => call("GET", `/api/v1/agents/${segment(args.agent_id)}/reputation`),
  request_mutual_sign: (args, call) =>
    call("POST", `/api/v1/actions/${segment(args.action_id)}/mutual-sign/request`, { counterparty_did: args.counterparty_did }),
  list_pending_approvals: (args, call) =>
    call("GET", withQuery("/api/v1/actions", { status: "pending_approval", action_type: args.action_type, agent_id: args.agent_id, page: args.page, per_page: args.per_page })),
  search_actions: (args, call) =>
    call(
      "GET",
      withQuery("/api/v1/actions", { action_type: args.action_type, agent_id: args.agent_id, status: args.status, page: args.page, per_page: args.per_page })
    )
}

/** The MCP `CallToolResult` of one tool call. */
export interface ToolResult {
  readonly content: Array<{ readonly type: "text"; readonly text: string }>
  readonly structuredContent?: Record<string, unknown>
  readonly isError?: boolean
  readonly [key: string]: unknown
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

const result = (body: unknown, isError: boolean): ToolResult => ({
  content: [{ type: "text", text: JSON.stringify(body) }],
  ...(isObject(body) ? { structuredContent: body } : {}),
  ...(isError ? { isError: true } : {})
})

/** An error body in the contract's shape, for failures that have no route answer of their own. */
const errorBody = (code: string, message: string) => ({ error: message, code, message })

const toResult = (answer: Answer): ToolResult => {
  if (succeeded(answer)) return result(answer.body ?? {}, false)
  // Every route error is a JSON object with a code; anything else (a proxy page, an empty 5xx) is named here.
  if (isObject(answer.body) && typeof answer.body.code === "string") return result(answer.body, true)
  return result(errorBody("INTERNAL_ERROR", `The route answered ${answer.status} without an error body`), true)
}

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

/** The arguments decoded, or the VALIDATION_ERROR body listing every issue (as the routes' 422). */
const decodeArguments = <N extends McpToolName>(name: N, args: unknown): Result.Result<McpToolArguments<N>, ToolResult> => {
  const schema = McpTools[name].arguments as unknown as Schema.Codec<McpToolArguments<N>, unknown>
  const decoded = Schema.decodeUnknownResult(schema)(args ?? {}, { errors: "all" })
  if (Result.isSuccess(decoded)) return Result.succeed(decoded.success)
  const issues = formatIssues(decoded.failure.issue).issues.map((issue) => ({
    path: (issue.path ?? []).map((part) => String(typeof part === "object" ? part.key : part)).join(".") || "arguments",
    message: issue.message
  }))
  const message = validationMessage(issues)
  return Result.fail(result({ code: "VALIDATION_ERROR", message, details: { issues } }, true))
}

export const isToolName = (name: string): name is McpToolName => Object.hasOwn(McpTools, name)

/**
 * Runs tool `name` for `caller`. Never fails: refusals, route errors and routes
 * that did not answer are all tool errors.
 */
export const runTool = (selfCalls: SelfCallsService, caller: Caller, name: McpToolName, args: unknown): Effect.Effect<ToolResult> => {
  const decoded = decodeArguments(name, args)
  if (Result.isFailure(decoded)) return Effect.succeed(decoded.failure)
  const call: Call = (method, path, body) =>
    selfCalls.call({ method, path, caller, ...(body === undefined ? {} : { body }) }).pipe(
      Effect.catch((failure) => Effect.succeed<Answer>({ status: 503, body: errorBody("SERVICE_UNAVAILABLE", `The route did not answer: ${failure.message}`) }))
    )
  const route = routes[name] as Route<McpToolName>
  return Effect.map(route(decoded.success as McpToolArguments<McpToolName>, call), toResult)
}
