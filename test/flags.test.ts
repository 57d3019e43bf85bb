/**
 * Feature flags: the resolution order against an independent model (fast-check), the rollout split and
 * its stability, the organization and administrator routes, cross-organization isolation, output
 * filtering following its flag for real, and cache invalidation reaching a second process.
 */
import { createHash, randomUUID } from "node:crypto"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { ApprovalChannels } from "../src/approvers/service.js"
import { inRollout, resolveFlag, type StoredFlag } from "../src/flags/resolve.js"
import { Flags } from "../src/flags/service.js"
import { addMember, call, registerOrg } from "./support/client.js"
import { freshDatabaseUrl } from "./support/database.js"
import { spawnServer } from "./support/process.js"
import { startServer, useServer } from "./support/server.js"

const ADMIN = { "x-admin-key": "test-admin-key" }
// Chat channels post to a local receiver over plain http.
const server = useServer({ OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8", OUTBOUND_ALLOW_HTTP: "true" })
const admin = (method: string, path: string, body?: unknown) =>
  call(server.url, method, `/api/v1/admin/feature-flags${path}`, { headers: ADMIN, ...(body === undefined ? {} : { body }) })

/** The spec's rules written again from scratch, for the property test. */
const model = (
  flag: { global: boolean; rollout: number; orgs: ReadonlyArray<string> } | undefined,
  key: string,
  org: string,
  mode: "selfhosted" | "cloud",
  env: Record<string, string>
): boolean => {
  const defaults: Record<string, boolean> = { enable_output_filtering: true, slack_integration: true, teams_integration: true }
  if (flag) {
    if (flag.orgs.includes(org)) return true
    if (!flag.global) return false
    const hex = createHash("sha256").update(`${key}:${org}`).digest("hex").slice(0, 8)
    return (Number.parseInt(hex, 16) / 4294967296) * 100 < flag.rollout
  }
  if (mode === "cloud") return defaults[key] ?? false
  const names = [`ENABLE_${key.toUpperCase()}`, ...(key.startsWith("enable_") ? [key.toUpperCase()] : [])]
  for (const name of names) {
    const value = (env[name] ?? "").trim().toLowerCase()
    if (["1", "true", "yes", "on"].includes(value)) return true
    if (["0", "false", "no", "off"].includes(value)) return false
  }
  return defaults[key] ?? false
}

const keyArb = fc.oneof(fc.constantFrom("enable_output_filtering", "slack_integration", "teams_integration"), fc.stringMatching(/^[a-z][a-z0-9_]{1,20}[a-z0-9]$/))
const envValue = fc.constantFrom("true", "false", "1", "0", "yes", "off", "maybe", "", " TRUE ")

describe("resolution order", () => {
  it("matches an independent model of the spec's rules", () => {
    fc.assert(
      fc.property(
        keyArb,
        fc.uuid(),
        fc.option(fc.record({ global: fc.boolean(), rollout: fc.integer({ min: 0, max: 100 }), orgs: fc.array(fc.uuid(), { maxLength: 4 }) }), { nil: undefined }),
        fc.boolean(),
        fc.constantFrom("selfhosted" as const, "cloud" as const),
        envValue,
        envValue,
        (key, org, flag, listed, mode, primary, legacy) => {
          const withOrg = flag && listed ? { ...flag, orgs: [...flag.orgs, org] } : flag
          const env = { [`ENABLE_${key.toUpperCase()}`]: primary, [key.toUpperCase()]: legacy }
          const stored: StoredFlag | undefined = withOrg && { key, enabledGlobal: withOrg.global, rolloutPercentage: withOrg.rollout, orgIds: new Set(withOrg.orgs) }
          expect(resolveFlag(stored, key, org, { mode, environment: env })).toBe(model(withOrg, key, org, mode, env))
        }
      ),
      { numRuns: 2_000 }
    )
  })

  it("splits 10,000 random organizations within 2 points of the percentage, the same way every time", () => {
    const orgs = Array.from({ length: 10_000 }, () => randomUUID())
    for (const percentage of [1, 10, 25, 50, 75, 90, 99]) {
      const first = orgs.map((org) => inRollout("rollout_probe", org, percentage))
      const share = (first.filter(Boolean).length / orgs.length) * 100
      expect(Math.abs(share - percentage), `${percentage} %`).toBeLessThanOrEqual(2)
      expect(orgs.map((org) => inRollout("rollout_probe", org, percentage))).toEqual(first)
    }
    // Raising the percentage only adds organizations; 0 and 100 are exact.
    expect(orgs.every((org) => !inRollout("rollout_probe", org, 30) || inRollout("rollout_probe", org, 31))).toBe(true)
    expect(orgs.some((org) => inRollout("rollout_probe", org, 0))).toBe(false)
    expect(orgs.every((org) => inRollout("rollout_probe", org, 100))).toBe(true)
  })

  it("the running service splits the same way for a stored global flag", async () => {
    const created = await admin("POST", "", { key: "rollout_live", enabled_global: true, rollout_percentage: 40 })
    expect(created.status, created.text).toBe(201)
    const orgs = Array.from({ length: 10_000 }, () => randomUUID())
    const split = await server.run(Effect.flatMap(Flags, (flags) => Effect.forEach(orgs, (org) => flags.isEnabled(org, "rollout_live"))))
    expect(Math.abs((split.filter(Boolean).length / 100) - 40)).toBeLessThanOrEqual(2)
    expect(split).toEqual(orgs.map((org) => inRollout("rollout_live", org, 40)))
  })
})

describe("administrator routes", () => {
  it("answer the spec's codes", async () => {
    expect((await call(server.url, "GET", "/api/v1/admin/feature-flags")).status).toBe(401)
    expect((await call(server.url, "GET", "/api/v1/admin/feature-flags", { headers: { "x-admin-key": "wrong" } })).status).toBe(401)

    const created = await admin("POST", "", { key: "beta_reports", description: "Reports beta", extra: 1 })
    expect(created.status, created.text).toBe(201)
    expect(created.body).toMatchObject({ key: "beta_reports", description: "Reports beta", enabled_global: false, rollout_percentage: 100, enabled_org_ids: [] })
    expect(created.body.id).toEqual(expect.any(String))
    expect(created.body.created_at).toEqual(expect.any(String))
    expect((await admin("POST", "", { key: "beta_reports" })).status).toBe(409)

    for (const key of ["ab", "Beta", "1beta", "beta_", "x".repeat(101), "beta-reports"]) {
      const reply = await admin("POST", "", { key })
      expect([key, reply.status, reply.body.code]).toEqual([key, 422, "VALIDATION_ERROR"])
    }
    expect((await admin("POST", "", { key: "x".repeat(100) })).status).toBe(201)
    for (const rollout_percentage of [-1, 101, 50.5]) expect((await admin("POST", "", { key: "rollout_bad", rollout_percentage })).status).toBe(422)
    expect((await admin("PUT", "/beta_reports", { rollout_percentage: 101 })).status).toBe(422)

    const updated = await admin("PUT", "/beta_reports", { enabled_global: true, rollout_percentage: 30, enabled_org_ids: ["org_a", "org_b", "org_a"] })
    expect(updated.status).toBe(200)
    expect(updated.body).toMatchObject({ enabled_global: true, rollout_percentage: 30, enabled_org_ids: ["org_a", "org_b"], description: "Reports beta" })
    expect((await admin("PUT", "/no_such_flag", { enabled_global: true })).status).toBe(404)

    const enabled = await admin("POST", "/beta_reports/enable-org/org_c")
    expect(enabled.status).toBe(200)
    expect(enabled.body.enabled_org_ids).toEqual(["org_a", "org_b", "org_c"])
    expect((await admin("POST", "/beta_reports/enable-org/org_a")).body.enabled_org_ids).toEqual(["org_a", "org_b", "org_c"])
    const disabled = await admin("POST", "/beta_reports/disable-org/org_b")
    expect(disabled.status).toBe(200)
    expect(disabled.body.enabled_org_ids).toEqual(["org_a", "org_c"])
    expect((await admin("PUT", "/beta_reports", { enabled_org_ids: ["org_z"] })).body.enabled_org_ids).toEqual(["org_z"])
    expect((await admin("POST", "/no_such_flag/disable-org/org_a")).status).toBe(404)

    // Self-hosted: enabling an organization on a missing flag creates it.
    const convenience = await admin("POST", "/made_on_enable/enable-org/org_q")
    expect(convenience.status).toBe(200)
    expect(convenience.body).toMatchObject({ key: "made_on_enable", enabled_global: false, rollout_percentage: 100, enabled_org_ids: ["org_q"] })

    const list = await admin("GET", "")
    expect(list.status).toBe(200)
    expect(Array.isArray(list.body)).toBe(true)
    expect(list.body.map((flag: any) => flag.key)).toEqual(expect.arrayContaining(["beta_reports", "made_on_enable"]))

    const platform = await server.run(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ event: string }>`SELECT event FROM audit_log WHERE org_uuid IS NULL AND target = 'beta_reports' ORDER BY id`)
    )
    expect(platform.map((row) => row.event).slice(0, 3)).toEqual(["feature_flag.created", "feature_flag.updated", "feature_flag.org_enabled"])
    const removed = await admin("DELETE", "/beta_reports")
    expect(removed.status).toBe(204)
    expect((await admin("DELETE", "/beta_reports")).status).toBe(204)
    expect((await admin("PUT", "/beta_reports", { enabled_global: true })).status).toBe(404)
  })

  it("in cloud mode, enable-org on a missing flag is 404 and a missing known flag keeps its default", async () => {
    const cloud = await startServer({ DEPLOYMENT_MODE: "cloud", ENABLE_SLACK_INTEGRATION: "false" })
    try {
      const reply = await call(cloud.url, "POST", "/api/v1/admin/feature-flags/cloud_only/enable-org/org_a", { headers: ADMIN })
      expect(reply.status).toBe(404)
      const org = await registerOrg(cloud.url, "Cloud org")
      const flags = await call(cloud.url, "GET", "/api/v1/feature-flags", { token: org.key })
      // The environment decides only in self-hosted mode.
      expect(flags.body.flags).toMatchObject({ slack_integration: true, enable_output_filtering: true })
      expect((await call(cloud.url, "PUT", "/api/v1/feature-flags/cloud_only", { token: org.key, body: { enabled: true } })).status).toBe(404)
    } finally {
      await cloud.stop()
    }
  })
})

