/**
 * `/api/v1/notifications/*` end to end: pending approvals as items, newest
 * first; read state per dashboard user; API keys see everything unread and
 * mark nothing; organizations never see each other's items.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { addMember, call, type Org, registerOrg } from "./support/client.js"
import { startServer, type TestServer } from "./support/server.js"

let server: TestServer
let org: Org
let other: Org
const pendingIds: Array<string> = []

const requestApproval = async (target: Org, actionType: string, agentId?: string) => {
  const reply = await call(server.url, "POST", "/api/v1/actions", {
    token: target.key,
    body: { action_type: actionType, details: `details of ${actionType}`, require_approval: true, ...(agentId ? { agent_id: agentId } : {}) }
  })
  expect(reply.status).toBe(201)
  expect(reply.body.status).toBe("pending_approval")
  return reply.body.action_uuid as string
}

beforeAll(async () => {
  server = await startServer()
  org = await registerOrg(server.url, "Notified")
  other = await registerOrg(server.url, "Elsewhere")
  for (const type of ["payments.send", "email.send", "files.delete"]) {
    pendingIds.push(await requestApproval(org, type, "agent-007"))
    // Distinct creation times make the expected order unambiguous.
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  await requestApproval(other, "other.thing")
}, 60_000)

afterAll(async () => {
  await server?.stop()
})

describe("GET /api/v1/notifications/pending", () => {
  it("lists pending approvals newest first with the item fields", async () => {
    const reply = await call(server.url, "GET", "/api/v1/notifications/pending", { token: org.token })
    expect(reply.status).toBe(200)
    expect(reply.body.total).toBe(3)
    expect(reply.body.unread_count).toBe(3)
    expect(reply.body.items.map((item: any) => item.id)).toEqual([...pendingIds].reverse())
    const first = reply.body.items[0]
    expect(first).toEqual({
      id: pendingIds[2],
      type: "action_approval",
      notification_key: `action:${pendingIds[2]}`,
      title: expect.stringContaining("files.delete"),
      description: expect.stringContaining("agent-007"),
      href: `/dashboard/actions/${pendingIds[2]}`,
      created_at: expect.any(String),
      read: false
    })
    const times = reply.body.items.map((item: any) => Date.parse(item.created_at))
    expect([...times].sort((a, b) => b - a)).toEqual(times)
    expect(typeof reply.body.request_id).toBe("string")
  })

  it("shows another organization only its own items", async () => {
    const reply = await call(server.url, "GET", "/api/v1/notifications/pending", { token: other.key })
    expect(reply.body.total).toBe(1)
    expect(reply.body.items[0].title).toContain("other.thing")
    expect(reply.body.items.some((item: any) => pendingIds.includes(item.id))).toBe(false)
  })

  it("requires credentials", async () => {
    expect((await call(server.url, "GET", "/api/v1/notifications/pending")).status).toBe(401)
  })
})

describe("read state", () => {
  it("marks items read for the JWT user only and counts newly read items", async () => {
    const teammate = await addMember(server.url, org, "admin")
    const key = `action:${pendingIds[0]}`
    const first = await call(server.url, "POST", "/api/v1/notifications/mark-read", { token: org.token, body: { notification_keys: [key, key] } })
    expect(first.status).toBe(200)
    expect(first.body.marked).toBe(1)
    const again = await call(server.url, "POST", "/api/v1/notifications/mark-read", { token: org.token, body: { notification_keys: [key] } })
    expect(again.body.marked).toBe(0)

    const mine = await call(server.url, "GET", "/api/v1/notifications/pending", { token: org.token })
    expect(mine.body.unread_count).toBe(2)
    expect(mine.body.items.find((item: any) => item.notification_key === key).read).toBe(true)

    const theirs = await call(server.url, "GET", "/api/v1/notifications/pending", { token: teammate.token })
    expect(theirs.body.unread_count).toBe(3)
    expect(theirs.body.items.every((item: any) => item.read === false)).toBe(true)
  })

  it("gives API-key callers read false everywhere and marks nothing", async () => {
    const listed = await call(server.url, "GET", "/api/v1/notifications/pending", { token: org.key })
    expect(listed.body.unread_count).toBe(3)
    expect(listed.body.items.every((item: any) => item.read === false)).toBe(true)
    const marked = await call(server.url, "POST", "/api/v1/notifications/mark-read", {
      token: org.key,
      body: { notification_keys: [`action:${pendingIds[1]}`] }
    })
    expect(marked.status).toBe(200)
    expect(marked.body.marked).toBe(0)
    expect((await call(server.url, "POST", "/api/v1/notifications/mark-all-read", { token: org.key })).body.marked).toBe(0)
  })

  it("does not mark keys the organization has no pending item for", async () => {
    const reply = await call(server.url, "POST", "/api/v1/notifications/mark-read", {
      token: org.token,
      body: { notification_keys: ["action:act_does_not_exist", `action:${(await registerOrg(server.url)).orgUuid}`] }
    })
    expect(reply.body.marked).toBe(0)
    const foreign = await call(server.url, "GET", "/api/v1/notifications/pending", { token: other.key })
    const foreignKey = foreign.body.items[0].notification_key
    expect((await call(server.url, "POST", "/api/v1/notifications/mark-read", { token: org.token, body: { notification_keys: [foreignKey] } })).body.marked).toBe(0)
  })

  it("validates notification_keys: 1 to 100 strings", async () => {
    expect((await call(server.url, "POST", "/api/v1/notifications/mark-read", { token: org.token, body: { notification_keys: [] } })).status).toBe(422)
    const tooMany = Array.from({ length: 101 }, (_, i) => `action:${i}`)
    expect((await call(server.url, "POST", "/api/v1/notifications/mark-read", { token: org.token, body: { notification_keys: tooMany } })).status).toBe(422)
    expect((await call(server.url, "POST", "/api/v1/notifications/mark-read", { token: org.token, body: {} })).status).toBe(422)
  })

  it("mark-all-read marks the rest and then nothing", async () => {
    const all = await call(server.url, "POST", "/api/v1/notifications/mark-all-read", { token: org.token })
    expect(all.status).toBe(200)
    expect(all.body.marked).toBe(2)
    expect((await call(server.url, "POST", "/api/v1/notifications/mark-all-read", { token: org.token })).body.marked).toBe(0)
    const listed = await call(server.url, "GET", "/api/v1/notifications/pending", { token: org.token })
    expect(listed.body.unread_count).toBe(0)
    expect(listed.body.total).toBe(3)
  })
})
