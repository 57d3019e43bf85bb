/**
 * Credentials of model providers and custom endpoints never leave: not in any answer, event,
 * socket frame, stored case or log line, even when an endpoint's refusal quotes the credential
 * back (it is scrubbed from the error before anything keeps it). Logs captured at debug level.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { setLogLevel } from "../src/platform/log.js"
import { call, registerOrg } from "./support/client.js"
import { startFakeLlm } from "./support/fake-llm.js"
import { useFixture } from "./support/fixture.js"
import { useServer } from "./support/server.js"
import { connected, subscribed } from "./support/socket-client.js"

const llm = useFixture(startFakeLlm, (fake) => fake.close())
const server = useServer({ OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8", OUTBOUND_ALLOW_HTTP: "true" })

const AUTH = "Bearer sk-endpoint-secret-5f1e2d3c"
const PROVIDER_KEY = "sk-provider-secret-9a8b7c6d"
const logged: Array<string> = []
const realWrite = process.stdout.write.bind(process.stdout)

beforeAll(() => {
  setLogLevel("debug")
  process.stdout.write = ((chunk: string | Uint8Array) => {
    logged.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"))
    return true
  }) as typeof process.stdout.write
})
afterAll(() => {
  process.stdout.write = realWrite
  setLogLevel("silent")
})

describe("model credentials", () => {
  it("appear nowhere, even when an endpoint quotes them back", async () => {
    const org = await registerOrg(server.url, "Secrets Org")
    const socket = await connected(`ws://127.0.0.1:${server.config.port}/api/v1/ws`, org.key)
    await subscribed(socket, "notifications")
    const answers: Array<string> = []
    const keep = async (reply: Promise<{ text: string; status: number }>) => {
      const done = await reply
      answers.push(done.text)
      return done
    }
    await keep(call(server.url, "POST", "/api/v1/provider-credentials", { token: org.key, body: { provider: "direct_b", credentials: { api_key: PROVIDER_KEY } } }))
    for (const path of ["echo-auth", "approve", "deny"]) {
      const created = await keep(call(server.url, "POST", "/api/v1/models/custom", { token: org.key, body: { name: path, model_id: path, endpoint_url: `${llm.url}/${path}/v1`, auth_header: AUTH } }))
      expect(created.status).toBe(201)
    }
    const models = await keep(call(server.url, "GET", "/api/v1/models/custom", { token: org.key }))
    const id = JSON.parse(models.text).models.find((model: any) => model.model_id === "echo-auth").id
    const tested = await keep(call(server.url, "POST", `/api/v1/models/custom/${id}/test`, { token: org.key }))
    expect(JSON.parse(tested.text).error).toContain("[redacted]")

    const quoted = await keep(call(server.url, "POST", "/api/v1/cases", { token: org.key, body: { details: "x", models: ["custom:echo-auth", "custom:approve", "custom:deny"] } }))
    expect(quoted.status).toBe(201)
    expect(JSON.parse(quoted.text).case_results[0].error).toContain("[redacted]")
    const failedAll = await keep(call(server.url, "POST", "/api/v1/cases", { token: org.key, body: { details: "y", models: ["custom:echo-auth", "gpt-4o"] } }))
    expect(failedAll.status).toBe(503)
    await keep(call(server.url, "GET", "/api/v1/models", { token: org.key }))
    await keep(call(server.url, "GET", "/api/v1/provider-credentials", { token: org.key }))
    await keep(call(server.url, "POST", "/api/v1/policies", { token: org.key, body: { name: "p", mode: "ai", decision: "deny", ai_prompt: "no", ai_models: ["custom:echo-auth"], activate: true } }))
    await keep(call(server.url, "POST", "/api/v1/actions", { token: org.key, body: { action_type: "t", details: "d" } }))
    // Kept: lets any background write land before the stored rows are searched for the secret (an absence check).
    await new Promise((resolve) => setTimeout(resolve, 200))

    // The endpoint did receive it: the check below is not vacuous.
    expect(llm.calls.some((recorded) => recorded.headers.authorization === AUTH)).toBe(true)
    const stored = await server.run(
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
    const everything = [...answers, socket.frames.map((frame) => JSON.stringify(frame)).join("\n"), logged.join(""), stored]
    socket.close()
    expect(logged.length).toBeGreaterThan(0)
    for (const text of everything) {
      expect(text).not.toContain("sk-endpoint-secret")
      expect(text).not.toContain("sk-provider-secret")
    }
  })
})
