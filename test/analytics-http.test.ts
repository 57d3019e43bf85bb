/**
 * Analytics end to end over HTTP: admin-only access, query validation, and the
 * aggregates computed over actions created through the real API (authorized,
 * notarized, pending approval, denied by an active deny policy). Over the typed
 * client (HttpApiClient over GatewayApi).
 */
import { expect } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { AuthorizeRequest } from "../protocol/actions.js"
import type { CreatePolicyRequest } from "../protocol/policies.js"
import { answer, client, type GatewayClient, member, register } from "./support/api.js"
import { call, type Org } from "./support/client.js"
import { liveLayer } from "./support/effect.js"
import { Gateway } from "./support/server.js"

const REPORTS = ["actions-over-time", "approval-rates", "model-agreement", "policy-denials", "top-agents"] as const

/** Each report read as sent (status and JSON body), whatever it answers. */
const reportAnswer = (api: GatewayClient, path: (typeof REPORTS)[number]) => {
  switch (path) {
    case "actions-over-time":
      return answer(api.analytics.actionsOverTime({ query: {}, responseMode: "response-only" }))
    case "approval-rates":
      return answer(api.analytics.approvalRates({ query: {}, responseMode: "response-only" }))
    case "model-agreement":
      return answer(api.analytics.modelAgreement({ query: {}, responseMode: "response-only" }))
    case "policy-denials":
      return answer(api.analytics.policyDenials({ query: {}, responseMode: "response-only" }))
    case "top-agents":
      return answer(api.analytics.topAgents({ query: {}, responseMode: "response-only" }))
  }
}

/** Authorizes an action expected to be accepted (201, decoded) or refused (status and body as sent). */
const authorize = (token: string, body: Partial<AuthorizeRequest>, expected: 201 | 403) =>
  Effect.gen(function* () {
    const api = yield* client(token)
    const payload: AuthorizeRequest = { details: "do the thing", instruction_hash: "sha256:abc", action_type: "x", ...body }
    if (expected === 201) {
      const [decoded, reply] = yield* api.actions.authorize({ payload, headers: {}, responseMode: "decoded-and-response" })
      expect(reply.status).toBe(201)
      return decoded
    }
    const refused = yield* answer(api.actions.authorize({ payload, headers: {}, responseMode: "response-only" }))
    expect(refused.status, JSON.stringify(refused.body)).toBe(expected)
    return refused.body
  })

const denyPolicy = (token: string, conditions: CreatePolicyRequest["conditions"]) =>
  Effect.gen(function* () {
    const api = yield* client(token)
    const [, reply] = yield* api.policies.create({
      payload: { name: "deny for analytics", mode: "rules", decision: "deny", conditions, activate: true },
      responseMode: "decoded-and-response"
    })
    expect(reply.status).toBe(201)
  })

const todayUtc = () => new Date().toISOString().slice(0, 10)
const mondayUtc = () => {
  const now = new Date()
  const sinceMonday = (now.getUTCDay() + 6) % 7
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - sinceMonday)).toISOString().slice(0, 10)
}

class Orgs extends Context.Service<Orgs, { readonly org: Org; readonly other: Org }>()("test/analytics-http/Orgs") {}

/** Agent a1: four actions, one of them notarized. Agent a2: one authorized, one pending approval. Agent a3: one denied by policy. No agent: one authorized, one denied. */
const seed = (org: Org) =>
  Effect.gen(function* () {
    yield* denyPolicy(org.key, [{ field: "action_type", op: "eq", value: "wire" }])
    for (let i = 0; i < 4; i++) {
      const action = yield* authorize(org.key, { action_type: "email", agent_id: "a1" }, 201)
      if (i === 0) {
        const [, done] = yield* (yield* client(org.key)).actions.notarize({
          params: { action_uuid: action.action_uuid },
          payload: { outcome: "completed" },
          responseMode: "decoded-and-response"
        })
        expect(done.status).toBe(200)
      }
    }
    yield* authorize(org.key, { action_type: "email", agent_id: "a2" }, 201)
    expect((yield* authorize(org.key, { action_type: "email", agent_id: "a2", require_approval: true }, 201)).status).toBe("pending_approval")
    yield* authorize(org.key, { action_type: "wire", agent_id: "a3" }, 403)
    yield* authorize(org.key, { action_type: "email" }, 201)
    yield* authorize(org.key, { action_type: "wire", agent_id: null }, 403)
  })

const Setup = Layer.effect(
  Orgs,
  Effect.gen(function* () {
    const orgs = yield* Effect.all({ org: register("Analytics Org"), other: register("Other Org") })
    yield* seed(orgs.org)
    return orgs
  })
).pipe(Layer.provideMerge(Gateway.layer()))

