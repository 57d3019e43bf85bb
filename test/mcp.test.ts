/**
 * The MCP endpoint (`/mcp`) driven by the official MCP client (`Client` over
 * `StreamableHTTPClientTransport`) against the real server: the tool list, the authorize →
 * notarize → receipt → verify flow, each tool answering exactly what its route answers the same
 * caller (scopes, policy denials, another organization's ids, validation), refusals at the
 * transport before any MCP processing (credentials, methods, the key's rate limit), the tools that
 * reach other parties (did:web resolution and mutual signing against a counterparty whose DID
 * document a local HTTPS host serves, reputation, credentials), and a host that goes away
 * cancelling its tool's work (a did:web host that never answers sees its request closed).
 */
import { writeFileSync } from "node:fs"
import { expect } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js"
import * as ed from "@noble/ed25519"
import bs58 from "bs58"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { client, raw, register } from "./support/api.js"
import type { Org } from "./support/client.js"
import { useDidHost } from "./support/did-host.js"
import { liveLayer } from "./support/effect.js"
import { eventuallyEffect } from "./support/eventually.js"
import { Gateway } from "./support/server.js"
import { useTlsServer } from "./support/tls.js"

const multibase = (publicKey: Uint8Array) => `z${bs58.encode(Buffer.concat([Buffer.from([0xed, 0x01]), publicKey]))}`

/** The counterparty's host: its DID document, served over HTTPS. */
const counterpartyKey = ed.utils.randomSecretKey()
const { didAt, publish, certPem } = useDidHost()
/** A did:web host that never answers: it records the requests it holds and when their connection closes. */
const held = { seen: 0, closed: 0 }
const silentHost = useTlsServer((request) => {
  held.seen++
  request.on("close", () => held.closed++)
})

class Parties extends Context.Service<
  Parties,
  { readonly a: Org; readonly b: Org; readonly readOnlyKey: string; readonly agent: string; readonly bankDid: string }
>()("test/mcp/Parties") {}

