/**
 * Analytics end to end over HTTP: admin-only access, query validation, and the
 * aggregates computed over actions created through the real API (authorized,
 * notarized, pending approval, denied by an active deny policy).
 */
import { beforeAll, describe, expect, it } from "vitest"
import { addMember, call, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { useServer } from "./support/server.js"

const server = useServer()
const org = useFixture(() => registerOrg(server.url, "Analytics Org"))
const other = useFixture(() => registerOrg(server.url, "Other Org"))

const REPORTS = ["actions-over-time", "approval-rates", "model-agreement", "policy-denials", "top-agents"]

const authorize = async (token: string, body: Record<string, unknown>, expected: number) => {
  const reply = await call(server.url, "POST", "/api/v1/actions", {
    token,
    body: { details: "do the thing", instruction_hash: "sha256:abc", ...body }
  })
  expect(reply.status, reply.text).toBe(expected)
  return reply.body
}

const denyPolicy = async (token: string, conditions: Array<Record<string, unknown>>) => {
  const reply = await call(server.url, "POST", "/api/v1/policies", {
    token,
    body: { name: "deny for analytics", mode: "rules", decision: "deny", conditions, activate: true }
  })
  expect(reply.status, reply.text).toBe(201)
}

const report = async (token: string, path: string) => {
  const reply = await call(server.url, "GET", `/api/v1/analytics/${path}`, { token })
  expect(reply.status, reply.text).toBe(200)
  return reply.body
}

const todayUtc = () => new Date().toISOString().slice(0, 10)
const mondayUtc = () => {
  const now = new Date()
  const sinceMonday = (now.getUTCDay() + 6) % 7
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - sinceMonday)).toISOString().slice(0, 10)
}

beforeAll(async () => {
  // Agent a1: four actions, one of them notarized. Agent a2: one authorized, one pending approval.
  // Agent a3: one denied by policy. No agent: one authorized, one denied.
  await denyPolicy(org.key, [{ field: "action_type", op: "eq", value: "wire" }])
  for (let i = 0; i < 4; i++) {
    const action = await authorize(org.key, { action_type: "email", agent_id: "a1" }, 201)
    if (i === 0) {
      const done = await call(server.url, "POST", `/api/v1/actions/${action.action_uuid}/notarize`, { token: org.key, body: { outcome: "completed" } })
      expect(done.status, done.text).toBe(200)
    }
  }
  await authorize(org.key, { action_type: "email", agent_id: "a2" }, 201)
  expect((await authorize(org.key, { action_type: "email", agent_id: "a2", require_approval: true }, 201)).status).toBe("pending_approval")
  await authorize(org.key, { action_type: "wire", agent_id: "a3" }, 403)
  await authorize(org.key, { action_type: "email" }, 201)
  await authorize(org.key, { action_type: "wire", agent_id: null }, 403)
}, 120_000)

describe("access", () => {
  it("members get 403 on every report, with a JWT and with a key; owners and admins get 200", async () => {
    const member = await addMember(server.url, org, "member")
    const admin = await addMember(server.url, org, "admin")
    for (const path of REPORTS) {
      for (const token of [member.token, member.key]) {
        const reply = await call(server.url, "GET", `/api/v1/analytics/${path}`, { token })
        expect(reply.status, `${path}`).toBe(403)
        expect(reply.body.code).toBe("FORBIDDEN")
      }
      for (const token of [org.token, org.key, admin.token, admin.key]) {
        expect((await call(server.url, "GET", `/api/v1/analytics/${path}`, { token })).status, path).toBe(200)
      }
    }
  })

  it("a key without the analytics scope gets 403", async () => {
    const created = await call(server.url, "POST", "/api/v1/api-keys", { token: org.token, body: { name: "actions only", scopes: ["actions:write"] } })
    expect(created.status, created.text).toBe(201)
    expect((await call(server.url, "GET", "/api/v1/analytics/approval-rates", { token: created.body.key })).status).toBe(403)
  })

  it("answers 401 without credentials", async () => {
    expect((await call(server.url, "GET", "/api/v1/analytics/approval-rates")).status).toBe(401)
  })
})

describe("validation", () => {
  it("out-of-range or malformed days, period and limit are 422 VALIDATION_ERROR", async () => {
    const bad: Array<string> = []
    for (const path of REPORTS) for (const days of ["0", "366", "abc", "-1", "1.5"]) bad.push(`${path}?days=${days}`)
    bad.push("actions-over-time?period=monthly", "top-agents?limit=0", "top-agents?limit=51", "top-agents?limit=x")
    for (const query of bad) {
      const reply = await call(server.url, "GET", `/api/v1/analytics/${query}`, { token: org.key })
      expect(reply.status, query).toBe(422)
      expect(reply.body.code, query).toBe("VALIDATION_ERROR")
      expect(reply.body.details.issues.length, query).toBeGreaterThan(0)
    }
  })

  it("accepts the bounds", async () => {
    for (const query of ["approval-rates?days=1", "approval-rates?days=365", "top-agents?limit=1", "top-agents?limit=50", "actions-over-time?period=weekly"]) {
      expect((await call(server.url, "GET", `/api/v1/analytics/${query}`, { token: org.key })).status, query).toBe(200)
    }
  })
})

