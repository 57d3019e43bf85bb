/**
 * Accounts and access end to end: registration, login, keys (scopes, expiry,
 * revocation), invites and roles, ownership, leaving, deleting, plans, audit.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { addMember, call, registerOrg, uniqueEmail } from "./support/client.js"
import { startServer, type TestServer } from "./support/server.js"

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(async () => {
  await server?.stop()
})

describe("registration and login", () => {
  it("registers an owner with a first key and a JWT", async () => {
    const email = uniqueEmail()
    const reply = await call(server.url, "POST", "/api/v1/auth/register", { body: { email, password: "twelve chars!", org_name: "Org", name: "Ada" } })
    expect(reply.status).toBe(201)
    expect(reply.body.role).toBe("owner")
    expect(reply.body.expires_in).toBe(86400)
    expect(reply.body.api_key.key).toMatch(/^svc_live_[1-9A-HJ-NP-Za-km-z]{40,}$/)
    expect(reply.body.api_key.key.startsWith(reply.body.api_key.key_prefix)).toBe(true)
    const dup = await call(server.url, "POST", "/api/v1/auth/register", { body: { email, password: "twelve chars!", org_name: "Other" } })
    expect(dup.status).toBe(409)
    expect(dup.body.code).toBe("EMAIL_TAKEN")
  })

  it("refuses short passwords and missing org names", async () => {
    const short = await call(server.url, "POST", "/api/v1/auth/register", { body: { email: uniqueEmail(), password: "short", org_name: "x" } })
    expect(short.status).toBe(422)
    const noOrg = await call(server.url, "POST", "/api/v1/auth/register", { body: { email: uniqueEmail(), password: "long enough pass" } })
    expect(noOrg.status).toBe(422)
    expect(noOrg.body.code).toBe("VALIDATION_ERROR")
  })

  it("logs in, and answers the same for a wrong password and an unknown e-mail", async () => {
    const org = await registerOrg(server.url)
    const ok = await call(server.url, "POST", "/api/v1/auth/login", { body: { email: org.email, password: org.password } })
    expect(ok.status).toBe(200)
    expect(ok.body.org_uuid).toBe(org.orgUuid)
    const wrong = await call(server.url, "POST", "/api/v1/auth/login", { body: { email: org.email, password: "not the password" } })
    const unknown = await call(server.url, "POST", "/api/v1/auth/login", { body: { email: uniqueEmail(), password: "not the password" } })
    expect(wrong.status).toBe(401)
    expect(unknown.status).toBe(401)
    expect(wrong.body.code).toBe("INVALID_CREDENTIALS")
    expect(unknown.body.message).toBe(wrong.body.message)
  })
})

describe("API keys", () => {
  it("creates, lists without secrets, and revokes at once", async () => {
    const org = await registerOrg(server.url)
    const created = await call(server.url, "POST", "/api/v1/api-keys", { token: org.key, body: { name: "ci" } })
    expect(created.status).toBe(201)
    const key = created.body.key as string
    expect((await call(server.url, "GET", "/api/v1/api-keys", { token: key })).status).toBe(200)
    const listed = await call(server.url, "GET", "/api/v1/api-keys", { token: org.key })
    expect(listed.body.data.length).toBe(2)
    expect(listed.text).not.toContain(key)
    expect(listed.body.pagination).toEqual({ page: 1, per_page: 20, total: 2, has_more: false })
    const revoked = await call(server.url, "DELETE", `/api/v1/api-keys/${created.body.id}`, { token: org.key })
    expect(revoked.status).toBe(200)
    expect(revoked.body.revoked_at).toBeTruthy()
    const after = await call(server.url, "GET", "/api/v1/api-keys", { token: key })
    expect(after.status).toBe(401)
    expect(after.body.code).toBe("UNAUTHORIZED")
    expect(after.body.error).toBe(after.body.message)
  })

  it("another organization's key id is 404, and its key is not ours", async () => {
    const a = await registerOrg(server.url)
    const b = await registerOrg(server.url)
    const reply = await call(server.url, "DELETE", `/api/v1/api-keys/${a.keyId}`, { token: b.key })
    expect(reply.status).toBe(404)
    const still = await call(server.url, "GET", "/api/v1/api-keys", { token: a.key })
    expect(still.status).toBe(200)
  })

  it("scope-limited keys get 403 FORBIDDEN outside their scope", async () => {
    const org = await registerOrg(server.url)
    const limited = await call(server.url, "POST", "/api/v1/api-keys", { token: org.key, body: { name: "read", scopes: ["team:read"] } })
    expect(limited.body.scopes).toEqual(["team:read"])
    expect((await call(server.url, "GET", "/api/v1/team/members", { token: limited.body.key })).status).toBe(200)
    const denied = await call(server.url, "GET", "/api/v1/api-keys", { token: limited.body.key })
    expect(denied.status).toBe(403)
    expect(denied.body.code).toBe("FORBIDDEN")
    const escalate = await call(server.url, "POST", "/api/v1/api-keys", { token: limited.body.key, body: { name: "x", scopes: ["*"] } })
    expect(escalate.status).toBe(403)
  })

  it("expired keys are refused", async () => {
    const org = await registerOrg(server.url)
    const soon = new Date(Date.now() + 1500).toISOString()
    const created = await call(server.url, "POST", "/api/v1/api-keys", { token: org.key, body: { name: "short", expires_at: soon } })
    expect(created.status).toBe(201)
    expect((await call(server.url, "GET", "/api/v1/team/members", { token: created.body.key })).status).toBe(200)
    await new Promise((r) => setTimeout(r, 1700))
    expect((await call(server.url, "GET", "/api/v1/team/members", { token: created.body.key })).status).toBe(401)
    const past = await call(server.url, "POST", "/api/v1/api-keys", { token: org.key, body: { name: "past", expires_at: "2001-01-01T00:00:00Z" } })
    expect(past.status).toBe(422)
  })

  it("garbage and missing credentials are 401", async () => {
    expect((await call(server.url, "GET", "/api/v1/api-keys")).status).toBe(401)
    expect((await call(server.url, "GET", "/api/v1/api-keys", { token: "svc_live_nope" })).status).toBe(401)
    expect((await call(server.url, "GET", "/api/v1/api-keys", { token: "eyJhbGciOiJIUzI1NiJ9.e30.x" })).status).toBe(401)
  })
})

describe("team, roles and ownership", () => {
  it("invites members, lists them, and keeps roles apart", async () => {
    const owner = await registerOrg(server.url)
    const admin = await addMember(server.url, owner, "admin")
    const member = await addMember(server.url, owner, "member")
    const members = await call(server.url, "GET", "/api/v1/team/members", { token: owner.key })
    expect(members.body.data.map((m: any) => m.role).sort()).toEqual(["admin", "member", "owner"])
    const byMember = await call(server.url, "POST", "/api/v1/team/invites", { token: member.token, body: { email: uniqueEmail(), role: "member" } })
    expect(byMember.status).toBe(403)
    const byKey = await call(server.url, "POST", "/api/v1/team/invites", { token: owner.key, body: { email: uniqueEmail(), role: "member" } })
    expect(byKey.status).toBe(401)
    const approvers = await call(server.url, "PUT", "/api/v1/team/default-approvers", { token: admin.token, body: { emails: [member.email] } })
    expect(approvers.status).toBe(200)
    expect(approvers.body.default_approvers).toEqual([member.email.toLowerCase()])
  })

  it("transfers ownership only to an admin", async () => {
    const owner = await registerOrg(server.url)
    const admin = await addMember(server.url, owner, "admin")
    const member = await addMember(server.url, owner, "member")
    const toMember = await call(server.url, "POST", "/api/v1/team/transfer-ownership", { token: owner.token, body: { target_user_id: member.userUuid } })
    expect(toMember.status).toBe(422)
    expect(toMember.body.code).toBe("TARGET_NOT_ADMIN")
    const ok = await call(server.url, "POST", "/api/v1/team/transfer-ownership", { token: owner.token, body: { target_user_id: admin.userUuid } })
    expect(ok.status).toBe(200)
    const members = await call(server.url, "GET", "/api/v1/team/members", { token: owner.key })
    const roles = Object.fromEntries(members.body.data.map((m: any) => [m.user_uuid, m.role]))
    expect(roles[admin.userUuid]).toBe("owner")
    expect(roles[owner.userUuid]).toBe("admin")
  })

  it("leaving anonymizes and deactivates; the owner must transfer first", async () => {
    const owner = await registerOrg(server.url)
    const member = await addMember(server.url, owner, "member")
    const ownerLeaves = await call(server.url, "POST", "/api/v1/auth/leave-org", { token: owner.token })
    expect(ownerLeaves.status).toBe(409)
    expect(ownerLeaves.body.code).toBe("OWNER_MUST_TRANSFER")
    const viaKey = await call(server.url, "POST", "/api/v1/auth/leave-org", { token: member.key })
    expect(viaKey.status).toBe(401)
    const left = await call(server.url, "POST", "/api/v1/auth/leave-org", { token: member.token })
    expect(left.status).toBe(200)
    const login = await call(server.url, "POST", "/api/v1/auth/login", { body: { email: member.email, password: member.password } })
    expect(login.status).toBe(401)
    expect(login.body.code).toBe("INVALID_CREDENTIALS")
    expect((await call(server.url, "GET", "/api/v1/team/members", { token: member.key })).status).toBe(401)
    const members = await call(server.url, "GET", "/api/v1/team/members", { token: owner.key })
    expect(members.text).not.toContain(member.email)
  })

  it("deleting the account removes the organization", async () => {
    const owner = await registerOrg(server.url)
    const admin = await addMember(server.url, owner, "admin")
    expect((await call(server.url, "DELETE", "/api/v1/auth/account", { token: admin.token })).status).toBe(403)
    const deleted = await call(server.url, "DELETE", "/api/v1/auth/account", { token: owner.token })
    expect(deleted.status).toBe(200)
    expect(deleted.body.deleted).toBe(true)
    expect((await call(server.url, "GET", "/api/v1/api-keys", { token: owner.key })).status).toBe(401)
    const login = await call(server.url, "POST", "/api/v1/auth/login", { body: { email: owner.email, password: owner.password } })
    expect(login.status).toBe(401)
  })
})

describe("platform administration", () => {
  it("sets an organization's plan with X-Admin-Key only", async () => {
    const org = await registerOrg(server.url)
    const none = await call(server.url, "PUT", `/api/v1/admin/orgs/${org.orgUuid}/plan`, { body: { plan: "pro" } })
    expect(none.status).toBe(401)
    const wrong = await call(server.url, "PUT", `/api/v1/admin/orgs/${org.orgUuid}/plan`, { body: { plan: "pro" }, headers: { "x-admin-key": "nope" } })
    expect(wrong.status).toBe(401)
    const ok = await call(server.url, "PUT", `/api/v1/admin/orgs/${org.orgUuid}/plan`, { body: { plan: "pro" }, headers: { "x-admin-key": "test-admin-key" } })
    expect(ok.status).toBe(200)
    expect(ok.body.plan).toBe("pro")
    const bad = await call(server.url, "PUT", `/api/v1/admin/orgs/${org.orgUuid}/plan`, { body: { plan: "gold" }, headers: { "x-admin-key": "test-admin-key" } })
    expect(bad.status).toBe(422)
    const missing = await call(server.url, "PUT", "/api/v1/admin/orgs/00000000-0000-0000-0000-000000000000/plan", { body: { plan: "pro" }, headers: { "x-admin-key": "test-admin-key" } })
    expect(missing.status).toBe(404)
  })
})
