/**
 * The chat's read-only tools (CONTRACT-sdk-beyond §5). Each tool is the caller's own call to our
 * read routes through `SelfCalls` (same organization, role, scopes, limits and errors as the route),
 * reshaped for a model: stored details, approval codes and secrets never appear (no route answers
 * them, and the shapes below keep only hashes, ids, states and counts). A tool is offered only to a
 * caller who could call its route. Every result is at most 16 KiB of JSON, cut with `truncated`.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { Principal } from "../../protocol/auth.js"
import { CHAT_TOOL_RESULT_MAX_BYTES, type ChatToolName } from "../../protocol/chat.js"
import { ActionStatuses, PolicyStatuses } from "../../protocol/lists.js"
import { hasScope, isAdmin } from "../access/guards.js"
import { parseInstant } from "../platform/instant.js"
import type { Caller, SelfCallsService } from "../platform/self-calls.js"

type Json = Record<string, unknown>
type Query = Record<string, string | number | undefined>

/** Why a tool has no result: the route's own refusal, or no answer at all. */
class ToolProblem {
  constructor(readonly problem: Json) {}
}

/** One caller's reads: the route's JSON on 200, its refusal otherwise. */
export interface Reader {
  readonly get: (path: string, query?: Query) => Effect.Effect<Json, ToolProblem>
}

export const readerFor = (calls: SelfCallsService, caller: Caller): Reader => ({
  get: (path, query = {}) => {
    const params = new URLSearchParams()
    for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value))
    const target = params.size === 0 ? path : `${path}?${params}`
    return calls.call({ method: "GET", path: target, caller }).pipe(
      Effect.mapError((failure) => new ToolProblem({ error: { message: `no answer: ${failure.message}` } })),
      Effect.flatMap(({ status, body }) => {
        const json = typeof body === "object" && body !== null && !Array.isArray(body) ? (body as Json) : {}
        if (status === 200) {
          const { request_id: _, ...rest } = json
          return Effect.succeed(rest)
        }
        return Effect.fail(new ToolProblem({ error: { status, code: json.code ?? null, message: json.message ?? `HTTP ${status}` } }))
      })
    )
  }
})

const pick = (value: unknown, keys: ReadonlyArray<string>): Json => {
  const source = typeof value === "object" && value !== null ? (value as Json) : {}
  const out: Json = {}
  for (const key of keys) if (key in source) out[key] = source[key]
  return out
}

const arrayOf = (value: unknown): Array<unknown> => (Array.isArray(value) ? value : [])

const byteLength = (value: unknown) => Buffer.byteLength(JSON.stringify(value))

/**
 * The result as it is when it fits in `maxBytes` of JSON; otherwise items are dropped from the end
 * of its longest list until it fits, and failing that it is cut as text. Either way `truncated: true`.
 */
export const fitResult = (value: Json, maxBytes = CHAT_TOOL_RESULT_MAX_BYTES): Json => {
  if (byteLength(value) <= maxBytes) return value
  const cut: Json = { ...value, truncated: true }
  const lists = Object.keys(cut).filter((key) => Array.isArray(cut[key]))
  for (;;) {
    const longest = lists.filter((key) => (cut[key] as Array<unknown>).length > 0).sort((a, b) => (cut[b] as Array<unknown>).length - (cut[a] as Array<unknown>).length)[0]
    if (longest === undefined) break
    const items = cut[longest] as Array<unknown>
    // Halve while far over, then one at a time.
    const over = byteLength(cut) - maxBytes
    const drop = over > maxBytes ? Math.ceil(items.length / 2) : 1
    cut[longest] = items.slice(0, items.length - drop)
    if (byteLength(cut) <= maxBytes) return cut
  }
  let text = JSON.stringify(value)
  let size = maxBytes
  for (;;) {
    text = text.slice(0, size)
    const candidate = { truncated: true, partial_json: text }
    const excess = byteLength(candidate) - maxBytes
    if (excess <= 0) return candidate
    size = Math.max(0, text.length - excess)
  }
}

/* Arguments: decoded with Effect Schema; the model is shown the same schema as JSON Schema. */

const Id = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200))
const Instant = Schema.String.check(Schema.isMaxLength(64)).annotate({ description: "ISO 8601; without an offset UTC" })

