/**
 * Custom models (spec 002) against a local OpenAI-compatible server: CRUD, validation, the
 * Authorization value sealed and never answered, `/test` reporting every kind of endpoint failure
 * inside a 200, custom content paths and guided decoding, and the catalogue view.
 * Over the typed client (HttpApiClient over GatewayApi).
 */
import { expect } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql"
import type { NewCustomModel } from "../protocol/models.js"
import { answer, client, member, register } from "./support/api.js"
import { call, type Org } from "./support/client.js"
import { liveLayer } from "./support/effect.js"
import { type FakeLlm, startFakeLlm } from "./support/fake-llm.js"
import { Gateway } from "./support/server.js"

class Orgs extends Context.Service<Orgs, { readonly org: Org }>()("test/custom-models/Orgs") {}
class Llm extends Context.Service<Llm, FakeLlm>()("test/custom-models/Llm") {}

const LlmLayer = Layer.effect(
  Llm,
  Effect.acquireRelease(
    Effect.promise(startFakeLlm),
    (fake) => Effect.promise(() => fake.close())
  )
)

const Setup = Layer.effect(Orgs, Effect.all({ org: register("Custom Models Org") })).pipe(
  Layer.provideMerge(Gateway.layer({ OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8", OUTBOUND_ALLOW_HTTP: "true" })),
  Layer.provideMerge(LlmLayer)
)

const SECRET = "Bearer sk-local-very-secret-token-123"

/** The organization's typed client (its API key). */
const orgClient = Effect.flatMap(Orgs, ({ org }) => client(org.key))

/** A create as `token`, read as sent (status and JSON body). */
const create = (token: string, payload: NewCustomModel) =>
  answer(Effect.flatMap(client(token), (api) => api.customModels.create({ payload, responseMode: "response-only" })))

let counter = 0
/** Registers a model on the fake server's `path`; the decoded model. */
const registerModel = (path: string, extra: Partial<NewCustomModel> = {}) =>
  Effect.gen(function* () {
    const llm = yield* Llm
    const api = yield* orgClient
    const [model, reply] = yield* api.customModels.create({
      payload: { name: `Local ${path}`, model_id: `local-${path.replace(/\W/g, "-")}-${++counter}`, endpoint_url: `${llm.url}/${path}/v1`, ...extra },
      responseMode: "decoded-and-response"
    })
    expect(reply.status).toBe(201)
    return model
  })

const test = (id: string) => Effect.flatMap(orgClient, (api) => api.customModels.test({ params: { id } }))

liveLayer(Setup)((it) => {
  it.describe("custom models", () => {
    it.effect("registers one with defaults, seals the auth header and never answers it", () =>
      Effect.gen(function* () {
        const llm = yield* Llm
        const server = yield* Gateway
        const { org } = yield* Orgs
        const api = yield* orgClient
        // Read as sent: request_id and the raw text are checked.
        const reply = yield* create(org.key, { name: "vLLM in our VPC", model_id: "llama-3.3-70b", endpoint_url: `${llm.url}/approve/v1`, auth_header: SECRET })
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
        expect(JSON.stringify(reply.body)).not.toContain("sk-local")
        const id: string = reply.body.id

        const [listed, listedReply] = yield* api.customModels.list({ responseMode: "decoded-and-response" })
        expect(listedReply.status).toBe(200)
        expect(listed.models.map((model) => model.id)).toContain(id)
        expect(listed.data).toEqual(listed.models)
        expect(listed.pagination.total).toBe(listed.models.length)
        expect(yield* listedReply.text).not.toContain("sk-local")
        expect((yield* api.customModels.get({ params: { id } })).has_auth).toBe(true)

        const stored = yield* Effect.promise(() =>
          server.run(
            Effect.gen(function* () {
              const sql = yield* SqlClient.SqlClient
              return yield* sql`SELECT sealed_auth FROM custom_models WHERE id = ${id}`
            })
          )
        )
        expect(String((stored[0] as any).sealed_auth)).not.toContain("sk-local")

        // The test call sends the header as the Authorization value, and answers ok.
        const [tested, testedReply] = yield* api.customModels.test({ params: { id }, responseMode: "decoded-and-response" })
        expect(testedReply.status).toBe(200)
        expect(tested).toMatchObject({ status: "ok", response_valid: true, error: null, structured_output: { decision: "APPROVE", confidence: 0.9 } })
        expect(tested.latency_ms).toBeGreaterThanOrEqual(0)
        expect(yield* testedReply.text).not.toContain("sk-local")
        const sent = llm.calls.at(-1)!
        expect(sent.headers.authorization).toBe(SECRET)
        expect(sent.body.model).toBe("llama-3.3-70b")
        expect(sent.body.response_format?.type).toBe("json_schema")
        const after = yield* api.customModels.get({ params: { id } })
        expect(after.status).toBe("ok")
        expect(after.last_tested).not.toBeNull()
      })
    )

    it.effect("validates every field and names each problem", () =>
      Effect.gen(function* () {
        const llm = yield* Llm
        const server = yield* Gateway
        const { org } = yield* Orgs
        const reply = yield* create(org.key, {
          name: "",
          model_id: "has space",
          endpoint_url: "ftp://x",
          timeout_ms: 500,
          request_schema: { type: "grpc" },
          response_schema: { content_path: "../etc" }
        })
        expect(reply.status).toBe(422)
        const paths = reply.body.details.issues.map((issue: any) => issue.path).sort()
        expect(paths).toEqual(["endpoint_url", "model_id", "name", "request_schema.type", "response_schema.content_path", "timeout_ms"])
        expect((yield* create(org.key, { name: "x", model_id: "y", endpoint_url: llm.url, timeout_ms: 120_001 })).status).toBe(422)
        // Raw: a body without the required endpoint_url cannot be encoded by the typed client.
        expect((yield* Effect.promise(() => call(server.url, "POST", "/api/v1/models/custom", { token: org.key, body: { name: "x", model_id: "y" } }))).status).toBe(422)
        // Public addresses need HTTPS; plain http only inside the allow-list.
        expect((yield* create(org.key, { name: "x", model_id: "y-public", endpoint_url: "http://93.184.216.34/v1" })).status).toBe(422)
        expect((yield* create(org.key, { name: "x", model_id: "y-meta", endpoint_url: "https://169.254.169.254/v1" })).status).toBe(422)
      })
    )

    it.effect("keeps model_id unique in the organization (409), but not across organizations", () =>
      Effect.gen(function* () {
        const llm = yield* Llm
        const { org } = yield* Orgs
        const first = yield* registerModel("approve")
        const again = yield* create(org.key, { name: "dup", model_id: first.model_id, endpoint_url: `${llm.url}/approve/v1` })
        expect(again.status).toBe(409)
        expect(again.body.code).toBe("MODEL_ID_EXISTS")
        const other = yield* register("Other Custom Org")
        expect((yield* create(other.key, { name: "same id", model_id: first.model_id, endpoint_url: `${llm.url}/approve/v1` })).status).toBe(201)
      })
    )

    it.effect("updates only the fields given, can remove the auth header, and resets the test status", () =>
      Effect.gen(function* () {
        const llm = yield* Llm
        const server = yield* Gateway
        const { org } = yield* Orgs
        const api = yield* orgClient
        const model = yield* registerModel("approve", { auth_header: SECRET })
        const params = { id: model.id }
        yield* test(model.id)
        // Raw: model_id is not a field of the contract's patch (the typed client would not send it); the server must ignore it.
        const renamed = yield* Effect.promise(() =>
          call(server.url, "PUT", `/api/v1/models/custom/${model.id}`, { token: org.key, body: { name: "Renamed", timeout_ms: 5_000, model_id: "ignored" } })
        )
        expect(renamed.status).toBe(200)
        expect(renamed.body).toMatchObject({ name: "Renamed", timeout_ms: 5_000, model_id: model.model_id, has_auth: true, status: "untested" })
        expect(renamed.body.updated_at).not.toBeNull()
        const cleared = yield* api.customModels.update({ params, payload: { auth_header: null } })
        expect(cleared.has_auth).toBe(false)
        yield* test(model.id)
        expect(llm.calls.at(-1)!.headers.authorization).toBeUndefined()
        expect((yield* api.customModels.update({ params, payload: { timeout_ms: 999 }, responseMode: "response-only" })).status).toBe(422)
      })
    )

    it.effect("reports endpoint failures inside a 200: HTTP 500, garbage, unreachable, timeout", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* orgClient
        const cases: Array<[string, Partial<NewCustomModel>, RegExp]> = [
          ["error", {}, /500/],
          ["garbage", {}, /decision, confidence/],
          ["slow/3000/approve", { timeout_ms: 1_000 }, /1000 ms/]
        ]
        for (const [path, extra, message] of cases) {
          const model = yield* registerModel(path, extra)
          const [reply, response] = yield* api.customModels.test({ params: { id: model.id }, responseMode: "decoded-and-response" })
          expect(response.status).toBe(200)
          expect(reply).toMatchObject({ status: "error", response_valid: false, structured_output: null })
          expect(reply.error).toMatch(message)
          expect((yield* api.customModels.get({ params: { id: model.id } })).status).toBe("error")
        }
        const closed = yield* create(org.key, { name: "gone", model_id: `gone-${++counter}`, endpoint_url: "http://127.0.0.1:9/v1" })
        const unreachable = yield* test(closed.body.id)
        expect(unreachable.status).toBe("error")
        expect(typeof unreachable.error).toBe("string")
      })
    )

    it.effect("reads the answer at a custom content_path and sends guided_json and extra_body when asked", () =>
      Effect.gen(function* () {
        const llm = yield* Llm
        const model = yield* registerModel("nested/deny", {
          response_schema: { type: "openai_compatible", content_path: "output.text" },
          request_schema: { type: "openai_compatible", model: "served-name", guided_json: true, extra_body: { temperature: 0 } }
        })
        const reply = yield* test(model.id)
        expect(reply).toMatchObject({ status: "ok", structured_output: { decision: "DENY" } })
        const sent = llm.calls.at(-1)!
        expect(sent.body.model).toBe("served-name")
        expect(sent.body.guided_json?.required).toEqual(["decision", "confidence", "key_factors", "reasoning"])
        expect(sent.body.temperature).toBe(0)
      })
    )

    it.effect("lists custom models in the catalogue as custom:<model_id>, byok, and accepts them in preferences", () =>
      Effect.gen(function* () {
        const api = yield* orgClient
        const model = yield* registerModel("review")
        const catalogue = yield* api.models.catalogue({ query: {} })
        const entry = catalogue.find((item) => item.model_id === `custom:${model.model_id}`)
        expect(entry).toEqual({ model_id: `custom:${model.model_id}`, provider: "custom", display_name: model.name, available: true, max_tokens: null, credential_source: "byok" })
        expect((yield* (yield* client()).models.catalogue({ query: {} })).some((item) => item.provider === "custom")).toBe(false)
        const disabled = { disabled_models: [`custom:${model.model_id}`] }
        expect((yield* api.modelPreferences.putCases({ payload: disabled, responseMode: "response-only" })).status).toBe(200)
        const hidden = yield* api.models.catalogue({ query: {} })
        expect(hidden.some((item) => item.model_id === `custom:${model.model_id}`)).toBe(false)
        yield* api.modelPreferences.putCases({ payload: { disabled_models: [] } })
        const other = yield* client((yield* register("Catalogue Other")).key)
        expect((yield* other.modelPreferences.putCases({ payload: disabled, responseMode: "response-only" })).status).toBe(422)
      })
    )

    it.effect("deletes (204), then 404; another organization's id is 404; read-only keys cannot write", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* orgClient
        const model = yield* registerModel("approve")
        const params = { id: model.id }
        const intruder = yield* client((yield* register("Custom Intruder")).key)
        for (const reply of [
          intruder.customModels.get({ params, responseMode: "response-only" }),
          intruder.customModels.update({ params, payload: { name: "x" }, responseMode: "response-only" }),
          intruder.customModels.remove({ params, responseMode: "response-only" }),
          intruder.customModels.test({ params, responseMode: "response-only" })
        ]) {
          expect((yield* reply).status).toBe(404)
        }
        const teammate = yield* client((yield* member(org, "member")).token)
        const readOnly = yield* teammate.apiKeys.create({ payload: { name: "read only", scopes: ["models:read"] } })
        const write = yield* (yield* client(readOnly.key)).customModels.remove({ params, responseMode: "response-only" })
        expect(write.status).toBe(403)
        const removed = yield* api.customModels.remove({ params, responseMode: "response-only" })
        expect(removed.status).toBe(204)
        expect((yield* api.customModels.get({ params, responseMode: "response-only" })).status).toBe(404)
      })
    )
  })
})
