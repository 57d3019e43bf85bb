/**
 * Model catalogue and preferences (spec 002): public built-ins, the organization's view with a key
 * (credential_source, disabled models hidden unless asked), every preferences route with 422 on
 * unknown ids, the chat default rules (400) and code review needing an admin. Over the typed client
 * (HttpApiClient over GatewayApi).
 */
import { expect } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { BUILTIN_MODELS, CODE_REVIEW_DEFAULT_MODEL } from "../protocol/models.js"
import { answer, client, type GatewayClient, member, raw, register } from "./support/api.js"
import type { Org } from "./support/client.js"
import { liveLayer } from "./support/effect.js"
import { Gateway } from "./support/server.js"

class Orgs extends Context.Service<Orgs, { readonly org: Org }>()("test/models/Orgs") {}

const Setup = Layer.effect(Orgs, Effect.all({ org: register("Models Org") })).pipe(Layer.provideMerge(Gateway.layer()))

const [first, second, third] = BUILTIN_MODELS.map((model) => model.model_id) as [string, string, string]


/** The three per-feature disabled lists: cases (`preferences`), policy evaluation, sanitize. */
const features = (api: GatewayClient) => {
  const prefs = api.modelPreferences
  return [
    { read: prefs.getCases, write: prefs.putCases },
    { read: prefs.getPolicy, write: prefs.putPolicy },
    { read: prefs.getSanitize, write: prefs.putSanitize }
  ] as const
}

