/**
 * The LLM gateway (CONTRACT-sdk-beyond §6) end to end, with the real `openai` and
 * `@anthropic-ai/sdk` clients configured as the published SDK helpers do, against a local fake
 * provider (test/support/fake-provider.ts): answers equal the provider's, every call is an action
 * whose receipt commits to hashes the test recomputes from what it sent and received, the
 * provider's credentials pass through untouched and are kept nowhere, refusals come in the
 * provider's error format with nothing forwarded, approval and the re-sent call, the settings
 * and metering, the flag. Streams, body and rate limits, upstream failures and the sweep:
 * llm-gateway-streams.test.ts.
 */
import Anthropic from "@anthropic-ai/sdk"
import OpenAI from "openai"
import { describe, expect, it } from "vitest"
import { addMember, call, type Org, registerOrg } from "./support/client.js"
import { eventually } from "./support/eventually.js"
import { startFakeProvider } from "./support/fake-provider.js"
import { useFixture } from "./support/fixture.js"
import {
  ANTHROPIC_KEY,
  actionOf,
  anthropicRefusal,
  anthropicVia,
  chatBody,
  createPolicy,
  detailsHash,
  gatewayEnv,
  jcsHash,
  newKey,
  nodeCall,
  OPENAI_KEY,
  openaiHeaders,
  openaiRefusal,
  openaiVia,
  outcomeHash,
  rawCall,
  receiptOf,
  receivedWith,
  rowsContaining,
  sha256Of,
  sqlOn,
  thrown,
  uniqueMarker
} from "./support/llm-gateway.js"
import { useServer } from "./support/server.js"

const fake = useFixture(startFakeProvider, (provider) => provider.close())
const server = useServer(() => gatewayEnv(fake))
const org = useFixture(() => registerOrg(server.url, "Gateway Org"))

const CHAT = "/gateway/openai/v1/chat/completions"

const actionCount = async (owner: Org): Promise<number> => {
  const reply = await call(server.url, "GET", "/api/v1/actions?per_page=1", { token: owner.key })
  expect(reply.status).toBe(200)
  return reply.body.pagination.total as number
}

