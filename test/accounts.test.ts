/**
 * Accounts and access end to end: registration, login, keys (scopes, expiry,
 * revocation), invites and roles, ownership, leaving, deleting, plans, audit.
 * Over the typed client (HttpApiClient over GatewayApi).
 */
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql"
import { adminClient, answer, client, clientAt, member, raw, register } from "./support/api.js"
import { type Org, uniqueEmail } from "./support/client.js"
import { freshDatabaseUrl } from "./support/database.js"
import { liveLayer } from "./support/effect.js"
import { eventuallyEffect } from "./support/eventually.js"
import { signTestJwt } from "./support/jwt.js"
import { Gateway, type ServerEnv, startServer, type TestServer } from "./support/server.js"

/** The status of a members listing as `token`: 200 while the credential works. */
const membersStatus = (token: string) =>
  Effect.map(
    Effect.flatMap(client(token), (api) => api.team.members({ query: {}, responseMode: "response-only" })),
    (reply) => reply.status
  )

/** A node started on its own, stopped when the test's scope closes. */
const node = (env: ServerEnv) =>
  Effect.acquireRelease(
    Effect.promise(() => startServer(env)),
    (started) => Effect.promise(() => started.stop())
  )

liveLayer(Gateway.layer())((it) => {
  it.describe("registration and login", () => {
    it.effect("registers an owner with a first key and a JWT", () =>
      Effect.gen(function* () {
        const anonymous = yield* client()
        const email = uniqueEmail()
        const [registered, reply] = yield* anonymous.auth.register({
          payload: { email, password: "twelve chars!", org_name: "Org", name: "Ada" },
          responseMode: "decoded-and-response"
        })
        expect(reply.status).toBe(201)
        expect(registered.role).toBe("owner")
        expect(registered.expires_in).toBe(86400)
        expect(registered.api_key.key).toMatch(/^svc_live_[1-9A-HJ-NP-Za-km-z]{40,}$/)
        expect(registered.api_key.key.startsWith(registered.api_key.key_prefix)).toBe(true)
        const dup = yield* answer(anonymous.auth.register({ payload: { email, password: "twelve chars!", org_name: "Other" }, responseMode: "response-only" }))
        expect(dup.status).toBe(409)
        expect(dup.body.code).toBe("EMAIL_TAKEN")
      })
    )

    it.effect("refuses short passwords and missing org names", () =>
      Effect.gen(function* () {
        // Raw: a password shorter than the contract's minimum.
        const short = yield* raw("POST", "/api/v1/auth/register", { body: { email: uniqueEmail(), password: "short", org_name: "x" } })
        expect(short.status).toBe(422)
        const noOrg = yield* answer(
          (yield* client()).auth.register({ payload: { email: uniqueEmail(), password: "long enough pass" }, responseMode: "response-only" })
        )
        expect(noOrg.status).toBe(422)
        expect(noOrg.body.code).toBe("VALIDATION_ERROR")
      })
    )

    it.effect("logs in, and answers the same for a wrong password and an unknown e-mail", () =>
      Effect.gen(function* () {
        const org = yield* register()
        const anonymous = yield* client()
        const [ok, okReply] = yield* anonymous.auth.login({ payload: { email: org.email, password: org.password }, responseMode: "decoded-and-response" })
        expect(okReply.status).toBe(200)
        expect(ok.org_uuid).toBe(org.orgUuid)
        const wrong = yield* answer(anonymous.auth.login({ payload: { email: org.email, password: "not the password" }, responseMode: "response-only" }))
        const unknown = yield* answer(anonymous.auth.login({ payload: { email: uniqueEmail(), password: "not the password" }, responseMode: "response-only" }))
        expect(wrong.status).toBe(401)
        expect(unknown.status).toBe(401)
        expect(wrong.body.code).toBe("INVALID_CREDENTIALS")
        expect(unknown.body.message).toBe(wrong.body.message)
      })
    )
  })

  it.describe("API keys", () => {
    it.effect("creates, lists without secrets, and revokes at once", () =>
      Effect.gen(function* () {
        const org = yield* register()
        const api = yield* client(org.key)
        const [created, createdReply] = yield* api.apiKeys.create({ payload: { name: "ci" }, responseMode: "decoded-and-response" })
        expect(createdReply.status).toBe(201)
        const fresh = yield* client(created.key)
        expect((yield* fresh.apiKeys.list({ query: {}, responseMode: "response-only" })).status).toBe(200)
        // As sent: the secret must be absent from the whole answer, keys the decoder would drop included.
        const listed = yield* answer(api.apiKeys.list({ query: {}, responseMode: "response-only" }))
        expect(listed.body.data.length).toBe(2)
        expect(JSON.stringify(listed.body)).not.toContain(created.key)
        expect(listed.body.pagination).toEqual({ page: 1, per_page: 20, total: 2, has_more: false })
        const [revoked, revokedReply] = yield* api.apiKeys.revoke({ params: { key_id: created.id }, responseMode: "decoded-and-response" })
        expect(revokedReply.status).toBe(200)
        expect(revoked.revoked_at).toBeTruthy()
        const after = yield* answer(fresh.apiKeys.list({ query: {}, responseMode: "response-only" }))
        expect(after.status).toBe(401)
        expect(after.body.code).toBe("UNAUTHORIZED")
        expect(after.body.error).toBe(after.body.message)
      })
    )

    it.effect("another organization's key id is 404, and its key is not ours", () =>
      Effect.gen(function* () {
        const a = yield* register()
        const b = yield* register()
        const reply = yield* (yield* client(b.key)).apiKeys.revoke({ params: { key_id: a.keyId }, responseMode: "response-only" })
        expect(reply.status).toBe(404)
        const still = yield* (yield* client(a.key)).apiKeys.list({ query: {}, responseMode: "response-only" })
        expect(still.status).toBe(200)
      })
    )

    it.effect("owners and admins revoke any key of the organization, members only their own", () =>
      Effect.gen(function* () {
        const owner = yield* register()
        const admin = yield* member(owner, "admin")
        const teammate = yield* member(owner, "member")
        const stranger = yield* register()
        const mint = (token: string, name: string) =>
          Effect.gen(function* () {
            const [created, reply] = yield* (yield* client(token)).apiKeys.create({ payload: { name }, responseMode: "decoded-and-response" })
            expect(reply.status).toBe(201)
            return { id: created.id, key: created.key }
          })
        const revoke = (token: string, keyId: string) =>
          answer(Effect.flatMap(client(token), (api) => api.apiKeys.revoke({ params: { key_id: keyId }, responseMode: "response-only" })))
        const callers = {
          owner: { jwt: owner.token, key: (yield* mint(owner.token, "owner caller")).key },
          admin: { jwt: admin.token, key: (yield* mint(admin.token, "admin caller")).key },
          member: { jwt: teammate.token, key: (yield* mint(teammate.token, "member caller")).key }
        }
        const tokens = { owner: owner.token, admin: admin.token, member: teammate.token }
        for (const role of ["owner", "admin", "member"] as const) {
          for (const via of ["jwt", "key"] as const) {
            const caller = callers[role][via]
            for (const victim of ["owner", "admin", "member"] as const) {
              const target = yield* mint(tokens[victim], `${victim}'s key`)
              const reply = yield* revoke(caller, target.id)
              const allowed = role !== "member" || victim === "member"
              expect([role, via, victim, reply.status]).toEqual([role, via, victim, allowed ? 200 : 403])
              if (!allowed) {
                expect(reply.body.code).toBe("FORBIDDEN")
                expect(reply.body.error).toBe(reply.body.message)
                expect(yield* membersStatus(target.key)).toBe(200)
              } else {
                expect(yield* membersStatus(target.key)).toBe(401)
              }
            }
            // Another organization's key stays 404 whatever the role.
            expect((yield* revoke(caller, stranger.keyId)).status).toBe(404)
          }
        }
        // The member's own key, created by the member, revoked through a key of the same member.
        const own = yield* mint(teammate.token, "own")
        expect((yield* revoke(callers.member.key, own.id)).status).toBe(200)
        // A key a member holds but the owner created stays out of reach even through the member's JWT.
        expect((yield* revoke(teammate.token, owner.keyId)).status).toBe(403)
        expect(yield* membersStatus(owner.key)).toBe(200)
      })
    )

    it.effect("scope-limited keys get 403 FORBIDDEN outside their scope", () =>
      Effect.gen(function* () {
        const org = yield* register()
        const limited = yield* (yield* client(org.key)).apiKeys.create({ payload: { name: "read", scopes: ["team:read"] } })
        expect(limited.scopes).toEqual(["team:read"])
        expect(yield* membersStatus(limited.key)).toBe(200)
        const reader = yield* client(limited.key)
        const denied = yield* answer(reader.apiKeys.list({ query: {}, responseMode: "response-only" }))
        expect(denied.status).toBe(403)
        expect(denied.body.code).toBe("FORBIDDEN")
        const escalate = yield* reader.apiKeys.create({ payload: { name: "x", scopes: ["*"] }, responseMode: "response-only" })
        expect(escalate.status).toBe(403)
      })
    )

    it.effect("expired keys are refused", () =>
      Effect.gen(function* () {
        const org = yield* register()
        const api = yield* client(org.key)
        const soon = new Date(Date.now() + 1000).toISOString()
        const [created, reply] = yield* api.apiKeys.create({ payload: { name: "short", expires_at: soon }, responseMode: "decoded-and-response" })
        expect(reply.status).toBe(201)
        expect(yield* membersStatus(created.key)).toBe(200)
        // Refused once its expiry has passed (polled, not a fixed wait past it).
        yield* eventuallyEffect(
          Effect.map(membersStatus(created.key), (status) => expect(status).toBe(401)),
          { timeoutMs: 5_000, intervalMs: 50 }
        )
        expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(soon))
        const past = yield* api.apiKeys.create({ payload: { name: "past", expires_at: "2001-01-01T00:00:00Z" }, responseMode: "response-only" })
        expect(past.status).toBe(422)
      })
    )

    it.effect("lists a key's last use at once, before the batched write reaches the database", () =>
      Effect.gen(function* () {
        const org = yield* register()
        const dashboard = yield* client(org.token)
        const created = yield* (yield* client(org.key)).apiKeys.create({ payload: { name: "used" } })
        const before = Date.now()
        expect(yield* membersStatus(created.key)).toBe(200)
        const listed = yield* dashboard.apiKeys.list({ query: {} })
        const used = listed.data.find((key) => key.id === created.id)!
        expect(used.last_used_at).not.toBeNull()
        expect(Date.parse(used.last_used_at!)).toBeGreaterThanOrEqual(before - 1_000)
        // The owner's key, never used, stays null (the listing itself used a JWT).
        const unused = yield* dashboard.apiKeys.create({ payload: { name: "unused" } })
        const again = yield* dashboard.apiKeys.list({ query: {} })
        expect(again.data.find((key) => key.id === unused.id)!.last_used_at).toBeNull()
      })
    )

    it.effect("garbage and missing credentials are 401", () =>
      Effect.gen(function* () {
        for (const token of [undefined, "svc_live_nope", "eyJhbGciOiJIUzI1NiJ9.e30.x"]) {
          expect((yield* (yield* client(token)).apiKeys.list({ query: {}, responseMode: "response-only" })).status, token).toBe(401)
        }
      })
    )
  })

  it.describe("team, roles and ownership", () => {
    it.effect("invites members, lists them, and keeps roles apart", () =>
      Effect.gen(function* () {
        const owner = yield* register()
        const admin = yield* member(owner, "admin")
        const teammate = yield* member(owner, "member")
        const members = yield* (yield* client(owner.key)).team.members({ query: {} })
        expect(members.data.map((m) => m.role).sort()).toEqual(["admin", "member", "owner"])
        const byMember = yield* (yield* client(teammate.token)).team.invite({ payload: { email: uniqueEmail(), role: "member" }, responseMode: "response-only" })
        expect(byMember.status).toBe(403)
        const byKey = yield* (yield* client(owner.key)).team.invite({ payload: { email: uniqueEmail(), role: "member" }, responseMode: "response-only" })
        expect(byKey.status).toBe(401)
        const [approvers, approversReply] = yield* (yield* client(admin.token)).team.setDefaultApprovers({
          payload: { emails: [teammate.email] },
          responseMode: "decoded-and-response"
        })
        expect(approversReply.status).toBe(200)
        expect(approvers.default_approvers).toEqual([teammate.email.toLowerCase()])
      })
    )

    it.effect("transfers ownership only to an admin", () =>
      Effect.gen(function* () {
        const owner = yield* register()
        const admin = yield* member(owner, "admin")
        const teammate = yield* member(owner, "member")
        const dashboard = yield* client(owner.token)
        const toMember = yield* answer(dashboard.team.transferOwnership({ payload: { target_user_id: teammate.userUuid }, responseMode: "response-only" }))
        expect(toMember.status).toBe(422)
        expect(toMember.body.code).toBe("TARGET_NOT_ADMIN")
        const [, ok] = yield* dashboard.team.transferOwnership({ payload: { target_user_id: admin.userUuid }, responseMode: "decoded-and-response" })
        expect(ok.status).toBe(200)
        const members = yield* (yield* client(owner.key)).team.members({ query: {} })
        const roles = Object.fromEntries(members.data.map((m) => [m.user_uuid, m.role]))
        expect(roles[admin.userUuid]).toBe("owner")
        expect(roles[owner.userUuid]).toBe("admin")
      })
    )

    it.effect("leaving anonymizes and deactivates; the owner must transfer first", () =>
      Effect.gen(function* () {
        const owner = yield* register()
        const teammate = yield* member(owner, "member")
        const ownerLeaves = yield* answer((yield* client(owner.token)).auth.leaveOrg({ responseMode: "response-only" }))
        expect(ownerLeaves.status).toBe(409)
        expect(ownerLeaves.body.code).toBe("OWNER_MUST_TRANSFER")
        const viaKey = yield* (yield* client(teammate.key)).auth.leaveOrg({ responseMode: "response-only" })
        expect(viaKey.status).toBe(401)
        const [, left] = yield* (yield* client(teammate.token)).auth.leaveOrg({ responseMode: "decoded-and-response" })
        expect(left.status).toBe(200)
        const login = yield* answer(
          (yield* client()).auth.login({ payload: { email: teammate.email, password: teammate.password }, responseMode: "response-only" })
        )
        expect(login.status).toBe(401)
        expect(login.body.code).toBe("INVALID_CREDENTIALS")
        expect(yield* membersStatus(teammate.key)).toBe(401)
        // As sent: the address must be absent from the whole answer, keys the decoder would drop included.
        const members = yield* answer((yield* client(owner.key)).team.members({ query: {}, responseMode: "response-only" }))
        expect(JSON.stringify(members.body)).not.toContain(teammate.email)
      })
    )

    it.effect("deleting the account removes the organization", () =>
      Effect.gen(function* () {
        const owner = yield* register()
        const admin = yield* member(owner, "admin")
        expect((yield* (yield* client(admin.token)).auth.deleteAccount({ responseMode: "response-only" })).status).toBe(403)
        const [deleted, reply] = yield* (yield* client(owner.token)).auth.deleteAccount({ responseMode: "decoded-and-response" })
        expect(reply.status).toBe(200)
        expect(deleted.deleted).toBe(true)
        expect((yield* (yield* client(owner.key)).apiKeys.list({ query: {}, responseMode: "response-only" })).status).toBe(401)
        const login = yield* (yield* client()).auth.login({ payload: { email: owner.email, password: owner.password }, responseMode: "response-only" })
        expect(login.status).toBe(401)
      })
    )
  })

  it.describe("invite codes at rest", () => {
    /** Every column of every invite row, as one text to search. */
    const invitesRows = (target?: TestServer) =>
      Effect.flatMap(Gateway, (server) =>
        Effect.promise(() =>
          (target ?? server).run(
            Effect.gen(function* () {
              const sql = yield* SqlClient.SqlClient
              const rows = yield* sql`SELECT * FROM invites`
              return JSON.stringify(rows, (_key, value) => (typeof value === "bigint" ? String(value) : value))
            })
          )
        )
      )

    /** A pending invite as the table held it before codes were hashed: the code itself, in plain text. */
    const insertPlaintextInvite = (org: Org, code: string, email: string) =>
      Effect.flatMap(Gateway, (server) =>
        Effect.promise(() =>
          server.run(
            Effect.gen(function* () {
              const sql = yield* SqlClient.SqlClient
              yield* sql`INSERT INTO invites (invite_code, org_uuid, email, role, created_by, expires_at)
                   VALUES (${code}, ${org.orgUuid}, ${email}, 'member', ${org.userUuid}, ${new Date(Date.now() + 3_600_000).toISOString()})`
            })
          )
        )
      )

    /** A registration with an invite code on `url` (default: the test server), as answered. */
    const join = (code: string, email: string, url?: string) =>
      Effect.gen(function* () {
        const api = url === undefined ? yield* client() : yield* clientAt(url)
        return yield* answer(api.auth.register({ payload: { email, password: "another long password", invite_code: code }, responseMode: "response-only" }))
      })

    it.effect("stores no invite code in any column, and the code still registers once", () =>
      Effect.gen(function* () {
        const owner = yield* register()
        const email = uniqueEmail("invited")
        const [invite, inviteReply] = yield* (yield* client(owner.token)).team.invite({ payload: { email, role: "member" }, responseMode: "decoded-and-response" })
        expect(inviteReply.status).toBe(201)
        const code = invite.invite_code
        expect(code).toMatch(/^[0-9A-HJKMNP-TV-Z]{16}$/)
        const rows = yield* invitesRows()
        expect(rows).toContain(owner.orgUuid)
        expect(rows.toLowerCase()).not.toContain(code.toLowerCase())
        const joined = yield* join(code, email)
        expect(joined.status).toBe(201)
        expect(joined.body.org_uuid).toBe(owner.orgUuid)
        expect((yield* join(code, uniqueEmail("again"))).status).toBe(404)
        expect((yield* join(code, email)).status).toBe(404)
      })
    )

    it.effect("a plaintext invite from an older node still registers, and its code is then wiped", () =>
      Effect.gen(function* () {
        const owner = yield* register()
        const email = uniqueEmail("legacy")
        const code = "LEGACY0000000001"
        yield* insertPlaintextInvite(owner, code, email)
        const joined = yield* join(code, email)
        expect(joined.status).toBe(201)
        expect(joined.body.org_uuid).toBe(owner.orgUuid)
        expect(yield* invitesRows()).not.toContain(code)
      })
    )

    it.effect(
      "pending plaintext invites are hashed when a node starts, and keep working",
      () =>
        Effect.gen(function* () {
          const server = yield* Gateway
          const owner = yield* register()
          const email = uniqueEmail("upgraded")
          const code = "UPGRADE000000002"
          yield* insertPlaintextInvite(owner, code, email)
          expect(yield* invitesRows()).toContain(code)
          // A node starting on the same database (as after an upgrade) hashes every stored code before serving.
          const upgraded = yield* node({ DATABASE_URL: server.config.databaseUrl })
          expect(yield* invitesRows(upgraded)).not.toContain(code)
          const joined = yield* join(code, email, upgraded.url)
          expect(joined.status).toBe(201)
          expect(joined.body.org_uuid).toBe(owner.orgUuid)
        }),
      30_000
    )
  })

  it.describe("dashboard JWTs across nodes", () => {
    /** A token signed with this server's key, as a node before the upgrade issued it (issuer = its BASE_URL). */
    const signedWithIssuer = (org: Org, issuer: string) => Effect.flatMap(Gateway, (server) => Effect.promise(() => signTestJwt(server, org, { issuer })))

    it.effect("still accepts a session issued under this node's BASE_URL, and refuses another issuer", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const org = yield* register()
        const legacy = yield* signedWithIssuer(org, server.config.baseUrl)
        const [whoami, reply] = yield* (yield* client(legacy)).auth.whoami({ responseMode: "decoded-and-response" })
        expect(reply.status).toBe(200)
        expect(whoami.user_uuid).toBe(org.userUuid)
        const foreign = yield* signedWithIssuer(org, "https://somewhere.else.example")
        expect((yield* (yield* client(foreign)).auth.whoami({ responseMode: "response-only" })).status).toBe(401)
      })
    )

    it.effect(
      "a JWT issued by one node works on a node with another BASE_URL",
      () =>
        Effect.gen(function* () {
          const database = yield* Effect.acquireRelease(
            Effect.promise(() => freshDatabaseUrl()),
            (created) => Effect.promise(() => created.drop())
          )
          // Same MASTER_KEY (startServer's default) and database; each node's BASE_URL is its own address.
          const first = yield* node({ DATABASE_URL: database.url })
          const second = yield* node({ DATABASE_URL: database.url })
          expect(first.config.baseUrl).not.toBe(second.config.baseUrl)
          const org = yield* register().pipe(Effect.provideService(Gateway, first))
          const [whoami, reply] = yield* (yield* clientAt(second.url, org.token)).auth.whoami({ responseMode: "decoded-and-response" })
          expect(reply.status).toBe(200)
          expect(whoami.kind).toBe("jwt")
          expect(whoami.user_uuid).toBe(org.userUuid)
          const login = yield* (yield* clientAt(second.url)).auth.login({ payload: { email: org.email, password: org.password } })
          expect((yield* (yield* clientAt(first.url, login.token)).auth.whoami({ responseMode: "response-only" })).status).toBe(200)
        }),
      30_000
    )
  })

  it.describe("platform administration", () => {
    it.effect("sets an organization's plan with X-Admin-Key only", () =>
      Effect.gen(function* () {
        const org = yield* register()
        const params = { org_uuid: org.orgUuid }
        const none = yield* (yield* client()).admin.setPlan({ params, payload: { plan: "pro" }, responseMode: "response-only" })
        expect(none.status).toBe(401)
        const wrong = yield* (yield* adminClient("nope")).admin.setPlan({ params, payload: { plan: "pro" }, responseMode: "response-only" })
        expect(wrong.status).toBe(401)
        const admin = yield* adminClient("test-admin-key")
        const [ok, okReply] = yield* admin.admin.setPlan({ params, payload: { plan: "pro" }, responseMode: "decoded-and-response" })
        expect(okReply.status).toBe(200)
        expect(ok.plan).toBe("pro")
        // Raw: a plan outside the contract's literals.
        const bad = yield* raw("PUT", `/api/v1/admin/orgs/${org.orgUuid}/plan`, { body: { plan: "gold" }, headers: { "x-admin-key": "test-admin-key" } })
        expect(bad.status).toBe(422)
        const missing = yield* admin.admin.setPlan({
          params: { org_uuid: "00000000-0000-0000-0000-000000000000" },
          payload: { plan: "pro" },
          responseMode: "response-only"
        })
        expect(missing.status).toBe(404)
      })
    )
  })
})
