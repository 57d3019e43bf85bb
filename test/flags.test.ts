/**
 * Feature flags: the resolution order against an independent model (fast-check), the rollout split and
 * its stability, the organization and administrator routes, cross-organization isolation, output
 * filtering following its flag for real, and cache invalidation reaching a second process.
 * Over the typed client (HttpApiClient over GatewayApi).
 */
import { createHash, randomUUID } from "node:crypto"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql"
import fc from "fast-check"
import { ApprovalChannels } from "../src/approvers/service.js"
import { inRollout, resolveFlag, type StoredFlag } from "../src/flags/resolve.js"
import { Flags } from "../src/flags/service.js"
import { adminClientAt, answer, client, clientAt, type GatewayClient, member, raw, register } from "./support/api.js"
import { uniqueEmail } from "./support/client.js"
import { freshDatabaseUrl } from "./support/database.js"
import { liveLayer } from "./support/effect.js"
import { eventuallyEffect } from "./support/eventually.js"
import { spawnServer } from "./support/process.js"
import { Gateway, type ServerEnv, startServer } from "./support/server.js"

const ADMIN_KEY = "test-admin-key"
// Chat channels post to a local receiver over plain http.
const Setup = Gateway.layer({ OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8", OUTBOUND_ALLOW_HTTP: "true" })

/** The feature-flag administration routes of the gateway at `baseUrl`, sending `X-Admin-Key: key`. */
const adminAt = (baseUrl: string, key = ADMIN_KEY) => Effect.map(adminClientAt(baseUrl, key), (api) => api.flagsAdmin)
/** The administration routes of the test server. */
const admin = Effect.flatMap(Gateway, (server) => adminAt(server.url))
const adminRaw = (method: string, path: string, body: unknown) =>
  raw(method, `/api/v1/admin/feature-flags${path}`, { headers: { "x-admin-key": ADMIN_KEY }, body })

/** A node started on its own, stopped when the test's scope closes. */
const node = (env: ServerEnv) =>
  Effect.acquireRelease(
    Effect.promise(() => startServer(env)),
    (started) => Effect.promise(() => started.stop())
  )

/** Authorizes a report and notarizes an outcome quoting a card number; the notarize as answered. */
const notarize = (api: GatewayClient, details: string) =>
  Effect.gen(function* () {
    const [action, reply] = yield* api.actions.authorize({ headers: {}, payload: { action_type: "report", details }, responseMode: "decoded-and-response" })
    expect(reply.status).toBe(201)
    return yield* answer(
      api.actions.notarize({
        params: { action_uuid: action.action_uuid },
        payload: { outcome: "completed", outcome_details: "charged card 4111 1111 1111 1111 for the order" },
        responseMode: "response-only"
      })
    )
  })
const denyCards = (api: GatewayClient) =>
  api.outputPolicies.update({ payload: { mode: "deny", deny_severity_threshold: "warning" }, responseMode: "decoded-and-response" })

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

})