describe("organization routes", () => {
  it("resolve per organization; the toggle needs the admin role and never touches another organization", async () => {
    const a = await registerOrg(server.url, "Flags A")
    const b = await registerOrg(server.url, "Flags B")
    const initial = await call(server.url, "GET", "/api/v1/feature-flags", { token: a.key })
    expect(initial.status).toBe(200)
    expect(initial.body.flags).toMatchObject({ enable_output_filtering: true, slack_integration: true, teams_integration: true })
    expect(initial.body.request_id).toEqual(expect.any(String))

    const member = await addMember(server.url, a, "member")
    const refused = await call(server.url, "PUT", "/api/v1/feature-flags/org_beta", { token: member.token, body: { enabled: true } })
    expect([refused.status, refused.body.code]).toEqual([403, "FORBIDDEN"])
    expect((await call(server.url, "PUT", "/api/v1/feature-flags/Bad-Key", { token: a.key, body: { enabled: true } })).status).toBe(422)
    expect((await call(server.url, "PUT", "/api/v1/feature-flags/org_beta", { token: a.key, body: {} })).status).toBe(422)

    // Enabling a missing flag creates it for this organization only.
    const on = await call(server.url, "PUT", "/api/v1/feature-flags/org_beta", { token: a.key, body: { enabled: true } })
    expect(on.status, on.text).toBe(200)
    expect(on.body).toMatchObject({ key: "org_beta", enabled: true })
    expect((await call(server.url, "GET", "/api/v1/feature-flags", { token: a.key })).body.flags.org_beta).toBe(true)
    expect((await call(server.url, "GET", "/api/v1/feature-flags", { token: b.key })).body.flags.org_beta).toBe(false)

    // B switching it on and off leaves A on.
    expect((await call(server.url, "PUT", "/api/v1/feature-flags/org_beta", { token: b.token, body: { enabled: true } })).body.enabled).toBe(true)
    expect((await call(server.url, "PUT", "/api/v1/feature-flags/org_beta", { token: b.token, body: { enabled: false } })).body.enabled).toBe(false)
    expect((await call(server.url, "GET", "/api/v1/feature-flags", { token: a.key })).body.flags.org_beta).toBe(true)
    const stored = (await admin("GET", "")).body.find((flag: any) => flag.key === "org_beta")
    expect(stored.enabled_org_ids).toEqual([a.orgUuid])
    const audit = await server.run(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ org_uuid: string | null; actor: string; event: string }>`
        SELECT org_uuid, actor, event FROM audit_log WHERE target = 'org_beta' ORDER BY id`)
    )
    expect(audit.map((row) => [row.org_uuid, row.event])).toEqual([
      [a.orgUuid, "feature_flag.org_enabled"],
      [b.orgUuid, "feature_flag.org_enabled"],
      [b.orgUuid, "feature_flag.org_disabled"]
    ])
    expect(audit[0]!.actor).toBe(a.userUuid)

    // Disabling a flag that does not exist is 404: there is no list to leave.
    expect((await call(server.url, "PUT", "/api/v1/feature-flags/never_stored", { token: a.key, body: { enabled: false } })).status).toBe(404)

    // A global rollout of 100 % keeps the flag on after the organization leaves the list: the answer says so.
    await admin("PUT", "/org_beta", { enabled_global: true, rollout_percentage: 100 })
    const off = await call(server.url, "PUT", "/api/v1/feature-flags/org_beta", { token: a.key, body: { enabled: false } })
    expect(off.body).toMatchObject({ key: "org_beta", enabled: true })
  })

  it("enabling a known flag on a missing row keeps the environment's value for every other organization", async () => {
    const a = await registerOrg(server.url, "Teams A")
    const b = await registerOrg(server.url, "Teams B")
    await call(server.url, "PUT", "/api/v1/feature-flags/teams_integration", { token: a.key, body: { enabled: true } })
    expect((await call(server.url, "GET", "/api/v1/feature-flags", { token: b.key })).body.flags.teams_integration).toBe(true)
    await admin("DELETE", "/teams_integration")
  })
})

