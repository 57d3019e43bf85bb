/**
 * What guards authorize and notarize besides policies: the endpoint whitelist
 * (strict and permissive) and output filtering of `outcome_details`.
 */
import { createHash } from "node:crypto"
import { expect } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { answer, client, register } from "./support/api.js"
import { call, type Org } from "./support/client.js"
import { liveLayer } from "./support/effect.js"
import { Gateway } from "./support/server.js"

class GuardsOrg extends Context.Service<GuardsOrg, Org>()("test/actions-guards/GuardsOrg") {}

const Setup = Layer.effect(GuardsOrg, register("Guards Org")).pipe(Layer.provideMerge(Gateway.layer()))

const SECRET_TEXT = "done; the deploy key is AKIAIOSFODNN7EXAMPLE and the password=hunter2hunter2"
const sha = (text: string) => "sha256:" + createHash("sha256").update(text).digest("hex")

/** The organization's typed clients: its API key (the agent) and its owner's JWT (the dashboard). */
const agent = Effect.flatMap(GuardsOrg, (org) => client(org.key))
const dashboard = Effect.flatMap(GuardsOrg, (org) => client(org.token))

const authorized = (agentId = "guarded") =>
  Effect.gen(function* () {
    const [created, reply] = yield* (yield* agent).actions.authorize({
      headers: {},
      payload: { action_type: "t", details: "d", agent_id: agentId, instruction_hash: "sha256:00" },
      responseMode: "decoded-and-response"
    })
    expect(reply.status).toBe(201)
    return created.action_uuid
  })

/** The signed payload as served (raw: the receipt's bytes are what is signed). */
const signedPayload = (id: string) =>
  Effect.gen(function* () {
    const server = yield* Gateway
    const verify = yield* Effect.promise(() => call(server.url, "GET", `/api/v1/verify/action/${id}`))
    expect(verify.status).toBe(200)
    return (typeof verify.body.signed_payload === "string" ? JSON.parse(verify.body.signed_payload) : verify.body.signed_payload) as Record<string, any>
  })

const setOutputPolicy = (patch: Record<string, unknown>) =>
  Effect.gen(function* () {
    const reply = yield* (yield* dashboard).outputPolicies.update({ payload: patch, responseMode: "response-only" })
    expect(reply.status).toBe(200)
  })

const notarize = (id: string, outcomeDetails: string) =>
  Effect.flatMap(agent, (api) =>
    api.actions.notarize({ params: { action_uuid: id }, payload: { outcome_details: outcomeDetails }, responseMode: "response-only" })
  )

liveLayer(Setup)((it) => {
  it.describe("output filtering on notarize", () => {
    it.effect("puts flags into the receipt in flag mode and hashes the original text", () =>
      Effect.gen(function* () {
        yield* setOutputPolicy({ enabled: true, mode: "flag" })
        const [probe, probeReply] = yield* (yield* dashboard).outputPolicies.test({ payload: { text: SECRET_TEXT }, responseMode: "decoded-and-response" })
        expect(probeReply.status).toBe(200)
        expect(probe.flags.length).toBeGreaterThan(0)
        const id = yield* authorized()
        const done = yield* notarize(id, SECRET_TEXT)
        expect(done.status).toBe(200)
        const payload = yield* signedPayload(id)
        expect(payload.outcome_hash).toBe(sha(SECRET_TEXT))
        expect(payload.output_scan_flags.map((f: any) => f.entity_type).sort()).toEqual(probe.flags.map((f) => f.entity_type).sort())
      })
    )

    it.effect("refuses the notarize in deny mode (422) and leaves the action authorized", () =>
      Effect.gen(function* () {
        yield* setOutputPolicy({ enabled: true, mode: "deny", deny_severity_threshold: "info" })
        const id = yield* authorized()
        const refused = yield* answer(notarize(id, SECRET_TEXT))
        expect(refused.status).toBe(422)
        expect(refused.body.code).toBe("OUTPUT_SCAN_VIOLATION")
        const detail = yield* (yield* agent).actions.get({ params: { action_uuid: id } })
        expect(detail.status).toBe("authorized")
        expect(detail.receipt).toBeNull()
        const clean = yield* notarize(id, "all fine")
        expect(clean.status).toBe(200)
      })
    )

    it.effect("hashes the redacted text in redact mode", () =>
      Effect.gen(function* () {
        yield* setOutputPolicy({ enabled: true, mode: "redact", redact_severity_threshold: "info" })
        const probe = yield* (yield* dashboard).outputPolicies.test({ payload: { text: SECRET_TEXT } })
        expect(probe.redacted_text).not.toBe(SECRET_TEXT)
        const id = yield* authorized()
        const done = yield* notarize(id, SECRET_TEXT)
        expect(done.status).toBe(200)
        expect((yield* signedPayload(id)).outcome_hash).toBe(sha(probe.redacted_text!))
        yield* setOutputPolicy({ mode: "flag" })
      })
    )
  })

  it.describe("endpoint whitelist on authorize", () => {
    it.effect("warns in permissive mode and blocks in strict mode with an approval request", () =>
      Effect.gen(function* () {
        const api = yield* agent
        const owner = yield* dashboard
        const [permissive, permissiveReply] = yield* api.actions.authorize({
          headers: {},
          payload: { action_type: "t", details: "d", instruction_hash: "sha256:00", endpoint_url: "https://api.unknown.example/v1/pay" },
          responseMode: "decoded-and-response"
        })
        expect(permissiveReply.status).toBe(201)
        expect(permissive.warnings!.length).toBeGreaterThan(0)

        const strict = yield* owner.whitelist.setSettings({ payload: { mode: "strict" }, responseMode: "response-only" })
        expect(strict.status).toBe(200)
        const blocked = yield* answer(
          api.actions.authorize({
            headers: {},
            payload: { action_type: "t", details: "d", endpoint_url: "https://api.unknown.example/v1/pay", agent_id: "wl-agent" },
            responseMode: "response-only"
          })
        )
        expect(blocked.status).toBe(403)
        expect(blocked.body.code).toBe("ENDPOINT_NOT_WHITELISTED")
        expect(typeof blocked.body.details.approval_id).toBe("string")
        expect(typeof blocked.body.details.url_pattern_suggested).toBe("string")

        const added = yield* owner.whitelist.add({ payload: { url_pattern: "https://api.known.example/*", name: "known" }, responseMode: "response-only" })
        expect(added.status).toBe(201)
        const [allowed, allowedReply] = yield* api.actions.authorize({
          headers: {},
          payload: { action_type: "t", details: "d", instruction_hash: "sha256:00", endpoint_url: "https://api.known.example/v1/pay" },
          responseMode: "decoded-and-response"
        })
        expect(allowedReply.status).toBe(201)
        expect(allowed.warnings).toBeNull()
      })
    )
  })
})
