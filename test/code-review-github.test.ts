/**
 * Code review and GitHub (CONTRACT-sdk-beyond §7), the configuration and the violations read,
 * against the real server: the round trip, write-only secrets (answered once when generated,
 * never again, never logged, stored only sealed), repositories unique across organizations
 * (case-insensitive), one 422 listing every issue, scopes and roles, another organization, and
 * the violations read before any review exists.
 */

import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { addMember, call, type Org, registerOrg } from "./support/client.js"
import { rowsContainingIn } from "./support/database.js"
import { useFixture } from "./support/fixture.js"
import { captureLog } from "./support/log.js"
import { useServer } from "./support/server.js"

const server = useServer({ OUTBOUND_ALLOW_PRIVATE: "", OUTBOUND_ALLOW_HTTP: "false" })
const a = useFixture(() => registerOrg(server.url, "Review A"))
const b = useFixture(() => registerOrg(server.url, "Review B"))

const PATH = "/api/v1/code-review/github"
let counter = 0
/** A repository name no other test of this run uses. */
const repo = (label: string) => `Owner-${process.pid}/${label}-${Date.now().toString(36)}-${++counter}`

const newKey = async (owner: Org, scopes: ReadonlyArray<string>) => {
  const reply = await call(server.url, "POST", "/api/v1/api-keys", { token: owner.token, body: { name: `code review ${scopes.join(" ")}`, scopes } })
  expect(reply.status, reply.text).toBe(201)
  return reply.body.key as string
}

const put = (token: string, body: unknown) => call(server.url, "PUT", PATH, { token, body })
const get = (token: string) => call(server.url, "GET", PATH, { token })
const remove = (token: string) => call(server.url, "DELETE", PATH, { token })
const violations = (token: string, path: string) => call(server.url, "GET", `/api/v1/webhooks/github/violations/${path}`, { token })

const storedRows = (needle: string) => server.run(Effect.flatMap(SqlClient.SqlClient, (sql) => rowsContainingIn(sql, needle)))

