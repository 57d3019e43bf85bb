/**
 * Endpoint whitelist end to end over HTTP: entries (admin approved, member
 * pending), admin-only approve / reject / delete, the strict / permissive mode,
 * approval requests filed by strict-mode misses, TLS pins against a local https
 * server, and cross-organization isolation of every route that takes an id.
 */
import { X509Certificate } from "node:crypto"
import { describe, expect, it } from "vitest"
import { addMember, call, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { useServer } from "./support/server.js"
import { useTlsServer } from "./support/tls.js"

const server = useServer({ OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8" })
const org = useFixture(() => registerOrg(server.url, "Whitelist Org"))
const other = useFixture(() => registerOrg(server.url, "Other Org"))
const member = useFixture(() => addMember(server.url, org, "member"))
const tls = useTlsServer()
const certFingerprint = () => `sha256:${new X509Certificate(tls.certPem).fingerprint256.replace(/:/g, "").toLowerCase()}`

const addEntry = (token: string, body: Record<string, unknown>) => call(server.url, "POST", "/api/v1/endpoint-whitelist", { token, body })
const setMode = (token: string, mode: string) => call(server.url, "PUT", "/api/v1/endpoint-whitelist/settings", { token, body: { mode } })
const authorize = (token: string, endpointUrl: string, extra: Record<string, unknown> = {}) =>
  call(server.url, "POST", "/api/v1/actions", {
    token,
    body: { action_type: "http_call", details: "call the endpoint", instruction_hash: "sha256:abc", endpoint_url: endpointUrl, ...extra }
  })
const entries = async (token: string) => {
  const reply = await call(server.url, "GET", "/api/v1/endpoint-whitelist", { token })
  expect(reply.status).toBe(200)
  return reply.body.entries as Array<Record<string, any>>
}

describe("entries", () => {
  it("an entry added by an admin is approved; one added by a member is pending", async () => {
    const byOwner = await addEntry(org.key, { url_pattern: "https://owner.example.com/v1/*", name: "owner entry" })
    expect(byOwner.status).toBe(201)
    expect(byOwner.body).toMatchObject({
      url_pattern: "https://owner.example.com/v1/*",
      name: "owner entry",
      status: "approved",
      tls_fingerprint: null,
      created_by: org.userUuid
    })
    expect(byOwner.body.id).toEqual(expect.any(String))
    expect(Date.parse(byOwner.body.created_at)).not.toBeNaN()

    const admin = await addMember(server.url, org, "admin")
    const byAdmin = await addEntry(admin.key, { url_pattern: "https://admin.example.com/*", name: "admin entry" })
    expect(byAdmin.status).toBe(201)
    expect(byAdmin.body.status).toBe("approved")

    const byMember = await addEntry(member.key, { url_pattern: "https://member.example.com/*", name: "member entry" })
    expect(byMember.status).toBe(201)
    expect(byMember.body.status).toBe("pending")
    expect(byMember.body.created_by).toBe(member.userUuid)

    const listed = await entries(member.key)
    const statusOf = (id: string) => listed.find((entry) => entry.id === id)?.status
    expect(statusOf(byOwner.body.id)).toBe("approved")
    expect(statusOf(byMember.body.id)).toBe("pending")
  })

  it("rejects a pattern that is not an http(s) URL", async () => {
    const reply = await addEntry(org.key, { url_pattern: "ftp://files.example.com/*", name: "ftp" })
    expect(reply.status).toBe(422)
    expect(reply.body.code).toBe("VALIDATION_ERROR")
  })

  it("admins approve, reject and delete; members get 403 on each", async () => {
    const proposed = await addEntry(member.key, { url_pattern: "https://proposed.example.com/*", name: "proposed" })
    const id = proposed.body.id as string

    for (const path of [`/api/v1/endpoint-whitelist/${id}/approve`, `/api/v1/endpoint-whitelist/${id}/reject`]) {
      const denied = await call(server.url, "POST", path, { token: member.key })
      expect(denied.status).toBe(403)
      expect(denied.body.code).toBe("FORBIDDEN")
    }
    const memberDelete = await call(server.url, "DELETE", `/api/v1/endpoint-whitelist/${id}`, { token: member.key })
    expect(memberDelete.status).toBe(403)
    expect((await entries(org.key)).find((entry) => entry.id === id)?.status).toBe("pending")

    const approved = await call(server.url, "POST", `/api/v1/endpoint-whitelist/${id}/approve`, { token: org.key })
    expect(approved.status).toBe(200)
    expect(approved.body).toMatchObject({ id, status: "approved" })
    expect((await entries(org.key)).find((entry) => entry.id === id)?.status).toBe("approved")

    const rejected = await call(server.url, "POST", `/api/v1/endpoint-whitelist/${id}/reject`, { token: org.token })
    expect(rejected.status).toBe(200)
    expect(rejected.body).toMatchObject({ id, status: "rejected" })

    const deleted = await call(server.url, "DELETE", `/api/v1/endpoint-whitelist/${id}`, { token: org.key })
    expect(deleted.status).toBe(200)
    expect(deleted.body).toMatchObject({ id, deleted: true })
    expect((await entries(org.key)).some((entry) => entry.id === id)).toBe(false)
    expect((await call(server.url, "DELETE", `/api/v1/endpoint-whitelist/${id}`, { token: org.key })).status).toBe(404)
  })

  it("a pending or rejected entry does not whitelist its endpoint", async () => {
    const team = await registerOrg(server.url, "Pending Org")
    const teammate = await addMember(server.url, team, "member")
    expect((await setMode(team.key, "strict")).status).toBe(200)
    const proposed = await addEntry(teammate.key, { url_pattern: "https://pending.example.com/*", name: "pending" })
    expect(proposed.body.status).toBe("pending")
    const blocked = await authorize(team.key, "https://pending.example.com/x")
    expect(blocked.status).toBe(403)
    expect(blocked.body.code).toBe("ENDPOINT_NOT_WHITELISTED")

    await call(server.url, "POST", `/api/v1/endpoint-whitelist/${proposed.body.id}/approve`, { token: team.key })
    expect((await authorize(team.key, "https://pending.example.com/x")).status).toBe(201)

    await call(server.url, "POST", `/api/v1/endpoint-whitelist/${proposed.body.id}/reject`, { token: team.key })
    expect((await authorize(team.key, "https://pending.example.com/x")).status).toBe(403)
  })
})

describe("settings", () => {
  it("defaults to permissive; admins switch between strict and permissive; members get 403", async () => {
    const fresh = await registerOrg(server.url, "Settings Org")
    const teammate = await addMember(server.url, fresh, "member")
    const initial = await call(server.url, "GET", "/api/v1/endpoint-whitelist/settings", { token: fresh.key })
    expect(initial.status).toBe(200)
    expect(initial.body.mode).toBe("permissive")

    const strict = await setMode(fresh.key, "strict")
    expect(strict.status).toBe(200)
    expect(strict.body.mode).toBe("strict")
    expect((await call(server.url, "GET", "/api/v1/endpoint-whitelist/settings", { token: teammate.key })).body.mode).toBe("strict")

    const forbidden = await setMode(teammate.key, "permissive")
    expect(forbidden.status).toBe(403)
    expect((await call(server.url, "GET", "/api/v1/endpoint-whitelist/settings", { token: fresh.token })).body.mode).toBe("strict")

    expect((await setMode(fresh.token, "permissive")).body.mode).toBe("permissive")
    expect((await call(server.url, "GET", "/api/v1/endpoint-whitelist/settings", { token: fresh.key })).body.mode).toBe("permissive")

    const invalid = await setMode(fresh.key, "lenient")
    expect(invalid.status).toBe(422)
    expect(invalid.body.code).toBe("VALIDATION_ERROR")
  })
})

describe("authorize against the whitelist", () => {
  it("strict mode blocks with an approval request; approving it with add_pattern lets the same call through", async () => {
    const team = await registerOrg(server.url, "Strict Org")
    await setMode(team.key, "strict")
    const url = "https://payments.example.com/v2/charges/ch_1"

    const blocked = await authorize(team.key, url, { agent_id: "billing-bot" })
    expect(blocked.status).toBe(403)
    expect(blocked.body.code).toBe("ENDPOINT_NOT_WHITELISTED")
    expect(blocked.body.details).toMatchObject({
      approval_id: expect.any(String),
      url_pattern_suggested: "https://payments.example.com/v2/charges/*"
    })
    const approvalId = blocked.body.details.approval_id as string

    const listed = await call(server.url, "GET", "/api/v1/endpoint-approvals", { token: team.key })
    expect(listed.status).toBe(200)
    const request = (listed.body.approvals as Array<Record<string, any>>).find((approval) => approval.id === approvalId)
    expect(request).toMatchObject({ url, agent_id: "billing-bot", url_pattern_suggested: "https://payments.example.com/v2/charges/*", status: "pending" })
    expect(Date.parse(request!.requested_at)).not.toBeNaN()

    const approved = await call(server.url, "POST", `/api/v1/endpoint-approvals/${approvalId}/approve`, { token: team.key, body: { add_pattern: true } })
    expect(approved.status).toBe(200)
    expect(approved.body).toMatchObject({ id: approvalId, status: "approved" })
    expect(approved.body.entry).toMatchObject({ url_pattern: "https://payments.example.com/v2/charges/*", status: "approved" })
    expect((await entries(team.key)).map((entry) => entry.url_pattern)).toContain("https://payments.example.com/v2/charges/*")

    const allowed = await authorize(team.key, url, { agent_id: "billing-bot" })
    expect(allowed.status).toBe(201)
    expect(allowed.body.status).toBe("authorized")
    expect(allowed.body.warnings ?? []).not.toEqual(expect.arrayContaining([expect.stringContaining("whitelist")]))

    const again = await call(server.url, "POST", `/api/v1/endpoint-approvals/${approvalId}/approve`, { token: team.key })
    expect(again.status).toBe(409)
  })

  it("approving without add_pattern or rejecting adds no pattern; an approval lets the blocked request through once", async () => {
    const team = await registerOrg(server.url, "No Pattern Org")
    await setMode(team.key, "strict")
    const first = await authorize(team.key, "https://one.example.com/a")
    const second = await authorize(team.key, "https://two.example.com/b")
    const approved = await call(server.url, "POST", `/api/v1/endpoint-approvals/${first.body.details.approval_id}/approve`, { token: team.key })
    expect(approved.status).toBe(200)
    expect(approved.body.entry).toBeNull()
    const rejected = await call(server.url, "POST", `/api/v1/endpoint-approvals/${second.body.details.approval_id}/reject`, { token: team.key })
    expect(rejected.status).toBe(200)
    expect(rejected.body).toMatchObject({ id: second.body.details.approval_id, status: "rejected" })
    expect(await entries(team.key)).toEqual([])
    // CONTRACT.md: the approved request, retried as it was, is authorized once; then blocked again.
    expect((await authorize(team.key, "https://one.example.com/a", { action_type: "other_call" })).status).toBe(403)
    const retried = await authorize(team.key, "https://one.example.com/a")
    expect(retried.status, retried.text).toBe(201)
    expect(retried.body.warnings.join(" ")).toContain(first.body.details.approval_id)
    expect((await authorize(team.key, "https://one.example.com/a")).status).toBe(403)
    expect((await authorize(team.key, "https://two.example.com/b")).status).toBe(403)
  })

  it("of concurrent resolutions of one request exactly one wins, and the pattern is added once", async () => {
    const team = await registerOrg(server.url, "Race Org")
    await setMode(team.key, "strict")
    const blocked = await authorize(team.key, "https://race.example.com/v1/pay")
    const id = blocked.body.details.approval_id as string
    const replies = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        call(server.url, "POST", `/api/v1/endpoint-approvals/${id}/${i % 2 === 0 ? "approve" : "reject"}`, { token: team.key, body: { add_pattern: true } })
      )
    )
    expect(replies.map((reply) => reply.status).sort()).toEqual([200, 409, 409, 409, 409, 409])
    const winner = replies.find((reply) => reply.status === 200)!
    const patterns = (await entries(team.key)).map((entry) => entry.url_pattern)
    expect(patterns).toEqual(winner.body.status === "approved" ? ["https://race.example.com/v1/*"] : [])
    const listed = (await call(server.url, "GET", "/api/v1/endpoint-approvals", { token: team.key })).body.approvals
    expect(listed.find((approval: any) => approval.id === id).status).toBe(winner.body.status)
  })

  it("a request whose URL yields no valid pattern cannot be approved with add_pattern and stays pending", async () => {
    const team = await registerOrg(server.url, "Odd URL Org")
    await setMode(team.key, "strict")
    const blocked = await authorize(team.key, "not a url at all")
    expect(blocked.status).toBe(403)
    const id = blocked.body.details.approval_id as string
    const refused = await call(server.url, "POST", `/api/v1/endpoint-approvals/${id}/approve`, { token: team.key, body: { add_pattern: true } })
    expect(refused.status).toBe(422)
    expect(refused.body.code).toBe("VALIDATION_ERROR")
    const listed = (await call(server.url, "GET", "/api/v1/endpoint-approvals", { token: team.key })).body.approvals
    expect(listed.find((approval: any) => approval.id === id).status).toBe("pending")
    expect((await call(server.url, "POST", `/api/v1/endpoint-approvals/${id}/approve`, { token: team.key })).status).toBe(200)
  })

  it("members may list approval requests but not resolve them", async () => {
    await setMode(org.key, "strict")
    try {
      const blocked = await authorize(org.key, "https://member-blocked.example.com/x")
      const id = blocked.body.details.approval_id as string
      expect((await call(server.url, "GET", "/api/v1/endpoint-approvals", { token: member.key })).body.approvals.map((a: any) => a.id)).toContain(id)
      expect((await call(server.url, "POST", `/api/v1/endpoint-approvals/${id}/approve`, { token: member.key, body: { add_pattern: true } })).status).toBe(403)
      expect((await call(server.url, "POST", `/api/v1/endpoint-approvals/${id}/reject`, { token: member.key })).status).toBe(403)
      const still = (await call(server.url, "GET", "/api/v1/endpoint-approvals", { token: org.key })).body.approvals.find((a: any) => a.id === id)
      expect(still.status).toBe("pending")
    } finally {
      await setMode(org.key, "permissive")
    }
  })

  it("permissive mode lets an unlisted endpoint through with a warning and files no request", async () => {
    const team = await registerOrg(server.url, "Permissive Org")
    const reply = await authorize(team.key, "https://unlisted.example.com/x")
    expect(reply.status).toBe(201)
    expect(reply.body.status).toBe("authorized")
    expect(reply.body.warnings).toEqual(expect.arrayContaining([expect.stringContaining("https://unlisted.example.com/x")]))
    expect((await call(server.url, "GET", "/api/v1/endpoint-approvals", { token: team.key })).body.approvals).toEqual([])
  })

  it("a trailing * matches any rest of the path, and only on the same scheme and host", async () => {
    const team = await registerOrg(server.url, "Prefix Org")
    await setMode(team.key, "strict")
    expect((await addEntry(team.key, { url_pattern: "https://api.example.com/v1/*", name: "v1" })).status).toBe(201)
    expect((await addEntry(team.key, { url_pattern: "https://exact.example.com/only", name: "exact" })).status).toBe(201)

    expect((await authorize(team.key, "https://api.example.com/v1/")).status).toBe(201)
    expect((await authorize(team.key, "https://api.example.com/v1/charges/ch_1?expand=all")).status).toBe(201)
    expect((await authorize(team.key, "https://API.example.com/v1/charges")).status).toBe(201)
    expect((await authorize(team.key, "https://exact.example.com/only")).status).toBe(201)
    for (const url of [
      "https://api.example.com/v2/charges",
      "http://api.example.com/v1/charges",
      "https://evil.example.com/v1/charges",
      "https://api.example.com:8443/v1/charges",
      "https://exact.example.com/only/more"
    ]) {
      const reply = await authorize(team.key, url)
      expect(reply.status, url).toBe(403)
      expect(reply.body.code).toBe("ENDPOINT_NOT_WHITELISTED")
    }
  })
})

describe("TLS pins", () => {
  it("the right fingerprint is allowed; a wrong one is a hard 403 ENDPOINT_TLS_MISMATCH", async () => {
    const team = await registerOrg(server.url, "TLS Org")
    const good = await addEntry(team.key, { url_pattern: `https://127.0.0.1:${tls.port}/good/*`, name: "pinned", tls_fingerprint: certFingerprint() })
    expect(good.status).toBe(201)
    expect(good.body.tls_fingerprint).toBe(certFingerprint())
    const wrong = `sha256:${"ab".repeat(32)}`
    expect((await addEntry(team.key, { url_pattern: `https://127.0.0.1:${tls.port}/bad/*`, name: "mispinned", tls_fingerprint: wrong })).status).toBe(201)

    const allowed = await authorize(team.key, `https://127.0.0.1:${tls.port}/good/pay`)
    expect(allowed.status).toBe(201)
    expect(allowed.body.status).toBe("authorized")

    const mismatch = await authorize(team.key, `https://127.0.0.1:${tls.port}/bad/pay`)
    expect(mismatch.status).toBe(403)
    expect(mismatch.body.code).toBe("ENDPOINT_TLS_MISMATCH")

    // Still a hard block in permissive mode, and the upper-case form of a pin is the same pin.
    const upper = await registerOrg(server.url, "TLS Upper Org")
    await addEntry(upper.key, { url_pattern: `https://127.0.0.1:${tls.port}/*`, name: "upper", tls_fingerprint: `sha256:${certFingerprint().slice(7).toUpperCase()}` })
    expect((await authorize(upper.key, `https://127.0.0.1:${tls.port}/x`)).status).toBe(201)
  })

  it("a pin whose fingerprint is not sha256:<64 hex> is a validation error", async () => {
    const reply = await addEntry(org.key, { url_pattern: "https://pin.example.com/*", name: "bad pin", tls_fingerprint: "md5:1234" })
    expect(reply.status).toBe(422)
    expect(reply.body.code).toBe("VALIDATION_ERROR")
  })
})

describe("cross-organization", () => {
  it("another organization's key gets 404 on every whitelist and approval route that takes an id", async () => {
    const entry = await addEntry(org.key, { url_pattern: "https://cross.example.com/*", name: "cross" })
    const entryId = entry.body.id as string
    await setMode(org.key, "strict")
    let approvalId: string
    try {
      const blocked = await authorize(org.key, "https://cross-blocked.example.com/x")
      approvalId = blocked.body.details.approval_id
    } finally {
      await setMode(org.key, "permissive")
    }

    const attempts: Array<[string, string]> = [
      ["POST", `/api/v1/endpoint-whitelist/${entryId}/approve`],
      ["POST", `/api/v1/endpoint-whitelist/${entryId}/reject`],
      ["DELETE", `/api/v1/endpoint-whitelist/${entryId}`],
      ["POST", `/api/v1/endpoint-approvals/${approvalId}/approve`],
      ["POST", `/api/v1/endpoint-approvals/${approvalId}/reject`]
    ]
    for (const [method, path] of attempts) {
      const reply = await call(server.url, method, path, { token: other.key, body: method === "POST" ? {} : undefined })
      expect(reply.status, `${method} ${path}`).toBe(404)
      expect(reply.body.code).toBe("NOT_FOUND")
    }
    // Nothing changed, and nothing leaks into the other organization's lists.
    expect((await entries(org.key)).find((e) => e.id === entryId)?.status).toBe("approved")
    const approvals = (await call(server.url, "GET", "/api/v1/endpoint-approvals", { token: org.key })).body.approvals
    expect(approvals.find((a: any) => a.id === approvalId)?.status).toBe("pending")
    expect((await entries(other.key)).some((e) => e.id === entryId)).toBe(false)
    expect((await call(server.url, "GET", "/api/v1/endpoint-approvals", { token: other.key })).body.approvals).toEqual([])
    expect((await call(server.url, "GET", "/api/v1/endpoint-whitelist/settings", { token: other.key })).body.mode).toBe("permissive")
  })
})