const SearchActionsArgs = Schema.Struct({
  action_type: Schema.optionalKey(Id),
  agent_id: Schema.optionalKey(Id),
  status: Schema.optionalKey(Schema.Literals(ActionStatuses)),
  created_after: Schema.optionalKey(Instant),
  created_before: Schema.optionalKey(Instant),
  limit: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 50 }))).annotate({ description: "1-50, default 20" })
})
const GetActionArgs = Schema.Struct({ action_uuid: Id })
const VerifyReceiptArgs = Schema.Struct({
  receipt_uuid: Schema.optionalKey(Id),
  action_uuid: Schema.optionalKey(Id).annotate({ description: "verifies the action's latest receipt" })
})
const ListPoliciesArgs = Schema.Struct({ status: Schema.optionalKey(Schema.Literals(PolicyStatuses)) })
const AnalyticsArgs = Schema.Struct({
  days: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 365 }))).annotate({ description: "1-365, default 7" })
})
const ListAgentsArgs = Schema.Struct({ status: Schema.optionalKey(Schema.Literals(["active", "decommissioned"])) })
const DriftArgs = Schema.Struct({
  agent_id: Id,
  lookback_hours: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 720 }))).annotate({ description: "1-720, default the route's" })
})
const NoArgs = Schema.Struct({})

/* The reads. */

const RECEIPT_KEYS = ["receipt_uuid", "payload_hash", "signature", "public_key_id", "receipt_version", "verify_url", "created_at"]

const receiptOf = (receipt: unknown): Json | null => {
  if (typeof receipt !== "object" || receipt === null) return null
  return { ...pick(receipt, RECEIPT_KEYS), timestamped: (receipt as Json).timestamp_token != null }
}

const actionItem = (item: unknown): Json => ({
  ...pick(item, ["action_uuid", "action_type", "agent_id", "status", "created_at", "model_id", "action_details_hash"]),
  receipt_uuid: receiptOf((item as Json).receipt)?.receipt_uuid ?? null
})

/** Pages of a list route, newest first, as far as `keep` wants (it answers false to stop) and at most `maxPages`. */
const scan = (reader: Reader, path: string, query: Query, maxPages: number, keep: (item: unknown) => boolean) =>
  Effect.gen(function* () {
    for (let page = 1; page <= maxPages; page++) {
      const body = yield* reader.get(path, { ...query, page, per_page: 100 })
      for (const item of arrayOf(body.data)) if (!keep(item)) return { complete: true }
      if ((body.pagination as Json | undefined)?.has_more !== true) return { complete: true }
    }
    return { complete: false }
  })

/** Actions read to apply a time window (the list route has none): 1,000 at most. */
const MAX_SCAN_PAGES = 10

const searchActions = (reader: Reader, args: typeof SearchActionsArgs.Type) =>
  Effect.gen(function* () {
    const limit = args.limit ?? 20
    const filter = { action_type: args.action_type, agent_id: args.agent_id, status: args.status }
    if (args.created_after === undefined && args.created_before === undefined) {
      const body = yield* reader.get("/api/v1/actions", { ...filter, per_page: limit })
      return { total: (body.pagination as Json | undefined)?.total ?? null, items: arrayOf(body.data).map(actionItem) }
    }
    const after = args.created_after === undefined ? undefined : parseInstant(args.created_after)
    const before = args.created_before === undefined ? undefined : parseInstant(args.created_before)
    if (after === undefined && args.created_after !== undefined) return { error: { message: "created_after must be an ISO 8601 timestamp" } }
    if (before === undefined && args.created_before !== undefined) return { error: { message: "created_before must be an ISO 8601 timestamp" } }
    const items: Array<Json> = []
    let total = 0
    const { complete } = yield* scan(reader, "/api/v1/actions", filter, MAX_SCAN_PAGES, (item) => {
      const at = Date.parse(String((item as Json).created_at))
      if (before !== undefined && at >= before) return true
      if (after !== undefined && at < after) return false
      total++
      if (items.length < limit) items.push(actionItem(item))
      return true
    })
    return complete ? { total, items } : { total, total_is_partial: true, items }
  })

