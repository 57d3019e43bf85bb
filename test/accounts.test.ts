/**
 * Accounts and access end to end: registration, login, keys (scopes, expiry,
 * revocation), invites and roles, ownership, leaving, deleting, plans, audit.
 */
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { addMember, call, registerOrg, uniqueEmail } from "./support/client.js"
import { freshDatabaseUrl } from "./support/database.js"
import { eventually } from "./support/eventually.js"
import { signTestJwt } from "./support/jwt.js"
import { startServer, type TestServer, useServer } from "./support/server.js"

const server = useServer()

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

  it("owners and admins revoke any key of the organization, members only their own", async () => {
    const owner = await registerOrg(server.url)
    const admin = await addMember(server.url, owner, "admin")
    const member = await addMember(server.url, owner, "member")
    const stranger = await registerOrg(server.url)
    const mint = async (token: string, name: string) => {
      const reply = await call(server.url, "POST", "/api/v1/api-keys", { token, body: { name } })
      expect(reply.status).toBe(201)
      return { id: reply.body.id as string, key: reply.body.key as string }
    }
    const revoke = (token: string, keyId: string) => call(server.url, "DELETE", `/api/v1/api-keys/${keyId}`, { token })
    const callers = {
      owner: { jwt: owner.token, key: (await mint(owner.token, "owner caller")).key },
      admin: { jwt: admin.token, key: (await mint(admin.token, "admin caller")).key },
      member: { jwt: member.token, key: (await mint(member.token, "member caller")).key }
    }
    const tokens = { owner: owner.token, admin: admin.token, member: member.token }
    for (const role of ["owner", "admin", "member"] as const) {
      for (const via of ["jwt", "key"] as const) {
        const caller = callers[role][via]
        for (const victim of ["owner", "admin", "member"] as const) {
          const target = await mint(tokens[victim], `${victim}'s key`)
          const reply = await revoke(caller, target.id)
          const allowed = role !== "member" || victim === "member"
          expect([role, via, victim, reply.status]).toEqual([role, via, victim, allowed ? 200 : 403])
          if (!allowed) {
            expect(reply.body.code).toBe("FORBIDDEN")
            expect(reply.body.error).toBe(reply.body.message)
            expect((await call(server.url, "GET", "/api/v1/team/members", { token: target.key })).status).toBe(200)
          } else {
            expect((await call(server.url, "GET", "/api/v1/team/members", { token: target.key })).status).toBe(401)
          }
        }
        // Another organization's key stays 404 whatever the role.
        expect((await revoke(caller, stranger.keyId)).status).toBe(404)
      }
    }
    // The member's own key, created by the member, revoked through a key of the same member.
    const own = await mint(member.token, "own")
    expect((await revoke(callers.member.key, own.id)).status).toBe(200)
    // A key a member holds but the owner created stays out of reach even through the member's JWT.
    expect((await revoke(member.token, owner.keyId)).status).toBe(403)
    expect((await call(server.url, "GET", "/api/v1/team/members", { token: owner.key })).status).toBe(200)
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
    const soon = new Date(Date.now() + 1000).toISOString()
    const created = await call(server.url, "POST", "/api/v1/api-keys", { token: org.key, body: { name: "short", expires_at: soon } })
    expect(created.status).toBe(201)
    expect((await call(server.url, "GET", "/api/v1/team/members", { token: created.body.key })).status).toBe(200)
    // Refused once its expiry has passed (polled, not a fixed wait past it).
    await eventually(async () => expect((await call(server.url, "GET", "/api/v1/team/members", { token: created.body.key })).status).toBe(401), {
      timeoutMs: 5_000,
      intervalMs: 50
    })
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(soon))
    const past = await call(server.url, "POST", "/api/v1/api-keys", { token: org.key, body: { name: "past", expires_at: "2001-01-01T00:00:00Z" } })
    expect(past.status).toBe(422)
  })

  it("lists a key's last use at once, before the batched write reaches the database", async () => {
    const org = await registerOrg(server.url)
    const created = await call(server.url, "POST", "/api/v1/api-keys", { token: org.key, body: { name: "used" } })
    const before = Date.now()
    expect((await call(server.url, "GET", "/api/v1/team/members", { token: created.body.key })).status).toBe(200)
    const listed = await call(server.url, "GET", "/api/v1/api-keys", { token: org.token })
    const used = listed.body.data.find((key: any) => key.id === created.body.id)
    expect(used.last_used_at).not.toBeNull()
    expect(Date.parse(used.last_used_at)).toBeGreaterThanOrEqual(before - 1_000)
    // The owner's key, never used, stays null (the listing itself used a JWT).
    const unused = await call(server.url, "POST", "/api/v1/api-keys", { token: org.token, body: { name: "unused" } })
    const again = await call(server.url, "GET", "/api/v1/api-keys", { token: org.token })
    expect(again.body.data.find((key: any) => key.id === unused.body.id).last_used_at).toBeNull()
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

describe("invite codes at rest", () => {
  /** Every column of every invite row, as one text to search. */
  const invitesRows = (target: TestServer = server) =>
    target.run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql`SELECT * FROM invites`
        return JSON.stringify(rows, (_key, value) => (typeof value === "bigint" ? String(value) : value))
      })
    )

  /** A pending invite as the table held it before codes were hashed: the code itself, in plain text. */
  const insertPlaintextInvite = (org: { orgUuid: string; userUuid: string }, code: string, email: string) =>
    server.run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO invites (invite_code, org_uuid, email, role, created_by, expires_at)
                   VALUES (${code}, ${org.orgUuid}, ${email}, 'member', ${org.userUuid}, ${new Date(Date.now() + 3_600_000).toISOString()})`
      })
    )

  const join = (code: string, email: string) =>
    call(server.url, "POST", "/api/v1/auth/register", { body: { email, password: "another long password", invite_code: code } })

  it("stores no invite code in any column, and the code still registers once", async () => {
    const owner = await registerOrg(server.url)
    const email = uniqueEmail("invited")
    const invite = await call(server.url, "POST", "/api/v1/team/invites", { token: owner.token, body: { email, role: "member" } })
    expect(invite.status).toBe(201)
    const code: string = invite.body.invite_code
    expect(code).toMatch(/^[0-9A-HJKMNP-TV-Z]{16}$/)
    const rows = await invitesRows()
    expect(rows).toContain(owner.orgUuid)
    expect(rows.toLowerCase()).not.toContain(code.toLowerCase())
    const joined = await join(code, email)
    expect(joined.status).toBe(201)
    expect(joined.body.org_uuid).toBe(owner.orgUuid)
    expect((await join(code, uniqueEmail("again"))).status).toBe(404)
    expect((await join(code, email)).status).toBe(404)
  })

  it("a plaintext invite from an older node still registers, and its code is then wiped", async () => {
    const owner = await registerOrg(server.url)
    const email = uniqueEmail("legacy")
    const code = "LEGACY0000000001"
    await insertPlaintextInvite(owner, code, email)
    const joined = await join(code, email)
    expect(joined.status).toBe(201)
    expect(joined.body.org_uuid).toBe(owner.orgUuid)
    expect(await invitesRows()).not.toContain(code)
  })

  it("pending plaintext invites are hashed when a node starts, and keep working", async () => {
    const owner = await registerOrg(server.url)
    const email = uniqueEmail("upgraded")
    const code = "UPGRADE000000002"
    await insertPlaintextInvite(owner, code, email)
    expect(await invitesRows()).toContain(code)
    // A node starting on the same database (as after an upgrade) hashes every stored code before serving.
    const upgraded = await startServer({ DATABASE_URL: server.config.databaseUrl })
    try {
      expect(await invitesRows(upgraded)).not.toContain(code)
      const joined = await call(upgraded.url, "POST", "/api/v1/auth/register", {
        body: { email, password: "another long password", invite_code: code }
      })
      expect(joined.status).toBe(201)
      expect(joined.body.org_uuid).toBe(owner.orgUuid)
    } finally {
      await upgraded.stop()
    }
  }, 30_000)
})

describe("dashboard JWTs across nodes", () => {
  /** A token signed with this server's key, as a node before the upgrade issued it (issuer = its BASE_URL). */
  const signedWithIssuer = (org: { userUuid: string; orgUuid: string; email: string }, issuer: string) => signTestJwt(server, org, { issuer })

  it("still accepts a session issued under this node's BASE_URL, and refuses another issuer", async () => {
    const org = await registerOrg(server.url)
    const legacy = await signedWithIssuer(org, server.config.baseUrl)
    const ok = await call(server.url, "GET", "/api/v1/auth/whoami", { token: legacy })
    expect(ok.status).toBe(200)
    expect(ok.body.user_uuid).toBe(org.userUuid)
    const foreign = await signedWithIssuer(org, "https://somewhere.else.example")
    expect((await call(server.url, "GET", "/api/v1/auth/whoami", { token: foreign })).status).toBe(401)
  })

  it("a JWT issued by one node works on a node with another BASE_URL", async () => {
    const database = await freshDatabaseUrl()
    // Same MASTER_KEY (startServer's default) and database; each node's BASE_URL is its own address.
    const first = await startServer({ DATABASE_URL: database.url })
    const second = await startServer({ DATABASE_URL: database.url })
    try {
      expect(first.config.baseUrl).not.toBe(second.config.baseUrl)
      const org = await registerOrg(first.url)
      const whoami = await call(second.url, "GET", "/api/v1/auth/whoami", { token: org.token })
      expect(whoami.status).toBe(200)
      expect(whoami.body.kind).toBe("jwt")
      expect(whoami.body.user_uuid).toBe(org.userUuid)
      const login = await call(second.url, "POST", "/api/v1/auth/login", { body: { email: org.email, password: org.password } })
      expect((await call(first.url, "GET", "/api/v1/auth/whoami", { token: login.body.token })).status).toBe(200)
    } finally {
      await second.stop()
      await first.stop()
      await database.drop()
    }
  }, 30_000)
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
