/**
 * What guards authorize and notarize besides policies: the endpoint whitelist
 * (strict and permissive) and output filtering of `outcome_details`.
 */
import { createHash } from "node:crypto"
import { describe, expect, it } from "vitest"
import { call, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { useServer } from "./support/server.js"

const server = useServer()
const org = useFixture(() => registerOrg(server.url, "Guards Org"))

const SECRET_TEXT = "done; the deploy key is AKIAIOSFODNN7EXAMPLE and the password=hunter2hunter2"
const sha = (text: string) => "sha256:" + createHash("sha256").update(text).digest("hex")

const authorized = async (agent = "guarded") => {
  const reply = await call(server.url, "POST", "/api/v1/actions", { token: org.key, body: { action_type: "t", details: "d", agent_id: agent, instruction_hash: "sha256:00" } })
  expect(reply.status).toBe(201)
  return reply.body.action_uuid as string
}

const signedPayload = async (id: string) => {
  const verify = await call(server.url, "GET", `/api/v1/verify/action/${id}`)
  expect(verify.status).toBe(200)
  return (typeof verify.body.signed_payload === "string" ? JSON.parse(verify.body.signed_payload) : verify.body.signed_payload) as Record<string, any>
}

const setOutputPolicy = async (patch: Record<string, unknown>) => {
  const reply = await call(server.url, "PATCH", "/api/v1/output-policies", { token: org.token, body: patch })
  expect(reply.status).toBe(200)
}

describe("output filtering on notarize", () => {
  it("puts flags into the receipt in flag mode and hashes the original text", async () => {
    await setOutputPolicy({ enabled: true, mode: "flag" })
    const probe = await call(server.url, "POST", "/api/v1/output-policies/test", { token: org.token, body: { text: SECRET_TEXT } })
    expect(probe.status).toBe(200)
    expect(probe.body.flags.length).toBeGreaterThan(0)
    const id = await authorized()
    const done = await call(server.url, "POST", `/api/v1/actions/${id}/notarize`, { token: org.key, body: { outcome_details: SECRET_TEXT } })
    expect(done.status).toBe(200)
    const payload = await signedPayload(id)
    expect(payload.outcome_hash).toBe(sha(SECRET_TEXT))
    expect(payload.output_scan_flags.map((f: any) => f.entity_type).sort()).toEqual(probe.body.flags.map((f: any) => f.entity_type).sort())
  })

  it("refuses the notarize in deny mode (422) and leaves the action authorized", async () => {
    await setOutputPolicy({ enabled: true, mode: "deny", deny_severity_threshold: "info" })
    const id = await authorized()
    const refused = await call(server.url, "POST", `/api/v1/actions/${id}/notarize`, { token: org.key, body: { outcome_details: SECRET_TEXT } })
    expect(refused.status).toBe(422)
    expect(refused.body.code).toBe("OUTPUT_SCAN_VIOLATION")
    const detail = await call(server.url, "GET", `/api/v1/actions/${id}`, { token: org.key })
    expect(detail.body.status).toBe("authorized")
    expect(detail.body.receipt).toBeNull()
    const clean = await call(server.url, "POST", `/api/v1/actions/${id}/notarize`, { token: org.key, body: { outcome_details: "all fine" } })
    expect(clean.status).toBe(200)
  })

  it("hashes the redacted text in redact mode", async () => {
    await setOutputPolicy({ enabled: true, mode: "redact", redact_severity_threshold: "info" })
    const probe = await call(server.url, "POST", "/api/v1/output-policies/test", { token: org.token, body: { text: SECRET_TEXT } })
    expect(probe.body.redacted_text).not.toBe(SECRET_TEXT)
    const id = await authorized()
    const done = await call(server.url, "POST", `/api/v1/actions/${id}/notarize`, { token: org.key, body: { outcome_details: SECRET_TEXT } })
    expect(done.status).toBe(200)
    expect((await signedPayload(id)).outcome_hash).toBe(sha(probe.body.redacted_text))
    await setOutputPolicy({ mode: "flag" })
  })
})

describe("endpoint whitelist on authorize", () => {
  it("warns in permissive mode and blocks in strict mode with an approval request", async () => {
    const permissive = await call(server.url, "POST", "/api/v1/actions", {
      token: org.key,
      body: { action_type: "t", details: "d", instruction_hash: "sha256:00", endpoint_url: "https://api.unknown.example/v1/pay" }
    })
    expect(permissive.status).toBe(201)
    expect(permissive.body.warnings.length).toBeGreaterThan(0)

    const strict = await call(server.url, "PUT", "/api/v1/endpoint-whitelist/settings", { token: org.token, body: { mode: "strict" } })
    expect(strict.status).toBe(200)
    const blocked = await call(server.url, "POST", "/api/v1/actions", {
      token: org.key,
      body: { action_type: "t", details: "d", endpoint_url: "https://api.unknown.example/v1/pay", agent_id: "wl-agent" }
    })
    expect(blocked.status).toBe(403)
    expect(blocked.body.code).toBe("ENDPOINT_NOT_WHITELISTED")
    expect(typeof blocked.body.details.approval_id).toBe("string")
    expect(typeof blocked.body.details.url_pattern_suggested).toBe("string")

    const added = await call(server.url, "POST", "/api/v1/endpoint-whitelist", { token: org.token, body: { url_pattern: "https://api.known.example/*", name: "known" } })
    expect(added.status).toBe(201)
    const allowed = await call(server.url, "POST", "/api/v1/actions", {
      token: org.key,
      body: { action_type: "t", details: "d", instruction_hash: "sha256:00", endpoint_url: "https://api.known.example/v1/pay" }
    })
    expect(allowed.status).toBe(201)
    expect(allowed.body.warnings).toBeNull()
  })
})