const setUp = Layer.effect(
  Parties,
  Effect.gen(function* () {
    const publicKey = yield* Effect.promise(() => ed.getPublicKeyAsync(counterpartyKey))
    const bankDid = publish("partners/bank", [{ id: `${didAt("partners/bank")}#key-1`, type: "Ed25519VerificationKey2020", publicKeyMultibase: multibase(publicKey) }])
    const { a, b } = yield* Effect.all({ a: register("MCP Owner"), b: register("MCP Other") })
    const api = yield* client(a.key)
    const agent = `mcp-agent-${process.pid}`
    yield* api.agents.register({ payload: { agent_slug: agent, name: "MCP agent", capabilities: ["payments"] } })
    const readOnly = yield* api.apiKeys.create({ payload: { name: "read only", scopes: ["actions:read", "receipts:read"] } })
    return { a, b, readOnlyKey: readOnly.key, agent, bankDid }
  })
).pipe(
  Layer.provideMerge(
    // Built after the TLS fixture above, whose certificate it trusts.
    Layer.suspend(() => {
      const caFile = `/tmp/mcp-ca-${process.pid}.pem`
      writeFileSync(caFile, certPem() + silentHost.certPem)
      return Gateway.layer({ OUTBOUND_CA_FILE: caFile, OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8" })
    })
  )
)

const endpoint = (server: { readonly url: string }) => new URL(`${server.url}/mcp`)

/** A connected MCP client sending `token` as its bearer credential, closed after `use`. */
const withClient = <A, E, R>(token: string | undefined, use: (mcp: Client) => Effect.Effect<A, E, R>) =>
  Effect.flatMap(Gateway, (server) =>
    Effect.acquireUseRelease(
      Effect.promise(async () => {
        const mcp = new Client({ name: "mcp-test", version: "1.0.0" })
        const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` }
        await mcp.connect(new StreamableHTTPClientTransport(endpoint(server), { requestInit: { headers } }))
        return mcp
      }),
      use,
      (mcp) => Effect.promise(() => mcp.close())
    )
  )

interface ToolAnswer {
  readonly isError: boolean
  readonly body: any
}

/** One tool call: its error flag and the JSON of its one text item (checked equal to `structuredContent`). */
const callTool = (mcp: Client, name: string, args: Record<string, unknown> = {}) =>
  Effect.promise(async (): Promise<ToolAnswer> => {
    const result = await mcp.callTool({ name, arguments: args })
    const content = result.content as Array<{ type: string; text: string }>
    expect(content).toHaveLength(1)
    expect(content[0]!.type).toBe("text")
    const body = JSON.parse(content[0]!.text)
    expect(result.structuredContent).toEqual(body)
    return { isError: result.isError === true, body }
  })

/** What the route answers `token` directly (status and JSON), for comparison with a tool's answer. */
const route = (token: string, method: string, path: string, body?: unknown) => raw(method, path, { token, ...(body === undefined ? {} : { body }) })

const withoutRequestId = ({ request_id: _, ...rest }: Record<string, unknown>) => rest

const authorize = (mcp: Client, args: Record<string, unknown> = {}) =>
  callTool(mcp, "authorize_action", { action_type: "email_sent", details: `send the invoice ${Math.random()}`, ...args })

liveLayer(setUp)((it) => {
  it.describe("tools/list", () => {
    it.effect("lists the SDK's nine tools and the two list tools, with their arguments and hints", () =>
      Effect.gen(function* () {
        const { a } = yield* Parties
        const { tools, info } = yield* withClient(a.key, (mcp) =>
          Effect.promise(async () => ({ tools: (await mcp.listTools()).tools, info: mcp.getServerVersion() }))
        )
        expect(info?.name).toBe("agent-accountability-gateway")
        expect(tools.map((tool) => tool.name)).toEqual([
          "authorize_action",
          "notarize_action",
          "get_action",
          "verify_action",
          "get_receipt",
          "resolve_did",
          "verify_credential",
          "get_reputation",
          "request_mutual_sign",
          "list_pending_approvals",
          "search_actions"
        ])
        const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]))
        const required = Object.fromEntries(tools.map((tool) => [tool.name, [...(tool.inputSchema.required ?? [])].sort()]))
        expect(required).toEqual({
          authorize_action: ["action_type", "details"],
          notarize_action: ["action_id"],
          get_action: ["action_id"],
          verify_action: ["action_id"],
          get_receipt: ["receipt_id"],
          resolve_did: ["did"],
          verify_credential: ["agent_id"],
          get_reputation: ["agent_id"],
          request_mutual_sign: ["action_id", "counterparty_did"],
          list_pending_approvals: [],
          search_actions: []
        })
        const properties = (name: string) => Object.keys(byName[name]!.inputSchema.properties ?? {}).sort()
        expect(properties("authorize_action")).toEqual(["action_type", "agent_id", "approvers", "details", "model_id", "require_approval"])
        expect(properties("notarize_action")).toEqual(["action_id", "outcome", "outcome_details"])
        expect(properties("search_actions")).toEqual(["action_type", "agent_id", "page", "per_page", "status"])
        const schema = byName.authorize_action!.inputSchema as any
        expect(schema.type).toBe("object")
        expect(schema.properties.require_approval.type).toBe("boolean")
        expect(schema.properties.approvers).toMatchObject({ type: "array", items: { type: "string" } })
        expect((byName.notarize_action!.inputSchema as any).properties.outcome.enum).toEqual(["completed", "failed"])
        expect(byName.get_receipt!.annotations).toMatchObject({ readOnlyHint: true })
        expect(byName.authorize_action!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false })
        for (const tool of tools) expect(tool.description, tool.name).toBeTruthy()
      })
    )
  })

  it.describe("the two-step flow", () => {
    it.effect("authorize → notarize → get_receipt → verify_action, each answer being the route's JSON", () =>
      Effect.gen(function* () {
        const { a, agent } = yield* Parties
        yield* withClient(a.key, (mcp) =>
          Effect.gen(function* () {
            const authorized = yield* authorize(mcp, { agent_id: agent, model_id: "model-x" })
            expect(authorized.isError).toBe(false)
            expect(authorized.body).toMatchObject({ status: "authorized", action_uuid: expect.any(String) })
            const actionId: string = authorized.body.action_uuid

            const notarized = yield* callTool(mcp, "notarize_action", { action_id: actionId, outcome_details: "sent" })
            expect(notarized.isError).toBe(false)
            expect(notarized.body).toMatchObject({ action_uuid: actionId, receipt_uuid: expect.any(String) })
            const receiptId: string = notarized.body.receipt_uuid

            const receipt = yield* callTool(mcp, "get_receipt", { receipt_id: receiptId })
            expect(receipt.isError).toBe(false)
            const direct = yield* route(a.key, "GET", `/api/v1/receipts/${receiptId}`)
            expect(direct.status).toBe(200)
            expect(withoutRequestId(receipt.body)).toEqual(withoutRequestId(direct.body))
            expect(receipt.body.receipt_status ?? receipt.body.status).toBeDefined()

            const verified = yield* callTool(mcp, "verify_action", { action_id: actionId })
            expect(verified.isError).toBe(false)
            expect(verified.body).toMatchObject({ valid: true, action_uuid: actionId, receipt_uuid: receiptId })

            const action = yield* callTool(mcp, "get_action", { action_id: actionId })
            expect(action.body).toMatchObject({ action_uuid: actionId, status: "notarized", agent_id: agent, model_id: "model-x" })
            const actionDirect = yield* route(a.key, "GET", `/api/v1/actions/${actionId}`)
            expect(withoutRequestId(action.body)).toEqual(withoutRequestId(actionDirect.body))

            // Notarizing twice is the route's own refusal.
            const again = yield* callTool(mcp, "notarize_action", { action_id: actionId })
            expect(again).toMatchObject({ isError: true, body: { code: "INVALID_ACTION_STATE" } })
          })
        )
      })
    )

    it.effect("outcome failed, approvals waiting for a human, and the action search", () =>
      Effect.gen(function* () {
        const { a } = yield* Parties
        const slug = `mcp-search-${process.pid}`
        yield* (yield* client(a.key)).agents.register({ payload: { agent_slug: slug, name: "Search agent" } })
        yield* withClient(a.key, (mcp) =>
          Effect.gen(function* () {
            const failed = yield* authorize(mcp, { agent_id: slug })
            const notarized = yield* callTool(mcp, "notarize_action", { action_id: failed.body.action_uuid, outcome: "failed" })
            expect(notarized.isError).toBe(false)
            const waiting = yield* authorize(mcp, { agent_id: slug, require_approval: true, approvers: [a.email] })
            expect(waiting.body.status).toBe("pending_approval")

            const pending = yield* callTool(mcp, "list_pending_approvals", { agent_id: slug })
            expect(pending.isError).toBe(false)
            expect(pending.body.data.map((item: any) => item.action_uuid)).toEqual([waiting.body.action_uuid])
            expect(pending.body.data[0].status).toBe("pending_approval")

            const all = yield* callTool(mcp, "search_actions", { agent_id: slug })
            expect(all.body.data.map((item: any) => item.action_uuid)).toEqual([waiting.body.action_uuid, failed.body.action_uuid])
            const direct = yield* route(a.key, "GET", `/api/v1/actions?agent_id=${slug}`)
            expect(withoutRequestId(all.body)).toEqual(withoutRequestId(direct.body))

            const onlyFailed = yield* callTool(mcp, "search_actions", { agent_id: slug, status: "failed", per_page: 1, page: 1 })
            expect(onlyFailed.body.data.map((item: any) => item.action_uuid)).toEqual([failed.body.action_uuid])
            expect(onlyFailed.body.pagination).toMatchObject({ page: 1, per_page: 1, total: 1, has_more: false })
          })
        )
      })
    )

    it.effect("a dashboard JWT works like an API key", () =>
      Effect.gen(function* () {
        const { a } = yield* Parties
        yield* withClient(a.token, (mcp) =>
          Effect.gen(function* () {
            const authorized = yield* authorize(mcp)
            expect(authorized.isError).toBe(false)
            const action = yield* callTool(mcp, "get_action", { action_id: authorized.body.action_uuid })
            expect(action.body.status).toBe("authorized")
          })
        )
      })
    )
  })

  it.describe("the routes' refusals as tool errors", () => {
    it.effect("a key without actions:write gets FORBIDDEN from the write tools, and reads", () =>
      Effect.gen(function* () {
        const { a, readOnlyKey } = yield* Parties
        const actionId = (yield* (yield* client(a.key)).actions.authorize({ headers: {}, payload: { action_type: "email_sent", details: "d" } })).action_uuid
        yield* withClient(readOnlyKey, (mcp) =>
          Effect.gen(function* () {
            const refused = yield* authorize(mcp)
            expect(refused).toMatchObject({ isError: true, body: { code: "FORBIDDEN", error: expect.any(String), message: expect.any(String), request_id: expect.any(String) } })
            const direct = yield* route(readOnlyKey, "POST", "/api/v1/actions", { action_type: "email_sent", details: "d" })
            expect(direct.status).toBe(403)
            expect(withoutRequestId(refused.body)).toEqual(withoutRequestId(direct.body))
            expect((yield* callTool(mcp, "notarize_action", { action_id: actionId })).body.code).toBe("FORBIDDEN")
            const read = yield* callTool(mcp, "get_action", { action_id: actionId })
            expect(read).toMatchObject({ isError: false, body: { action_uuid: actionId, status: "authorized" } })
          })
        )
      })
    )

    it.effect("a policy denial is POLICY_DENIED, with the denial's receipt", () =>
      Effect.gen(function* () {
        const { b } = yield* Parties
        yield* (yield* client(b.key)).policies.create({
          payload: { name: "no wires", mode: "rules", decision: "deny", conditions: [{ field: "action_type", op: "eq", value: "wire_transfer" }], activate: true }
        })
        yield* withClient(b.key, (mcp) =>
          Effect.gen(function* () {
            const denied = yield* authorize(mcp, { action_type: "wire_transfer" })
            expect(denied).toMatchObject({ isError: true, body: { code: "POLICY_DENIED", details: { action_uuid: expect.any(String), receipt_uuid: expect.any(String) } } })
            const action = yield* callTool(mcp, "get_action", { action_id: denied.body.details.action_uuid })
            expect(action.body.status).toBe("denied_by_policy")
            const verified = yield* callTool(mcp, "verify_action", { action_id: denied.body.details.action_uuid })
            expect(verified.body).toMatchObject({ valid: true, receipt_uuid: denied.body.details.receipt_uuid })
          })
        )
      })
    )

    it.effect("another organization's action, receipt or made-up ids are NOT_FOUND, never another route", () =>
      Effect.gen(function* () {
        const { a, b } = yield* Parties
        const { action_uuid } = yield* (yield* client(a.key)).actions.authorize({ headers: {}, payload: { action_type: "email_sent", details: "d" } })
        const { receipt_uuid } = yield* (yield* client(a.key)).actions.notarize({ params: { action_uuid }, payload: { outcome: "completed" } })
        yield* withClient(b.key, (mcp) =>
          Effect.gen(function* () {
            for (const [name, args] of [
              ["get_action", { action_id: action_uuid }],
              ["notarize_action", { action_id: action_uuid }],
              ["get_receipt", { receipt_id: receipt_uuid }],
              ["request_mutual_sign", { action_id: action_uuid, counterparty_did: "did:web:example.com" }],
              // A path that would reach another route if it were not one segment.
              ["get_action", { action_id: "../receipts" }],
              ["get_action", { action_id: ".." }],
              ["get_reputation", { agent_id: "nobody-here" }]
            ] as const) {
              const answer = yield* callTool(mcp, name, args)
              expect(answer, `${name} ${JSON.stringify(args)}`).toMatchObject({ isError: true, body: { code: "NOT_FOUND" } })
            }
          })
        )
        // The receipt's verification is public (CONTRACT): anyone may check it.
        yield* withClient(b.key, (mcp) =>
          Effect.map(callTool(mcp, "verify_action", { action_id: action_uuid }), (answer) => expect(answer.body).toMatchObject({ valid: true }))
        )
      })
    )

    it.effect("invalid arguments are one VALIDATION_ERROR listing every issue; the route's own 422 passes through", () =>
      Effect.gen(function* () {
        const { a } = yield* Parties
        yield* withClient(a.key, (mcp) =>
          Effect.gen(function* () {
            const missing = yield* callTool(mcp, "authorize_action", { action_type: 7, require_approval: "yes" })
            expect(missing.isError).toBe(true)
            expect(missing.body).toMatchObject({ code: "VALIDATION_ERROR", message: "3 validation issues" })
            expect(missing.body.details.issues.map((issue: any) => issue.path).sort()).toEqual(["action_type", "details", "require_approval"])

            const outcome = yield* callTool(mcp, "notarize_action", { action_id: "x", outcome: "maybe" })
            expect(outcome.body).toMatchObject({ code: "VALIDATION_ERROR", details: { issues: [{ path: "outcome" }] } })
            expect(outcome.body.message).toMatch(/^outcome: /)

            const empty = yield* callTool(mcp, "get_action", { action_id: "" })
            expect(empty.body).toMatchObject({ code: "VALIDATION_ERROR", details: { issues: [{ path: "action_id" }] } })
            const none = yield* callTool(mcp, "get_receipt")
            expect(none.body).toMatchObject({ code: "VALIDATION_ERROR", details: { issues: [{ path: "receipt_id" }] } })
            const page = yield* callTool(mcp, "search_actions", { per_page: 500 })
            expect(page.body).toMatchObject({ code: "VALIDATION_ERROR", details: { issues: [{ path: "per_page" }] } })

            // Shapes the tool takes but the route refuses: the route's own answer.
            const notDidWeb = yield* callTool(mcp, "resolve_did", { did: "did:key:z6Mkabc" })
            expect(notDidWeb).toMatchObject({ isError: true, body: { code: "VALIDATION_ERROR", request_id: expect.any(String) } })
          })
        )
      })
    )

    it.effect("an unknown tool is a JSON-RPC error (invalid params), not a tool result", () =>
      Effect.gen(function* () {
        const { a } = yield* Parties
        const error = yield* withClient(a.key, (mcp) => Effect.promise(() => mcp.callTool({ name: "drop_tables", arguments: {} }).then(() => undefined, (cause) => cause)))
        expect(error).toBeInstanceOf(McpError)
        expect((error as McpError).code).toBe(ErrorCode.InvalidParams)
      })
    )
  })

  it.describe("at the transport", () => {
    it.effect("no key, an unknown key or a malformed header: 401 with the contract's body before any MCP processing", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const initialize = {
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "curl", version: "1" } }
        }
        const headers = { accept: "application/json, text/event-stream" }
        for (const authorization of [undefined, "Bearer svc_live_not_a_real_key_at_all", "Basic dXNlcjpwYXNz", "Bearer "]) {
          const reply = yield* raw("POST", "/mcp", { body: initialize, headers: authorization === undefined ? headers : { ...headers, authorization } })
          expect(reply.status, String(authorization)).toBe(401)
          expect(reply.body).toMatchObject({ code: "UNAUTHORIZED", error: expect.any(String), message: expect.any(String), request_id: expect.any(String) })
          expect(reply.headers.get("www-authenticate")).toMatch(/^Bearer/)
        }
        // GET and DELETE also need a credential first.
        expect((yield* raw("GET", "/mcp", { headers: { accept: "text/event-stream" } })).status).toBe(401)
        expect((yield* raw("DELETE", "/mcp")).status).toBe(401)

        // The official client sees the 401 as the transport's error.
        for (const token of [undefined, "svc_live_not_a_real_key_at_all"]) {
          const error = yield* Effect.promise(async () => {
            const mcp = new Client({ name: "mcp-test", version: "1.0.0" })
            const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` }
            return mcp.connect(new StreamableHTTPClientTransport(endpoint(server), { requestInit: { headers } })).then(
              () => undefined,
              (cause) => cause
            )
          })
          expect(error).toBeInstanceOf(StreamableHTTPError)
          expect((error as StreamableHTTPError).code).toBe(401)
        }
      })
    )

    it.effect("stateless: no session id; GET and DELETE are 405; the transport's own checks answer JSON-RPC errors", () =>
      Effect.gen(function* () {
        const { a } = yield* Parties
        const authorization = `Bearer ${a.key}`
        const list = { jsonrpc: "2.0", id: 7, method: "tools/list" }
        const accept = "application/json, text/event-stream"
        // Any request stands alone: tools/list without an initialize first, answered as an SSE event.
        const reply = yield* raw("POST", "/mcp", { body: list, headers: { authorization, accept } })
        expect(reply.status).toBe(200)
        expect(reply.headers.get("content-type")).toMatch(/^text\/event-stream/)
        expect(reply.headers.get("mcp-session-id")).toBeNull()
        expect(reply.headers.get("ratelimit-policy")).toBeTruthy()
        const event = reply.text.split("\n").find((line) => line.startsWith("data: "))
        const message = JSON.parse(event!.slice("data: ".length))
        expect(message).toMatchObject({ jsonrpc: "2.0", id: 7 })
        expect(message.result.tools).toHaveLength(11)

        for (const method of ["GET", "DELETE", "PUT"]) {
          const refused = yield* raw(method, "/mcp", { headers: { authorization, accept: "text/event-stream" } })
          expect(refused.status, method).toBe(405)
          expect(refused.headers.get("allow")).toBe("POST")
          expect(refused.body).toMatchObject({ jsonrpc: "2.0", error: { code: -32000 }, id: null })
        }
        const notAcceptable = yield* raw("POST", "/mcp", { body: list, headers: { authorization, accept: "application/json" } })
        expect(notAcceptable.status).toBe(406)
        expect(notAcceptable.body).toMatchObject({ jsonrpc: "2.0", error: { code: -32000 } })
        const notJson = yield* raw("POST", "/mcp", { raw: "{nope", headers: { authorization, accept, "content-type": "application/json" } })
        expect(notJson.status).toBe(400)
        // A notification alone is accepted with no body.
        const notification = yield* raw("POST", "/mcp", { body: { jsonrpc: "2.0", method: "notifications/initialized" }, headers: { authorization, accept } })
        expect(notification.status).toBe(202)
      })
    )
  })

  it.describe("a client that goes away", () => {
    it.effect("stops the tool: its route call, and that route's own outbound call, are cancelled", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const { a } = yield* Parties
        const mcp = new Client({ name: "mcp-test", version: "1.0.0" })
        yield* Effect.promise(() => mcp.connect(new StreamableHTTPClientTransport(endpoint(server), { requestInit: { headers: { authorization: `Bearer ${a.key}` } } })))
        const did = `did:web:127.0.0.1%3A${silentHost.port}:silent`
        const before = { ...held }
        const pending = mcp.callTool({ name: "resolve_did", arguments: { did } }).then(
          () => "answered",
          () => "abandoned"
        )
        yield* eventuallyEffect(Effect.sync(() => held.seen === before.seen + 1))
        yield* Effect.promise(() => mcp.close())
        expect(yield* Effect.promise(() => pending)).toBe("abandoned")
        // The DID fetch would give up by itself only after 10 s: closing well before is the cancellation.
        yield* eventuallyEffect(Effect.sync(() => held.closed === before.closed + 1), { timeoutMs: 8_000 })
        // The gateway goes on serving the same caller.
        yield* withClient(a.key, (next) => Effect.map(callTool(next, "search_actions", { per_page: 1 }), (answer) => expect(answer.isError).toBe(false)))
      })
    )

    it.effect("an SSE answer's head comes at once, while the tool still runs; dropping the connection then stops the tool", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const { a } = yield* Parties
        const before = { ...held }
        const controller = new AbortController()
        const call = { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "resolve_did", arguments: { did: `did:web:127.0.0.1%3A${silentHost.port}:slow` } } }
        const response = yield* Effect.promise(() =>
          fetch(endpoint(server), {
            method: "POST",
            signal: controller.signal,
            headers: { authorization: `Bearer ${a.key}`, accept: "application/json, text/event-stream", "content-type": "application/json" },
            body: JSON.stringify(call)
          })
        )
        expect(response.status).toBe(200)
        expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/)
        yield* eventuallyEffect(Effect.sync(() => held.seen === before.seen + 1))
        // The silent host never answers: the tool is still running.
        expect(held.closed).toBe(before.closed)
        controller.abort()
        yield* eventuallyEffect(Effect.sync(() => held.closed === before.closed + 1), { timeoutMs: 8_000 })
      })
    )
  })

  it.describe("identity and reputation tools", () => {
    it.effect("resolve_did fetches a counterparty's did:web; verify_credential and get_reputation read any organization's agent", () =>
      Effect.gen(function* () {
        const { a, b, agent, bankDid } = yield* Parties
        yield* withClient(b.key, (mcp) =>
          Effect.gen(function* () {
            const resolved = yield* callTool(mcp, "resolve_did", { did: bankDid })
            expect(resolved.isError).toBe(false)
            expect(resolved.body).toMatchObject({ did: bankDid, document: { id: bankDid, verificationMethod: [{ id: `${bankDid}#key-1`, type: "Ed25519VerificationKey2020" }] } })
            const direct = yield* route(b.key, "POST", "/api/v1/dids/resolve", { did: bankDid })
            expect(direct.body.document).toEqual(resolved.body.document)
            const unknown = yield* callTool(mcp, "resolve_did", { did: didAt("partners/nobody") })
            const unknownDirect = yield* route(b.key, "POST", "/api/v1/dids/resolve", { did: didAt("partners/nobody") })
            expect(unknownDirect.status).toBe(404)
            expect(unknown).toMatchObject({ isError: true, body: { code: unknownDirect.body.code, message: unknownDirect.body.message } })

            // `a`'s agent, read by `b`: the public routes.
            const credential = yield* callTool(mcp, "verify_credential", { agent_id: agent })
            expect(credential.isError).toBe(false)
            expect(credential.body.valid).toBe(true)
            const noAgent = yield* callTool(mcp, "verify_credential", { agent_id: "nobody-here" })
            expect(noAgent).toMatchObject({ isError: true, body: { code: "NOT_FOUND" } })

            const reputation = yield* callTool(mcp, "get_reputation", { agent_id: agent })
            expect(reputation.isError).toBe(false)
            expect(reputation.body).toMatchObject({ agent_slug: agent, score: expect.any(Number), tier: expect.any(String), score_hash: expect.stringMatching(/^sha256:/) })
            const directReputation = yield* route(a.key, "GET", `/api/v1/agents/${agent}/reputation`)
            expect(withoutRequestId(reputation.body)).toEqual(withoutRequestId(directReputation.body))
          })
        )
      })
    )

    it.effect("request_mutual_sign asks the counterparty's DID to co-sign the caller's action", () =>
      Effect.gen(function* () {
        const { a, agent, bankDid } = yield* Parties
        yield* withClient(a.key, (mcp) =>
          Effect.gen(function* () {
            const authorized = yield* authorize(mcp, { agent_id: agent })
            const requested = yield* callTool(mcp, "request_mutual_sign", { action_id: authorized.body.action_uuid, counterparty_did: bankDid })
            expect(requested.isError).toBe(false)
            expect(requested.body).toMatchObject({ action_uuid: authorized.body.action_uuid, status: "pending", counterparty_did: bankDid })
            const pending = yield* raw("GET", `/api/v1/actions/${authorized.body.action_uuid}/mutual-sign/pending`)
            expect(pending.body).toMatchObject({ status: "pending", counterparty_did: bankDid })
            const twice = yield* callTool(mcp, "request_mutual_sign", { action_id: authorized.body.action_uuid, counterparty_did: bankDid })
            expect(twice.isError).toBe(true)
          })
        )
      })
    )
  })
})

