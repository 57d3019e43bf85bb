/**
 * Model catalogue and preferences (spec 002): public built-ins, the organization's view with a key
 * (credential_source, disabled models hidden unless asked), every preferences route with 422 on
 * unknown ids, the chat default rules (400) and code review needing an admin.
 */
import { describe, expect, it } from "vitest"
import { BUILTIN_MODELS, CODE_REVIEW_DEFAULT_MODEL } from "../protocol/models.js"
import { addMember, call, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { useServer } from "./support/server.js"

const server = useServer()
const org = useFixture(() => registerOrg(server.url, "Models Org"))

const [first, second, third] = BUILTIN_MODELS.map((model) => model.model_id)

describe("model catalogue", () => {
  it("answers the built-ins without a key, each with a provider and max_tokens, no key source", async () => {
    const reply = await call(server.url, "GET", "/api/v1/models")
    expect(reply.status).toBe(200)
    expect(Array.isArray(reply.body)).toBe(true)
    expect(reply.body).toHaveLength(BUILTIN_MODELS.length)
    for (const entry of reply.body) {
      expect(Object.keys(entry).sort()).toEqual(["available", "credential_source", "display_name", "max_tokens", "model_id", "provider"])
      expect(entry.credential_source).toBeNull()
      expect(entry.model_id.startsWith("custom:")).toBe(false)
    }
  })

  it("refuses a bad key instead of quietly answering the public view", async () => {
    const reply = await call(server.url, "GET", "/api/v1/models", { token: "svc_live_not_a_key" })
    expect(reply.status).toBe(401)
    expect(reply.body.code).toBe("UNAUTHORIZED")
  })

  it("marks the models of a configured provider byok and hides disabled ones unless include_disabled", async () => {
    const fresh = await registerOrg(server.url, "Catalogue View")
    const provider = BUILTIN_MODELS[0].provider
    expect((await call(server.url, "POST", "/api/v1/provider-credentials", { token: fresh.key, body: { provider, credentials: { api_key: "sk-catalogue" } } })).status).toBe(200)
    expect((await call(server.url, "PUT", "/api/v1/models/preferences", { token: fresh.key, body: { disabled_models: [second] } })).status).toBe(200)

    const view = await call(server.url, "GET", "/api/v1/models", { token: fresh.key })
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
    expect(view.text).not.toContain("sk-catalogue")

    for (const flag of ["true", "1"]) {
      const all = await call(server.url, "GET", `/api/v1/models?include_disabled=${flag}`, { token: fresh.key })
      expect(all.body).toHaveLength(BUILTIN_MODELS.length)
      expect(all.body.find((entry: any) => entry.model_id === second).disabled).toBe(true)
      expect(all.body.find((entry: any) => entry.model_id === first).disabled).toBe(false)
    }
    expect((await call(server.url, "GET", "/api/v1/models?include_disabled=maybe", { token: fresh.key })).status).toBe(422)
  })
})

describe("model preferences", () => {
  const features = ["/api/v1/models/preferences", "/api/v1/models/policy-preferences", "/api/v1/models/sanitize-preferences"]

  it("keeps one disabled list per feature, replaced by each PUT, empty by default", async () => {
    const fresh = await registerOrg(server.url, "Per Feature")
    for (const path of features) {
      const empty = await call(server.url, "GET", path, { token: fresh.key })
      expect(empty.status).toBe(200)
      expect(empty.body.disabled_models).toEqual([])
      expect(typeof empty.body.request_id).toBe("string")
    }
    expect((await call(server.url, "PUT", features[0], { token: fresh.key, body: { disabled_models: [first, second] } })).body.disabled_models).toEqual([first, second])
    expect((await call(server.url, "PUT", features[1], { token: fresh.key, body: { disabled_models: [third] } })).body.disabled_models).toEqual([third])
    expect((await call(server.url, "GET", features[0], { token: fresh.key })).body.disabled_models).toEqual([first, second])
    expect((await call(server.url, "GET", features[1], { token: fresh.key })).body.disabled_models).toEqual([third])
    expect((await call(server.url, "GET", features[2], { token: fresh.key })).body.disabled_models).toEqual([])
    // Omitted means the default: an empty list.
    expect((await call(server.url, "PUT", features[0], { token: fresh.key, body: {} })).body.disabled_models).toEqual([])
    expect((await call(server.url, "GET", features[1], { token: fresh.key })).body.disabled_models).toEqual([third])
  })

  it("answers 422 naming every unknown id and changes nothing", async () => {
    for (const path of features) {
      const reply = await call(server.url, "PUT", path, { token: org.key, body: { disabled_models: [first, "no-such-model", "custom:nope"] } })
      expect(reply.status).toBe(422)
      expect(reply.body.details.issues).toHaveLength(2)
      expect((await call(server.url, "GET", path, { token: org.key })).body.disabled_models).toEqual([])
    }
  })

  it("chat default: 400 when empty or outside the allowed list, 422 when unknown", async () => {
    const fresh = await registerOrg(server.url, "Chat Prefs")
    expect((await call(server.url, "GET", "/api/v1/models/chat-default", { token: fresh.key })).body.chat_default_model).toBeNull()
    expect((await call(server.url, "GET", "/api/v1/models/chat-allowed", { token: fresh.key })).body.chat_allowed_models).toBeNull()

    expect((await call(server.url, "PUT", "/api/v1/models/chat-default", { token: fresh.key, body: { chat_default_model: "" } })).status).toBe(400)
    expect((await call(server.url, "PUT", "/api/v1/models/chat-default", { token: fresh.key, body: { chat_default_model: "unknown-model" } })).status).toBe(422)
    expect((await call(server.url, "PUT", "/api/v1/models/chat-default", { token: fresh.key, body: {} })).status).toBe(422)
    const set = await call(server.url, "PUT", "/api/v1/models/chat-default", { token: fresh.key, body: { chat_default_model: first } })
    expect(set.status).toBe(200)
    expect(set.body.chat_default_model).toBe(first)

    expect((await call(server.url, "PUT", "/api/v1/models/chat-allowed", { token: fresh.key, body: { chat_allowed_models: [second, "bogus"] } })).status).toBe(422)
    const allowed = await call(server.url, "PUT", "/api/v1/models/chat-allowed", { token: fresh.key, body: { chat_allowed_models: [second] } })
    expect(allowed.body.chat_allowed_models).toEqual([second])
    const outside = await call(server.url, "PUT", "/api/v1/models/chat-default", { token: fresh.key, body: { chat_default_model: third } })
    expect(outside.status).toBe(400)
    expect(outside.body.code).toBe("INVALID_CHAT_DEFAULT")
    expect((await call(server.url, "PUT", "/api/v1/models/chat-default", { token: fresh.key, body: { chat_default_model: second } })).status).toBe(200)

    // An empty list, like null, means every enabled model.
    expect((await call(server.url, "PUT", "/api/v1/models/chat-allowed", { token: fresh.key, body: { chat_allowed_models: [] } })).body.chat_allowed_models).toBeNull()
    expect((await call(server.url, "PUT", "/api/v1/models/chat-allowed", { token: fresh.key, body: { chat_allowed_models: [first] } })).status).toBe(200)
    expect((await call(server.url, "PUT", "/api/v1/models/chat-allowed", { token: fresh.key, body: { chat_allowed_models: null } })).body.chat_allowed_models).toBeNull()
  })

  it("code review: a mid-tier default, admins only to change, null back to the default", async () => {
    const fresh = await registerOrg(server.url, "Code Review Prefs")
    const initial = await call(server.url, "GET", "/api/v1/models/code-review-preferences", { token: fresh.key })
    expect(initial.body).toMatchObject({ default_model: CODE_REVIEW_DEFAULT_MODEL, disabled_models: [] })

    const member = await addMember(server.url, fresh, "member")
    const refused = await call(server.url, "PUT", "/api/v1/models/code-review-preferences", { token: member.key, body: { default_model: first } })
    expect(refused.status).toBe(403)
    expect((await call(server.url, "GET", "/api/v1/models/code-review-preferences", { token: member.key })).status).toBe(200)

    const changed = await call(server.url, "PUT", "/api/v1/models/code-review-preferences", { token: fresh.key, body: { default_model: first, disabled_models: [third] } })
    expect(changed.body).toMatchObject({ default_model: first, disabled_models: [third] })
    // Omitted fields stay.
    expect((await call(server.url, "PUT", "/api/v1/models/code-review-preferences", { token: fresh.key, body: { disabled_models: [] } })).body.default_model).toBe(first)
    expect((await call(server.url, "PUT", "/api/v1/models/code-review-preferences", { token: fresh.key, body: { default_model: "nope" } })).status).toBe(422)
    const reset = await call(server.url, "PUT", "/api/v1/models/code-review-preferences", { token: fresh.key, body: { default_model: null } })
    expect(reset.body.default_model).toBe(CODE_REVIEW_DEFAULT_MODEL)
  })

  it("keeps one organization's preferences from another", async () => {
    const mine = await registerOrg(server.url, "Prefs Mine")
    const theirs = await registerOrg(server.url, "Prefs Theirs")
    await call(server.url, "PUT", "/api/v1/models/preferences", { token: mine.key, body: { disabled_models: [first] } })
    expect((await call(server.url, "GET", "/api/v1/models/preferences", { token: theirs.key })).body.disabled_models).toEqual([])
    expect((await call(server.url, "GET", "/api/v1/models", { token: theirs.key })).body.map((entry: any) => entry.model_id)).toContain(first)
  })
})
