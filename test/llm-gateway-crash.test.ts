/**
 * LLM gateway calls across SIGKILL: a call the gateway authorized and was forwarding when its
 * process was killed is notarized `failed` (`end: "timeout"`) by the sweep of the restarted
 * process, under the receipt id the call was promised (`rct_` + the action id's suffix), with
 * the outcome the contract names; and calls after the restart run as usual.
 */
import { createHash } from "node:crypto"
import canonicalize from "canonicalize"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, registerOrg } from "./support/client.js"
import { type FreshDatabase, freshDatabaseUrl, UNUSED_DATA_DIR } from "./support/database.js"
import { eventually } from "./support/eventually.js"
import { type FakeProvider, startFakeProvider } from "./support/fake-provider.js"
import { type ServerProcess, spawnServer } from "./support/process.js"

let database: FreshDatabase | undefined
let provider: FakeProvider | undefined
let server: ServerProcess | undefined
let env: Record<string, string>

beforeAll(async () => {
  database = await freshDatabaseUrl()
  provider = await startFakeProvider()
  env = {
    DATABASE_URL: database.url,
    DATA_DIR: UNUSED_DATA_DIR,
    REDIS_URL: "",
    MASTER_KEY: "c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1",
    RATE_LIMIT_PER_MINUTE: "100000",
    LOG_LEVEL: "error",
    OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8",
    OUTBOUND_ALLOW_HTTP: "true",
    OPENAI_UPSTREAM_URL: `${provider.url}/v1`,
    // Heartbeats every 100 ms: a killed process's calls count as abandoned 300 ms after its last one.
    GATEWAY_SWEEP_MS: "300"
  }
})

afterAll(async () => {
  await server?.stop()
  await provider?.close()
  await database?.drop()
})

const sha256 = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`

describe("LLM gateway across SIGKILL", () => {
  it("notarizes a call cut by a kill as failed, under the receipt id it was promised", async () => {
    server = await spawnServer(env)
    const org = await registerOrg(server.url, "Gateway Crash")
    // The provider never answers `hang`: the call stays open in the gateway until the kill.
    const pending = fetch(`${server.url}/gateway/openai/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-aira-api-key": org.key, authorization: "Bearer sk-crash" },
      body: JSON.stringify({ model: "hang", stream: true, messages: [{ role: "user", content: "never answered" }] })
    }).catch(() => undefined)
    const open = await eventually(async () => {
      const listed = await call(server!.url, "GET", "/api/v1/actions?action_type=llm.openai.chat.completions", { token: org.key })
      expect(listed.body.data).toHaveLength(1)
      expect(listed.body.data[0].status).toBe("authorized")
      return listed.body.data[0] as { action_uuid: string }
    })
    await server.kill()
    await pending

    server = await spawnServer(env)
    const promised = `rct_${open.action_uuid.slice(open.action_uuid.indexOf("_") + 1)}`
    const closed = await eventually(
      async () => {
        const action = await call(server!.url, "GET", `/api/v1/actions/${open.action_uuid}`, { token: org.key })
        expect(action.body.status).toBe("failed")
        return action.body
      },
      { timeoutMs: 15_000 }
    )
    const receipt = await call(server.url, "GET", `/api/v1/receipts/${promised}`, { token: org.key })
    expect(receipt.status).toBe(200)
    expect(receipt.body.action_uuid).toBe(open.action_uuid)
    const outcome = canonicalize({
      status_code: null,
      stream: true,
      input_tokens: null,
      output_tokens: null,
      finish_reason: null,
      response_sha256: null,
      response_bytes: 0,
      end: "timeout"
    }) as string
    expect(JSON.stringify(receipt.body)).toContain(sha256(outcome))
    expect(closed.receipt?.receipt_uuid ?? promised).toBe(promised)

    // The restarted gateway serves calls as usual.
    const after = await fetch(`${server.url}/gateway/openai/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-aira-api-key": org.key, authorization: "Bearer sk-crash" },
      body: JSON.stringify({ model: "gpt-test", messages: [{ role: "user", content: "hello again" }] })
    })
    expect(after.status).toBe(200)
    expect(after.headers.get("x-aira-receipt-status")).toBe("minted")
  }, 120_000)
})
