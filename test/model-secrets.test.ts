/**
 * Credentials of model providers and custom endpoints never leave: not in any answer, event,
 * socket frame, stored case or log line, even when an endpoint's refusal quotes the credential
 * back (it is scrubbed from the error before anything keeps it). Logs captured at debug level.
 * Requests over the typed client (HttpApiClient over GatewayApi); every answer is kept as sent
 * (`response-only`): decoding would drop the fields a secret could hide in.
 */
import { expect } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql"
import { client, register } from "./support/api.js"
import { liveLayer } from "./support/effect.js"
import { type FakeLlm, startFakeLlm } from "./support/fake-llm.js"
import { captureDebugOutput } from "./support/log.js"
import { Gateway } from "./support/server.js"
import { connected, subscribed } from "./support/socket-client.js"

class Llm extends Context.Service<Llm, FakeLlm>()("test/model-secrets/Llm") {}

const LlmLayer = Layer.effect(
  Llm,
  Effect.acquireRelease(
    Effect.promise(startFakeLlm),
    (fake) => Effect.promise(() => fake.close())
  )
)

const Setup = Gateway.layer({ OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8", OUTBOUND_ALLOW_HTTP: "true" }).pipe(Layer.provideMerge(LlmLayer))

const AUTH = "Bearer sk-endpoint-secret-5f1e2d3c"
const PROVIDER_KEY = "sk-provider-secret-9a8b7c6d"


liveLayer(Setup)((it) => {
  it.describe("model credentials", () => {
    it.effect("appear nowhere, even when an endpoint quotes them back", () =>
      Effect.gen(function* () {
        // Opened after the server started, which sets its own level.
        const logged = yield* captureDebugOutput
        const llm = yield* Llm
        const server = yield* Gateway
        const org = yield* register("Secrets Org")
        const api = yield* client(org.key)
        const socket = yield* Effect.acquireRelease(
          Effect.promise(() => connected(`ws://127.0.0.1:${server.config.port}/api/v1/ws`, org.key)),
          (opened) => Effect.sync(() => opened.close())
        )
        yield* Effect.promise(() => subscribed(socket, "notifications"))
        const answers: Array<string> = []
        /** The answer's status and text as sent, kept for the search below. */
        const keep = <E, R>(reply: Effect.Effect<HttpClientResponse.HttpClientResponse, E, R>) =>
          Effect.flatMap(reply, (response) =>
            Effect.map(response.text, (text) => {
              answers.push(text)
              return { status: response.status, text }
            })
          )
        yield* keep(api.providerCredentials.save({ payload: { provider: "direct_b", credentials: { api_key: PROVIDER_KEY } }, responseMode: "response-only" }))
        for (const path of ["echo-auth", "approve", "deny"]) {
          const created = yield* keep(
            api.customModels.create({ payload: { name: path, model_id: path, endpoint_url: `${llm.url}/${path}/v1`, auth_header: AUTH }, responseMode: "response-only" })
          )
          expect(created.status).toBe(201)
        }
        const models = yield* keep(api.customModels.list({ responseMode: "response-only" }))
        const id = JSON.parse(models.text).models.find((model: any) => model.model_id === "echo-auth").id
        const tested = yield* keep(api.customModels.test({ params: { id }, responseMode: "response-only" }))
        expect(JSON.parse(tested.text).error).toContain("[redacted]")

        const quoted = yield* keep(
          api.cases.create({ headers: {}, payload: { details: "x", models: ["custom:echo-auth", "custom:approve", "custom:deny"] }, responseMode: "response-only" })
        )
        expect(quoted.status).toBe(201)
        expect(JSON.parse(quoted.text).case_results[0].error).toContain("[redacted]")
        const failedAll = yield* keep(api.cases.create({ headers: {}, payload: { details: "y", models: ["custom:echo-auth", "gpt-4o"] }, responseMode: "response-only" }))
        expect(failedAll.status).toBe(503)
        yield* keep(api.models.catalogue({ query: {}, responseMode: "response-only" }))
        yield* keep(api.providerCredentials.list({ responseMode: "response-only" }))
        yield* keep(
          api.policies.create({
            payload: { name: "p", mode: "ai", decision: "deny", ai_prompt: "no", ai_models: ["custom:echo-auth"], activate: true },
            responseMode: "response-only"
          })
        )
        yield* keep(api.actions.authorize({ headers: {}, payload: { action_type: "t", details: "d" }, responseMode: "response-only" }))
        // Kept: lets any background write land before the stored rows are searched for the secret (an absence check).
        yield* Effect.sleep(200)

        // The endpoint did receive it: the check below is not vacuous.
        expect(llm.calls.some((recorded) => recorded.headers.authorization === AUTH)).toBe(true)
        const stored = yield* Effect.promise(() =>
          server.run(
            Effect.gen(function* () {
              const sql = yield* SqlClient.SqlClient
              const rows = yield* sql`SELECT row_to_json(t)::text AS json FROM (SELECT * FROM cases WHERE org_uuid = ${org.orgUuid}) t
                                UNION ALL SELECT data::text FROM events WHERE org_uuid = ${org.orgUuid}
                                UNION ALL SELECT row_to_json(a)::text FROM audit_log a WHERE org_uuid = ${org.orgUuid}
                                UNION ALL SELECT row_to_json(c)::text FROM custom_models c WHERE org_uuid = ${org.orgUuid}
                                UNION ALL SELECT row_to_json(p)::text FROM provider_credentials p WHERE org_uuid = ${org.orgUuid}`
              return rows.map((row: any) => row.json).join("\n")
            })
          )
        )
        const everything = [...answers, socket.frames.map((frame) => JSON.stringify(frame)).join("\n"), logged.join(""), stored]
        socket.close()
        expect(logged.length).toBeGreaterThan(0)
        for (const text of everything) {
          expect(text).not.toContain("sk-endpoint-secret")
          expect(text).not.toContain("sk-provider-secret")
        }
      })
    )
  })
})
