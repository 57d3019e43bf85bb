/**
 * Output policies end to end over HTTP: defaults, admin-only updates with
 * validation, the test route, and the effect on notarize — `deny` refuses with
 * 422 OUTPUT_SCAN_VIOLATION and leaves the action authorized, `flag` commits the
 * findings to the signed receipt, `redact` hashes the cleaned text.
 */
import { createHash } from "node:crypto"
import { describe, expect, it } from "vitest"
import { addMember, call, type Org, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { useServer } from "./support/server.js"

const server = useServer()
const org = useFixture(() => registerOrg(server.url, "Output Org"))
const member = useFixture(() => addMember(server.url, org, "member"))

const CARD_TEXT = "charged card 4111 1111 1111 1111 for the order"
const CARD_FLAG = { entity_type: "credit_card", severity: "critical", library: "pii", count: 1 }
const DEFAULTS = {
  enabled: true,
  mode: "flag",
  libraries: ["credentials", "pii"],
  deny_severity_threshold: "critical",
  redact_severity_threshold: "warning"
}

const patch = (token: string, body: unknown) => call(server.url, "PATCH", "/api/v1/output-policies", { token, body })

const authorized = async (owner: Org) => {
  const reply = await call(server.url, "POST", "/api/v1/actions", {
    token: owner.key,
    body: { action_type: "report", details: "send the report", instruction_hash: "sha256:abc", agent_id: "reporter" }
  })
  expect(reply.status, reply.text).toBe(201)
  expect(reply.body.status).toBe("authorized")
  return reply.body.action_uuid as string
}

const notarize = (owner: Org, id: string, outcomeDetails: string) =>
  call(server.url, "POST", `/api/v1/actions/${id}/notarize`, { token: owner.key, body: { outcome: "completed", outcome_details: outcomeDetails } })

const signedPayload = async (id: string) => {
  const reply = await call(server.url, "GET", `/api/v1/verify/action/${id}`)
  expect(reply.status, reply.text).toBe(200)
  expect(reply.body.valid).toBe(true)
  const signed = reply.body.signed_payload
  return (typeof signed === "string" ? JSON.parse(signed) : signed) as Record<string, any>
}

const sha256Text = (text: string) => `sha256:${createHash("sha256").update(text, "utf8").digest("hex")}`

describe("reading and updating", () => {
  it("answers the defaults until an admin changes them", async () => {
    const fresh = await registerOrg(server.url, "Defaults Org")
    const reply = await call(server.url, "GET", "/api/v1/output-policies", { token: fresh.key })
    expect(reply.status).toBe(200)
    expect(reply.body).toMatchObject(DEFAULTS)
  })

  it("an admin's PATCH changes only the given fields and is what GET answers next", async () => {
    const fresh = await registerOrg(server.url, "Patch Org")
    const admin = await addMember(server.url, fresh, "admin")
    const updated = await patch(admin.token, { mode: "deny", deny_severity_threshold: "warning", unknown_field: 1 })
    expect(updated.status, updated.text).toBe(200)
    expect(updated.body).toMatchObject({ ...DEFAULTS, mode: "deny", deny_severity_threshold: "warning" })
    expect(updated.body.unknown_field).toBeUndefined()
    const again = await patch(fresh.key, { libraries: ["credentials"] })
    expect(again.body).toMatchObject({ ...DEFAULTS, mode: "deny", deny_severity_threshold: "warning", libraries: ["credentials"] })
    const { request_id: _patchRequest, ...policy } = again.body
    expect((await call(server.url, "GET", "/api/v1/output-policies", { token: fresh.token })).body).toMatchObject(policy)
  })

  it("members get 403 on GET and PATCH, and their PATCH changes nothing", async () => {
    expect((await call(server.url, "GET", "/api/v1/output-policies", { token: member.key })).status).toBe(403)
    for (const token of [member.token, member.key]) {
      const reply = await patch(token, { mode: "deny" })
      expect(reply.status).toBe(403)
      expect(reply.body.code).toBe("FORBIDDEN")
    }
    expect((await call(server.url, "GET", "/api/v1/output-policies", { token: org.key })).body.mode).toBe("flag")
  })

  it("an invalid PATCH is 422 VALIDATION_ERROR listing every issue, and changes nothing", async () => {
    const single = await patch(org.key, { mode: "nope" })
    expect(single.status).toBe(422)
    expect(single.body.code).toBe("VALIDATION_ERROR")
    expect(single.body.details.issues.map((issue: any) => issue.path)).toEqual(["mode"])

    const several = await patch(org.key, { mode: "nope", enabled: "yes", libraries: ["pii", "astrology"], redact_severity_threshold: "high" })
    expect(several.status).toBe(422)
    expect(several.body.details.issues.map((issue: any) => issue.path).sort()).toEqual(
      ["enabled", "libraries[1]", "mode", "redact_severity_threshold"].sort()
    )
    expect((await patch(org.key, { libraries: [] })).status).toBe(422)
    expect((await call(server.url, "GET", "/api/v1/output-policies", { token: org.key })).body).toMatchObject(DEFAULTS)
  })

  it("POST test reports the findings the current policy would make", async () => {
    const fresh = await registerOrg(server.url, "Test Route Org")
    const flagged = await call(server.url, "POST", "/api/v1/output-policies/test", { token: fresh.key, body: { text: `${CARD_TEXT}, mail ops@example.com` } })
    expect(flagged.status, flagged.text).toBe(200)
    expect(flagged.body.flags).toEqual(expect.arrayContaining([CARD_FLAG, expect.objectContaining({ entity_type: "email", severity: "warning" })]))
    expect(flagged.body.denied).toBe(false)
    expect(flagged.body.redacted_text).toBeNull()

    expect((await call(server.url, "POST", "/api/v1/output-policies/test", { token: fresh.key, body: { text: "nothing to see" } })).body.flags).toEqual([])

    await patch(fresh.key, { mode: "deny" })
    const denied = await call(server.url, "POST", "/api/v1/output-policies/test", { token: fresh.key, body: { text: CARD_TEXT } })
    expect(denied.body.denied).toBe(true)

    await patch(fresh.key, { mode: "redact" })
    const redacted = await call(server.url, "POST", "/api/v1/output-policies/test", { token: fresh.key, body: { text: CARD_TEXT } })
    expect(redacted.body.denied).toBe(false)
    expect(redacted.body.redacted_text).toEqual(expect.any(String))
    expect(redacted.body.redacted_text).not.toContain("4111 1111 1111 1111")

    expect((await call(server.url, "POST", "/api/v1/output-policies/test", { token: fresh.key, body: {} })).status).toBe(422)
  })
})

describe("notarize under the output policy", () => {
  it("deny mode refuses a card number with 422 OUTPUT_SCAN_VIOLATION and the action stays authorized", async () => {
    const team = await registerOrg(server.url, "Deny Org")
    expect((await patch(team.key, { mode: "deny" })).status).toBe(200)
    const id = await authorized(team)

    const refused = await notarize(team, id, CARD_TEXT)
    expect(refused.status, refused.text).toBe(422)
    expect(refused.body.code).toBe("OUTPUT_SCAN_VIOLATION")
    expect(refused.body.details.flags).toEqual(expect.arrayContaining([CARD_FLAG]))

    const action = await call(server.url, "GET", `/api/v1/actions/${id}`, { token: team.key })
    expect(action.status).toBe(200)
    expect(action.body.status).toBe("authorized")
    expect((await call(server.url, "GET", `/api/v1/verify/action/${id}`)).status).toBe(404)

    // A finding below the deny threshold (an e-mail is a warning) does not refuse; the action can still be notarized.
    const accepted = await notarize(team, id, "sent to ops@example.com")
    expect(accepted.status, accepted.text).toBe(200)
    expect((await call(server.url, "GET", `/api/v1/actions/${id}`, { token: team.key })).body.status).toBe("notarized")
    expect((await signedPayload(id)).output_scan_flags).toEqual([expect.objectContaining({ entity_type: "email", severity: "warning" })])
  })

  it("flag mode notarizes and commits the findings to the signed receipt", async () => {
    const team = await registerOrg(server.url, "Flag Org")
    const id = await authorized(team)
    const done = await notarize(team, id, CARD_TEXT)
    expect(done.status, done.text).toBe(200)
    const payload = await signedPayload(id)
    expect(payload.receipt_status).toBe("notarized")
    expect(payload.output_scan_flags).toEqual([CARD_FLAG])
    expect(payload.outcome_hash).toBe(sha256Text(CARD_TEXT))
  })

  it("a clean outcome and a disabled policy leave output_scan_flags null", async () => {
    const team = await registerOrg(server.url, "Clean Org")
    const clean = await authorized(team)
    expect((await notarize(team, clean, "all good")).status).toBe(200)
    expect((await signedPayload(clean)).output_scan_flags).toBeNull()

    await patch(team.key, { enabled: false, mode: "deny" })
    const disabled = await authorized(team)
    expect((await notarize(team, disabled, CARD_TEXT)).status).toBe(200)
    expect((await signedPayload(disabled)).output_scan_flags).toBeNull()
  })

  it("redact mode hashes the cleaned text the test route shows", async () => {
    const team = await registerOrg(server.url, "Redact Org")
    await patch(team.key, { mode: "redact" })
    const preview = await call(server.url, "POST", "/api/v1/output-policies/test", { token: team.key, body: { text: CARD_TEXT } })
    const id = await authorized(team)
    expect((await notarize(team, id, CARD_TEXT)).status).toBe(200)
    const payload = await signedPayload(id)
    expect(payload.output_scan_flags).toEqual([CARD_FLAG])
    expect(payload.outcome_hash).toBe(sha256Text(preview.body.redacted_text))
    expect(payload.outcome_hash).not.toBe(sha256Text(CARD_TEXT))
  })

  it("one organization's policy does not apply to another", async () => {
    const strict = await registerOrg(server.url, "Strict Output Org")
    const relaxed = await registerOrg(server.url, "Relaxed Output Org")
    await patch(strict.key, { mode: "deny" })
    expect((await call(server.url, "GET", "/api/v1/output-policies", { token: relaxed.key })).body.mode).toBe("flag")
    const id = await authorized(relaxed)
    expect((await notarize(relaxed, id, CARD_TEXT)).status).toBe(200)
  })
})