describe("aggregates", () => {
  it("actions-over-time counts every action of the window per day and per week", async () => {
    expect((await report(org.key, "actions-over-time")).data).toEqual([{ date: todayUtc(), count: 9 }])
    expect((await report(org.key, "actions-over-time?period=daily&days=1")).data).toEqual([{ date: todayUtc(), count: 9 }])
    expect((await report(org.key, "actions-over-time?period=weekly")).data).toEqual([{ date: mondayUtc(), count: 9 }])
  })

  it("approval-rates splits approved, denied and review; total counts every action", async () => {
    const rates = await report(org.key, "approval-rates")
    expect(rates).toMatchObject({ approved: 6, denied: 2, review: 1, total: 9 })
    expect(rates.request_id).toEqual(expect.any(String))
  })

  it("approval-rates counts a human denial as denied; a human approval not yet notarized only in total", async () => {
    const team = await registerOrg(server.url, "Human Org")
    const first = await authorize(team.key, { action_type: "payment", require_approval: true }, 201)
    const second = await authorize(team.key, { action_type: "payment", require_approval: true }, 201)
    expect((await call(server.url, "POST", `/api/v1/actions/${first.action_uuid}/dashboard-approve`, { token: team.token })).status).toBe(200)
    expect((await call(server.url, "POST", `/api/v1/actions/${second.action_uuid}/dashboard-deny`, { token: team.token })).status).toBe(200)
    expect(await report(team.key, "approval-rates")).toMatchObject({ approved: 0, denied: 1, review: 0, total: 2 })
    expect((await call(server.url, "POST", `/api/v1/actions/${first.action_uuid}/notarize`, { token: team.key, body: {} })).status).toBe(200)
    expect(await report(team.key, "approval-rates")).toMatchObject({ approved: 1, denied: 1, review: 0, total: 2 })
  })

  it("top-agents ignores actions without an agent and orders by count", async () => {
    expect((await report(org.key, "top-agents")).data).toEqual([
      { agent_id: "a1", action_count: 4 },
      { agent_id: "a2", action_count: 2 },
      { agent_id: "a3", action_count: 1 }
    ])
    expect((await report(org.key, "top-agents?limit=2")).data.map((row: any) => row.agent_id)).toEqual(["a1", "a2"])
  })

  it("policy-denials lists only types with a policy denial, by denied descending, at most 20", async () => {
    expect((await report(org.key, "policy-denials")).data).toEqual([{ action_type: "wire", total: 2, denied: 2 }])

    const team = await registerOrg(server.url, "Denials Org")
    await denyPolicy(team.key, [{ field: "details", op: "eq", value: "deny me" }])
    for (let i = 0; i < 3; i++) await authorize(team.key, { action_type: "big", details: "deny me" }, 403)
    await authorize(team.key, { action_type: "big", details: "fine" }, 201)
    for (let i = 0; i < 2; i++) await authorize(team.key, { action_type: "mid", details: "deny me" }, 403)
    await authorize(team.key, { action_type: "allowed_only", details: "fine" }, 201)
    for (let i = 0; i < 21; i++) await authorize(team.key, { action_type: `type_${String(i).padStart(2, "0")}`, details: "deny me" }, 403)

    const rows = (await report(team.key, "policy-denials")).data as Array<{ action_type: string; total: number; denied: number }>
    expect(rows).toHaveLength(20)
    expect(rows[0]).toEqual({ action_type: "big", total: 4, denied: 3 })
    expect(rows[1]).toEqual({ action_type: "mid", total: 2, denied: 2 })
    expect(rows.slice(2).every((row) => row.denied === 1 && row.total === 1)).toBe(true)
    expect(rows.some((row) => row.action_type === "allowed_only")).toBe(false)
    for (let i = 1; i < rows.length; i++) expect(rows[i - 1].denied).toBeGreaterThanOrEqual(rows[i].denied)
  }, 60_000)

  it("model-agreement answers zeros when there are no consensus cases", async () => {
    const agreement = await report(org.key, "model-agreement")
    expect(agreement).toMatchObject({ total_cases: 0, avg_disagreement: 0, by_decision: { APPROVE: 0, DENY: 0, REVIEW: 0 } })
  })

  it("another organization sees none of these actions", async () => {
    expect((await report(other.key, "actions-over-time")).data).toEqual([])
    expect(await report(other.key, "approval-rates")).toMatchObject({ approved: 0, denied: 0, review: 0, total: 0 })
    expect((await report(other.key, "top-agents")).data).toEqual([])
    expect((await report(other.key, "policy-denials")).data).toEqual([])
  })
})