describe("output filtering follows enable_output_filtering", () => {
  it("a deny policy refuses a card number until the flag is off for the organization, then passes", async () => {
    const org = await registerOrg(server.url, "Filtered")
    const other = await registerOrg(server.url, "Still filtered")
    const notarize = async (token: string) => {
      const action = await call(server.url, "POST", "/api/v1/actions", { token, body: { action_type: "report", details: "send the report" } })
      expect(action.status, action.text).toBe(201)
      return call(server.url, "POST", `/api/v1/actions/${action.body.action_uuid}/notarize`, {
        token,
        body: { outcome: "completed", outcome_details: "charged card 4111 1111 1111 1111 for the order" }
      })
    }
    for (const owner of [org, other]) {
      const policy = await call(server.url, "PATCH", "/api/v1/output-policies", { token: owner.key, body: { mode: "deny", deny_severity_threshold: "warning" } })
      expect(policy.status).toBe(200)
      const refused = await notarize(owner.key)
      expect([refused.status, refused.body.code]).toEqual([422, "OUTPUT_SCAN_VIOLATION"])
    }
    // Stored with global off and only `other` listed: off for every other organization.
    expect((await admin("POST", "", { key: "enable_output_filtering", enabled_global: false, enabled_org_ids: [other.orgUuid] })).status).toBe(201)
    try {
      expect((await notarize(org.key)).status).toBe(200)
      expect((await notarize(other.key)).status).toBe(422)
      expect((await call(server.url, "GET", "/api/v1/feature-flags", { token: org.key })).body.flags.enable_output_filtering).toBe(false)
      await admin("POST", `/enable_output_filtering/enable-org/${org.orgUuid}`)
      expect((await notarize(org.key)).status).toBe(422)
    } finally {
      await admin("DELETE", "/enable_output_filtering")
    }
    expect((await notarize(org.key)).status).toBe(422)
  })
})

