/** Policies over HTTP: CRUD, lifecycle conflicts, validation codes, dry-run, cross-org 404s. */
import { expect } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Layer from "effect/Layer"
import { BUILTIN_MODELS } from "../protocol/models.js"
import type { CreatePolicyRequest } from "../protocol/policies.js"
import { answer, client, type GatewayClient, member, register } from "./support/api.js"
import { call, type Org } from "./support/client.js"
import { liveLayer } from "./support/effect.js"
import { Gateway } from "./support/server.js"

class Orgs extends Context.Service<Orgs, { readonly org: Org; readonly other: Org }>()("test/policies-crud/Orgs") {}

const Setup = Layer.effect(Orgs, Effect.all({ org: register("Policies Co"), other: register("Other Co") })).pipe(Layer.provideMerge(Gateway.layer()))

const rules = (extra: Partial<CreatePolicyRequest> = {}): CreatePolicyRequest => ({
  name: "Block large payments",
  mode: "rules",
  decision: "deny",
  priority: 10,
  conditions: [{ field: "context.amount", op: "gt", value: 1000 }],
  ...extra
})

/** The organization's typed client (its API key). */
const orgClient = Effect.flatMap(Orgs, ({ org }) => client(org.key))

const create = (payload: CreatePolicyRequest, api: Effect.Effect<GatewayClient, never, Gateway | Orgs> = orgClient) =>
  Effect.flatMap(api, (policies) => policies.policies.create({ payload, responseMode: "decoded-and-response" }))

/** A create expected to be refused: its status and body as sent. */
const refusedCreate = (payload: CreatePolicyRequest, api: Effect.Effect<GatewayClient, never, Gateway | Orgs> = orgClient) =>
  answer(Effect.flatMap(api, (policies) => policies.policies.create({ payload, responseMode: "response-only" })))

const firstModel = () => BUILTIN_MODELS[0]!.model_id

