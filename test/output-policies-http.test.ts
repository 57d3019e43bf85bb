/**
 * Output policies end to end over HTTP: defaults, admin-only updates with
 * validation, the test route, and the effect on notarize — `deny` refuses with
 * 422 OUTPUT_SCAN_VIOLATION and leaves the action authorized, `flag` commits the
 * findings to the signed receipt, `redact` hashes the cleaned text. Over the
 * typed client (HttpApiClient over GatewayApi).
 */
import { createHash } from "node:crypto"
import { expect } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { answer, client, member, register } from "./support/api.js"
import { call, type Org } from "./support/client.js"
import { liveLayer } from "./support/effect.js"
import { Gateway } from "./support/server.js"

class Orgs extends Context.Service<Orgs, { readonly org: Org; readonly member: { readonly token: string; readonly key: string } }>()("test/output-policies-http/Orgs") {}

const Setup = Layer.effect(
  Orgs,
  Effect.gen(function* () {
    const org = yield* register("Output Org")
    return { org, member: yield* member(org, "member") }
  })
).pipe(Layer.provideMerge(Gateway.layer()))

const CARD_TEXT = "charged card 4111 1111 1111 1111 for the order"
const CARD_FLAG = { entity_type: "credit_card", severity: "critical", library: "pii", count: 1 }
const DEFAULTS = {
  enabled: true,
  mode: "flag",
  libraries: ["credentials", "pii"],
  deny_severity_threshold: "critical",
  redact_severity_threshold: "warning"
}

/** A PATCH as `token`, as answered (status and JSON body). */
const patch = (token: string, payload: Record<string, unknown>) =>
  Effect.flatMap(client(token), (api) => answer(api.outputPolicies.update({ payload, responseMode: "response-only" })))
const policyOf = (token: string) => Effect.flatMap(client(token), (api) => api.outputPolicies.get({}))
const testText = (token: string, text: string) => Effect.flatMap(client(token), (api) => api.outputPolicies.test({ payload: { text } }))

const authorized = (owner: Org) =>
  Effect.gen(function* () {
    const [created, reply] = yield* (yield* client(owner.key)).actions.authorize({
      headers: {},
      payload: { action_type: "report", details: "send the report", instruction_hash: "sha256:abc", agent_id: "reporter" },
      responseMode: "decoded-and-response"
    })
    expect(reply.status).toBe(201)
    expect(created.status).toBe("authorized")
    return created.action_uuid
  })

/** A notarize, as answered. */
const notarize = (owner: Org, id: string, outcomeDetails: string) =>
  Effect.flatMap(client(owner.key), (api) =>
    answer(api.actions.notarize({ params: { action_uuid: id }, payload: { outcome: "completed", outcome_details: outcomeDetails }, responseMode: "response-only" }))
  )

/** The signed payload as served (raw: the receipt's bytes are what is signed). */
const signedPayload = (id: string) =>
  Effect.gen(function* () {
    const server = yield* Gateway
    const reply = yield* Effect.promise(() => call(server.url, "GET", `/api/v1/verify/action/${id}`))
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.valid).toBe(true)
    const signed = reply.body.signed_payload
    return (typeof signed === "string" ? JSON.parse(signed) : signed) as Record<string, any>
  })

const sha256Text = (text: string) => `sha256:${createHash("sha256").update(text, "utf8").digest("hex")}`