describe("GitHub configuration", () => {
  it("round trip: PUT, GET, regenerate, partial change, DELETE; secrets answered only when generated", async () => {
    const org = await registerOrg(server.url, "Round trip")
    const token = `ghp_${"x".repeat(20)}${Date.now().toString(36)}`
    const name = repo("Widget")
    const empty = await get(org.key)
    expect(empty.status, empty.text).toBe(200)
    expect(empty.body).toEqual({
      configured: false,
      webhook_url: `${server.url}/api/v1/webhooks/github`,
      has_api_token: false,
      has_webhook_secret: false,
      webhook_secret: null,
      api_base_url: "https://api.github.com",
      repositories: [],
      auto_merge: { enabled: false, mode: "single", merge_method: "squash", vote_models: [] },
      auto_merge_flag: false,
      updated_at: null,
      request_id: expect.any(String)
    })

    const first = await put(org.key, { api_token: token, repositories: [name], auto_merge: { enabled: true, merge_method: "rebase" } })
    expect(first.status, first.text).toBe(200)
    expect(first.body).toMatchObject({
      configured: true,
      has_api_token: true,
      has_webhook_secret: true,
      webhook_secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      api_base_url: "https://api.github.com",
      repositories: [name],
      auto_merge: { enabled: true, mode: "single", merge_method: "rebase", vote_models: [] },
      auto_merge_flag: false,
      updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      request_id: expect.any(String)
    })
    expect(first.text).not.toContain(token)
    const generated = first.body.webhook_secret as string

    const read = await get(org.token)
    expect(read.status).toBe(200)
    expect(read.body).toMatchObject({ configured: true, has_api_token: true, has_webhook_secret: true, webhook_secret: null, repositories: [name] })
    expect(read.text).not.toContain(generated)
    expect(read.text).not.toContain(token)

    // Fields not sent stay; api_base_url takes an Enterprise address.
    const changed = await put(org.key, { api_base_url: "https://github.example.com/api/v3/" })
    expect(changed.status, changed.text).toBe(200)
    expect(changed.body).toMatchObject({ webhook_secret: null, api_base_url: "https://github.example.com/api/v3", repositories: [name], has_api_token: true })
    expect(changed.body.auto_merge).toEqual({ enabled: true, mode: "single", merge_method: "rebase", vote_models: [] })

    const regenerated = await put(org.key, { regenerate_webhook_secret: true })
    expect(regenerated.status, regenerated.text).toBe(200)
    expect(regenerated.body.webhook_secret).toEqual(expect.stringMatching(/^[A-Za-z0-9_-]{43}$/))
    expect(regenerated.body.webhook_secret).not.toBe(generated)

    // A secret the caller chose is never echoed; null goes back to the default address; the list is replaced.
    const chosen = `chosen-secret-${Date.now().toString(36)}`
    const other = repo("Other")
    const own = await put(org.key, { webhook_secret: chosen, api_base_url: null, repositories: [other, name.toUpperCase()] })
    expect(own.status, own.text).toBe(200)
    expect(own.body).toMatchObject({ webhook_secret: null, api_base_url: "https://api.github.com", repositories: [other, name.toUpperCase()] })
    expect(own.text).not.toContain(chosen)

    // Stored only sealed.
    for (const secret of [token, generated, chosen]) expect(await storedRows(secret)).toEqual({})

    const removed = await remove(org.token)
    expect(removed.status, removed.text).toBe(200)
    expect(removed.body).toMatchObject({ configured: false, has_api_token: false, has_webhook_secret: false, repositories: [], updated_at: null })
    const after = await get(org.key)
    expect(after.body).toMatchObject({ configured: false, repositories: [] })
    // The repositories are free again.
    const reused = await put(b.key, { repositories: [other] })
    expect(reused.status, reused.text).toBe(200)
    expect((await put(b.key, { repositories: [] })).status).toBe(200)
  })

  it("never logs a secret", async () => {
    const org = await registerOrg(server.url, "Quiet")
    const token = `ghp_logged_${Date.now().toString(36)}`
    const chosen = `webhook-secret-logged-${Date.now().toString(36)}`
    const { result, lines } = await captureLog(async () => {
      const first = await put(org.key, { api_token: token, repositories: [repo("Logged")] })
      const second = await put(org.key, { regenerate_webhook_secret: true })
      const third = await put(org.key, { webhook_secret: chosen, api_token: "has a space" })
      await get(org.key)
      await remove(org.key)
      return [first.body.webhook_secret as string, second.body.webhook_secret as string, third.status]
    })
    expect(result[2]).toBe(422)
    expect(lines.length).toBeGreaterThan(0)
    const text = JSON.stringify(lines)
    for (const secret of [token, chosen, result[0] as string, result[1] as string]) expect(text).not.toContain(secret)
  })

  it("a repository belongs to one organization (case-insensitive): 409 REPOSITORY_TAKEN naming it, nothing changed", async () => {
    const name = repo("Shared")
    const mine = repo("Mine")
    expect((await put(a.key, { repositories: [name] })).status).toBe(200)
    const before = await get(b.key)
    const taken = await put(b.key, { api_token: "ghp_b_token", repositories: [mine, name.toLowerCase()] })
    expect(taken.status, taken.text).toBe(409)
    expect(taken.body).toMatchObject({ code: "REPOSITORY_TAKEN", details: { repositories: [name.toLowerCase()] }, request_id: expect.any(String) })
    expect(taken.body.message).toContain(name.toLowerCase())
    const after = await get(b.key)
    expect(after.body.repositories).toEqual(before.body.repositories)
    expect(after.body.has_api_token).toBe(before.body.has_api_token)
    // A's own list may repeat it in another case.
    const again = await put(a.key, { repositories: [name.toUpperCase()] })
    expect(again.status, again.text).toBe(200)
    expect(again.body.repositories).toEqual([name.toUpperCase()])
  })

  it("422 VALIDATION_ERROR lists every issue, and nothing is stored", async () => {
    const org = await registerOrg(server.url, "Invalid")
    const disabled = await call(server.url, "PUT", "/api/v1/models/code-review-preferences", { token: org.token, body: { disabled_models: ["gpt-5"] } })
    expect(disabled.status, disabled.text).toBe(200)
    const tooMany = Array.from({ length: 501 }, (_, i) => `owner/repo-${i}`)
    const reply = await put(org.key, {
      api_token: "",
      webhook_secret: "short",
      regenerate_webhook_secret: true,
      api_base_url: "ftp://github.example.com",
      repositories: ["no-slash", "a/b", "A/B", "x/.."],
      auto_merge: { mode: "quorum", merge_method: "fast", vote_models: ["gpt-5", "no-such-model"] }
    })
    expect(reply.status, reply.text).toBe(422)
    expect(reply.body.code).toBe("VALIDATION_ERROR")
    const paths = (reply.body.details.issues as Array<{ path: string; message: string }>).map((issue) => issue.path).sort()
    expect(paths).toEqual(
      [
        "api_base_url",
        "api_token",
        "auto_merge.merge_method",
        "auto_merge.mode",
        "auto_merge.vote_models",
        "auto_merge.vote_models",
        "regenerate_webhook_secret",
        "repositories[0]",
        "repositories[2]",
        "repositories[3]",
        "webhook_secret"
      ].sort()
    )
    const messages = JSON.stringify(reply.body.details.issues)
    expect(messages).toContain("gpt-5 is disabled for code review")
    expect(messages).toContain("unknown model id: no-such-model")

    const long = await put(org.key, { repositories: tooMany, api_base_url: "http://127.0.0.1/api", auto_merge: { mode: "vote" } })
    expect(long.status, long.text).toBe(422)
    expect((long.body.details.issues as Array<{ path: string }>).map((issue) => issue.path).sort()).toEqual(["api_base_url", "auto_merge.vote_models", "repositories"])
    const count = await put(org.key, { auto_merge: { mode: "vote", vote_models: ["gpt-4o", "gpt-4o-mini", "o3", "o4-mini"] } })
    expect(count.status).toBe(422)
    expect(count.body.details.issues).toEqual([{ path: "auto_merge.vote_models", message: "must name 2-3 models" }])
    // A wrong type is the schema's 422.
    expect((await put(org.key, { repositories: "owner/repo" })).status).toBe(422)
    expect((await get(org.key)).body.configured).toBe(false)

    const vote = await put(org.key, { auto_merge: { enabled: true, mode: "vote", vote_models: ["gpt-4o", "claude-sonnet-4-6"] } })
    expect(vote.status, vote.text).toBe(200)
    expect(vote.body.auto_merge).toEqual({ enabled: true, mode: "vote", merge_method: "squash", vote_models: ["gpt-4o", "claude-sonnet-4-6"] })
  })

  it("403 for a member's change and for a key without the scope; any role reads", async () => {
    const org = await registerOrg(server.url, "Roles")
    const member = await addMember(server.url, org, "member")
    const admin = await addMember(server.url, org, "admin")
    expect((await put(member.token, { repositories: [] })).status).toBe(403)
    expect((await put(member.key, { repositories: [] })).status).toBe(403)
    expect((await remove(member.token)).status).toBe(403)
    expect((await get(member.token)).status).toBe(200)
    expect((await violations(member.key, "o/r/1")).status).toBe(200)
    expect((await put(admin.token, { auto_merge: { enabled: true } })).status).toBe(200)

    const unscoped = await newKey(org, ["actions:read"])
    for (const reply of [await get(unscoped), await put(unscoped, {}), await remove(unscoped), await violations(unscoped, "o/r/1")]) {
      expect(reply.status, reply.text).toBe(403)
      expect(reply.body.code).toBe("FORBIDDEN")
    }
    const reader = await newKey(org, ["code_review:read"])
    expect((await get(reader)).status).toBe(200)
    expect((await violations(reader, "o/r/1")).status).toBe(200)
    expect((await put(reader, { auto_merge: { enabled: false } })).status).toBe(403)
    expect((await remove(reader)).status).toBe(403)
    const writer = await newKey(org, ["code_review:write"])
    expect((await get(writer)).status).toBe(200)
    const written = await put(writer, { auto_merge: { enabled: false } })
    expect(written.status, written.text).toBe(200)
    expect(written.body.auto_merge.enabled).toBe(false)
  })

  it("auto_merge_flag is the github_auto_merge flag resolved for the organization", async () => {
    const org = await registerOrg(server.url, "Flagged")
    expect((await get(org.key)).body.auto_merge_flag).toBe(false)
    const toggled = await call(server.url, "PUT", "/api/v1/feature-flags/github_auto_merge", { token: org.token, body: { enabled: true } })
    expect(toggled.status, toggled.text).toBe(200)
    expect((await get(org.key)).body.auto_merge_flag).toBe(true)
    expect((await get(b.key)).body.auto_merge_flag).toBe(false)
  })

  it("another organization never sees or changes the configuration", async () => {
    const victim = await registerOrg(server.url, "Victim")
    const name = repo("Victim")
    const token = `ghp_victim_${Date.now().toString(36)}`
    expect((await put(victim.key, { api_token: token, repositories: [name] })).status).toBe(200)
    const stranger = await registerOrg(server.url, "Stranger")
    const seen = await get(stranger.key)
    expect(seen.body).toMatchObject({ configured: false, repositories: [], has_api_token: false })
    expect((await remove(stranger.token)).status).toBe(200)
    expect((await put(stranger.key, { auto_merge: { enabled: true } })).status).toBe(200)
    const kept = await get(victim.key)
    expect(kept.body).toMatchObject({ configured: true, has_api_token: true, repositories: [name], auto_merge: { enabled: false } })
    const [owner, repository] = name.split("/")
    const theirs = await violations(stranger.key, `${owner}/${repository}/7`)
    expect(theirs.status).toBe(200)
    expect(theirs.body).toMatchObject({ repository_connected: false, pull_request: null, data: [] })
    const mine = await violations(victim.key, `${owner!.toLowerCase()}/${repository!.toUpperCase()}/7`)
    expect(mine.body.repository_connected).toBe(true)
  })
})

describe("violations read", () => {
  it("answers an empty page before any review, and 422 for a pull request number that is not a positive integer", async () => {
    const reply = await violations(a.key, "some-owner/some-repo/12")
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({
      violations: [],
      data: [],
      pagination: { page: 1, per_page: 20, total: 0, has_more: false },
      repository_connected: false,
      pull_request: null,
      request_id: expect.any(String)
    })
    const paged = await violations(a.key, "some-owner/some-repo/12?page=3&per_page=5")
    expect(paged.body.pagination).toEqual({ page: 3, per_page: 5, total: 0, has_more: false })
    for (const number of ["0", "-1", "abc", "1.5", "01", "99999999999"]) {
      const refused = await violations(a.key, `some-owner/some-repo/${number}`)
      expect([number, refused.status]).toEqual([number, 422])
      expect(refused.body.code).toBe("VALIDATION_ERROR")
    }
    expect((await violations(a.key, "some-owner/some-repo/1?per_page=101")).status).toBe(422)
  })
})
