/**
 * `ai` and `consensus` policies (spec 000) evaluated on authorize and dry-run through the model
 * layer, against a local OpenAI-compatible server: allowing, denying, asking for review, and failing
 * closed when a model errs or is too slow; answers reused for the same action; create-time checks.
 */
import { describe, expect, it } from "vitest"
import { call, registerOrg } from "./support/client.js"
import { startFakeLlm } from "./support/fake-llm.js"
import { useFixture } from "./support/fixture.js"
import { useServer } from "./support/server.js"

const llm = useFixture(startFakeLlm, (fake) => fake.close())
const server = useServer({ OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8", OUTBOUND_ALLOW_HTTP: "true", AI_POLICY_TIMEOUT_MS: "1000" })

const PATHS = ["approve", "deny", "review", "error", "lower", "slow/3000/deny"]

/** A fresh organization (so policies do not mix between tests) with one custom model per fake path. */
const orgWithModels = async () => {
  const org = await registerOrg(server.url, `AI Policies ${Math.random()}`)
  for (const path of PATHS) {
    const reply = await call(server.url, "POST", "/api/v1/models/custom", { token: org.key, body: { name: path, model_id: path.replace(/\//g, "-"), endpoint_url: `${llm.url}/${path}/v1` } })
    expect(reply.status).toBe(201)
  }
  return org
}
const model = (path: string) => `custom:${path.replace(/\//g, "-")}`

const policy = async (token: string, body: Record<string, unknown>) => {
  const reply = await call(server.url, "POST", "/api/v1/policies", { token, body: { name: "AI guard", decision: "deny", ai_prompt: "Never move money to accounts outside the EU.", activate: true, ...body } })
  expect(reply.status).toBe(201)
  return reply.body
}
const authorize = (token: string, details = "Transfer 500 EUR to account DE89 3704 0044 0532 0130 00") =>
  call(server.url, "POST", "/api/v1/actions", { token, body: { action_type: "payment", details, agent_id: "treasurer" } })

describe("ai policies", () => {
  it("deny when the model finds a violation, with its reasoning", async () => {
    const org = await orgWithModels()
    const created = await policy(org.key, { mode: "ai", ai_models: [model("deny")] })
    const reply = await authorize(org.key)
    expect(reply.status).toBe(403)
    expect(reply.body.code).toBe("POLICY_DENIED")
    expect(JSON.stringify(reply.body)).toContain(created.id)
    expect(JSON.stringify(reply.body)).toContain("moves money outside")
  })

  it("allow when the model finds the action compliant", async () => {
    const org = await orgWithModels()
    await policy(org.key, { mode: "ai", ai_models: [model("approve")] })
    const reply = await authorize(org.key)
    expect(reply.status).toBe(201)
    expect(reply.body.status).toBe("authorized")
  })

  it("require approval when the model asks for review, errs or is too slow (fail closed, stated in warnings)", async () => {
    for (const [path, text] of [["review", /human review/], ["error", /could not be evaluated.*500/], ["slow/3000/deny", /could not be evaluated/]] as const) {
      const org = await orgWithModels()
      await policy(org.key, { mode: "ai", ai_models: [model(path)] })
      const started = Date.now()
      const reply = await authorize(org.key)
      expect(reply.status).toBe(201)
      expect(reply.body.status).toBe("pending_approval")
      expect(reply.body.warnings.join(" ")).toMatch(text)
      // The time budget (1 s here) bounds authorize.
      expect(Date.now() - started).toBeLessThan(2_500)
    }
  })

  it("reuses the model's answer for the same action and policy version, asks again after an edit", async () => {
    const org = await orgWithModels()
    const created = await policy(org.key, { mode: "ai", ai_models: [model("approve")] })
    const before = llm.calls.length
    await authorize(org.key, "same action")
    await authorize(org.key, "same action")
    expect(llm.calls.length).toBe(before + 1)
    await authorize(org.key, "another action")
    expect(llm.calls.length).toBe(before + 2)
    await call(server.url, "PATCH", `/api/v1/policies/${created.id}`, { token: org.key, body: { ai_prompt: "Never pay invoices over 10,000 EUR." } })
    await authorize(org.key, "same action")
    expect(llm.calls.length).toBe(before + 3)
  })

  it("does not ask models for actions outside the policy's scope", async () => {
    const org = await orgWithModels()
    await policy(org.key, { mode: "ai", ai_models: [model("deny")], scope: { action_types: ["refund"] } })
    const before = llm.calls.length
    expect((await authorize(org.key)).status).toBe(201)
    expect(llm.calls.length).toBe(before)
  })
})

describe("consensus policies", () => {
  it("deny when the models agree on a violation; allow when they agree it complies; review when they split", async () => {
    const denying = await orgWithModels()
    await policy(denying.key, { mode: "consensus", ai_models: [model("deny"), model("lower")] })
    // deny (0.85) vs approve (0.7): two models that disagree are MIXED → review.
    const split = await authorize(denying.key)
    expect(split.status).toBe(201)
    expect(split.body.status).toBe("pending_approval")
    expect(split.body.warnings.join(" ")).toMatch(/disagree/)

    const violating = await orgWithModels()
    await call(server.url, "POST", "/api/v1/models/custom", { token: violating.key, body: { name: "second", model_id: "deny-2", endpoint_url: `${llm.url}/deny/v1` } })
    await policy(violating.key, { mode: "consensus", ai_models: [model("deny"), "custom:deny-2"] })
    const denied = await authorize(violating.key)
    expect(denied.status).toBe(403)
    expect(denied.body.code).toBe("POLICY_DENIED")

    const agreeing = await orgWithModels()
    await policy(agreeing.key, { mode: "consensus", ai_models: [model("approve"), model("lower")] })
    expect((await authorize(agreeing.key)).body.status).toBe("authorized")

    const failing = await orgWithModels()
    await policy(failing.key, { mode: "consensus", ai_models: [model("deny"), model("error")] })
    const closed = await authorize(failing.key)
    expect(closed.body.status).toBe("pending_approval")
    expect(closed.body.warnings.join(" ")).toMatch(/could not be evaluated/)
  })

  it("the action's signed explanation records the consensus: each model's vote and the combined confidence", async () => {
    const org = await orgWithModels()
    const created = await policy(org.key, { mode: "consensus", ai_models: [model("deny"), model("lower")] })
    // deny (0.85) and approve (0.7) split: review, so the action waits for a human.
    const split = await authorize(org.key)
    expect(split.body.status).toBe("pending_approval")
    const explanation = await call(server.url, "GET", `/api/v1/actions/${split.body.action_uuid}/explanation`, { token: org.key })
    expect(explanation.status).toBe(200)
    expect(explanation.body.policy_chain).toHaveLength(1)
    const entry = explanation.body.policy_chain[0]
    expect(entry).toMatchObject({ order: 1, policy_uuid: created.id, policy_name: "AI guard", mode: "consensus", decision: "require_approval", evidence_quality: "recorded" })
    expect(entry.reasoning).toMatch(/disagree/)
    expect(entry.confidence).toEqual(expect.any(Number))
    expect(entry.model_votes.map((vote: any) => [vote.model, vote.decision, vote.confidence]).sort()).toEqual([
      [model("deny"), "deny", 0.85],
      [model("lower"), "allow", 0.7]
    ])
  })

  it("dry-run asks the models and shows their votes, changing nothing", async () => {
    const org = await orgWithModels()
    const created = await policy(org.key, { mode: "consensus", ai_models: [model("approve"), model("deny"), model("review")], decision: "require_approval" })
    const reply = await call(server.url, "POST", `/api/v1/policies/${created.id}/dry-run`, { token: org.key, body: { action_type: "payment", details: "pay 5 EUR" } })
    expect(reply.status).toBe(200)
    expect(reply.body).toMatchObject({ dry_run: true, decision: "require_approval" })
    expect(reply.body.model_votes.map((vote: any) => vote.decision).sort()).toEqual(["APPROVE", "DENY", "REVIEW"])
    const single = await policy(org.key, { mode: "ai", ai_models: [model("deny")], activate: false })
    const dry = await call(server.url, "POST", `/api/v1/policies/${single.id}/dry-run`, { token: org.key, body: { action_type: "payment", details: "pay 5 EUR" } })
    expect(dry.body).toMatchObject({ decision: "deny", confidence: 0.85 })
    expect((await call(server.url, "GET", `/api/v1/policies/${single.id}`, { token: org.key })).body.evaluation_count).toBe(0)
  })
})

describe("ai policy validation", () => {
  it("needs the text and exactly one model for ai, two or more for consensus, known to the organization", async () => {
    const org = await orgWithModels()
    const other = await registerOrg(server.url, "Other AI Org")
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ mode: "ai", ai_models: [model("approve")], ai_prompt: "" }, "POLICY_TEXT_REQUIRED"],
      [{ mode: "ai", ai_models: [] }, "MODELS_REQUIRED"],
      [{ mode: "ai", ai_models: [model("approve"), model("deny")] }, "MODELS_REQUIRED"],
      [{ mode: "consensus", ai_models: [model("approve")] }, "MODELS_REQUIRED"],
      [{ mode: "consensus", ai_models: [model("approve"), "custom:nope"] }, "INVALID_MODEL"]
    ]
    for (const [body, code] of cases) {
      const reply = await call(server.url, "POST", "/api/v1/policies", { token: org.key, body: { name: "x", decision: "deny", ai_prompt: "p", ...body } })
      expect(reply.status).toBe(400)
      expect(reply.body.code).toBe(code)
    }
    // Another organization's custom model is unknown here.
    const foreign = await call(server.url, "POST", "/api/v1/policies", { token: other.key, body: { name: "x", mode: "ai", decision: "deny", ai_prompt: "p", ai_models: [model("approve")] } })
    expect(foreign.body.code).toBe("INVALID_MODEL")
  })
})