liveLayer(Setup)((it) => {
  it.describe("model catalogue", () => {
    it.effect("answers the built-ins without a key, each with a provider and max_tokens, no key source", () =>
      Effect.gen(function* () {
        // As sent: the exact keys of each entry are checked.
        const reply = yield* answer((yield* client()).models.catalogue({ query: {}, responseMode: "response-only" }))
        expect(reply.status).toBe(200)
        expect(Array.isArray(reply.body)).toBe(true)
        expect(reply.body).toHaveLength(BUILTIN_MODELS.length)
        for (const entry of reply.body) {
          expect(Object.keys(entry).sort()).toEqual(["available", "credential_source", "display_name", "max_tokens", "model_id", "provider"])
          expect(entry.credential_source).toBeNull()
          expect(entry.model_id.startsWith("custom:")).toBe(false)
        }
      })
    )

    it.effect("refuses a bad key instead of quietly answering the public view", () =>
      Effect.gen(function* () {
        const reply = yield* answer((yield* client("svc_live_not_a_key")).models.catalogue({ query: {}, responseMode: "response-only" }))
        expect(reply.status).toBe(401)
        expect(reply.body.code).toBe("UNAUTHORIZED")
      })
    )

    it.effect("marks the models of a configured provider byok and hides disabled ones unless include_disabled", () =>
      Effect.gen(function* () {
        const fresh = yield* register("Catalogue View")
        const api = yield* client(fresh.key)
        const provider = BUILTIN_MODELS[0]!.provider
        const [, saved] = yield* api.providerCredentials.save({ payload: { provider, credentials: { api_key: "sk-catalogue" } }, responseMode: "decoded-and-response" })
        expect(saved.status).toBe(200)
        const [, disabled] = yield* api.modelPreferences.putCases({ payload: { disabled_models: [second] }, responseMode: "decoded-and-response" })
        expect(disabled.status).toBe(200)

        // As sent: the secret must be absent from the whole answer, keys the decoder would drop included.
        const view = yield* answer(api.models.catalogue({ query: {}, responseMode: "response-only" }))
        expect(view.status).toBe(200)
        const ids = view.body.map((entry: any) => entry.model_id)
        expect(ids).toContain(first)
        expect(ids).not.toContain(second)
        for (const entry of view.body) {
          expect(entry.disabled).toBeUndefined()
          const byok = entry.provider === provider
          expect(entry.credential_source).toBe(byok ? "byok" : null)
          expect(entry.available).toBe(byok)
        }
        expect(JSON.stringify(view.body)).not.toContain("sk-catalogue")

        for (const flag of ["true", "1"] as const) {
          const all = yield* api.models.catalogue({ query: { include_disabled: flag } })
          expect(all).toHaveLength(BUILTIN_MODELS.length)
          expect(all.find((entry) => entry.model_id === second)!.disabled).toBe(true)
          expect(all.find((entry) => entry.model_id === first)!.disabled).toBe(false)
        }
        // Raw: a value outside the contract's include_disabled literals.
        expect((yield* raw("GET", "/api/v1/models?include_disabled=maybe", { token: fresh.key })).status).toBe(422)
      })
    )
  })

  it.describe("model preferences", () => {
    it.effect("keeps one disabled list per feature, replaced by each PUT, empty by default", () =>
      Effect.gen(function* () {
        const fresh = yield* register("Per Feature")
        const api = yield* client(fresh.key)
        const [cases, policy, sanitize] = features(api)
        for (const feature of [cases, policy, sanitize]) {
          // As sent: request_id is checked.
          const empty = yield* answer(feature.read({ responseMode: "response-only" }))
          expect(empty.status).toBe(200)
          expect(empty.body.disabled_models).toEqual([])
          expect(typeof empty.body.request_id).toBe("string")
        }
        expect((yield* cases.write({ payload: { disabled_models: [first, second] } })).disabled_models).toEqual([first, second])
        expect((yield* policy.write({ payload: { disabled_models: [third] } })).disabled_models).toEqual([third])
        expect((yield* cases.read({})).disabled_models).toEqual([first, second])
        expect((yield* policy.read({})).disabled_models).toEqual([third])
        expect((yield* sanitize.read({})).disabled_models).toEqual([])
        // Omitted means the default: an empty list.
        expect((yield* cases.write({ payload: {} })).disabled_models).toEqual([])
        expect((yield* policy.read({})).disabled_models).toEqual([third])
      })
    )

    it.effect("answers 422 naming every unknown id and changes nothing", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        for (const feature of features(yield* client(org.key))) {
          const reply = yield* answer(feature.write({ payload: { disabled_models: [first, "no-such-model", "custom:nope"] }, responseMode: "response-only" }))
          expect(reply.status).toBe(422)
          expect(reply.body.details.issues).toHaveLength(2)
          expect((yield* feature.read({})).disabled_models).toEqual([])
        }
      })
    )

    it.effect("chat default: 400 when empty or outside the allowed list, 422 when unknown", () =>
      Effect.gen(function* () {
        const fresh = yield* register("Chat Prefs")
        const prefs = (yield* client(fresh.key)).modelPreferences
        expect((yield* prefs.getChatDefault({})).chat_default_model).toBeNull()
        expect((yield* prefs.getChatAllowed({})).chat_allowed_models).toBeNull()

        const setDefault = (chat_default_model: string) => prefs.putChatDefault({ payload: { chat_default_model }, responseMode: "response-only" })
        expect((yield* setDefault("")).status).toBe(400)
        expect((yield* setDefault("unknown-model")).status).toBe(422)
        // Raw: a body without chat_default_model, which the contract requires.
        expect((yield* raw("PUT", "/api/v1/models/chat-default", { token: fresh.key, body: {} })).status).toBe(422)
        const [set, setReply] = yield* prefs.putChatDefault({ payload: { chat_default_model: first }, responseMode: "decoded-and-response" })
        expect(setReply.status).toBe(200)
        expect(set.chat_default_model).toBe(first)

        expect((yield* prefs.putChatAllowed({ payload: { chat_allowed_models: [second, "bogus"] }, responseMode: "response-only" })).status).toBe(422)
        const allowed = yield* prefs.putChatAllowed({ payload: { chat_allowed_models: [second] } })
        expect(allowed.chat_allowed_models).toEqual([second])
        const outside = yield* answer(setDefault(third))
        expect(outside.status).toBe(400)
        expect(outside.body.code).toBe("INVALID_CHAT_DEFAULT")
        expect((yield* setDefault(second)).status).toBe(200)

        // An empty list, like null, means every enabled model.
        expect((yield* prefs.putChatAllowed({ payload: { chat_allowed_models: [] } })).chat_allowed_models).toBeNull()
        expect((yield* prefs.putChatAllowed({ payload: { chat_allowed_models: [first] }, responseMode: "response-only" })).status).toBe(200)
        expect((yield* prefs.putChatAllowed({ payload: { chat_allowed_models: null } })).chat_allowed_models).toBeNull()
      })
    )

    it.effect("code review: a mid-tier default, admins only to change, null back to the default", () =>
      Effect.gen(function* () {
        const fresh = yield* register("Code Review Prefs")
        const prefs = (yield* client(fresh.key)).modelPreferences
        expect(yield* prefs.getCodeReview({})).toMatchObject({ default_model: CODE_REVIEW_DEFAULT_MODEL, disabled_models: [] })

        const teammate = (yield* client((yield* member(fresh, "member")).key)).modelPreferences
        expect((yield* teammate.putCodeReview({ payload: { default_model: first }, responseMode: "response-only" })).status).toBe(403)
        expect((yield* teammate.getCodeReview({ responseMode: "response-only" })).status).toBe(200)

        expect(yield* prefs.putCodeReview({ payload: { default_model: first, disabled_models: [third] } })).toMatchObject({ default_model: first, disabled_models: [third] })
        // Omitted fields stay.
        expect((yield* prefs.putCodeReview({ payload: { disabled_models: [] } })).default_model).toBe(first)
        expect((yield* prefs.putCodeReview({ payload: { default_model: "nope" }, responseMode: "response-only" })).status).toBe(422)
        expect((yield* prefs.putCodeReview({ payload: { default_model: null } })).default_model).toBe(CODE_REVIEW_DEFAULT_MODEL)
      })
    )

    it.effect("keeps one organization's preferences from another", () =>
      Effect.gen(function* () {
        const mine = yield* client((yield* register("Prefs Mine")).key)
        const theirs = yield* client((yield* register("Prefs Theirs")).key)
        yield* mine.modelPreferences.putCases({ payload: { disabled_models: [first] } })
        expect((yield* theirs.modelPreferences.getCases({})).disabled_models).toEqual([])
        expect((yield* theirs.models.catalogue({ query: {} })).map((entry) => entry.model_id)).toContain(first)
      })
    )
  })
})
