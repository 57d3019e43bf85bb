/**
 * The MCP server of one request: the SDK's low-level `Server` with our tool list and a tool
 * runner bound to the caller, on a stateless Streamable HTTP transport. Tool arguments are Effect
 * schemas (protocol/mcp.ts), listed as JSON Schema and checked by `runTool`, so a bad argument is a
 * VALIDATION_ERROR tool error in the contract's shape rather than the SDK's text. Loaded at the
 * first MCP request (http.ts): the SDK and its zod stay out of a gateway no MCP host uses.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type Tool } from "@modelcontextprotocol/sdk/types.js"
import * as Schema from "effect/Schema"
import { McpServerInfo, type McpToolName, McpTools } from "../../protocol/mcp.js"
import { isToolName, type ToolResult } from "./tools.js"

const INSTRUCTIONS =
  "Accountability for agent actions: call authorize_action before the agent acts and go ahead only when it answers authorized " +
  "(pending_approval: wait for a human, then check with get_action); after acting, call notarize_action with the outcome to " +
  "receive a signed receipt. Errors are tool errors whose text is the API's JSON error with its code."

const inputSchemaOf = (schema: Schema.Top): Tool["inputSchema"] => {
  const { $schema: _dialect, ...document } = Schema.toJsonSchemaDocument(schema).schema as Record<string, unknown>
  return { ...document, type: "object" }
}

/** `tools/list`'s answer, built once. */
const toolList: Array<Tool> = Object.entries(McpTools).map(([name, tool]) => ({
  name,
  title: tool.hints.title,
  description: tool.description,
  inputSchema: inputSchemaOf(tool.arguments),
  annotations: tool.hints
}))

/** Runs one tool call for the request's caller; `signal` aborts when the request goes away. */
export type ToolRunner = (name: McpToolName, args: unknown, signal: AbortSignal) => Promise<ToolResult>

const makeServer = (runTool: ToolRunner): Server => {
  const server = new Server(McpServerInfo, { capabilities: { tools: {} }, instructions: INSTRUCTIONS })
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: toolList }))
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    const { name, arguments: args } = request.params
    // An unknown tool is a protocol error (MCP: "Unknown tool"), not a tool's own failure.
    if (!isToolName(name)) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`)
    return runTool(name, args, extra.signal)
  })
  return server
}

/** One request's server and transport. */
export interface McpExchange {
  /** The transport's answer to `request` (an SSE stream that ends after the last response, or a plain answer). */
  readonly answer: (request: Request) => Promise<Response>
  /** Closes the transport and aborts the tool calls still running. */
  readonly close: () => void
}

/** Stateless: no session id generator, so the transport serves exactly this one request. */
export const openExchange = (runTool: ToolRunner, maxRequestBodySize: number): McpExchange => {
  const server = makeServer(runTool)
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, maxRequestBodySize })
  return {
    answer: async (request) => {
      await server.connect(transport)
      return transport.handleRequest(request)
    },
    close: () => {
      server.close().catch(() => undefined)
    }
  }
}