const orgApi = (pick: "org" | "other" = "org") => Effect.flatMap(Orgs, (orgs) => client(orgs[pick].key))

liveLayer(Setup)((it) => {
  it.describe("access", () => {
    it.effect("members get 403 on every report, with a JWT and with a key; owners and admins get 200", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const teammate = yield* member(org, "member")
        const admin = yield* member(org, "admin")
        for (const path of REPORTS) {
          for (const token of [teammate.token, teammate.key]) {
            const reply = yield* reportAnswer(yield* client(token), path)
            expect(reply.status, `${path}`).toBe(403)
            expect(reply.body.code).toBe("FORBIDDEN")
          }
          for (const token of [org.token, org.key, admin.token, admin.key]) {
            expect((yield* reportAnswer(yield* client(token), path)).status, path).toBe(200)
          }
        }
      })
    )

    it.effect("a key without the analytics scope gets 403", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const [created, createdReply] = yield* (yield* client(org.token)).apiKeys.create({
          payload: { name: "actions only", scopes: ["actions:write"] },
          responseMode: "decoded-and-response"
        })
        expect(createdReply.status).toBe(201)
        expect((yield* (yield* client(created.key)).analytics.approvalRates({ query: {}, responseMode: "response-only" })).status).toBe(403)
      })
    )

    it.effect("answers 401 without credentials", () =>
      Effect.gen(function* () {
        expect((yield* (yield* client()).analytics.approvalRates({ query: {}, responseMode: "response-only" })).status).toBe(401)
      })
    )
  })

  it.describe("validation", () => {
    it.effect("out-of-range or malformed days, period and limit are 422 VALIDATION_ERROR", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const server = yield* Gateway
        const bad: Array<string> = []
        for (const path of REPORTS) for (const days of ["0", "366", "abc", "-1", "1.5"]) bad.push(`${path}?days=${days}`)
        bad.push("actions-over-time?period=monthly", "top-agents?limit=0", "top-agents?limit=51", "top-agents?limit=x")
        for (const query of bad) {
          // Raw call: the typed client refuses to encode queries outside the contract.
          const reply = yield* Effect.promise(() => call(server.url, "GET", `/api/v1/analytics/${query}`, { token: org.key }))
          expect(reply.status, query).toBe(422)
          expect(reply.body.code, query).toBe("VALIDATION_ERROR")
          expect(reply.body.details.issues.length, query).toBeGreaterThan(0)
        }
      })
    )

    it.effect("accepts the bounds", () =>
      Effect.gen(function* () {
        const api = yield* orgApi()
        const replies = [
          ["approval-rates?days=1", yield* api.analytics.approvalRates({ query: { days: 1 }, responseMode: "response-only" })],
          ["approval-rates?days=365", yield* api.analytics.approvalRates({ query: { days: 365 }, responseMode: "response-only" })],
          ["top-agents?limit=1", yield* api.analytics.topAgents({ query: { limit: 1 }, responseMode: "response-only" })],
          ["top-agents?limit=50", yield* api.analytics.topAgents({ query: { limit: 50 }, responseMode: "response-only" })],
          ["actions-over-time?period=weekly", yield* api.analytics.actionsOverTime({ query: { period: "weekly" }, responseMode: "response-only" })]
        ] as const
        for (const [query, reply] of replies) expect(reply.status, query).toBe(200)
      })
    )
  })

  it.describe("aggregates", () => {
    it.effect("actions-over-time counts every action of the window per day and per week", () =>
      Effect.gen(function* () {
        const api = yield* orgApi()
        expect((yield* api.analytics.actionsOverTime({ query: {} })).data).toEqual([{ date: todayUtc(), count: 9 }])
        expect((yield* api.analytics.actionsOverTime({ query: { period: "daily", days: 1 } })).data).toEqual([{ date: todayUtc(), count: 9 }])
        expect((yield* api.analytics.actionsOverTime({ query: { period: "weekly" } })).data).toEqual([{ date: mondayUtc(), count: 9 }])
      })
    )

    it.effect("approval-rates splits approved, denied and review; total counts every action", () =>
      Effect.gen(function* () {
        const api = yield* orgApi()
        expect(yield* api.analytics.approvalRates({ query: {} })).toMatchObject({ approved: 6, denied: 2, review: 1, total: 9 })
        // request_id is not in the contract's success schema: read the body as sent.
        const rates = yield* answer(api.analytics.approvalRates({ query: {}, responseMode: "response-only" }))
        expect(rates.status).toBe(200)
        expect(rates.body).toMatchObject({ approved: 6, denied: 2, review: 1, total: 9 })
        expect(rates.body.request_id).toEqual(expect.any(String))
      })
    )

    it.effect("approval-rates counts a human denial as denied; a human approval not yet notarized only in total", () =>
      Effect.gen(function* () {
        const team = yield* register("Human Org")
        const owner = yield* client(team.token)
        const api = yield* client(team.key)
        const first = yield* authorize(team.key, { action_type: "payment", require_approval: true }, 201)
        const second = yield* authorize(team.key, { action_type: "payment", require_approval: true }, 201)
        expect((yield* owner.actions.dashboardApprove({ params: { action_uuid: first.action_uuid }, responseMode: "response-only" })).status).toBe(200)
        expect((yield* owner.actions.dashboardDeny({ params: { action_uuid: second.action_uuid }, query: {}, responseMode: "response-only" })).status).toBe(200)
        expect(yield* api.analytics.approvalRates({ query: {} })).toMatchObject({ approved: 0, denied: 1, review: 0, total: 2 })
        expect((yield* api.actions.notarize({ params: { action_uuid: first.action_uuid }, payload: {}, responseMode: "response-only" })).status).toBe(200)
        expect(yield* api.analytics.approvalRates({ query: {} })).toMatchObject({ approved: 1, denied: 1, review: 0, total: 2 })
      })
    )

    it.effect("top-agents ignores actions without an agent and orders by count", () =>
      Effect.gen(function* () {
        const api = yield* orgApi()
        expect((yield* api.analytics.topAgents({ query: {} })).data).toEqual([
          { agent_id: "a1", action_count: 4 },
          { agent_id: "a2", action_count: 2 },
          { agent_id: "a3", action_count: 1 }
        ])
        expect((yield* api.analytics.topAgents({ query: { limit: 2 } })).data.map((row) => row.agent_id)).toEqual(["a1", "a2"])
      })
    )

    it.effect(
      "policy-denials lists only types with a policy denial, by denied descending, at most 20",
      () =>
        Effect.gen(function* () {
          expect((yield* (yield* orgApi()).analytics.policyDenials({ query: {} })).data).toEqual([{ action_type: "wire", total: 2, denied: 2 }])

          const team = yield* register("Denials Org")
          yield* denyPolicy(team.key, [{ field: "details", op: "eq", value: "deny me" }])
          for (let i = 0; i < 3; i++) yield* authorize(team.key, { action_type: "big", details: "deny me" }, 403)
          yield* authorize(team.key, { action_type: "big", details: "fine" }, 201)
          for (let i = 0; i < 2; i++) yield* authorize(team.key, { action_type: "mid", details: "deny me" }, 403)
          yield* authorize(team.key, { action_type: "allowed_only", details: "fine" }, 201)
          for (let i = 0; i < 21; i++) yield* authorize(team.key, { action_type: `type_${String(i).padStart(2, "0")}`, details: "deny me" }, 403)

          const rows = (yield* (yield* client(team.key)).analytics.policyDenials({ query: {} })).data
          expect(rows).toHaveLength(20)
          expect(rows[0]).toEqual({ action_type: "big", total: 4, denied: 3 })
          expect(rows[1]).toEqual({ action_type: "mid", total: 2, denied: 2 })
          expect(rows.slice(2).every((row) => row.denied === 1 && row.total === 1)).toBe(true)
          expect(rows.some((row) => row.action_type === "allowed_only")).toBe(false)
          for (let i = 1; i < rows.length; i++) expect(rows[i - 1]!.denied).toBeGreaterThanOrEqual(rows[i]!.denied)
        }),
      60_000
    )

    it.effect("model-agreement answers zeros when there are no consensus cases", () =>
      Effect.gen(function* () {
        const agreement = yield* (yield* orgApi()).analytics.modelAgreement({ query: {} })
        expect(agreement).toMatchObject({ total_cases: 0, avg_disagreement: 0, by_decision: { APPROVE: 0, DENY: 0, REVIEW: 0 } })
      })
    )

    it.effect("another organization sees none of these actions", () =>
      Effect.gen(function* () {
        const api = yield* orgApi("other")
        expect((yield* api.analytics.actionsOverTime({ query: {} })).data).toEqual([])
        expect(yield* api.analytics.approvalRates({ query: {} })).toMatchObject({ approved: 0, denied: 0, review: 0, total: 0 })
        expect((yield* api.analytics.topAgents({ query: {} })).data).toEqual([])
        expect((yield* api.analytics.policyDenials({ query: {} })).data).toEqual([])
      })
    )
  })
})