describe("chat channels follow slack_integration and teams_integration", () => {
  it("a flag turned off skips its channel, and the organization's toggle turns it back on", async () => {
    const received: Array<string> = []
    const chat = createServer((request, response) => {
      received.push(request.url ?? "")
      request.resume()
      response.end("ok")
    })
    await new Promise<void>((resolve) => chat.listen(0, "127.0.0.1", resolve))
    const base = `http://127.0.0.1:${(chat.address() as AddressInfo).port}`
    const org = await registerOrg(server.url, "Chatty")
    let event = 0
    const announce = async () => {
      event += 1
      const results = await server.run(
        Effect.flatMap(ApprovalChannels, (channels) =>
          channels.notifyApproval({
            eventId: `evt_flags_${event}`,
            orgUuid: org.orgUuid,
            actionUuid: `act_flags_${event}`,
            actionType: "payment.send",
            agentId: null,
            reviewUrl: "https://gateway.example/dashboard/actions/x",
            expiresAt: null
          })
        )
      )
      return Object.fromEntries(results.map((result) => [result.channel, result.status]))
    }
    try {
      await server.run(
        Effect.flatMap(ApprovalChannels, (channels) =>
          channels.put(org.orgUuid, { slack: { enabled: true, webhook_url: `${base}/slack` }, teams: { enabled: true, webhook_url: `${base}/teams` } })
        )
      )
      expect(await announce()).toEqual({ slack: "sent", teams: "sent" })
      expect((await admin("POST", "", { key: "teams_integration", enabled_global: false })).status).toBe(201)
      received.length = 0
      expect(await announce()).toEqual({ slack: "sent", teams: "skipped" })
      expect(received).toEqual(["/slack"])
      expect((await admin("POST", "", { key: "slack_integration", enabled_global: false })).status).toBe(201)
      expect(await announce()).toEqual({ slack: "skipped", teams: "skipped" })
      expect((await call(server.url, "PUT", "/api/v1/feature-flags/teams_integration", { token: org.key, body: { enabled: true } })).body.enabled).toBe(true)
      expect(await announce()).toEqual({ slack: "skipped", teams: "sent" })
    } finally {
      await admin("DELETE", "/teams_integration")
      await admin("DELETE", "/slack_integration")
      chat.close()
    }
  })
})