/** A tools/call sent as a bare POST (stateless: no initialize needed); its status, head and first SSE message. */
const postToolCall = (token: string, id: number, name: string, args: Record<string, unknown>) =>
  Effect.map(
    raw("POST", "/mcp", {
      body: { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } },
      headers: { authorization: `Bearer ${token}`, accept: "application/json, text/event-stream" }
    }),
    (reply) => {
      const data = reply.text.split("\n").find((line) => line.startsWith("data: "))
      return { reply, message: data === undefined ? undefined : JSON.parse(data.slice("data: ".length)) }
    }
  )

liveLayer(Gateway.layer({ RATE_LIMIT_PER_MINUTE: "5" }))((it) => {
  it.effect("each MCP request and each route call count against the key: past the limit, the route's 429 as a tool error, then 429 at the transport", () =>
    Effect.gen(function* () {
      const org = yield* register("Limited")
      // Hits 1+2, 3+4: the request, then its route call.
      for (const id of [1, 2]) {
        const { reply, message } = yield* postToolCall(org.key, id, "search_actions", {})
        expect(reply.status).toBe(200)
        expect(message.result.isError).toBeUndefined()
      }
      // Hit 5 is this request, hit 6 its route call: refused by the route.
      const third = yield* postToolCall(org.key, 3, "search_actions", {})
      expect(third.reply.status).toBe(200)
      expect(third.message.result.isError).toBe(true)
      expect(JSON.parse(third.message.result.content[0].text)).toMatchObject({ code: "RATE_LIMIT_EXCEEDED" })
      // Hit 7: refused before any MCP processing, with the contract's body and headers.
      const fourth = yield* postToolCall(org.key, 4, "search_actions", {})
      expect(fourth.reply.status).toBe(429)
      expect(fourth.reply.body).toMatchObject({ code: "RATE_LIMIT_EXCEEDED", error: expect.any(String), message: expect.any(String), request_id: expect.any(String) })
      expect(Number(fourth.reply.headers.get("retry-after"))).toBeGreaterThan(0)
      expect(fourth.reply.headers.get("ratelimit-policy")).toContain("q=5")
    })
  )
})
