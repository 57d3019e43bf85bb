/**
 * The MCP endpoint's tools (`POST /mcp`, Model Context Protocol over Streamable HTTP): names,
 * descriptions, hints and argument schemas, as `tools/list` answers them. Names and arguments are
 * those of the published TypeScript SDK's `extras/mcp.ts`, plus `list_pending_approvals` and
 * `search_actions`. Each tool is one of our API routes called with the caller's credential, so
 * its answer is that route's JSON; the routes behind the tools are in `src/mcp/tools.ts`.
 */
import * as Schema from "effect/Schema"
import { ActionStatuses } from "./lists.js"

/** An id or slug that becomes one path segment: never empty (that would name another route). */
const Segment = (description: string, max = 200) => Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(max)).annotate({ description })
const Page = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)).annotate({ description: "Page number, from 1 (default 1)" })
const PerPage = Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 100 })).annotate({ description: "Items per page, 1-100 (default 20)" })
const optional = Schema.optionalKey

export const AuthorizeActionArguments = Schema.Struct({
  action_type: Schema.String.annotate({ description: "What kind of action, e.g. email_sent, wire_transfer" }),
  details: Schema.String.annotate({ description: "What the agent is about to do, in words" }),
  agent_id: optional(Schema.String.annotate({ description: "Slug of the acting agent" })),
  model_id: optional(Schema.String.annotate({ description: "Model behind the decision" })),
  require_approval: optional(Schema.Boolean.annotate({ description: "Ask a human to approve even when no policy requires it" })),
  approvers: optional(Schema.Array(Schema.String).annotate({ description: "E-mail addresses of the humans asked to approve" }))
})

export const NotarizeActionArguments = Schema.Struct({
  action_id: Segment("action_uuid answered by authorize_action"),
  outcome: optional(Schema.Literals(["completed", "failed"]).annotate({ description: "Whether the action succeeded (default completed)" })),
  outcome_details: optional(Schema.String.annotate({ description: "What happened, in words" }))
})

const ActionIdArguments = Schema.Struct({ action_id: Segment("An action_uuid") })
const AgentSlugArguments = Schema.Struct({ agent_id: Segment("An agent slug") })

export const GetReceiptArguments = Schema.Struct({ receipt_id: Segment("A receipt_uuid") })
export const ResolveDidArguments = Schema.Struct({ did: Schema.String.annotate({ description: "A did:web identifier, e.g. did:web:example.com:agents:billing" }) })
export const RequestMutualSignArguments = Schema.Struct({
  action_id: Segment("The action_uuid to co-sign"),
  counterparty_did: Schema.String.annotate({ description: "did:web of the counterparty asked to co-sign" })
})

const ListFilters = {
  action_type: optional(Schema.String.annotate({ description: "Only actions of this type" })),
  agent_id: optional(Schema.String.annotate({ description: "Only actions of this agent slug" })),
  page: optional(Page),
  per_page: optional(PerPage)
}

export const ListPendingApprovalsArguments = Schema.Struct(ListFilters)
export const SearchActionsArguments = Schema.Struct({
  ...ListFilters,
  status: optional(Schema.Literals(ActionStatuses).annotate({ description: "Only actions in this status" }))
})

/** MCP tool annotations: hints for hosts (e.g. which tools may run without asking the user). */
export interface ToolHints {
  readonly title: string
  readonly readOnlyHint: boolean
  readonly destructiveHint: boolean
  readonly idempotentHint: boolean
  readonly openWorldHint: boolean
}

const reads = (title: string, openWorldHint = false): ToolHints => ({ title, readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint })
const writes = (title: string, openWorldHint = false): ToolHints => ({ title, readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint })

export interface McpToolDefinition<S extends Schema.Top = Schema.Top> {
  readonly description: string
  readonly arguments: S
  readonly hints: ToolHints
}

const tool = <S extends Schema.Top>(description: string, args: S, hints: ToolHints): McpToolDefinition<S> => ({ description, arguments: args, hints })

/** Every tool, in the order `tools/list` answers them. */
export const McpTools = {
  authorize_action: tool(
    "Call BEFORE the agent acts. Evaluates the organization's policies and answers the action_uuid with status authorized or pending_approval (a human must approve first); a policy denial is a tool error with code POLICY_DENIED.",
    AuthorizeActionArguments,
    writes("Authorize an action")
  ),
  notarize_action: tool(
    "Call AFTER an authorized (or approved) action ran, with its outcome. Answers the signed, timestamped receipt of the action.",
    NotarizeActionArguments,
    writes("Notarize an action's outcome")
  ),
  get_action: tool("One action of the organization: status, hashes, approvals and receipt.", ActionIdArguments, reads("Get an action")),
  verify_action: tool(
    "Checks the receipt of an action: payload hash, Ed25519 signature, timestamp token and chain link.",
    ActionIdArguments,
    reads("Verify an action's receipt")
  ),
  get_receipt: tool("One receipt of the organization, with its signed payload.", GetReceiptArguments, reads("Get a receipt")),
  resolve_did: tool("Fetches the DID document of a did:web identifier (cached for 5 minutes).", ResolveDidArguments, reads("Resolve a DID", true)),
  verify_credential: tool(
    "Reads an agent's current verifiable credential and checks its signature, validity period and revocation status.",
    AgentSlugArguments,
    reads("Verify an agent's credential")
  ),
  get_reputation: tool("An agent's public reputation: score, tier and the signed hash of its inputs.", AgentSlugArguments, reads("Get an agent's reputation")),
  request_mutual_sign: tool(
    "Asks a counterparty, by its did:web, to co-sign an action of one of the organization's agents.",
    RequestMutualSignArguments,
    writes("Request a mutual signature", true)
  ),
  list_pending_approvals: tool(
    "Actions of the organization waiting for a human approval, newest first.",
    ListPendingApprovalsArguments,
    reads("List pending approvals")
  ),
  search_actions: tool("The organization's actions, newest first, filtered by type, agent and status.", SearchActionsArguments, reads("Search actions"))
} as const

export type McpToolName = keyof typeof McpTools
export type McpToolArguments<N extends McpToolName> = (typeof McpTools)[N]["arguments"]["Type"]

/** What `initialize` answers as `serverInfo` (the API's version, as in the OpenAPI document). */
export const McpServerInfo = { name: "agent-accountability-gateway", title: "Agent Accountability Gateway", version: "1.1.0" } as const
