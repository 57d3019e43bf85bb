/**
 * Custom models (spec 002) against a local OpenAI-compatible server: CRUD, validation, the
 * Authorization value sealed and never answered, `/test` reporting every kind of endpoint failure
 * inside a 200, custom content paths and guided decoding, and the catalogue view.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { addMember, call, registerOrg } from "./support/client.js"
import { startFakeLlm } from "./support/fake-llm.js"
import { useFixture } from "./support/fixture.js"
import { useServer } from "./support/server.js"

const llm = useFixture(startFakeLlm, (fake) => fake.close())
const server = useServer({ OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8", OUTBOUND_ALLOW_HTTP: "true" })
const org = useFixture(() => registerOrg(server.url, "Custom Models Org"))

const SECRET = "Bearer sk-local-very-secret-token-123"

const create = (token: string, body: Record<string, unknown>) => call(server.url, "POST", "/api/v1/models/custom", { token, body })
let counter = 0
const register = async (path: string, extra: Record<string, unknown> = {}) => {
  const reply = await create(org.key, { name: `Local ${path}`, model_id: `local-${path.replace(/\W/g, "-")}-${++counter}`, endpoint_url: `${llm.url}/${path}/v1`, ...extra })
  expect(reply.status).toBe(201)
  return reply.body
}
const test = (id: string) => call(server.url, "POST", `/api/v1/models/custom/${id}/test`, { token: org.key })

describe("custom models", () => {
  it("registers one with defaults, seals the auth header and never answers it", async () => {
    const reply = await create(org.key, { name: "vLLM in our VPC", model_id: "llama-3.3-70b", endpoint_url: `${llm.url}/approve/v1`, auth_header: SECRET })
    expect(reply.status).toBe(201)
    expect(reply.body).toMatchObject({
      name: "vLLM in our VPC",
      model_id: "llama-3.3-70b",
      has_auth: true,
      request_schema: { type: "openai_compatible" },
      response_schema: { type: "openai_compatible", content_path: "choices.0.message.content" },
      timeout_ms: 30_000,
      status: "untested",
      last_tested: null
    })
    expect(typeof reply.body.id).toBe("string")
    expect(typeof reply.body.request_id).toBe("string")
    expect(reply.text).not.toContain("sk-local")

    const listed = await call(server.url, "GET", "/api/v1/models/custom", { token: org.key })
    expect(listed.status).toBe(200)
    expect(listed.body.models.map((model: any) => model.id)).toContain(reply.body.id)
    expect(listed.body.data).toEqual(listed.body.models)
    expect(listed.body.pagination.total).toBe(listed.body.models.length)
    expect(listed.text).not.toContain("sk-local")
    expect((await call(server.url, "GET", `/api/v1/models/custom/${reply.body.id}`, { token: org.key })).body.has_auth).toBe(true)

    const stored = await server.run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        return yield* sql`SELECT sealed_auth FROM custom_models WHERE id = ${reply.body.id}`
      })
    )
    expect(String((stored[0] as any).sealed_auth)).not.toContain("sk-local")

    // The test call sends the header as the Authorization value, and answers ok.
    const tested = await test(reply.body.id)
    expect(tested.status).toBe(200)
    expect(tested.body).toMatchObject({ status: "ok", response_valid: true, error: null, structured_output: { decision: "APPROVE", confidence: 0.9 } })
    expect(tested.body.latency_ms).toBeGreaterThanOrEqual(0)
    expect(tested.text).not.toContain("sk-local")
    const sent = llm.calls.at(-1)!
    expect(sent.headers.authorization).toBe(SECRET)
    expect(sent.body.model).toBe("llama-3.3-70b")
    expect(sent.body.response_format?.type).toBe("json_schema")
    const after = await call(server.url, "GET", `/api/v1/models/custom/${reply.body.id}`, { token: org.key })
    expect(after.body.status).toBe("ok")
    expect(after.body.last_tested).not.toBeNull()
  })

  it("validates every field and names each problem", async () => {
    const reply = await create(org.key, { name: "", model_id: "has space", endpoint_url: "ftp://x", timeout_ms: 500, request_schema: { type: "grpc" }, response_schema: { content_path: "../etc" } })
    expect(reply.status).toBe(422)
    const paths = reply.body.details.issues.map((issue: any) => issue.path).sort()
    expect(paths).toEqual(["endpoint_url", "model_id", "name", "request_schema.type", "response_schema.content_path", "timeout_ms"])
    expect((await create(org.key, { name: "x", model_id: "y", endpoint_url: llm.url, timeout_ms: 120_001 })).status).toBe(422)
    expect((await create(org.key, { name: "x", model_id: "y" })).status).toBe(422)
    // Public addresses need HTTPS; plain http only inside the allow-list.
    expect((await create(org.key, { name: "x", model_id: "y-public", endpoint_url: "http://93.184.216.34/v1" })).status).toBe(422)
    expect((await create(org.key, { name: "x", model_id: "y-meta", endpoint_url: "https://169.254.169.254/v1" })).status).toBe(422)
  })

  it("keeps model_id unique in the organization (409), but not across organizations", async () => {
    const first = await register("approve")
    const again = await create(org.key, { name: "dup", model_id: first.model_id, endpoint_url: `${llm.url}/approve/v1` })
    expect(again.status).toBe(409)
    expect(again.body.code).toBe("MODEL_ID_EXISTS")
    const other = await registerOrg(server.url, "Other Custom Org")
    expect((await create(other.key, { name: "same id", model_id: first.model_id, endpoint_url: `${llm.url}/approve/v1` })).status).toBe(201)
  })

  it("updates only the fields given, can remove the auth header, and resets the test status", async () => {
    const model = await register("approve", { auth_header: SECRET })
    await test(model.id)
    const renamed = await call(server.url, "PUT", `/api/v1/models/custom/${model.id}`, { token: org.key, body: { name: "Renamed", timeout_ms: 5_000, model_id: "ignored" } })
    expect(renamed.status).toBe(200)
    expect(renamed.body).toMatchObject({ name: "Renamed", timeout_ms: 5_000, model_id: model.model_id, has_auth: true, status: "untested" })
    expect(renamed.body.updated_at).not.toBeNull()
    const cleared = await call(server.url, "PUT", `/api/v1/models/custom/${model.id}`, { token: org.key, body: { auth_header: null } })
    expect(cleared.body.has_auth).toBe(false)
    await test(model.id)
    expect(llm.calls.at(-1)!.headers.authorization).toBeUndefined()
    expect((await call(server.url, "PUT", `/api/v1/models/custom/${model.id}`, { token: org.key, body: { timeout_ms: 999 } })).status).toBe(422)
  })

  it("reports endpoint failures inside a 200: HTTP 500, garbage, unreachable, timeout", async () => {
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ["error", {}, /500/],
      ["garbage", {}, /decision, confidence/],
      ["slow/3000/approve", { timeout_ms: 1_000 }, /1000 ms/]
    ]
    for (const [path, extra, message] of cases) {
      const model = await register(path, extra)
      const reply = await test(model.id)
      expect(reply.status).toBe(200)
      expect(reply.body).toMatchObject({ status: "error", response_valid: false, structured_output: null })
      expect(reply.body.error).toMatch(message)
      expect((await call(server.url, "GET", `/api/v1/models/custom/${model.id}`, { token: org.key })).body.status).toBe("error")
    }
    const closed = await create(org.key, { name: "gone", model_id: `gone-${++counter}`, endpoint_url: "http://127.0.0.1:9/v1" })
    const unreachable = await test(closed.body.id)
    expect(unreachable.body.status).toBe("error")
    expect(typeof unreachable.body.error).toBe("string")
  })

  it("reads the answer at a custom content_path and sends guided_json and extra_body when asked", async () => {
    const model = await register("nested/deny", {
      response_schema: { type: "openai_compatible", content_path: "output.text" },
      request_schema: { type: "openai_compatible", model: "served-name", guided_json: true, extra_body: { temperature: 0 } }
    })
    const reply = await test(model.id)
    expect(reply.body).toMatchObject({ status: "ok", structured_output: { decision: "DENY" } })
    const sent = llm.calls.at(-1)!
    expect(sent.body.model).toBe("served-name")
    expect(sent.body.guided_json?.required).toEqual(["decision", "confidence", "key_factors", "reasoning"])
    expect(sent.body.temperature).toBe(0)
  })

  it("lists custom models in the catalogue as custom:<model_id>, byok, and accepts them in preferences", async () => {
    const model = await register("review")
    const catalogue = await call(server.url, "GET", "/api/v1/models", { token: org.key })
    const entry = catalogue.body.find((item: any) => item.model_id === `custom:${model.model_id}`)
    expect(entry).toEqual({ model_id: `custom:${model.model_id}`, provider: "custom", display_name: model.name, available: true, max_tokens: null, credential_source: "byok" })
    expect((await call(server.url, "GET", "/api/v1/models")).body.some((item: any) => item.provider === "custom")).toBe(false)
    expect((await call(server.url, "PUT", "/api/v1/models/preferences", { token: org.key, body: { disabled_models: [`custom:${model.model_id}`] } })).status).toBe(200)
    const hidden = await call(server.url, "GET", "/api/v1/models", { token: org.key })
    expect(hidden.body.some((item: any) => item.model_id === `custom:${model.model_id}`)).toBe(false)
    await call(server.url, "PUT", "/api/v1/models/preferences", { token: org.key, body: { disabled_models: [] } })
    const other = await registerOrg(server.url, "Catalogue Other")
    expect((await call(server.url, "PUT", "/api/v1/models/preferences", { token: other.key, body: { disabled_models: [`custom:${model.model_id}`] } })).status).toBe(422)
  })

  it("deletes (204), then 404; another organization's id is 404; read-only keys cannot write", async () => {
    const model = await register("approve")
    const other = await registerOrg(server.url, "Custom Intruder")
    for (const [method, path] of [["GET", ""], ["PUT", ""], ["DELETE", ""], ["POST", "/test"]] as const) {
      const reply = await call(server.url, method, `/api/v1/models/custom/${model.id}${path}`, { token: other.key, body: method === "PUT" ? { name: "x" } : undefined })
      expect(reply.status).toBe(404)
    }
    const member = await addMember(server.url, org, "member")
    const readOnly = await call(server.url, "POST", "/api/v1/api-keys", { token: member.token, body: { name: "read only", scopes: ["models:read"] } })
    const write = await call(server.url, "DELETE", `/api/v1/models/custom/${model.id}`, { token: readOnly.body.key })
    expect(write.status).toBe(403)
    const removed = await call(server.url, "DELETE", `/api/v1/models/custom/${model.id}`, { token: org.key })
    expect(removed.status).toBe(204)
    expect((await call(server.url, "GET", `/api/v1/models/custom/${model.id}`, { token: org.key })).status).toBe(404)
  })
})