describe("LLM gateway: forwarding and receipts", () => {
  it("an OpenAI JSON call answers what the provider answers, with its receipt minted under the promised id", async () => {
    const marker = uniqueMarker("json")
    const tools = [{ type: "function" as const, function: { name: "lookup_weather", parameters: { type: "object", properties: {} } } }]
    const body = chatBody("gpt-test", `Say hello ${marker}`, { tools, max_completion_tokens: 64 })
    const direct = await new OpenAI({ baseURL: `${fake.url}/v1`, apiKey: OPENAI_KEY, maxRetries: 0 }).chat.completions.create(
      chatBody("gpt-test", uniqueMarker("direct"), { tools, max_completion_tokens: 64 })
    )

    const { data, response } = await openaiVia(server, org.key).chat.completions.create(body).withResponse()
    expect(data).toEqual(direct)
    const actionUuid = response.headers.get("x-aira-action-id")!
    const receiptUuid = response.headers.get("x-aira-receipt-id")!
    expect(actionUuid).toEqual(expect.any(String))
    expect(receiptUuid).toEqual(expect.any(String))
    expect(response.headers.get("x-aira-receipt-status")).toBe("minted")
    expect(response.headers.get("x-aira-request-id")).toEqual(expect.any(String))
    expect(response.headers.get("x-request-id")).toBe("upstream-req-1")
    expect(response.headers.get("set-cookie")).toBeNull()

    // Minted before the answer was sent: readable at once.
    const receipt = await receiptOf(server, org, receiptUuid)
    expect(receipt.status, receipt.text).toBe(200)
    expect(receipt.body.action_uuid).toBe(actionUuid)
    const action = await actionOf(server, org, actionUuid)
    expect(action).toMatchObject({ action_type: "llm.openai.chat.completions", status: "notarized", outcome: "completed", model_id: "gpt-test" })
    expect(action.receipt?.receipt_uuid).toBe(receiptUuid)
    expect(action.endpoint_url).toBe(`${fake.url}/v1/chat/completions`)

    // The details: what the call is, from the body the provider received, never the prompt.
    const [sent] = receivedWith(fake, marker)
    const details = { provider: "openai", method: "POST", path: "chat/completions", model: "gpt-test", stream: false, message_count: 1, tool_names: ["lookup_weather"], max_tokens: 64 } as const
    expect(action.action_details_hash).toBe(detailsHash(details, sent!.body))
    expect(receipt.body.signed_payload.action_details_hash).toBe(action.action_details_hash)
  })

  it("the outcome hash commits to the answer's bytes, status and usage as the client received them", async () => {
    const marker = uniqueMarker("outcome")
    const answer = await openaiVia(server, org.key).chat.completions.create(chatBody("gpt-test", marker)).asResponse()
    const bytes = Buffer.from(await answer.arrayBuffer())
    expect(answer.status).toBe(200)
    expect(JSON.parse(bytes.toString("utf8")).choices[0].message.content).toBe("Hello from the fake provider.")
    const expected = outcomeHash({ status_code: 200, stream: false, input_tokens: 12, output_tokens: 7, finish_reason: "stop", end: "complete" }, bytes)
    const receipt = await receiptOf(server, org, answer.headers.get("x-aira-receipt-id")!)
    expect(receipt.status).toBe(200)
    expect(receipt.body.signed_payload.outcome_hash).toBe(expected)
    const action = await actionOf(server, org, answer.headers.get("x-aira-action-id")!)
    expect(action.outcome_hash).toBe(expected)
    // The verification route says the same receipt is valid.
    const verified = await call(server.url, "GET", `/api/v1/verify/${receipt.body.receipt_uuid}`)
    expect(verified.status).toBe(200)
    expect(verified.body.valid).toBe(true)
    expect(verified.body.signed_payload.outcome_hash).toBe(expected)
  })

  it("the provider receives the body byte for byte and its own credential, and no Aira header or Accept-Encoding", async () => {
    const marker = uniqueMarker("bytes")
    // Spacing, key order, a number JSON would rewrite, and non-ASCII text: a re-serialized body would differ.
    const text = `{ "messages" : [ {"role":"user","content":"héllo ☃ ${marker}"} ],"model":"gpt-test",  "temperature": 0.50 }`
    const answer = await rawCall(server, "POST", CHAT, {
      headers: openaiHeaders(org.key, { "accept-encoding": "gzip, br", "x-aira-something": "internal", "openai-organization": "org-test", "x-custom-header": "kept" }),
      body: text
    })
    expect(answer.status, answer.text).toBe(200)
    const [sent] = receivedWith(fake, marker)
    expect(sent).toBeDefined()
    expect(sent!.url).toBe("/v1/chat/completions")
    expect(sent!.body.equals(Buffer.from(text, "utf8"))).toBe(true)
    expect(sent!.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`)
    expect(sent!.headers["openai-organization"]).toBe("org-test")
    expect(sent!.headers["x-custom-header"]).toBe("kept")
    expect(sent!.headers["accept-encoding"]).toBeUndefined()
    expect(Object.keys(sent!.headers).filter((name) => name.startsWith("x-aira-"))).toEqual([])
    // The answer comes back uncompressed, as the provider sent it.
    expect(answer.headers.get("content-encoding")).toBeNull()
  })

  it("an Anthropic JSON call and stream through the Anthropic client (its doubled /v1/v1/ path)", async () => {
    const marker = uniqueMarker("anthropic")
    const anthropic = anthropicVia(server, org.key)
    const direct = await new Anthropic({ baseURL: fake.url, apiKey: ANTHROPIC_KEY, maxRetries: 0 }).messages.create({
      model: "claude-test",
      max_tokens: 100,
      messages: [{ role: "user", content: uniqueMarker("direct") }]
    })
    const { data, response } = await anthropic.messages.create({ model: "claude-test", max_tokens: 100, messages: [{ role: "user", content: marker }] }).withResponse()
    expect(data).toEqual(direct)
    expect(response.headers.get("x-aira-receipt-status")).toBe("minted")
    const [sent] = receivedWith(fake, marker)
    expect(sent!.url).toBe("/v1/messages")
    // This SDK version sends its key as a bearer token: forwarded unchanged.
    expect(sent!.headers.authorization).toBe(`Bearer ${ANTHROPIC_KEY}`)
    expect(sent!.headers["accept-encoding"]).toBeUndefined()
    const action = await actionOf(server, org, response.headers.get("x-aira-action-id")!)
    expect(action).toMatchObject({ action_type: "llm.anthropic.messages", status: "notarized", model_id: "claude-test" })
    const details = { provider: "anthropic", method: "POST", path: "messages", model: "claude-test", stream: false, message_count: 1, tool_names: [], max_tokens: 100 } as const
    expect(action.action_details_hash).toBe(detailsHash(details, sent!.body))

    // Streamed: the SDK reads every event (our closing comment is skipped) and the final message.
    const streamMarker = uniqueMarker("anthropic-stream")
    const stream = anthropic.messages.stream({ model: "claude-test", max_tokens: 100, messages: [{ role: "user", content: streamMarker }] })
    const texts: Array<string> = []
    stream.on("text", (piece) => texts.push(piece))
    const final = await stream.finalMessage()
    expect(texts.join("")).toBe("piece 0 piece 1 piece 2 piece 3 piece 4 ")
    expect(final.stop_reason).toBe("end_turn")
    const streamed = await stream.withResponse()
    expect(streamed.response.headers.get("x-aira-receipt-status")).toBe("pending")
    const streamedAction = streamed.response.headers.get("x-aira-action-id")!
    const done = await eventually(async () => {
      const found = await actionOf(server, org, streamedAction)
      expect(found.status).toBe("notarized")
      return found
    })
    expect(done.action_type).toBe("llm.anthropic.messages")
    expect(done.receipt?.receipt_uuid).toBe(streamed.response.headers.get("x-aira-receipt-id"))
  })

  it("the /gateway/gateway alias, query strings as sent, and the action types of embeddings and other calls", async () => {
    const marker = uniqueMarker("alias")
    const aliased = await rawCall(server, "POST", "/gateway/gateway/openai/v1/chat/completions?api-version=2024-06-01&tag=a%20b", {
      headers: openaiHeaders(org.key),
      body: JSON.stringify(chatBody("gpt-test", marker))
    })
    expect(aliased.status, aliased.text).toBe(200)
    expect(receivedWith(fake, marker)[0]!.url).toBe("/v1/chat/completions?api-version=2024-06-01&tag=a%20b")
    expect((await actionOf(server, org, aliased.headers.get("x-aira-action-id")!)).action_type).toBe("llm.openai.chat.completions")

    const openai = openaiVia(server, org.key)
    const embedded = await openai.embeddings.create({ model: "embed-test", input: uniqueMarker("embed") }).withResponse()
    expect(embedded.data.data[0]!.embedding).toEqual([0.1, 0.2])
    const embedAction = await actionOf(server, org, embedded.response.headers.get("x-aira-action-id")!)
    expect(embedAction).toMatchObject({ action_type: "llm.openai.embeddings", status: "notarized", model_id: "embed-test" })
    const embedReceipt = await receiptOf(server, org, embedded.response.headers.get("x-aira-receipt-id")!)
    expect(embedReceipt.status).toBe(200)

    const before = fake.received.length
    const models = await openai.models.list().withResponse()
    expect(models.data.data.map((model) => model.id)).toEqual(["gpt-test"])
    const sent = fake.received.slice(before).find((received) => received.url === "/v1/models")
    expect(sent?.method).toBe("GET")
    const other = await actionOf(server, org, models.response.headers.get("x-aira-action-id")!)
    expect(other).toMatchObject({ action_type: "llm.openai.other", status: "notarized", model_id: null })
    // Method and path are in the details.
    const details = { provider: "openai", method: "GET", path: "models", model: null, stream: false, message_count: null, tool_names: [], max_tokens: null } as const
    expect(other.action_details_hash).toBe(detailsHash(details, sent!.body))
  })
  it("every call type of the table gets its action type; anything else is llm.<provider>.other", async () => {
    const calls: ReadonlyArray<readonly [string, string, string]> = [
      ["POST", "/gateway/openai/v1/completions", "llm.openai.completions"],
      ["POST", "/gateway/openai/v1/responses", "llm.openai.responses"],
      ["POST", "/gateway/openai/v1/moderations", "llm.openai.moderations"],
      ["POST", "/gateway/openai/v1/images/generations", "llm.openai.images.generations"],
      ["POST", "/gateway/openai/v1/audio/speech", "llm.openai.audio.speech"],
      ["POST", "/gateway/openai/v1/files", "llm.openai.other"],
      ["PUT", "/gateway/openai/v1/chat/completions", "llm.openai.other"],
      ["POST", "/gateway/anthropic/v1/messages/count_tokens", "llm.anthropic.messages.count_tokens"],
      ["POST", "/gateway/anthropic/v1/v1/complete", "llm.anthropic.complete"],
      ["POST", "/gateway/anthropic/v1/models", "llm.anthropic.other"]
    ]
    for (const [method, path, actionType] of calls) {
      const marker = uniqueMarker("type")
      const answer = await rawCall(server, method, path, { headers: openaiHeaders(org.key), body: JSON.stringify({ model: "gpt-test", input: marker }) })
      expect(answer.status, `${method} ${path}: ${answer.text}`).toBe(200)
      const upstreamPath = path.replace(/^\/gateway\/openai\/v1/, "/v1").replace(/^\/gateway\/anthropic\/v1(\/v1)?/, "/v1")
      expect(receivedWith(fake, marker).map((sent) => `${sent.method} ${sent.url}`)).toEqual([`${method} ${upstreamPath}`])
      expect((await actionOf(server, org, answer.headers.get("x-aira-action-id")!)).action_type, `${method} ${path}`).toBe(actionType)
    }
  })

  it("query strings pass unchanged, an encoded '/' in a query value included", async () => {
    const marker = uniqueMarker("query")
    const answer = await nodeCall(server, "POST", "/gateway/openai/v1/chat/completions?after=file%2Fabc&x=..", openaiHeaders(org.key), JSON.stringify(chatBody("gpt-test", marker)))
    expect(answer.status, answer.body.toString("utf8")).toBe(200)
    expect(receivedWith(fake, marker)[0]?.url).toBe("/v1/chat/completions?after=file%2Fabc&x=..")
  })

  it("a client's own X-Request-Id request header reaches the provider", async () => {
    const marker = uniqueMarker("request-id")
    const answer = await rawCall(server, "POST", CHAT, { headers: openaiHeaders(org.key, { "x-request-id": "client-req-7" }), body: JSON.stringify(chatBody("gpt-test", marker)) })
    expect(answer.status).toBe(200)
    expect(receivedWith(fake, marker)[0]?.headers["x-request-id"]).toBe("client-req-7")
  })
})

describe("LLM gateway: refusals in the provider's format, nothing forwarded", () => {
  it("a deny policy: 403 POLICY_DENIED with the denial receipt, as OpenAI and as Anthropic", async () => {
    const denied = await registerOrg(server.url, "Gateway Deny")
    const policyUuid = await createPolicy(server, denied, {
      name: "no llm",
      decision: "deny",
      conditions: [{ field: "action_type", op: "in", value: ["llm.openai.chat.completions", "llm.anthropic.messages"] }]
    })
    const marker = uniqueMarker("deny")
    const error = await thrown(openaiVia(server, denied.key).chat.completions.create(chatBody("gpt-test", marker)))
    expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError)
    expect(error.status).toBe(403)
    expect(error.error).toEqual(openaiRefusal("permission_error", "POLICY_DENIED", { action_uuid: expect.any(String), policy_uuid: policyUuid, receipt_uuid: expect.any(String) }).error)
    const { action_uuid: actionUuid, receipt_uuid: receiptUuid } = error.error.aira
    expect(receivedWith(fake, marker)).toEqual([])
    expect(await actionOf(server, denied, actionUuid)).toMatchObject({ status: "denied_by_policy", action_type: "llm.openai.chat.completions", policy_uuid: policyUuid })
    const receipt = await receiptOf(server, denied, receiptUuid)
    expect(receipt.status).toBe(200)
    expect(receipt.body.action_uuid).toBe(actionUuid)

    const anthropicMarker = uniqueMarker("deny-anthropic")
    const refused = await thrown(anthropicVia(server, denied.key).messages.create({ model: "claude-test", max_tokens: 10, messages: [{ role: "user", content: anthropicMarker }] }))
    expect(refused).toBeInstanceOf(Anthropic.PermissionDeniedError)
    expect(refused.status).toBe(403)
    expect(refused.error).toEqual(anthropicRefusal("permission_error", "POLICY_DENIED", { action_uuid: expect.any(String), policy_uuid: policyUuid, receipt_uuid: expect.any(String) }))
    expect(receivedWith(fake, anthropicMarker)).toEqual([])
    // Another call type of the same organization is not refused.
    const embedded = await openaiVia(server, denied.key).embeddings.create({ model: "embed-test", input: "fine" })
    expect(embedded.data).toHaveLength(1)
  })

  it("policies read the prompt (context.content) and the model, but the prompt is stored nowhere", async () => {
    const guarded = await registerOrg(server.url, "Gateway Content")
    const contentPolicy = await createPolicy(server, guarded, { name: "no secrets", decision: "deny", conditions: [{ field: "context.content", op: "regex", value: "launch-code-[0-9]+" }] })
    const modelPolicy = await createPolicy(server, guarded, { name: "no blocked model", decision: "deny", conditions: [{ field: "context.model", op: "eq", value: "blocked-model" }] })
    const marker = uniqueMarker("prompt")
    const secret = `the launch-code-4711 is ${marker}`
    const denied = await rawCall(server, "POST", CHAT, { headers: openaiHeaders(guarded.key), body: JSON.stringify(chatBody("gpt-test", secret)) })
    expect(denied.status).toBe(403)
    expect(denied.json).toEqual(openaiRefusal("permission_error", "POLICY_DENIED", { action_uuid: expect.any(String), policy_uuid: contentPolicy, receipt_uuid: expect.any(String) }))
    // The system prompt and array parts are read too (Anthropic shape).
    const partsMarker = uniqueMarker("parts")
    const parts = await rawCall(server, "POST", "/gateway/anthropic/v1/messages", {
      headers: { "content-type": "application/json", "x-aira-api-key": guarded.key, "x-api-key": ANTHROPIC_KEY },
      body: JSON.stringify({ model: "claude-test", max_tokens: 5, system: "be brief", messages: [{ role: "user", content: [{ type: "text", text: `launch-code-1 ${partsMarker}` }] }] })
    })
    expect(parts.status).toBe(403)
    expect(parts.json).toEqual(anthropicRefusal("permission_error", "POLICY_DENIED", { action_uuid: expect.any(String), policy_uuid: contentPolicy, receipt_uuid: expect.any(String) }))
    const blocked = await rawCall(server, "POST", CHAT, { headers: openaiHeaders(guarded.key), body: JSON.stringify(chatBody("blocked-model", uniqueMarker("model"))) })
    expect(blocked.status).toBe(403)
    expect(blocked.json.error.aira.policy_uuid).toBe(modelPolicy)
    expect(receivedWith(fake, marker)).toEqual([])
    expect(receivedWith(fake, partsMarker)).toEqual([])

    const allowedMarker = uniqueMarker("allowed")
    const allowed = await rawCall(server, "POST", CHAT, { headers: openaiHeaders(guarded.key), body: JSON.stringify(chatBody("gpt-test", `nothing secret ${allowedMarker}`)) })
    expect(allowed.status).toBe(200)
    expect(receivedWith(fake, allowedMarker)).toHaveLength(1)

    // Neither the denied nor the forwarded prompt is in any table.
    expect(await rowsContaining(server, marker)).toEqual({})
    expect(await rowsContaining(server, partsMarker)).toEqual({})
    expect(await rowsContaining(server, allowedMarker)).toEqual({})
    const stored = await sqlOn(server, (db) => db<{ row: string }>`SELECT row_to_json(a)::text AS row FROM actions a WHERE action_uuid = ${denied.json.error.aira.action_uuid}`)
    expect(stored).toHaveLength(1)
    expect(stored[0]!.row).not.toContain("launch-code")
  })

  it("401 for a missing or invalid X-Aira-Api-Key, a dashboard JWT, or an Aira key sent as the provider's Authorization", async () => {
    const owner = await registerOrg(server.url, "Gateway Auth")
    const before = await actionCount(owner)
    const marker = uniqueMarker("auth")
    const body = JSON.stringify(chatBody("gpt-test", marker))
    const tries: Array<Record<string, string>> = [
      { "content-type": "application/json", authorization: `Bearer ${OPENAI_KEY}` },
      openaiHeaders("aira_live_not_a_real_key"),
      openaiHeaders(owner.token),
      { "content-type": "application/json", authorization: `Bearer ${owner.key}` }
    ]
    for (const headers of tries) {
      const answer = await rawCall(server, "POST", CHAT, { headers, body })
      expect(answer.status).toBe(401)
      expect(answer.json).toEqual(openaiRefusal("authentication_error", "UNAUTHORIZED"))
      expect(answer.text).not.toContain(OPENAI_KEY)
    }
    const anthropic = await rawCall(server, "POST", "/gateway/anthropic/v1/messages", { headers: { "content-type": "application/json", "x-api-key": ANTHROPIC_KEY }, body })
    expect(anthropic.status).toBe(401)
    expect(anthropic.json).toEqual(anthropicRefusal("authentication_error", "UNAUTHORIZED"))
    const error = await thrown(openaiVia(server, "aira_live_wrong").chat.completions.create(chatBody("gpt-test", marker)))
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError)
    expect(error.error.aira.code).toBe("UNAUTHORIZED")
    expect(receivedWith(fake, marker)).toEqual([])
    expect(await actionCount(owner)).toBe(before)
  })

  it("401 for a revoked key, even one the gateway just served", async () => {
    const owner = await registerOrg(server.url, "Gateway Revoked")
    const created = await call(server.url, "POST", "/api/v1/api-keys", { token: owner.token, body: { name: "short-lived" } })
    expect(created.status).toBe(201)
    const key = created.body.key as string
    expect((await rawCall(server, "POST", CHAT, { headers: openaiHeaders(key), body: JSON.stringify(chatBody("gpt-test", uniqueMarker("before-revoke"))) })).status).toBe(200)
    const revoked = await call(server.url, "DELETE", `/api/v1/api-keys/${created.body.id}`, { token: owner.token })
    expect(revoked.status, revoked.text).toBeLessThan(300)
    const marker = uniqueMarker("revoked")
    const answer = await eventually(async () => {
      const reply = await rawCall(server, "POST", CHAT, { headers: openaiHeaders(key), body: JSON.stringify(chatBody("gpt-test", marker)) })
      expect(reply.status).toBe(401)
      return reply
    })
    expect(answer.json).toEqual(openaiRefusal("authentication_error", "UNAUTHORIZED"))
    const last = uniqueMarker("revoked-last")
    expect((await rawCall(server, "POST", CHAT, { headers: openaiHeaders(key), body: JSON.stringify(chatBody("gpt-test", last)) })).status).toBe(401)
    expect(receivedWith(fake, last)).toEqual([])
  })

  it("403 FORBIDDEN for a key without actions:write", async () => {
    const owner = await registerOrg(server.url, "Gateway Scope")
    const readOnly = await newKey(server, owner, ["actions:read"])
    const marker = uniqueMarker("scope")
    const error = await thrown(openaiVia(server, readOnly).chat.completions.create(chatBody("gpt-test", marker)))
    expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError)
    expect(error.error).toEqual(openaiRefusal("permission_error", "FORBIDDEN").error)
    expect(receivedWith(fake, marker)).toEqual([])
    // A key with only actions:write is enough.
    const writer = await newKey(server, owner, ["actions:write"])
    expect((await openaiVia(server, writer).chat.completions.create(chatBody("gpt-test", uniqueMarker("writer")))).choices).toHaveLength(1)
  })

  it("400 INVALID_PATH for '..', an encoded '/' or '\\'; 404 for an unknown provider or path base", async () => {
    const before = fake.received.length
    const headers = { "content-type": "application/json", "x-aira-api-key": org.key, authorization: `Bearer ${OPENAI_KEY}` }
    const body = JSON.stringify(chatBody("gpt-test", "path"))
    for (const path of ["/gateway/openai/v1/../../api/v1/actions", "/gateway/openai/v1/chat%2Fcompletions", "/gateway/openai/v1/chat%2fcompletions", "/gateway/openai/v1/chat%5Ccompletions", "/gateway/openai/v1/a/%2e%2e/chat/completions"]) {
      const answer = await nodeCall(server, "POST", path, headers, body)
      expect(answer.status, path).toBe(400)
      expect(JSON.parse(answer.body.toString("utf8")), path).toEqual(openaiRefusal("invalid_request_error", "INVALID_PATH"))
    }
    const anthropic = await nodeCall(server, "POST", "/gateway/anthropic/v1/v1/%2e%2e/messages", headers, body)
    expect(anthropic.status).toBe(400)
    expect(JSON.parse(anthropic.body.toString("utf8"))).toEqual(anthropicRefusal("invalid_request_error", "INVALID_PATH"))
    for (const path of ["/gateway/mistral/v1/chat/completions", "/gateway/openai/v2/chat/completions", "/gateway/openai"]) {
      const answer = await nodeCall(server, "POST", path, headers, body)
      expect(answer.status, path).toBe(404)
      expect(JSON.parse(answer.body.toString("utf8")).error, path).toMatchObject({ type: "not_found_error", code: "NOT_FOUND" })
    }
    expect(fake.received.length).toBe(before)
  })

  it("422 AGENT_DECOMMISSIONED for X-Aira-Agent-Id of a decommissioned agent; a live agent's id, version and parent are recorded", async () => {
    const owner = await registerOrg(server.url, "Gateway Agents")
    const slug = `gw-agent-${process.pid}-${Date.now().toString(36)}`
    const registered = await call(server.url, "POST", "/api/v1/agents", { token: owner.key, body: { agent_slug: slug, name: "Gateway agent" } })
    expect(registered.status, registered.text).toBe(201)
    const parent = await openaiVia(server, owner.key, { "X-Aira-Agent-Id": slug }).chat.completions.create(chatBody("gpt-test", uniqueMarker("parent"))).withResponse()
    const parentUuid = parent.response.headers.get("x-aira-action-id")!
    const live = await openaiVia(server, owner.key, { "X-Aira-Agent-Id": slug, "X-Aira-Agent-Version": "1.0.0", "X-Aira-Parent-Action-Id": parentUuid })
      .chat.completions.create(chatBody("gpt-test", uniqueMarker("agent")))
      .withResponse()
    expect(await actionOf(server, owner, live.response.headers.get("x-aira-action-id")!)).toMatchObject({ agent_id: slug, agent_version: "1.0.0", parent_action_uuid: parentUuid })

    const retired = await call(server.url, "POST", `/api/v1/agents/${slug}/decommission`, { token: owner.key, body: { reason: "retired" } })
    expect(retired.status, retired.text).toBe(200)
    const marker = uniqueMarker("decommissioned")
    // The gateway may trust an agent's status from memory for a few seconds.
    const answer = await eventually(
      async () => {
        const reply = await rawCall(server, "POST", CHAT, { headers: openaiHeaders(owner.key, { "x-aira-agent-id": slug }), body: JSON.stringify(chatBody("gpt-test", marker)) })
        expect(reply.status).toBe(422)
        return reply
      },
      { timeoutMs: 15_000, intervalMs: 500 }
    )
    expect(answer.json).toEqual(openaiRefusal("invalid_request_error", "AGENT_DECOMMISSIONED"))
    const last = await rawCall(server, "POST", CHAT, { headers: openaiHeaders(owner.key, { "x-aira-agent-id": slug }), body: JSON.stringify(chatBody("gpt-test", `${marker}-last`)) })
    expect(last.status).toBe(422)
    expect(receivedWith(fake, `${marker}-last`)).toEqual([])
  })

  it("422 VALIDATION_ERROR for an X-Aira-Agent-Id longer than the authorize route allows, nothing forwarded", async () => {
    const marker = uniqueMarker("long-agent")
    const reply = await rawCall(server, "POST", CHAT, { headers: openaiHeaders(org.key, { "x-aira-agent-id": "a".repeat(201) }), body: JSON.stringify(chatBody("gpt-test", marker)) })
    expect(reply.status).toBe(422)
    expect(reply.json).toEqual(openaiRefusal("invalid_request_error", "VALIDATION_ERROR"))
    expect(receivedWith(fake, marker)).toEqual([])
  })

  it("another organization's action is nobody's parent here: X-Aira-Parent-Action-Id of it answers 404, nothing forwarded", async () => {
    const other = await registerOrg(server.url, "Gateway Other Parent")
    const theirs = await openaiVia(server, other.key).chat.completions.create(chatBody("gpt-test", uniqueMarker("their-parent"))).withResponse()
    const theirUuid = theirs.response.headers.get("x-aira-action-id")!
    const marker = uniqueMarker("foreign-parent")
    const reply = await rawCall(server, "POST", CHAT, { headers: openaiHeaders(org.key, { "x-aira-parent-action-id": theirUuid }), body: JSON.stringify(chatBody("gpt-test", marker)) })
    expect(reply.status).toBe(404)
    expect(reply.json).toEqual(openaiRefusal("not_found_error", "NOT_FOUND"))
    expect(receivedWith(fake, marker)).toEqual([])
  })

  it("whitelist strict mode: 403 ENDPOINT_NOT_WHITELISTED for an upstream not listed; listed, it goes through", async () => {
    const owner = await registerOrg(server.url, "Gateway Whitelist")
    const strict = await call(server.url, "PUT", "/api/v1/endpoint-whitelist/settings", { token: owner.token, body: { mode: "strict" } })
    expect(strict.status, strict.text).toBe(200)
    const marker = uniqueMarker("whitelist")
    const refused = await rawCall(server, "POST", CHAT, { headers: openaiHeaders(owner.key), body: JSON.stringify(chatBody("gpt-test", marker)) })
    expect(refused.status).toBe(403)
    expect(refused.json.error).toMatchObject({ type: "permission_error", param: null, code: "ENDPOINT_NOT_WHITELISTED", aira: { code: "ENDPOINT_NOT_WHITELISTED" } })
    expect(receivedWith(fake, marker)).toEqual([])
    const added = await call(server.url, "POST", "/api/v1/endpoint-whitelist", { token: owner.token, body: { url_pattern: `${fake.url}/v1/*`, name: "fake provider" } })
    expect(added.status, added.text).toBe(201)
    const listed = uniqueMarker("whitelisted")
    const allowed = await eventually(async () => {
      const reply = await rawCall(server, "POST", CHAT, { headers: openaiHeaders(owner.key), body: JSON.stringify(chatBody("gpt-test", listed)) })
      expect(reply.status).toBe(200)
      return reply
    })
    expect((await actionOf(server, owner, allowed.headers.get("x-aira-action-id")!)).endpoint_url).toBe(`${fake.url}/v1/chat/completions`)
  })
})

describe("LLM gateway: approval", () => {
  it("require_approval → 403 APPROVAL_REQUIRED; once approved the same request runs under that action, once", async () => {
    const owner = await registerOrg(server.url, "Gateway Approval")
    const policyUuid = await createPolicy(server, owner, { name: "review llm", decision: "require_approval", conditions: [{ field: "action_type", op: "eq", value: "llm.openai.chat.completions" }] })
    const openai = openaiVia(server, owner.key)
    const marker = uniqueMarker("approval")
    const body = chatBody("gpt-test", marker)
    const error = await thrown(openai.chat.completions.create(body))
    expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError)
    // The policy that asked is named; no receipt before a human decides.
    expect(error.error).toEqual(openaiRefusal("permission_error", "APPROVAL_REQUIRED", { action_uuid: expect.any(String), policy_uuid: policyUuid }).error)
    const actionUuid: string = error.error.aira.action_uuid
    expect(receivedWith(fake, marker)).toEqual([])
    const pending = await actionOf(server, owner, actionUuid)
    expect(pending).toMatchObject({ status: "pending_approval", action_type: "llm.openai.chat.completions", outcome_hash: null })
    expect(pending.policy_uuid).toBe(policyUuid)

    // Not approved yet: re-sending with the id is refused.
    const early = await thrown(openai.chat.completions.create(body, { headers: { "X-Aira-Action-Id": actionUuid } }))
    expect(early.status).toBe(409)
    expect(early.error).toEqual(openaiRefusal("invalid_request_error", "ACTION_MISMATCH", { action_uuid: expect.anything() }).error)

    const approved = await call(server.url, "POST", `/api/v1/actions/${actionUuid}/dashboard-approve`, { token: owner.token })
    expect(approved.status, approved.text).toBe(200)

    // Another body under the approved id: 409, and the approval is not used up.
    const other = await thrown(openai.chat.completions.create(chatBody("gpt-test", `${marker} and more`), { headers: { "X-Aira-Action-Id": actionUuid } }))
    expect(other.status).toBe(409)
    expect(other.error.aira.code).toBe("ACTION_MISMATCH")
    const otherPath = await thrown(openai.completions.create({ model: "gpt-test", prompt: marker }, { headers: { "X-Aira-Action-Id": actionUuid } }))
    expect(otherPath.status).toBe(409)
    expect(receivedWith(fake, marker)).toEqual([])

    const { data, response } = await openai.chat.completions.create(body, { headers: { "X-Aira-Action-Id": actionUuid } }).withResponse()
    expect(data.choices[0]!.message.content).toBe("Hello from the fake provider.")
    expect(response.headers.get("x-aira-action-id")).toBe(actionUuid)
    expect(response.headers.get("x-aira-receipt-status")).toBe("minted")
    expect(receivedWith(fake, marker)).toHaveLength(1)
    const ran = await actionOf(server, owner, actionUuid)
    expect(ran.status).toBe("notarized")
    expect(ran.receipt?.receipt_uuid).toBe(response.headers.get("x-aira-receipt-id"))

    const again = await thrown(openai.chat.completions.create(body, { headers: { "X-Aira-Action-Id": actionUuid } }))
    expect(again.status).toBe(409)
    expect(again.error.aira.code).toBe("ACTION_MISMATCH")
    expect(receivedWith(fake, marker)).toHaveLength(1)

    // Another organization's action id, or an action that is not a gateway call: 409 too.
    const stranger = await registerOrg(server.url, "Gateway Stranger")
    const foreign = await thrown(openaiVia(server, stranger.key).chat.completions.create(body, { headers: { "X-Aira-Action-Id": actionUuid } }))
    expect(foreign.status).toBe(409)
    const plain = await call(server.url, "POST", "/api/v1/actions", { token: owner.key, body: { action_type: "report.send", details: "not a gateway call" } })
    expect(plain.status).toBe(201)
    const notGateway = await thrown(openai.chat.completions.create(body, { headers: { "X-Aira-Action-Id": plain.body.action_uuid } }))
    expect(notGateway.status).toBe(409)
    expect(receivedWith(fake, marker)).toHaveLength(1)
  })
})

describe("LLM gateway: settings and metering", () => {
  it("GET/PUT /api/v1/gateway/settings: default off, owner only; on, the details are the request body itself", async () => {
    const owner = await registerOrg(server.url, "Gateway Settings")
    const initial = await call(server.url, "GET", "/api/v1/gateway/settings", { token: owner.key })
    expect(initial.status).toBe(200)
    expect(initial.body).toEqual({ store_details: false, updated_at: null, request_id: expect.any(String) })

    const teammate = await addMember(server.url, owner, "member")
    const refused = await call(server.url, "PUT", "/api/v1/gateway/settings", { token: teammate.token, body: { store_details: true } })
    expect(refused.status).toBe(403)
    expect(refused.body.code).toBe("FORBIDDEN")
    expect((await call(server.url, "PUT", "/api/v1/gateway/settings", { token: owner.token, body: { store_details: "yes" } })).status).toBe(422)
    const admin = await addMember(server.url, owner, "admin")
    const byAdmin = await call(server.url, "PUT", "/api/v1/gateway/settings", { token: admin.token, body: { store_details: false } })
    expect(byAdmin.status, byAdmin.text).toBe(200)
    expect(byAdmin.body.store_details).toBe(false)
    const readOnly = await newKey(server, owner, ["gateway:read"])
    expect((await call(server.url, "GET", "/api/v1/gateway/settings", { token: readOnly })).status).toBe(200)
    expect((await call(server.url, "PUT", "/api/v1/gateway/settings", { token: readOnly, body: { store_details: true } })).status).toBe(403)

    const put = await call(server.url, "PUT", "/api/v1/gateway/settings", { token: owner.token, body: { store_details: true } })
    expect(put.status, put.text).toBe(200)
    expect(put.body).toEqual({ store_details: true, updated_at: expect.stringMatching(/Z$/), request_id: expect.any(String) })
    expect((await call(server.url, "GET", "/api/v1/gateway/settings", { token: owner.key })).body).toMatchObject({ store_details: true, updated_at: put.body.updated_at })

    const marker = uniqueMarker("stored")
    const text = JSON.stringify(chatBody("gpt-test", marker))
    const answer = await rawCall(server, "POST", CHAT, { headers: openaiHeaders(owner.key), body: text })
    expect(answer.status).toBe(200)
    const action = await actionOf(server, owner, answer.headers.get("x-aira-action-id")!)
    expect(action.action_details_hash).toBe(sha256Of(text))
    // Stored through the sealed details envelope, not as plain text in the table.
    expect(action.details_storage_key).not.toBeNull()
    // Over 1,000,000 characters: the digest details instead.
    const longMarker = uniqueMarker("stored-long")
    const long = JSON.stringify(chatBody("gpt-test", `${longMarker} ${"z".repeat(1_000_001)}`))
    const longAnswer = await rawCall(server, "POST", CHAT, { headers: openaiHeaders(owner.key), body: long })
    expect(longAnswer.status).toBe(200)
    const longAction = await actionOf(server, owner, longAnswer.headers.get("x-aira-action-id")!)
    const details = { provider: "openai", method: "POST", path: "chat/completions", model: "gpt-test", stream: false, message_count: 1, tool_names: [], max_tokens: null } as const
    expect(longAction.action_details_hash).toBe(detailsHash(details, Buffer.from(long)))
  })

  it("meters one gateway_request per forwarded call, subject = the model (or the path)", async () => {
    const owner = await registerOrg(server.url, "Gateway Metering")
    const openai = openaiVia(server, owner.key)
    await openai.chat.completions.create(chatBody("gpt-meter-a", uniqueMarker("meter")))
    await openai.embeddings.create({ model: "embed-meter", input: "x" })
    await openai.models.list()
    // Refused calls are not forwarded and not metered.
    await createPolicy(server, owner, { name: "deny b", decision: "deny", conditions: [{ field: "model_id", op: "eq", value: "gpt-meter-b" }] })
    expect((await thrown(openai.chat.completions.create(chatBody("gpt-meter-b", "x")))).status).toBe(403)
    const rows = await eventually(async () => {
      const found = await sqlOn(server, (db) => db<{ subject: string }>`SELECT subject FROM usage_events WHERE org_uuid = ${owner.orgUuid} AND event_type = 'gateway_request' ORDER BY id`)
      expect(found).toHaveLength(3)
      return found
    })
    expect(rows.map((row) => row.subject).sort()).toEqual(["embed-meter", "gpt-meter-a", "models"])
  })
})

describe("LLM gateway: the flag and what is kept", () => {
  it("404 when the llm_gateway flag is off for the organization", async () => {
    const on = await registerOrg(server.url, "Gateway Flag On")
    const off = await registerOrg(server.url, "Gateway Flag Off")
    const admin = { "x-admin-key": "test-admin-key" }
    const send = (owner: Org, marker: string) => rawCall(server, "POST", CHAT, { headers: openaiHeaders(owner.key), body: JSON.stringify(chatBody("gpt-test", marker)) })
    try {
      // Stored, not global, with one organization listed: off for every other one.
      const created = await call(server.url, "POST", "/api/v1/admin/feature-flags", { headers: admin, body: { key: "llm_gateway", enabled_global: false, enabled_org_ids: [on.orgUuid] } })
      expect(created.status, created.text).toBe(201)
      const marker = uniqueMarker("flag")
      const refused = await eventually(async () => {
        const reply = await send(off, marker)
        expect(reply.status).toBe(404)
        return reply
      })
      expect(refused.json).toEqual(openaiRefusal("not_found_error", "NOT_FOUND"))
      expect(receivedWith(fake, marker)).toEqual([])
      expect((await send(on, uniqueMarker("flag-on"))).status).toBe(200)
      // The organization's own toggle turns it off for itself.
      const toggled = await call(server.url, "PUT", "/api/v1/feature-flags/llm_gateway", { token: on.token, body: { enabled: false } })
      expect(toggled.status, toggled.text).toBe(200)
      const onMarker = uniqueMarker("flag-toggled")
      await eventually(async () => expect((await send(on, onMarker)).status).toBe(404))
      expect(receivedWith(fake, onMarker)).toEqual([])
    } finally {
      // Back to the default (on) for the rest of the file.
      await call(server.url, "DELETE", "/api/v1/admin/feature-flags/llm_gateway", { headers: admin })
    }
    await eventually(async () => expect((await send(off, uniqueMarker("flag-back"))).status).toBe(200))
  })

  it("the provider keys are in no table after every call of this file", async () => {
    expect(await rowsContaining(server, OPENAI_KEY)).toEqual({})
    expect(await rowsContaining(server, ANTHROPIC_KEY)).toEqual({})
    // Sanity: the search finds what is there.
    expect(Object.keys(await rowsContaining(server, "llm.openai.chat.completions")).length).toBeGreaterThan(0)
    expect(jcsHash({ b: 1, a: 2 })).toBe(sha256Of('{"a":2,"b":1}'))
  })
})