const ACTION_KEYS = [
  "action_uuid",
  "action_type",
  "agent_id",
  "agent_version",
  "status",
  "model_id",
  "model_version",
  "instruction_hash",
  "action_details_hash",
  "outcome",
  "outcome_hash",
  "parent_action_uuid",
  "policy_uuid",
  "require_approval",
  "approved_by",
  "approved_at",
  "denial_reason",
  "legal_hold",
  "agent_sequence",
  "replay_context_hash",
  "created_at",
  "updated_at"
]

const getAction = (reader: Reader, args: typeof GetActionArgs.Type) =>
  Effect.map(reader.get(`/api/v1/actions/${encodeURIComponent(args.action_uuid)}`), (body) => ({ ...pick(body, ACTION_KEYS), receipt: receiptOf(body.receipt) }))

const VERIFICATION_KEYS = ["valid", "receipt_uuid", "action_uuid", "payload_hash", "public_key_id", "checks", "message", "verified_at"]

/** The public verification of a receipt of the caller's organization (its own receipt route says whether it is). */
const verifyReceipt = (reader: Reader, args: typeof VerifyReceiptArgs.Type) =>
  Effect.gen(function* () {
    if ((args.receipt_uuid === undefined) === (args.action_uuid === undefined)) return { error: { message: "give exactly one of receipt_uuid and action_uuid" } }
    let receiptUuid = args.receipt_uuid
    if (receiptUuid === undefined) {
      const verification = yield* reader.get(`/api/v1/verify/action/${encodeURIComponent(args.action_uuid!)}`)
      receiptUuid = String(verification.receipt_uuid)
    }
    const stored = yield* reader.get(`/api/v1/receipts/${encodeURIComponent(receiptUuid)}`)
    const verification = yield* reader.get(`/api/v1/verify/${encodeURIComponent(receiptUuid)}`)
    return { ...pick(verification, VERIFICATION_KEYS), receipt_status: stored.receipt_status ?? null, agent_id: stored.agent_id ?? null }
  })

const listPolicies = (reader: Reader, args: typeof ListPoliciesArgs.Type) =>
  Effect.map(reader.get("/api/v1/policies", { status: args.status, per_page: 100 }), (body) => ({
    total: (body.pagination as Json | undefined)?.total ?? null,
    items: arrayOf(body.data).map((item) => pick(item, ["id", "name", "mode", "decision", "priority", "status", "created_at"]))
  }))

const analyticsSummary = (reader: Reader, args: typeof AnalyticsArgs.Type) =>
  Effect.gen(function* () {
    const days = args.days ?? 7
    const [rates, agents, denials] = yield* Effect.all(
      [
        reader.get("/api/v1/analytics/approval-rates", { days }),
        reader.get("/api/v1/analytics/top-agents", { days, limit: 10 }),
        reader.get("/api/v1/analytics/policy-denials", { days })
      ],
      { concurrency: "unbounded" }
    )
    return { days, approval_rates: rates, top_agents: arrayOf(agents.data), policy_denials: arrayOf(denials.data) }
  })

const AGENT_KEYS = ["agent_slug", "name", "status", "current_version", "action_count", "created_at", "description", "capabilities"]

const listAgents = (reader: Reader, args: typeof ListAgentsArgs.Type) =>
  Effect.gen(function* () {
    const items: Array<Json> = []
    const { complete } = yield* scan(reader, "/api/v1/agents", {}, 3, (item) => {
      if (args.status === undefined || (item as Json).status === args.status) items.push(pick(item, AGENT_KEYS))
      return true
    })
    return complete ? { total: items.length, items } : { total: items.length, total_is_partial: true, items }
  })

const driftStatus = (reader: Reader, args: typeof DriftArgs.Type) =>
  reader.get(`/api/v1/agents/${encodeURIComponent(args.agent_id)}/drift`, { lookback_hours: args.lookback_hours })

const pendingApprovals = (reader: Reader) =>
  Effect.map(reader.get("/api/v1/notifications/pending"), (body) => ({
    total: body.total ?? null,
    items: arrayOf(body.items).map((item) => pick(item, ["type", "id", "title", "description", "created_at"]))
  }))

/* The table. */