describe("the environment decides a flag absent from storage (self-hosted)", () => {
  it("ENABLE_OUTPUT_FILTERING=false turns output filtering off until a stored flag says otherwise", async () => {
    const plain = await startServer({ ENABLE_OUTPUT_FILTERING: "false", ENABLE_NEW_THING: "on" })
    try {
      const org = await registerOrg(plain.url, "Unfiltered")
      const flags = (await call(plain.url, "GET", "/api/v1/feature-flags", { token: org.key })).body.flags
      expect(flags.enable_output_filtering).toBe(false)
      // Any key: ENABLE_<KEY> decides while the flag is not stored.
      expect(await plain.run(Effect.flatMap(Flags, (service) => service.isEnabled(org.orgUuid, "new_thing")))).toBe(true)
      expect(await plain.run(Effect.flatMap(Flags, (service) => service.isEnabled(org.orgUuid, "other_thing")))).toBe(false)
      await call(plain.url, "PATCH", "/api/v1/output-policies", { token: org.key, body: { mode: "deny", deny_severity_threshold: "warning" } })
      const notarize = async () => {
        const action = await call(plain.url, "POST", "/api/v1/actions", { token: org.key, body: { action_type: "report", details: "send" } })
        return call(plain.url, "POST", `/api/v1/actions/${action.body.action_uuid}/notarize`, {
          token: org.key,
          body: { outcome: "completed", outcome_details: "charged card 4111 1111 1111 1111 for the order" }
        })
      }
      expect((await notarize()).status).toBe(200)
      // Enabling it for the organization creates the flag with the environment's value for everyone else.
      expect((await call(plain.url, "PUT", "/api/v1/feature-flags/enable_output_filtering", { token: org.key, body: { enabled: true } })).body.enabled).toBe(true)
      expect((await notarize()).status).toBe(422)
      const stored = await call(plain.url, "GET", "/api/v1/admin/feature-flags", { headers: ADMIN })
      expect(stored.body.find((flag: any) => flag.key === "enable_output_filtering")).toMatchObject({ enabled_global: false, enabled_org_ids: [org.orgUuid] })
    } finally {
      await plain.stop()
    }
  })
})

const shared = Boolean(process.env.REDIS_URL)
if (!shared) console.log("flags: the two-process invalidation test needs REDIS_URL; it did not run")

describe.runIf(shared)("two gateway processes sharing Postgres and Redis", () => {
  it("a change on one reaches the other's cache at once", async () => {
    const database = await freshDatabaseUrl()
    const env = {
      DATABASE_URL: database.url,
      REDIS_URL: process.env.REDIS_URL!,
      REDIS_KEY_PREFIX: `flags-${process.pid}-${Date.now()}:`,
      ADMIN_KEY: "test-admin-key",
      MASTER_KEY: "2222222222222222222222222222222222222222222222222222222222222222",
      RATE_LIMIT_PER_MINUTE: "100000",
      DATA_DIR: `/tmp/gw-flags-${process.pid}`
    }
    const first = await spawnServer(env)
    const second = await spawnServer(env)
    try {
      const org = await registerOrg(first.url, "Two nodes")
      const read = async () => (await call(second.url, "GET", "/api/v1/feature-flags", { token: org.key })).body.flags.node_probe as boolean | undefined
      // The second process caches the flags (the probe absent, so off).
      expect(await read()).toBeUndefined()
      const until = async (expected: boolean) => {
        const deadline = Date.now() + 5_000
        while ((await read()) !== expected) {
          if (Date.now() > deadline) throw new Error(`node_probe never became ${expected} on the second process`)
          await new Promise((resolve) => setTimeout(resolve, 50))
        }
      }
      expect((await call(first.url, "POST", "/api/v1/admin/feature-flags", { headers: ADMIN, body: { key: "node_probe", enabled_org_ids: [org.orgUuid] } })).status).toBe(201)
      await until(true)
      expect((await call(first.url, "POST", `/api/v1/admin/feature-flags/node_probe/disable-org/${org.orgUuid}`, { headers: ADMIN })).status).toBe(200)
      await until(false)
      expect((await call(first.url, "PUT", "/api/v1/feature-flags/node_probe", { token: org.key, body: { enabled: true } })).status).toBe(200)
      await until(true)
    } finally {
      await first.stop()
      await second.stop()
      await database.drop()
    }
  }, 120_000)
})
