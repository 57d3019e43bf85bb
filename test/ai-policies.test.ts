/**
 * `ai` and `consensus` policies (spec 000) evaluated on authorize and dry-run through the model
 * layer, against a local OpenAI-compatible server: allowing, denying, asking for review, and failing
 * closed when a model errs or is too slow; answers reused for the same action; create-time checks.
 * Over the typed client (HttpApiClient over GatewayApi).
 */
import { expect } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { CreatePolicyRequest } from "../protocol/policies.js"
import { answer, client, register } from "./support/api.js"
import { liveLayer } from "./support/effect.js"
import { type FakeLlm, startFakeLlm } from "./support/fake-llm.js"
import { Gateway } from "./support/server.js"

class Llm extends Context.Service<Llm, FakeLlm>()("test/ai-policies/Llm") {}

const LlmLayer = Layer.effect(
  Llm,
  Effect.acquireRelease(
    Effect.promise(startFakeLlm),
    (fake) => Effect.promise(() => fake.close())
  )
)

const Setup = Gateway.layer({ OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8", OUTBOUND_ALLOW_HTTP: "true", AI_POLICY_TIMEOUT_MS: "1000" }).pipe(Layer.provideMerge(LlmLayer))

const PATHS = ["approve", "deny", "review", "error", "lower", "slow/3000/deny"]

const addModel = (key: string, name: string, modelId: string, path: string) =>
  Effect.gen(function* () {
    const llm = yield* Llm
    const [, reply] = yield* (yield* client(key)).customModels.create({
      payload: { name, model_id: modelId, endpoint_url: `${llm.url}/${path}/v1` },
      responseMode: "decoded-and-response"
    })
    expect(reply.status).toBe(201)
  })

/** A fresh organization (so policies do not mix between tests) with one custom model per fake path. */
const orgWithModels = Effect.gen(function* () {
  const org = yield* register(`AI Policies ${Math.random()}`)
  for (const path of PATHS) yield* addModel(org.key, path, path.replace(/\//g, "-"), path)
  return org
})
const model = (path: string) => `custom:${path.replace(/\//g, "-")}`

const policy = (token: string, payload: Partial<CreatePolicyRequest> & { readonly mode: string }) =>
  Effect.gen(function* () {
    const [created, reply] = yield* (yield* client(token)).policies.create({
      payload: { name: "AI guard", decision: "deny", ai_prompt: "Never move money to accounts outside the EU.", activate: true, ...payload },
      responseMode: "decoded-and-response"
    })
    expect(reply.status).toBe(201)
    return created
  })

const DETAILS = "Transfer 500 EUR to account DE89 3704 0044 0532 0130 00"
const payment = (details: string) => ({ action_type: "payment", details, agent_id: "treasurer" })
/** An authorize answered 201, decoded. */
const authorized = (token: string, details = DETAILS) =>
  Effect.gen(function* () {
    const [created, reply] = yield* (yield* client(token)).actions.authorize({ headers: {}, payload: payment(details), responseMode: "decoded-and-response" })
    expect(reply.status).toBe(201)
    return created
  })
/** An authorize as answered (status and JSON body). */
const authorize = (token: string, details = DETAILS) =>
  Effect.flatMap(client(token), (api) => answer(api.actions.authorize({ headers: {}, payload: payment(details), responseMode: "response-only" })))

liveLayer(Setup)((it) => {
  it.describe("ai policies", () => {
    it.effect("deny when the model finds a violation, with its reasoning", () =>
      Effect.gen(function* () {
        const org = yield* orgWithModels
        const created = yield* policy(org.key, { mode: "ai", ai_models: [model("deny")] })
        const reply = yield* authorize(org.key)
        expect(reply.status).toBe(403)
        expect(reply.body.code).toBe("POLICY_DENIED")
        expect(JSON.stringify(reply.body)).toContain(created.id)
        expect(JSON.stringify(reply.body)).toContain("moves money outside")
      })
    )

    it.effect("allow when the model finds the action compliant", () =>
      Effect.gen(function* () {
        const org = yield* orgWithModels
        yield* policy(org.key, { mode: "ai", ai_models: [model("approve")] })
        expect((yield* authorized(org.key)).status).toBe("authorized")
      })
    )

    it.effect("require approval when the model asks for review, errs or is too slow (fail closed, stated in warnings)", () =>
      Effect.gen(function* () {
        for (const [path, text] of [["review", /human review/], ["error", /could not be evaluated.*500/], ["slow/3000/deny", /could not be evaluated/]] as const) {
          const org = yield* orgWithModels
          yield* policy(org.key, { mode: "ai", ai_models: [model(path)] })
          const api = yield* client(org.key)
          const started = Date.now()
          const [created, reply] = yield* api.actions.authorize({ headers: {}, payload: payment(DETAILS), responseMode: "decoded-and-response" })
          expect(reply.status).toBe(201)
          expect(created.status).toBe("pending_approval")
          expect(created.warnings!.join(" ")).toMatch(text)
          // The time budget (1 s here) bounds authorize.
          expect(Date.now() - started).toBeLessThan(2_500)
        }
      })
    )

    it.effect("reuses the model's answer for the same action and policy version, asks again after an edit", () =>
      Effect.gen(function* () {
        const llm = yield* Llm
        const org = yield* orgWithModels
        const created = yield* policy(org.key, { mode: "ai", ai_models: [model("approve")] })
        const before = llm.calls.length
        yield* authorized(org.key, "same action")
        yield* authorized(org.key, "same action")
        expect(llm.calls.length).toBe(before + 1)
        yield* authorized(org.key, "another action")
        expect(llm.calls.length).toBe(before + 2)
        yield* (yield* client(org.key)).policies.update({ params: { policy_uuid: created.id }, payload: { ai_prompt: "Never pay invoices over 10,000 EUR." } })
        yield* authorized(org.key, "same action")
        expect(llm.calls.length).toBe(before + 3)
      })
    )

    it.effect("does not ask models for actions outside the policy's scope", () =>
      Effect.gen(function* () {
        const llm = yield* Llm
        const org = yield* orgWithModels
        yield* policy(org.key, { mode: "ai", ai_models: [model("deny")], scope: { action_types: ["refund"] } })
        const before = llm.calls.length
        yield* authorized(org.key)
        expect(llm.calls.length).toBe(before)
      })
    )
  })

  it.describe("consensus policies", () => {
    it.effect("deny when the models agree on a violation; allow when they agree it complies; review when they split", () =>
      Effect.gen(function* () {
        const denying = yield* orgWithModels
        yield* policy(denying.key, { mode: "consensus", ai_models: [model("deny"), model("lower")] })
        // deny (0.85) vs approve (0.7): two models that disagree are MIXED → review.
        const split = yield* authorized(denying.key)
        expect(split.status).toBe("pending_approval")
        expect(split.warnings!.join(" ")).toMatch(/disagree/)

        const violating = yield* orgWithModels
        yield* addModel(violating.key, "second", "deny-2", "deny")
        yield* policy(violating.key, { mode: "consensus", ai_models: [model("deny"), "custom:deny-2"] })
        const denied = yield* authorize(violating.key)
        expect(denied.status).toBe(403)
        expect(denied.body.code).toBe("POLICY_DENIED")

        const agreeing = yield* orgWithModels
        yield* policy(agreeing.key, { mode: "consensus", ai_models: [model("approve"), model("lower")] })
        expect((yield* authorized(agreeing.key)).status).toBe("authorized")

        const failing = yield* orgWithModels
        yield* policy(failing.key, { mode: "consensus", ai_models: [model("deny"), model("error")] })
        const closed = yield* authorized(failing.key)
        expect(closed.status).toBe("pending_approval")
        expect(closed.warnings!.join(" ")).toMatch(/could not be evaluated/)
      })
    )

    it.effect("the action's signed explanation records the consensus: each model's vote and the combined confidence", () =>
      Effect.gen(function* () {
        const org = yield* orgWithModels
        const created = yield* policy(org.key, { mode: "consensus", ai_models: [model("deny"), model("lower")] })
        // deny (0.85) and approve (0.7) split: review, so the action waits for a human.
        const split = yield* authorized(org.key)
        expect(split.status).toBe("pending_approval")
        const [explanation, reply] = yield* (yield* client(org.key)).explanations.explain({
          params: { action_uuid: split.action_uuid },
          responseMode: "decoded-and-response"
        })
        expect(reply.status).toBe(200)
        expect(explanation.policy_chain).toHaveLength(1)
        const entry = explanation.policy_chain[0]!
        expect(entry).toMatchObject({ order: 1, policy_uuid: created.id, policy_name: "AI guard", mode: "consensus", decision: "require_approval", evidence_quality: "recorded" })
        expect(entry.reasoning).toMatch(/disagree/)
        expect(entry.confidence).toEqual(expect.any(Number))
        expect(entry.model_votes!.map((vote) => [vote.model, vote.decision, vote.confidence]).sort()).toEqual([
          [model("deny"), "deny", 0.85],
          [model("lower"), "allow", 0.7]
        ])
      })
    )

    it.effect("dry-run asks the models and shows their votes, changing nothing", () =>
      Effect.gen(function* () {
        const org = yield* orgWithModels
        const api = yield* client(org.key)
        const payload = { action_type: "payment", details: "pay 5 EUR" }
        const created = yield* policy(org.key, { mode: "consensus", ai_models: [model("approve"), model("deny"), model("review")], decision: "require_approval" })
        const [dryRun, reply] = yield* api.policies.dryRun({ params: { policy_uuid: created.id }, payload, responseMode: "decoded-and-response" })
        expect(reply.status).toBe(200)
        expect(dryRun).toMatchObject({ dry_run: true, decision: "require_approval" })
        expect(dryRun.model_votes!.map((vote) => vote.decision).sort()).toEqual(["APPROVE", "DENY", "REVIEW"])
        const single = yield* policy(org.key, { mode: "ai", ai_models: [model("deny")], activate: false })
        const dry = yield* api.policies.dryRun({ params: { policy_uuid: single.id }, payload })
        expect(dry).toMatchObject({ decision: "deny", confidence: 0.85 })
        expect((yield* api.policies.get({ params: { policy_uuid: single.id } })).evaluation_count).toBe(0)
      })
    )
  })

  it.describe("ai policy validation", () => {
    it.effect("needs the text and exactly one model for ai, two or more for consensus, known to the organization", () =>
      Effect.gen(function* () {
        const org = yield* orgWithModels
        const other = yield* register("Other AI Org")
        const create = (key: string, payload: CreatePolicyRequest) =>
          Effect.flatMap(client(key), (api) => answer(api.policies.create({ payload, responseMode: "response-only" })))
        const cases: Array<[Partial<CreatePolicyRequest> & { readonly mode: string }, string]> = [
          [{ mode: "ai", ai_models: [model("approve")], ai_prompt: "" }, "POLICY_TEXT_REQUIRED"],
          [{ mode: "ai", ai_models: [] }, "MODELS_REQUIRED"],
          [{ mode: "ai", ai_models: [model("approve"), model("deny")] }, "MODELS_REQUIRED"],
          [{ mode: "consensus", ai_models: [model("approve")] }, "MODELS_REQUIRED"],
          [{ mode: "consensus", ai_models: [model("approve"), "custom:nope"] }, "INVALID_MODEL"]
        ]
        for (const [payload, code] of cases) {
          const reply = yield* create(org.key, { name: "x", decision: "deny", ai_prompt: "p", ...payload })
          expect(reply.status).toBe(400)
          expect(reply.body.code).toBe(code)
        }
        // Another organization's custom model is unknown here.
        const foreign = yield* create(other.key, { name: "x", mode: "ai", decision: "deny", ai_prompt: "p", ai_models: [model("approve")] })
        expect(foreign.body.code).toBe("INVALID_MODEL")
      })
    )
  })
})