liveLayer(Setup)((it) => {
  it.describe("policies CRUD", () => {
    it.effect("creates a draft by default and an active policy with activate:true", () =>
      Effect.gen(function* () {
        const [draft, draftReply] = yield* create(rules({ scope: { agent_ids: ["bot-1"], action_types: ["payment"] } }))
        expect(draftReply.status).toBe(201)
        expect(draft.id).toMatch(/^pol_/)
        expect(draft.status).toBe("draft")
        expect(draft.active).toBe(false)
        expect(draft.conditions).toEqual([{ field: "context.amount", op: "gt", value: 1000 }])
        expect(draft.scope).toEqual({ agent_ids: ["bot-1"], action_types: ["payment"] })

        const [active, activeReply] = yield* create(rules({ activate: true }))
        expect(activeReply.status).toBe(201)
        expect(active.status).toBe("active")
        expect(active.active).toBe(true)
      })
    )

    it.effect("lists with policies and data, pagination and filters", () =>
      Effect.gen(function* () {
        const api = yield* orgClient
        const { conditions: _none, ...scan } = rules({ name: "a scan", mode: "content_scan" })
        yield* create(scan)
        const [all, allReply] = yield* api.policies.list({ query: { per_page: 1 }, responseMode: "decoded-and-response" })
        expect(allReply.status).toBe(200)
        expect(all.policies).toEqual(all.data)
        expect(all.policies).toHaveLength(1)
        expect(all.pagination.per_page).toBe(1)
        expect(all.pagination.has_more).toBe(true)
        const scans = yield* api.policies.list({ query: { mode: "content_scan" } })
        expect(scans.policies.every((p) => p.mode === "content_scan")).toBe(true)
        expect(scans.policies.length).toBeGreaterThan(0)
        const active = yield* api.policies.list({ query: { status: "active" } })
        expect(active.policies.every((p) => p.status === "active")).toBe(true)
        // per_page=500 is outside the contract's range: sent raw, as the typed client would refuse to encode it.
        const { org } = yield* Orgs
        const bad = yield* Effect.flatMap(Gateway, (server) => Effect.promise(() => call(server.url, "GET", "/api/v1/policies?per_page=500", { token: org.key })))
        expect(bad.status).toBe(422)
      })
    )

    it.effect("detail carries scope, evaluation_count, last_evaluated_at and the AI fields", () =>
      Effect.gen(function* () {
        const [created, createdReply] = yield* create({
          name: "AI review",
          mode: "ai",
          decision: "require_approval",
          ai_prompt: "Refunds over policy need review",
          ai_models: [firstModel()]
        })
        expect(createdReply.status).toBe(201)
        const [detail, detailReply] = yield* (yield* orgClient).policies.get({ params: { policy_uuid: created.id }, responseMode: "decoded-and-response" })
        expect(detailReply.status).toBe(200)
        expect(detail.scope).toEqual({ agent_ids: [], action_types: [] })
        expect(detail.evaluation_count).toBe(0)
        expect(detail.last_evaluated_at).toBeNull()
        expect(detail.policy_text).toBe("Refunds over policy need review")
        expect(detail.models).toEqual(detail.ai_models)
      })
    )

    it.effect("PATCH and PUT update only the given fields; a mode change is INVALID_MODE", () =>
      Effect.gen(function* () {
        const api = yield* orgClient
        const [created] = yield* create(rules())
        const params = { policy_uuid: created.id }
        const [patched, patchedReply] = yield* api.policies.update({ params, payload: { priority: 99 }, responseMode: "decoded-and-response" })
        expect(patchedReply.status).toBe(200)
        expect(patched.priority).toBe(99)
        expect(patched.name).toBe("Block large payments")
        const [put, putReply] = yield* api.policies.replace({ params, payload: { name: "Renamed" }, responseMode: "decoded-and-response" })
        expect(putReply.status).toBe(200)
        expect(put.name).toBe("Renamed")
        expect(put.priority).toBe(99)
        const mode = yield* answer(api.policies.update({ params, payload: { mode: "content_scan" }, responseMode: "response-only" }))
        expect(mode.status).toBe(400)
        expect(mode.body.code).toBe("INVALID_MODE")
        const missing = yield* answer(api.policies.update({ params: { policy_uuid: "pol_missing" }, payload: { priority: 1 }, responseMode: "response-only" }))
        expect(missing.status).toBe(404)
        expect(missing.body.code).toBe("POLICY_NOT_FOUND")
      })
    )

    it.effect("lifecycle: activate, ALREADY_ACTIVE, POLICY_ACTIVE on delete, NOT_ACTIVE, delete", () =>
      Effect.gen(function* () {
        const api = yield* orgClient
        const id = (yield* create(rules()))[0].id
        const params = { policy_uuid: id }
        const [on, onReply] = yield* api.policies.activate({ params, responseMode: "decoded-and-response" })
        expect(onReply.status).toBe(200)
        expect(on).toMatchObject({ id, status: "active" })
        expect(typeof on.activated_at).toBe("string")
        expect((yield* answer(api.policies.activate({ params, responseMode: "response-only" }))).body.code).toBe("ALREADY_ACTIVE")
        const del = yield* answer(api.policies.remove({ params, responseMode: "response-only" }))
        expect(del.status).toBe(409)
        expect(del.body.code).toBe("POLICY_ACTIVE")
        const [off, offReply] = yield* api.policies.deactivate({ params, responseMode: "decoded-and-response" })
        expect(offReply.status).toBe(200)
        expect(off).toMatchObject({ id, status: "inactive" })
        expect(typeof off.deactivated_at).toBe("string")
        const again = yield* answer(api.policies.deactivate({ params, responseMode: "response-only" }))
        expect(again.status).toBe(409)
        expect(again.body.code).toBe("NOT_ACTIVE")
        const [gone, goneReply] = yield* api.policies.remove({ params, responseMode: "decoded-and-response" })
        expect(goneReply.status).toBe(200)
        expect(gone).toMatchObject({ id, deleted: true })
        expect((yield* api.policies.get({ params, responseMode: "response-only" })).status).toBe(404)
      })
    )

    it.effect("dry-run answers the decision and records nothing", () =>
      Effect.gen(function* () {
        const api = yield* orgClient
        const id = (yield* create(rules({ activate: true })))[0].id
        const params = { policy_uuid: id }
        const payload = { action_type: "payment", details: "pay", context: { amount: 5000 } }
        const [run, runReply] = yield* api.policies.dryRun({ params, payload, responseMode: "decoded-and-response" })
        expect(runReply.status).toBe(200)
        expect(run).toMatchObject({ policy_uuid: id, policy_name: "Block large payments", decision: "deny", dry_run: true })
        expect(typeof run.confidence).toBe("number")
        const small = yield* api.policies.dryRun({ params, payload: { ...payload, context: { amount: 5 } } })
        expect(small.decision).toBe("allow")
        const detail = yield* api.policies.get({ params })
        expect(detail.evaluation_count).toBe(0)
        expect(detail.last_evaluated_at).toBeNull()
      })
    )
  })

  it.describe("policy validation", () => {
    it.effect("answers the spec's 400 codes", () =>
      Effect.gen(function* () {
        const model = firstModel()
        const cases: Array<[CreatePolicyRequest, string]> = [
          [{ name: "x", mode: "magic", decision: "deny" }, "INVALID_MODE"],
          [{ name: "x", mode: "rules", decision: "deny" }, "CONDITIONS_REQUIRED"],
          [{ name: "x", mode: "ai", decision: "deny", ai_models: [model] }, "POLICY_TEXT_REQUIRED"],
          [{ name: "x", mode: "ai", decision: "deny", ai_prompt: "p" }, "MODELS_REQUIRED"],
          [{ name: "x", mode: "consensus", decision: "deny", ai_prompt: "p", ai_models: [model] }, "MODELS_REQUIRED"],
          [{ name: "x", mode: "ai", decision: "deny", ai_prompt: "p", ai_models: ["no-such-model"] }, "INVALID_MODEL"],
          [{ name: "x", mode: "rules", decision: "deny", conditions: [{ field: "details", op: "regex", value: "(a" }] }, "INVALID_REGEX"]
        ]
        for (const [payload, code] of cases) {
          const reply = yield* refusedCreate(payload)
          expect({ code: reply.body.code, status: reply.status }).toEqual({ code, status: 400 })
        }
      })
    )

    it.effect("answers 422 VALIDATION_ERROR for shapes", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        // decision "maybe" is outside the contract: sent raw, as the typed client would refuse to encode it.
        const server = yield* Gateway
        const badDecision = yield* Effect.promise(() =>
          call(server.url, "POST", "/api/v1/policies", { token: org.key, body: { name: "x", mode: "rules", decision: "maybe", conditions: [] } })
        )
        expect(badDecision.status).toBe(422)
        expect(badDecision.body.code).toBe("VALIDATION_ERROR")
        const badCondition = yield* refusedCreate(rules({ conditions: [{ field: "nope", op: "eq", value: 1 }] }))
        expect(badCondition.status).toBe(422)
        expect(badCondition.body.details.issues.length).toBeGreaterThan(0)
      })
    )

    it.effect("needs policies:write to create and allows policies:read to list", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const [key, keyReply] = yield* (yield* client(org.token)).apiKeys.create({ payload: { name: "ro", scopes: ["policies:read"] }, responseMode: "decoded-and-response" })
        expect(keyReply.status).toBe(201)
        const readOnly = client(key.key)
        expect((yield* refusedCreate(rules(), readOnly)).status).toBe(403)
        expect((yield* (yield* readOnly).policies.list({ query: {}, responseMode: "response-only" })).status).toBe(200)
      })
    )
  })

  it.describe("cross-organization access", () => {
    /** Every route that names a policy, as [method, path, the call]. */
    const idRoutes = (api: GatewayClient, id: string): Array<[string, string, Effect.Effect<HttpClientResponse.HttpClientResponse, unknown>]> => {
      const params = { policy_uuid: id }
      const responseMode = "response-only" as const
      return [
        ["GET", `/api/v1/policies/${id}`, api.policies.get({ params, responseMode })],
        ["PATCH", `/api/v1/policies/${id}`, api.policies.update({ params, payload: { priority: 1 }, responseMode })],
        ["PUT", `/api/v1/policies/${id}`, api.policies.replace({ params, payload: { priority: 1 }, responseMode })],
        ["DELETE", `/api/v1/policies/${id}`, api.policies.remove({ params, responseMode })],
        ["POST", `/api/v1/policies/${id}/activate`, api.policies.activate({ params, responseMode })],
        ["POST", `/api/v1/policies/${id}/deactivate`, api.policies.deactivate({ params, responseMode })],
        ["POST", `/api/v1/policies/${id}/dry-run`, api.policies.dryRun({ params, payload: { action_type: "a", details: "b" }, responseMode })]
      ]
    }

    it.effect("answers 404 POLICY_NOT_FOUND for every id route", () =>
      Effect.gen(function* () {
        const { other } = yield* Orgs
        const id = (yield* create(rules()))[0].id
        for (const [method, path, attempt] of idRoutes(yield* client(other.key), id)) {
          const reply = yield* answer(attempt)
          expect({ path, method, status: reply.status, code: reply.body.code }).toEqual({ path, method, status: 404, code: "POLICY_NOT_FOUND" })
        }
        // Still there for its owner.
        expect((yield* (yield* orgClient).policies.get({ params: { policy_uuid: id }, responseMode: "response-only" })).status).toBe(200)
      })
    )

    it.effect("a member reads and dry-runs policies but cannot change them; an admin can", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const [guard] = yield* create({
          name: "owner guard",
          mode: "rules",
          decision: "deny",
          conditions: [{ field: "action_type", op: "eq", value: "wipe" }],
          activate: true
        })
        const id = guard.id
        const params = { policy_uuid: id }
        const teammate = yield* member(org, "member")
        const byKey = yield* client(teammate.key)
        expect((yield* byKey.policies.list({ query: {}, responseMode: "response-only" })).status).toBe(200)
        expect((yield* byKey.policies.dryRun({ params, payload: { action_type: "wipe", details: "d" }, responseMode: "response-only" })).status).toBe(200)
        const responseMode = "response-only" as const
        const attempts = (api: GatewayClient): Array<[string, string, Effect.Effect<HttpClientResponse.HttpClientResponse, unknown>]> => [
          ["POST", `/api/v1/policies/${id}/deactivate`, api.policies.deactivate({ params, responseMode })],
          ["PATCH", `/api/v1/policies/${id}`, api.policies.update({ params, payload: { conditions: [{ field: "action_type", op: "eq", value: "never" }] }, responseMode })],
          ["PUT", `/api/v1/policies/${id}`, api.policies.replace({ params, payload: { priority: -5 }, responseMode })],
          ["DELETE", `/api/v1/policies/${id}`, api.policies.remove({ params, responseMode })],
          [
            "POST",
            "/api/v1/policies",
            api.policies.create({
              payload: { name: "block all", mode: "rules", decision: "deny", conditions: [{ field: "action_type", op: "neq", value: "" }], activate: true },
              responseMode
            })
          ]
        ]
        const byKeyAndJwt = [byKey, yield* client(teammate.token)]
        for (const index of [0, 1, 2, 3, 4]) {
          for (const api of byKeyAndJwt) {
            const [method, path, attempt] = attempts(api)[index]!
            const reply = yield* answer(attempt)
            expect({ method, path, status: reply.status, code: reply.body.code }).toEqual({ method, path, status: 403, code: "FORBIDDEN" })
          }
        }
        expect((yield* (yield* orgClient).policies.get({ params })).status).toBe("active")
        const admin = yield* client((yield* member(org, "admin")).key)
        expect((yield* admin.policies.deactivate({ params, responseMode: "response-only" })).status).toBe(200)
      })
    )
  })
})