interface ToolSpec<A> {
  readonly description: string
  readonly args: Schema.Codec<A>
  readonly scope: string
  readonly adminOnly?: boolean
  readonly run: (reader: Reader, args: A) => Effect.Effect<Json, ToolProblem>
}

const spec = <A>(value: ToolSpec<A>): ToolSpec<unknown> => value as unknown as ToolSpec<unknown>

const TOOLS: Record<ChatToolName, ToolSpec<unknown>> = {
  search_actions: spec({
    description: "Search the organization's actions, newest first: filters by action type, agent, status and creation time. Answers {total, items}.",
    args: SearchActionsArgs,
    scope: "actions:read",
    run: searchActions
  }),
  get_action: spec({
    description: "One action by action_uuid: its state, hashes and receipt (never the stored details).",
    args: GetActionArgs,
    scope: "actions:read",
    run: getAction
  }),
  verify_receipt: spec({
    description: "Verify a receipt of the organization (signature, hash, timestamp, chain), by receipt_uuid or by action_uuid.",
    args: VerifyReceiptArgs,
    scope: "receipts:read",
    run: verifyReceipt
  }),
  list_policies: spec({ description: "The organization's policies, optionally by status.", args: ListPoliciesArgs, scope: "policies:read", run: listPolicies }),
  analytics_summary: spec({
    description: "Approval rates, the most active agents and policy denials over the last `days` days.",
    args: AnalyticsArgs,
    scope: "analytics:read",
    adminOnly: true,
    run: analyticsSummary
  }),
  list_agents: spec({ description: "The organization's registered agents, optionally by status.", args: ListAgentsArgs, scope: "agents:read", run: listAgents }),
  drift_status: spec({
    description: "Whether an agent's recent behaviour drifts from its active baseline (action-type mix and volume).",
    args: DriftArgs,
    scope: "drift:read",
    run: driftStatus
  }),
  pending_approvals: spec({
    description: "What waits for a human in the organization: actions pending approval and cases in review.",
    args: NoArgs,
    scope: "notifications:read",
    run: (reader) => pendingApprovals(reader)
  })
}

/** The tools this caller could call as API routes (scope, and role where the route needs one). */
export const offeredTools = (principal: Principal): Array<ChatToolName> =>
  (Object.keys(TOOLS) as Array<ChatToolName>).filter((name) => {
    const tool = TOOLS[name]
    return hasScope(principal, tool.scope) && (tool.adminOnly !== true || isAdmin(principal))
  })

export const toolDescription = (name: ChatToolName) => TOOLS[name].description

const EMPTY_OBJECT = { type: "object", properties: {}, additionalProperties: false }

/** The tool's arguments as JSON Schema (what a model with function calling is shown). */
export const toolParameters = (name: ChatToolName): Json => {
  const schema = Schema.toJsonSchemaDocument(TOOLS[name].args, { onExcessProperty: "error" }).schema as Json
  return schema.type === "object" ? schema : EMPTY_OBJECT
}

/** Models often send null for an argument they mean to leave out. */
const withoutNulls = (value: unknown): unknown =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? Object.fromEntries(Object.entries(value).filter(([, item]) => item !== null)) : value

/** The arguments decoded, or what is wrong with them (shown to the model). */
export const decodeToolArgs = (name: ChatToolName, input: unknown): { success: true; value: unknown } | { success: false; error: Error } => {
  const exit = Schema.decodeUnknownExit(TOOLS[name].args)(withoutNulls(input ?? {}), { errors: "all", onExcessProperty: "error" })
  return exit._tag === "Success" ? { success: true, value: exit.value } : { success: false, error: new Error(`invalid arguments for ${name}: ${String(exit.cause)}`) }
}

/** Runs one tool as the caller; a refusal or a failure is the result (the model reads it), never an error of the chat. */
export const runTool = (reader: Reader, name: ChatToolName, args: unknown): Effect.Effect<Json> => {
  const decoded = decodeToolArgs(name, args)
  if (!decoded.success) return Effect.succeed({ error: { message: decoded.error.message } })
  return TOOLS[name].run(reader, decoded.value).pipe(
    Effect.catch((problem: ToolProblem) => Effect.succeed(problem.problem)),
    Effect.map((result) => fitResult(result))
  )
}