liveLayer(Setup)((it) => {
  it.describe("reading and updating", () => {
    it.effect("answers the defaults until an admin changes them", () =>
      Effect.gen(function* () {
        const fresh = yield* register("Defaults Org")
        const [policy, reply] = yield* (yield* client(fresh.key)).outputPolicies.get({ responseMode: "decoded-and-response" })
        expect(reply.status).toBe(200)
        expect(policy).toMatchObject(DEFAULTS)
      })
    )

    it.effect("an admin's PATCH changes only the given fields and is what GET answers next", () =>
      Effect.gen(function* () {
        const fresh = yield* register("Patch Org")
        const admin = yield* member(fresh, "admin")
        // Read as sent: the unknown field must not come back, and the PATCH answer is compared whole with the next GET.
        const updated = yield* patch(admin.token, { mode: "deny", deny_severity_threshold: "warning", unknown_field: 1 })
        expect(updated.status).toBe(200)
        expect(updated.body).toMatchObject({ ...DEFAULTS, mode: "deny", deny_severity_threshold: "warning" })
        expect(updated.body.unknown_field).toBeUndefined()
        const again = yield* patch(fresh.key, { libraries: ["credentials"] })
        expect(again.body).toMatchObject({ ...DEFAULTS, mode: "deny", deny_severity_threshold: "warning", libraries: ["credentials"] })
        const { request_id: _patchRequest, ...policy } = again.body
        const next = yield* answer((yield* client(fresh.token)).outputPolicies.get({ responseMode: "response-only" }))
        expect(next.body).toMatchObject(policy)
      })
    )

    it.effect("members get 403 on GET and PATCH, and their PATCH changes nothing", () =>
      Effect.gen(function* () {
        const { org, member } = yield* Orgs
        expect((yield* (yield* client(member.key)).outputPolicies.get({ responseMode: "response-only" })).status).toBe(403)
        for (const token of [member.token, member.key]) {
          const reply = yield* patch(token, { mode: "deny" })
          expect(reply.status).toBe(403)
          expect(reply.body.code).toBe("FORBIDDEN")
        }
        expect((yield* policyOf(org.key)).mode).toBe("flag")
      })
    )

    it.effect("an invalid PATCH is 422 VALIDATION_ERROR listing every issue, and changes nothing", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const single = yield* patch(org.key, { mode: "nope" })
        expect(single.status).toBe(422)
        expect(single.body.code).toBe("VALIDATION_ERROR")
        expect(single.body.details.issues.map((issue: any) => issue.path)).toEqual(["mode"])

        const several = yield* patch(org.key, { mode: "nope", enabled: "yes", libraries: ["pii", "astrology"], redact_severity_threshold: "high" })
        expect(several.status).toBe(422)
        expect(several.body.details.issues.map((issue: any) => issue.path).sort()).toEqual(["enabled", "libraries[1]", "mode", "redact_severity_threshold"].sort())
        expect((yield* patch(org.key, { libraries: [] })).status).toBe(422)
        expect(yield* policyOf(org.key)).toMatchObject(DEFAULTS)
      })
    )

    it.effect("POST test reports the findings the current policy would make", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const fresh = yield* register("Test Route Org")
        const [flagged, flaggedReply] = yield* (yield* client(fresh.key)).outputPolicies.test({
          payload: { text: `${CARD_TEXT}, mail ops@example.com` },
          responseMode: "decoded-and-response"
        })
        expect(flaggedReply.status).toBe(200)
        expect(flagged.flags).toEqual(expect.arrayContaining([CARD_FLAG, expect.objectContaining({ entity_type: "email", severity: "warning" })]))
        expect(flagged.denied).toBe(false)
        expect(flagged.redacted_text).toBeNull()

        expect((yield* testText(fresh.key, "nothing to see")).flags).toEqual([])

        yield* patch(fresh.key, { mode: "deny" })
        expect((yield* testText(fresh.key, CARD_TEXT)).denied).toBe(true)

        yield* patch(fresh.key, { mode: "redact" })
        const redacted = yield* testText(fresh.key, CARD_TEXT)
        expect(redacted.denied).toBe(false)
        expect(redacted.redacted_text).toEqual(expect.any(String))
        expect(redacted.redacted_text).not.toContain("4111 1111 1111 1111")

        // Raw: a body without text, which the typed client refuses to encode.
        expect((yield* Effect.promise(() => call(server.url, "POST", "/api/v1/output-policies/test", { token: fresh.key, body: {} }))).status).toBe(422)
      })
    )
  })

  it.describe("notarize under the output policy", () => {
    it.effect("deny mode refuses a card number with 422 OUTPUT_SCAN_VIOLATION and the action stays authorized", () =>
      Effect.gen(function* () {
        const team = yield* register("Deny Org")
        expect((yield* patch(team.key, { mode: "deny" })).status).toBe(200)
        const id = yield* authorized(team)

        const refused = yield* notarize(team, id, CARD_TEXT)
        expect(refused.status).toBe(422)
        expect(refused.body.code).toBe("OUTPUT_SCAN_VIOLATION")
        expect(refused.body.details.flags).toEqual(expect.arrayContaining([CARD_FLAG]))

        const api = yield* client(team.key)
        const params = { action_uuid: id }
        const [action, actionReply] = yield* api.actions.get({ params, responseMode: "decoded-and-response" })
        expect(actionReply.status).toBe(200)
        expect(action.status).toBe("authorized")
        expect((yield* (yield* client()).receiptsPublic.verifyAction({ params, responseMode: "response-only" })).status).toBe(404)

        // A finding below the deny threshold (an e-mail is a warning) does not refuse; the action can still be notarized.
        const accepted = yield* notarize(team, id, "sent to ops@example.com")
        expect(accepted.status).toBe(200)
        expect((yield* api.actions.get({ params })).status).toBe("notarized")
        expect((yield* signedPayload(id)).output_scan_flags).toEqual([expect.objectContaining({ entity_type: "email", severity: "warning" })])
      })
    )

    it.effect("flag mode notarizes and commits the findings to the signed receipt", () =>
      Effect.gen(function* () {
        const team = yield* register("Flag Org")
        const id = yield* authorized(team)
        const done = yield* notarize(team, id, CARD_TEXT)
        expect(done.status).toBe(200)
        const payload = yield* signedPayload(id)
        expect(payload.receipt_status).toBe("notarized")
        expect(payload.output_scan_flags).toEqual([CARD_FLAG])
        expect(payload.outcome_hash).toBe(sha256Text(CARD_TEXT))
      })
    )

    it.effect("a clean outcome and a disabled policy leave output_scan_flags null", () =>
      Effect.gen(function* () {
        const team = yield* register("Clean Org")
        const clean = yield* authorized(team)
        expect((yield* notarize(team, clean, "all good")).status).toBe(200)
        expect((yield* signedPayload(clean)).output_scan_flags).toBeNull()

        yield* patch(team.key, { enabled: false, mode: "deny" })
        const disabled = yield* authorized(team)
        expect((yield* notarize(team, disabled, CARD_TEXT)).status).toBe(200)
        expect((yield* signedPayload(disabled)).output_scan_flags).toBeNull()
      })
    )

    it.effect("redact mode hashes the cleaned text the test route shows", () =>
      Effect.gen(function* () {
        const team = yield* register("Redact Org")
        yield* patch(team.key, { mode: "redact" })
        const preview = yield* testText(team.key, CARD_TEXT)
        const id = yield* authorized(team)
        expect((yield* notarize(team, id, CARD_TEXT)).status).toBe(200)
        const payload = yield* signedPayload(id)
        expect(payload.output_scan_flags).toEqual([CARD_FLAG])
        expect(payload.outcome_hash).toBe(sha256Text(preview.redacted_text!))
        expect(payload.outcome_hash).not.toBe(sha256Text(CARD_TEXT))
      })
    )

    it.effect("one organization's policy does not apply to another", () =>
      Effect.gen(function* () {
        const strict = yield* register("Strict Output Org")
        const relaxed = yield* register("Relaxed Output Org")
        yield* patch(strict.key, { mode: "deny" })
        expect((yield* policyOf(relaxed.key)).mode).toBe("flag")
        const id = yield* authorized(relaxed)
        expect((yield* notarize(relaxed, id, CARD_TEXT)).status).toBe(200)
      })
    )
  })
})
