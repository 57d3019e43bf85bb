/**
 * `GET /api/v1/analytics/timeseries` (docs/decisions.md "Analytics time series"): counts per status
 * in UTC buckets, every bucket of the range present; the median and 95th percentile of human
 * decision times per decision bucket; policy denials per policy with its name. Same access as the
 * other analytics routes (owner or admin, `analytics:read`), the range checked before any query
 * (422 VALIDATION_ERROR listing every issue), and another organization's actions never counted.
 */
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { bucketStart } from "../src/analytics/service.js"
import { addMember, call, type Org, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { useServer } from "./support/server.js"

const DAY = 86_400_000
/** Yesterday 10:00 UTC: the decisions' time, moved there so their bucket and latency are known. */
const decidedAt = new Date(Math.floor(Date.now() / DAY) * DAY - DAY + 10 * 3_600_000)

describe("analytics time series", () => {
  const server = useServer()

  const authorize = async (org: Org, body: Record<string, unknown>, expected: number) => {
    const reply = await call(server.url, "POST", "/api/v1/actions", { token: org.key, body: { action_type: "email", details: "x", ...body } })
    expect(reply.status, JSON.stringify(reply.body)).toBe(expected)
    return reply.body
  }

  /** Moves a decided action's request and decision times so its latency is `seconds`. */
  const decidedAfter = (actionUuid: string, seconds: number) =>
    server.run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE actions SET approved_at = ${decidedAt}, created_at = ${new Date(decidedAt.getTime() - seconds * 1000)} WHERE action_uuid = ${actionUuid}`
      })
    )

  /** A deny policy on `wire`, three allowed actions, one notarized, two denied, one approved after 10 s and one denied after 30 s by a person. */
  const seed = async (org: Org, latencies: readonly [number, number]) => {
    const policy = await call(server.url, "POST", "/api/v1/policies", {
      token: org.token,
      body: { name: `No wires ${org.orgUuid.slice(-4)}`, mode: "rules", decision: "deny", conditions: [{ field: "action_type", op: "eq", value: "wire" }], activate: true }
    })
    expect(policy.status).toBe(201)
    const first = await authorize(org, {}, 201)
    await authorize(org, {}, 201)
    await authorize(org, {}, 201)
    expect((await call(server.url, "POST", `/api/v1/actions/${first.action_uuid}/notarize`, { token: org.key, body: { outcome: "completed" } })).status).toBe(200)
    await authorize(org, { action_type: "wire" }, 403)
    await authorize(org, { action_type: "wire" }, 403)
    const approved = await authorize(org, { action_type: "pay", require_approval: true }, 201)
    const denied = await authorize(org, { action_type: "pay", require_approval: true }, 201)
    expect((await call(server.url, "POST", `/api/v1/actions/${approved.action_uuid}/dashboard-approve`, { token: org.token })).status).toBe(200)
    expect((await call(server.url, "POST", `/api/v1/actions/${denied.action_uuid}/dashboard-deny`, { token: org.token })).status).toBe(200)
    await decidedAfter(approved.action_uuid, latencies[0])
    await decidedAfter(denied.action_uuid, latencies[1])
    return policy.body.id as string
  }

  const orgs = useFixture(async () => {
    const org = await registerOrg(server.url, "Series Org")
    const other = await registerOrg(server.url, "Series Elsewhere")
    const policyId = await seed(org, [10, 30])
    // The other organization: more actions and far slower decisions, none of which may show.
    await seed(other, [1000, 5000])
    await authorize(other, {}, 201)
    return { org, other, policyId }
  })

  const series = (token: string, query: string) => call(server.url, "GET", `/api/v1/analytics/timeseries${query}`, { token })
  const since = new Date(decidedAt.getTime() - 10 * 3_600_000).toISOString()

  it("answers every bucket of the range with the organization's counts per status", async () => {
    const { org } = orgs
    const reply = await series(org.key, `?from=${since}&bucket=hour`)
    expect(reply.status, JSON.stringify(reply.body)).toBe(200)
    expect(reply.body.request_id).toEqual(expect.any(String))
    expect(reply.body.bucket).toBe("hour")
    const buckets = reply.body.buckets as Array<{ start: string; total: number; by_status: Record<string, number> }>
    // Dense and ordered: one bucket per hour from `from`'s hour to now's.
    expect(buckets[0]!.start).toBe(new Date(bucketStart(Date.parse(since), "hour")).toISOString().replace(".000Z", "Z"))
    for (let i = 1; i < buckets.length; i++) expect(Date.parse(buckets[i]!.start) - Date.parse(buckets[i - 1]!.start)).toBe(3_600_000)
    const sum = (status: string) => buckets.reduce((total, bucket) => total + (bucket.by_status[status] ?? 0), 0)
    expect(buckets.reduce((total, bucket) => total + bucket.total, 0)).toBe(7)
    expect({ authorized: sum("authorized"), notarized: sum("notarized"), denied_by_policy: sum("denied_by_policy"), approved: sum("approved"), denied_by_human: sum("denied_by_human") }).toEqual({
      authorized: 2,
      notarized: 1,
      denied_by_policy: 2,
      approved: 1,
      denied_by_human: 1
    })
    expect(reply.body.statuses).toEqual(["approved", "authorized", "denied_by_human", "denied_by_policy", "notarized"])
    // The two decided actions were requested just before 10:00 yesterday: the 09:00 bucket.
    const nine = buckets.find((bucket) => Date.parse(bucket.start) === decidedAt.getTime() - 3_600_000)
    expect(nine?.by_status).toEqual({ approved: 1, denied_by_human: 1 })
  })

  it("answers the median and 95th percentile of human decision times per decision bucket", async () => {
    const { org } = orgs
    const reply = await series(org.key, `?from=${since}&bucket=hour`)
    const decided = (reply.body.buckets as Array<{ start: string; approval_latency: { decided: number } }>).filter((bucket) => bucket.approval_latency.decided > 0)
    // Two decisions, 10 s and 30 s: median 20, p95 by linear interpolation 10 + 0.95 × 20 = 29.
    expect(decided).toEqual([
      expect.objectContaining({ start: decidedAt.toISOString().replace(".000Z", "Z"), approval_latency: { decided: 2, median_seconds: 20, p95_seconds: 29 } })
    ])
    const empty = (reply.body.buckets as Array<{ approval_latency: unknown }>)[0]!.approval_latency
    expect(empty).toEqual({ decided: 0, median_seconds: null, p95_seconds: null })
  })

  it("counts policy denials per policy with its name, never another organization's", async () => {
    const { org, policyId } = orgs
    const reply = await series(org.token, "")
    expect(reply.status).toBe(200)
    expect(reply.body.denials_by_policy).toEqual([{ policy_uuid: policyId, policy_name: `No wires ${org.orgUuid.slice(-4)}`, denied: 2 }])
    // Default: day buckets over the last 7 days, 8 of them (from's day to today).
    expect(reply.body.bucket).toBe("day")
    expect(reply.body.buckets).toHaveLength(8)
    expect(Date.parse(reply.body.to) - Date.parse(reply.body.from)).toBe(7 * DAY)
  })

  it("another organization's numbers are its own", async () => {
    const { other } = orgs
    const reply = await series(other.key, `?from=${since}&bucket=day`)
    const buckets = reply.body.buckets as Array<{ total: number; approval_latency: { decided: number; median_seconds: number | null } }>
    expect(buckets.reduce((total, bucket) => total + bucket.total, 0)).toBe(8)
    const decided = buckets.filter((bucket) => bucket.approval_latency.decided > 0)
    expect(decided.map((bucket) => bucket.approval_latency)).toEqual([{ decided: 2, median_seconds: 3000, p95_seconds: 4800 }])
    expect(reply.body.denials_by_policy).toHaveLength(1)
    expect(reply.body.denials_by_policy[0].denied).toBe(2)

    // A fresh organization: empty buckets, no statuses, no denials.
    const fresh = await registerOrg(server.url, "Series Empty")
    const blank = await series(fresh.key, "?bucket=week")
    expect(blank.status).toBe(200)
    expect(blank.body.statuses).toEqual([])
    expect(blank.body.denials_by_policy).toEqual([])
    expect(blank.body.buckets.every((bucket: { total: number }) => bucket.total === 0)).toBe(true)
  })

  it("refuses members, keys without analytics:read and anonymous callers like the other analytics routes", async () => {
    const { org } = orgs
    const teammate = await addMember(server.url, org, "member")
    for (const token of [teammate.token, teammate.key]) {
      const reply = await series(token, "")
      expect(reply.status).toBe(403)
      expect(reply.body.code).toBe("FORBIDDEN")
    }
    const admin = await addMember(server.url, org, "admin")
    expect((await series(admin.token, "")).status).toBe(200)
    const narrow = await call(server.url, "POST", "/api/v1/api-keys", { token: org.token, body: { name: "actions only", scopes: ["actions:write"] } })
    expect(narrow.status).toBe(201)
    expect((await series(narrow.body.key, "")).status).toBe(403)
    expect((await call(server.url, "GET", "/api/v1/analytics/timeseries")).status).toBe(401)
  })

  it("checks the range before any work: 422 VALIDATION_ERROR with every issue", async () => {
    const { org } = orgs
    const now = Date.now()
    const iso = (ms: number) => new Date(ms).toISOString()
    const cases: Array<[string, Array<string>]> = [
      ["?from=yesterday&to=never", ["from", "to"]],
      [`?from=${iso(now)}&to=${iso(now - DAY)}`, ["to"]],
      [`?from=${iso(now - 400 * DAY)}&to=${iso(now)}`, ["from"]],
      [`?from=${iso(now - 40 * DAY)}&bucket=hour`, ["bucket"]],
      ["?bucket=month", []]
    ]
    for (const [query, paths] of cases) {
      const reply = await series(org.key, query)
      expect(reply.status, query).toBe(422)
      expect(reply.body.code, query).toBe("VALIDATION_ERROR")
      expect(reply.body.request_id, query).toEqual(expect.any(String))
      const issues = reply.body.details.issues as Array<{ path: unknown; message: string }>
      expect(issues.length, query).toBeGreaterThan(0)
      if (paths.length > 0) expect(issues.map((issue) => issue.path), query).toEqual(paths)
    }
    // The bounds: 366 days in days, 744 hours (31 days) in hours.
    expect((await series(org.key, `?from=${iso(now - 366 * DAY)}&to=${iso(now)}`)).status).toBe(200)
    const hours = await series(org.key, `?from=${iso(bucketStart(now, "hour") - 743 * 3_600_000)}&to=${iso(now)}&bucket=hour`)
    expect(hours.status).toBe(200)
    expect(hours.body.buckets).toHaveLength(744)
    // A timestamp without an offset is UTC, a date alone its day's start (as the SDKs send them).
    const plain = await series(org.key, "?from=2026-04-01T00:00:00&to=2026-04-03")
    expect(plain.status).toBe(200)
    expect(plain.body).toMatchObject({ from: "2026-04-01T00:00:00.000Z", to: "2026-04-03T00:00:00.000Z" })
    expect(plain.body.buckets.map((bucket: { start: string }) => bucket.start)).toEqual(["2026-04-01T00:00:00Z", "2026-04-02T00:00:00Z", "2026-04-03T00:00:00Z"])
  })
})