liveLayer(Setup)((it) => {
  it.describe("resolution order", () => {
    it.effect("the running service splits the same way for a stored global flag", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const [, created] = yield* (yield* admin).create({ payload: { key: "rollout_live", enabled_global: true, rollout_percentage: 40 }, responseMode: "decoded-and-response" })
        expect(created.status).toBe(201)
        const orgs = Array.from({ length: 10_000 }, () => randomUUID())
        const split = yield* Effect.promise(() => server.run(Effect.flatMap(Flags, (flags) => Effect.forEach(orgs, (org) => flags.isEnabled(org, "rollout_live")))))
        expect(Math.abs(split.filter(Boolean).length / 100 - 40)).toBeLessThanOrEqual(2)
        expect(split).toEqual(orgs.map((org) => inRollout("rollout_live", org, 40)))
      })
    )
  })

  it.describe("administrator routes", () => {
    it.effect("answer the spec's codes", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const routes = yield* admin
        expect((yield* (yield* client()).flagsAdmin.list({ responseMode: "response-only" })).status).toBe(401)
        expect((yield* (yield* adminAt(server.url, "wrong")).list({ responseMode: "response-only" })).status).toBe(401)

        // Raw: a field outside the contract (`extra`), which the server ignores.
        const created = yield* adminRaw("POST", "", { key: "beta_reports", description: "Reports beta", extra: 1 })
        expect(created.status, created.text).toBe(201)
        expect(created.body).toMatchObject({ key: "beta_reports", description: "Reports beta", enabled_global: false, rollout_percentage: 100, enabled_org_ids: [] })
        expect(created.body.id).toEqual(expect.any(String))
        expect(created.body.created_at).toEqual(expect.any(String))
        expect((yield* routes.create({ payload: { key: "beta_reports" }, responseMode: "response-only" })).status).toBe(409)

        // Raw: keys and percentages outside the contract's patterns and ranges.
        for (const key of ["ab", "Beta", "1beta", "beta_", "x".repeat(101), "beta-reports"]) {
          const reply = yield* adminRaw("POST", "", { key })
          expect([key, reply.status, reply.body.code]).toEqual([key, 422, "VALIDATION_ERROR"])
        }
        expect((yield* routes.create({ payload: { key: "x".repeat(100) }, responseMode: "response-only" })).status).toBe(201)
        for (const rollout_percentage of [-1, 101, 50.5]) expect((yield* adminRaw("POST", "", { key: "rollout_bad", rollout_percentage })).status).toBe(422)
        expect((yield* adminRaw("PUT", "/beta_reports", { rollout_percentage: 101 })).status).toBe(422)

        const beta = { key: "beta_reports" }
        const [updated, updatedReply] = yield* routes.update({
          params: beta,
          payload: { enabled_global: true, rollout_percentage: 30, enabled_org_ids: ["org_a", "org_b", "org_a"] },
          responseMode: "decoded-and-response"
        })
        expect(updatedReply.status).toBe(200)
        expect(updated).toMatchObject({ enabled_global: true, rollout_percentage: 30, enabled_org_ids: ["org_a", "org_b"], description: "Reports beta" })
        expect((yield* routes.update({ params: { key: "no_such_flag" }, payload: { enabled_global: true }, responseMode: "response-only" })).status).toBe(404)

        const [enabled, enabledReply] = yield* routes.enableOrg({ params: { ...beta, org_uuid: "org_c" }, responseMode: "decoded-and-response" })
        expect(enabledReply.status).toBe(200)
        expect(enabled.enabled_org_ids).toEqual(["org_a", "org_b", "org_c"])
        expect((yield* routes.enableOrg({ params: { ...beta, org_uuid: "org_a" } })).enabled_org_ids).toEqual(["org_a", "org_b", "org_c"])
        const [disabled, disabledReply] = yield* routes.disableOrg({ params: { ...beta, org_uuid: "org_b" }, responseMode: "decoded-and-response" })
        expect(disabledReply.status).toBe(200)
        expect(disabled.enabled_org_ids).toEqual(["org_a", "org_c"])
        expect((yield* routes.update({ params: beta, payload: { enabled_org_ids: ["org_z"] } })).enabled_org_ids).toEqual(["org_z"])
        expect((yield* routes.disableOrg({ params: { key: "no_such_flag", org_uuid: "org_a" }, responseMode: "response-only" })).status).toBe(404)

        // Self-hosted: enabling an organization on a missing flag creates it.
        const [convenience, convenienceReply] = yield* routes.enableOrg({ params: { key: "made_on_enable", org_uuid: "org_q" }, responseMode: "decoded-and-response" })
        expect(convenienceReply.status).toBe(200)
        expect(convenience).toMatchObject({ key: "made_on_enable", enabled_global: false, rollout_percentage: 100, enabled_org_ids: ["org_q"] })

        const [list, listReply] = yield* routes.list({ responseMode: "decoded-and-response" })
        expect(listReply.status).toBe(200)
        expect(Array.isArray(list)).toBe(true)
        expect(list.map((flag) => flag.key)).toEqual(expect.arrayContaining(["beta_reports", "made_on_enable"]))

        const platform = yield* Effect.promise(() =>
          server.run(
            Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ event: string }>`SELECT event FROM audit_log WHERE org_uuid IS NULL AND target = 'beta_reports' ORDER BY id`)
          )
        )
        expect(platform.map((row) => row.event).slice(0, 3)).toEqual(["feature_flag.created", "feature_flag.updated", "feature_flag.org_enabled"])
        expect((yield* routes.remove({ params: beta, responseMode: "response-only" })).status).toBe(204)
        expect((yield* routes.remove({ params: beta, responseMode: "response-only" })).status).toBe(204)
        expect((yield* routes.update({ params: beta, payload: { enabled_global: true }, responseMode: "response-only" })).status).toBe(404)
      })
    )

    it.effect("in cloud mode, enable-org on a missing flag is 404 and a missing known flag keeps its default", () =>
      Effect.gen(function* () {
        const cloud = yield* node({ DEPLOYMENT_MODE: "cloud", ENABLE_SLACK_INTEGRATION: "false" })
        const reply = yield* (yield* adminAt(cloud.url)).enableOrg({ params: { key: "cloud_only", org_uuid: "org_a" }, responseMode: "response-only" })
        expect(reply.status).toBe(404)
        const org = yield* register("Cloud org").pipe(Effect.provideService(Gateway, cloud))
        const api = yield* clientAt(cloud.url, org.key)
        const flags = yield* api.flags.resolved({})
        // The environment decides only in self-hosted mode.
        expect(flags.flags).toMatchObject({ slack_integration: true, enable_output_filtering: true })
        expect((yield* api.flags.toggle({ params: { key: "cloud_only" }, payload: { enabled: true }, responseMode: "response-only" })).status).toBe(404)
      })
    )
  })

  it.describe("organization routes", () => {
    it.effect("resolve per organization; the toggle needs the admin role and never touches another organization", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const a = yield* register("Flags A")
        const b = yield* register("Flags B")
        const apiA = yield* client(a.key)
        const apiB = yield* client(b.key)
        // As sent: request_id is checked.
        const initial = yield* answer(apiA.flags.resolved({ responseMode: "response-only" }))
        expect(initial.status).toBe(200)
        expect(initial.body.flags).toMatchObject({ enable_output_filtering: true, slack_integration: true, teams_integration: true })
        expect(initial.body.request_id).toEqual(expect.any(String))

        const teammate = yield* client((yield* member(a, "member")).token)
        const beta = { key: "org_beta" }
        const refused = yield* answer(teammate.flags.toggle({ params: beta, payload: { enabled: true }, responseMode: "response-only" }))
        expect([refused.status, refused.body.code]).toEqual([403, "FORBIDDEN"])
        // Raw: a key outside the contract's pattern, and a body without `enabled`.
        expect((yield* raw("PUT", "/api/v1/feature-flags/Bad-Key", { token: a.key, body: { enabled: true } })).status).toBe(422)
        expect((yield* raw("PUT", "/api/v1/feature-flags/org_beta", { token: a.key, body: {} })).status).toBe(422)

        // Enabling a missing flag creates it for this organization only.
        const [on, onReply] = yield* apiA.flags.toggle({ params: beta, payload: { enabled: true }, responseMode: "decoded-and-response" })
        expect(onReply.status).toBe(200)
        expect(on).toMatchObject({ key: "org_beta", enabled: true })
        expect((yield* apiA.flags.resolved({})).flags.org_beta).toBe(true)
        expect((yield* apiB.flags.resolved({})).flags.org_beta).toBe(false)

        // B switching it on and off leaves A on.
        const dashboardB = yield* client(b.token)
        expect((yield* dashboardB.flags.toggle({ params: beta, payload: { enabled: true } })).enabled).toBe(true)
        expect((yield* dashboardB.flags.toggle({ params: beta, payload: { enabled: false } })).enabled).toBe(false)
        expect((yield* apiA.flags.resolved({})).flags.org_beta).toBe(true)
        const stored = (yield* (yield* admin).list({})).find((flag) => flag.key === "org_beta")!
        expect(stored.enabled_org_ids).toEqual([a.orgUuid])
        const audit = yield* Effect.promise(() =>
          server.run(
            Effect.flatMap(
              SqlClient.SqlClient,
              (sql) => sql<{ org_uuid: string | null; actor: string; event: string }>`
        SELECT org_uuid, actor, event FROM audit_log WHERE target = 'org_beta' ORDER BY id`
            )
          )
        )
        expect(audit.map((row) => [row.org_uuid, row.event])).toEqual([
          [a.orgUuid, "feature_flag.org_enabled"],
          [b.orgUuid, "feature_flag.org_enabled"],
          [b.orgUuid, "feature_flag.org_disabled"]
        ])
        expect(audit[0]!.actor).toBe(a.userUuid)

        // Disabling a flag that does not exist is 404: there is no list to leave.
        expect((yield* apiA.flags.toggle({ params: { key: "never_stored" }, payload: { enabled: false }, responseMode: "response-only" })).status).toBe(404)

        // A global rollout of 100 % keeps the flag on after the organization leaves the list: the answer says so.
        yield* (yield* admin).update({ params: beta, payload: { enabled_global: true, rollout_percentage: 100 } })
        const off = yield* apiA.flags.toggle({ params: beta, payload: { enabled: false } })
        expect(off).toMatchObject({ key: "org_beta", enabled: true })
      })
    )

    it.effect("enabling a known flag on a missing row keeps the environment's value for every other organization", () =>
      Effect.gen(function* () {
        const a = yield* register("Teams A")
        const b = yield* register("Teams B")
        yield* (yield* client(a.key)).flags.toggle({ params: { key: "teams_integration" }, payload: { enabled: true } })
        expect((yield* (yield* client(b.key)).flags.resolved({})).flags.teams_integration).toBe(true)
        yield* (yield* admin).remove({ params: { key: "teams_integration" } })
      })
    )
  })

  it.describe("output filtering follows enable_output_filtering", () => {
    it.effect("a deny policy refuses a card number until the flag is off for the organization, then passes", () =>
      Effect.gen(function* () {
        const org = yield* register("Filtered")
        const other = yield* register("Still filtered")
        const api = yield* client(org.key)
        const otherApi = yield* client(other.key)
        for (const owner of [api, otherApi]) {
          const [, policy] = yield* denyCards(owner)
          expect(policy.status).toBe(200)
          const refused = yield* notarize(owner, "send the report")
          expect([refused.status, refused.body.code]).toEqual([422, "OUTPUT_SCAN_VIOLATION"])
        }
        const routes = yield* admin
        // Stored with global off and only `other` listed: off for every other organization.
        const [, created] = yield* routes.create({
          payload: { key: "enable_output_filtering", enabled_global: false, enabled_org_ids: [other.orgUuid] },
          responseMode: "decoded-and-response"
        })
        expect(created.status).toBe(201)
        yield* Effect.gen(function* () {
          expect((yield* notarize(api, "send the report")).status).toBe(200)
          expect((yield* notarize(otherApi, "send the report")).status).toBe(422)
          expect((yield* api.flags.resolved({})).flags.enable_output_filtering).toBe(false)
          yield* routes.enableOrg({ params: { key: "enable_output_filtering", org_uuid: org.orgUuid } })
          expect((yield* notarize(api, "send the report")).status).toBe(422)
        }).pipe(Effect.ensuring(Effect.orDie(routes.remove({ params: { key: "enable_output_filtering" } }))))
        expect((yield* notarize(api, "send the report")).status).toBe(422)
      })
    )
  })

  it.describe("chat channels follow slack_integration and teams_integration", () => {
    it.effect("a flag turned off skips its channel, and the organization's toggle turns it back on", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const received: Array<string> = []
        const chat = yield* Effect.acquireRelease(
          Effect.promise(async () => {
            const listening = createServer((request, response) => {
              received.push(request.url ?? "")
              request.resume()
              response.end("ok")
            })
            await new Promise<void>((resolve) => listening.listen(0, "127.0.0.1", resolve))
            return listening
          }),
          (listening) => Effect.sync(() => listening.close())
        )
        const base = `http://127.0.0.1:${(chat.address() as AddressInfo).port}`
        const org = yield* register("Chatty")
        let event = 0
        const announce = Effect.suspend(() => {
          event += 1
          const id = event
          return Effect.promise(() =>
            server.run(
              Effect.flatMap(ApprovalChannels, (channels) =>
                channels.notifyApproval({
                  eventId: `evt_flags_${id}`,
                  orgUuid: org.orgUuid,
                  actionUuid: `act_flags_${id}`,
                  actionType: "payment.send",
                  agentId: null,
                  reviewUrl: "https://gateway.example/dashboard/actions/x",
                  expiresAt: null
                })
              )
            )
          ).pipe(Effect.map((results) => Object.fromEntries(results.map((result) => [result.channel, result.status]))))
        })
        const routes = yield* admin
        yield* Effect.gen(function* () {
          yield* Effect.promise(() =>
            server.run(
              Effect.flatMap(ApprovalChannels, (channels) =>
                channels.put(org.orgUuid, { slack: { enabled: true, webhook_url: `${base}/slack` }, teams: { enabled: true, webhook_url: `${base}/teams` } })
              )
            )
          )
          expect(yield* announce).toEqual({ slack: "sent", teams: "sent" })
          expect((yield* routes.create({ payload: { key: "teams_integration", enabled_global: false }, responseMode: "response-only" })).status).toBe(201)
          received.length = 0
          expect(yield* announce).toEqual({ slack: "sent", teams: "skipped" })
          expect(received).toEqual(["/slack"])
          expect((yield* routes.create({ payload: { key: "slack_integration", enabled_global: false }, responseMode: "response-only" })).status).toBe(201)
          expect(yield* announce).toEqual({ slack: "skipped", teams: "skipped" })
          expect((yield* (yield* client(org.key)).flags.toggle({ params: { key: "teams_integration" }, payload: { enabled: true } })).enabled).toBe(true)
          expect(yield* announce).toEqual({ slack: "skipped", teams: "sent" })
        }).pipe(
          Effect.ensuring(
            Effect.orDie(Effect.andThen(routes.remove({ params: { key: "teams_integration" } }), routes.remove({ params: { key: "slack_integration" } })))
          )
        )
      })
    )
  })

  it.describe("the environment decides a flag absent from storage (self-hosted)", () => {
    it.effect("ENABLE_OUTPUT_FILTERING=false turns output filtering off until a stored flag says otherwise", () =>
      Effect.gen(function* () {
        const plain = yield* node({ ENABLE_OUTPUT_FILTERING: "false", ENABLE_NEW_THING: "on" })
        const org = yield* register("Unfiltered").pipe(Effect.provideService(Gateway, plain))
        const api = yield* clientAt(plain.url, org.key)
        const flags = (yield* api.flags.resolved({})).flags
        expect(flags.enable_output_filtering).toBe(false)
        // Any key: ENABLE_<KEY> decides while the flag is not stored.
        expect(yield* Effect.promise(() => plain.run(Effect.flatMap(Flags, (service) => service.isEnabled(org.orgUuid, "new_thing"))))).toBe(true)
        expect(yield* Effect.promise(() => plain.run(Effect.flatMap(Flags, (service) => service.isEnabled(org.orgUuid, "other_thing"))))).toBe(false)
        yield* denyCards(api)
        expect((yield* notarize(api, "send")).status).toBe(200)
        // Enabling it for the organization creates the flag with the environment's value for everyone else.
        expect((yield* api.flags.toggle({ params: { key: "enable_output_filtering" }, payload: { enabled: true } })).enabled).toBe(true)
        expect((yield* notarize(api, "send")).status).toBe(422)
        const stored = yield* (yield* adminAt(plain.url)).list({})
        expect(stored.find((flag) => flag.key === "enable_output_filtering")).toMatchObject({ enabled_global: false, enabled_org_ids: [org.orgUuid] })
      })
    )
  })

  const shared = Boolean(process.env.REDIS_URL)
  if (!shared) console.log("flags: the two-process invalidation test needs REDIS_URL; it did not run")

  it.describe("two gateway processes sharing Postgres and Redis", () => {
    it.effect.runIf(shared)(
      "a change on one reaches the other's cache at once",
      () =>
        Effect.gen(function* () {
          const database = yield* Effect.acquireRelease(
            Effect.promise(() => freshDatabaseUrl()),
            (created) => Effect.promise(() => created.drop())
          )
          const env = {
            DATABASE_URL: database.url,
            REDIS_URL: process.env.REDIS_URL!,
            REDIS_KEY_PREFIX: `flags-${process.pid}-${Date.now()}:`,
            ADMIN_KEY,
            MASTER_KEY: "2222222222222222222222222222222222222222222222222222222222222222",
            RATE_LIMIT_PER_MINUTE: "100000",
            DATA_DIR: `/tmp/gw-flags-${process.pid}`
          }
          const spawned = Effect.acquireRelease(
            Effect.promise(() => spawnServer(env)),
            (started) => Effect.promise(() => started.stop())
          )
          const first = yield* spawned
          const second = yield* spawned
          const registered = yield* (yield* clientAt(first.url)).auth.register({
            payload: { email: uniqueEmail("owner"), password: "correct horse battery staple", org_name: "Two nodes" }
          })
          const orgUuid = registered.org_uuid
          const key = registered.api_key.key
          const onSecond = yield* clientAt(second.url, key)
          const read = Effect.map(onSecond.flags.resolved({}), (resolved) => resolved.flags.node_probe as boolean | undefined)
          // The second process caches the flags (the probe absent, so off).
          expect(yield* read).toBeUndefined()
          const until = (expected: boolean) =>
            eventuallyEffect(
              Effect.map(read, (value) => expect(value, `node_probe on the second process`).toBe(expected)),
              { timeoutMs: 5_000, intervalMs: 50 }
            )
          const firstAdmin = yield* adminAt(first.url)
          expect((yield* firstAdmin.create({ payload: { key: "node_probe", enabled_org_ids: [orgUuid] }, responseMode: "response-only" })).status).toBe(201)
          yield* until(true)
          expect((yield* firstAdmin.disableOrg({ params: { key: "node_probe", org_uuid: orgUuid }, responseMode: "response-only" })).status).toBe(200)
          yield* until(false)
          const onFirst = yield* clientAt(first.url, key)
          expect((yield* onFirst.flags.toggle({ params: { key: "node_probe" }, payload: { enabled: true }, responseMode: "response-only" })).status).toBe(200)
          yield* until(true)
        }),
      120_000
    )
  })
})
