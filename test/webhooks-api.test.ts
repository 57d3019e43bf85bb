import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { addMember, call, type Org, registerOrg } from "./support/client.js"
import { startServer, type TestServer } from "./support/server.js"

let server: TestServer
let alice: Org
let bob: Org

beforeAll(async () => {
  server = await startServer({ OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8", OUTBOUND_ALLOW_HTTP: "true" })
  alice = await registerOrg(server.url, "Alice Co")
  bob = await registerOrg(server.url, "Bob Co")
})

afterAll(async () => {
  await server?.stop()
})

describe("/api/v1/webhooks", () => {
  it("creates a webhook, shows the secret once, lists a bare array without it", async () => {
    const created = await call(server.url, "POST", "/api/v1/webhooks", { token: alice.key, body: { url: "https://hooks.example.com/in" } })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ url: "https://hooks.example.com/in", events: ["*"], status: "active" })
    expect(created.body.secret).toMatch(/^whsec_/)
    expect(created.body.id).toEqual(expect.any(String))
    const listed = await call(server.url, "GET", "/api/v1/webhooks", { token: alice.key })
    expect(listed.status).toBe(200)
    expect(Array.isArray(listed.body)).toBe(true)
    expect(listed.body).toEqual([expect.objectContaining({ id: created.body.id, secret: null, events: ["*"] })])
    expect(await call(server.url, "GET", "/api/v1/webhooks", { token: bob.key }).then((r) => r.body)).toEqual([])
  })

  it("lets a member add a webhook but not delete one: only owners and admins silence an endpoint", async () => {
    const watched = await call(server.url, "POST", "/api/v1/webhooks", { token: alice.key, body: { url: "https://hooks.example.com/audit" } })
    const member = await addMember(server.url, alice, "member")
    const own = await call(server.url, "POST", "/api/v1/webhooks", { token: member.key, body: { url: "https://hooks.example.com/member" } })
    expect(own.status).toBe(201)
    for (const id of [watched.body.id, own.body.id]) {
      const refused = await call(server.url, "DELETE", `/api/v1/webhooks/${id}`, { token: member.key })
      expect(refused.status).toBe(403)
      expect(refused.body.code).toBe("FORBIDDEN")
    }
    const admin = await addMember(server.url, alice, "admin")
    expect((await call(server.url, "DELETE", `/api/v1/webhooks/${own.body.id}`, { token: admin.key })).status).toBe(204)
    expect((await call(server.url, "DELETE", `/api/v1/webhooks/${watched.body.id}`, { token: alice.key })).status).toBe(204)
  })

  it("refuses plain http outside the allowed ranges and unknown events", async () => {
    const plain = await call(server.url, "POST", "/api/v1/webhooks", { token: alice.key, body: { url: "http://hooks.example.com/in" } })
    expect(plain.status).toBe(422)
    expect(plain.body.code).toBe("VALIDATION_ERROR")
    const local = await call(server.url, "POST", "/api/v1/webhooks", { token: alice.key, body: { url: "http://127.0.0.1:9/in" } })
    expect(local.status).toBe(201)
    const unknown = await call(server.url, "POST", "/api/v1/webhooks", {
      token: alice.key,
      body: { url: "https://hooks.example.com/x", events: ["action.approved", "nope.nothing"] }
    })
    expect(unknown.status).toBe(422)
    const chosen = await call(server.url, "POST", "/api/v1/webhooks", {
      token: alice.key,
      body: { url: "https://hooks.example.com/x", events: ["action.approved", "case.complete"] }
    })
    expect(chosen.body.events).toEqual(["action.approved", "case.complete"])
  })

  it("lists deliveries and deletes; another organization gets 404", async () => {
    const created = await call(server.url, "POST", "/api/v1/webhooks", { token: alice.key, body: { url: "https://hooks.example.com/d" } })
    const id = created.body.id
    const deliveries = await call(server.url, "GET", `/api/v1/webhooks/${id}/deliveries?page=1&per_page=10`, { token: alice.key })
    expect(deliveries.status).toBe(200)
    expect(deliveries.body.data).toEqual([])
    expect(deliveries.body.pagination).toMatchObject({ page: 1, per_page: 10, total: 0, has_more: false })
    expect((await call(server.url, "GET", `/api/v1/webhooks/${id}/deliveries`, { token: bob.key })).status).toBe(404)
    expect((await call(server.url, "DELETE", `/api/v1/webhooks/${id}`, { token: bob.key })).status).toBe(404)
    const removed = await call(server.url, "DELETE", `/api/v1/webhooks/${id}`, { token: alice.key })
    expect(removed.status).toBe(204)
    expect((await call(server.url, "DELETE", `/api/v1/webhooks/${id}`, { token: alice.key })).status).toBe(404)
    const listed = await call(server.url, "GET", "/api/v1/webhooks", { token: alice.key })
    expect(listed.body.map((w: { id: string }) => w.id)).not.toContain(id)
  })

  it("needs the webhooks scopes", async () => {
    const key = await call(server.url, "POST", "/api/v1/api-keys", { token: alice.token, body: { name: "reader", scopes: ["webhooks:read"] } })
    expect(key.status).toBe(201)
    expect((await call(server.url, "GET", "/api/v1/webhooks", { token: key.body.key })).status).toBe(200)
    const denied = await call(server.url, "POST", "/api/v1/webhooks", { token: key.body.key, body: { url: "https://hooks.example.com/z" } })
    expect(denied.status).toBe(403)
  })
})

describe("/api/v1/approvers/notification-channels", () => {
  it("admins and owners read and write the settings; URLs come back masked; members are refused", async () => {
    const empty = await call(server.url, "GET", "/api/v1/approvers/notification-channels", { token: alice.token })
    expect(empty.status).toBe(200)
    expect(empty.body).toMatchObject({ email: { enabled: false, recipients: [] }, slack: { enabled: false, webhook_url: null }, teams: { enabled: false, webhook_url: null } })
    const put = await call(server.url, "PUT", "/api/v1/approvers/notification-channels", {
      token: alice.token,
      body: { email: { enabled: true, recipients: ["ops@example.test"] }, slack: { enabled: true, webhook_url: "https://hooks.slack.example/services/T1/B2/abcdefsecret" } }
    })
    expect(put.status).toBe(200)
    expect(put.body.slack.enabled).toBe(true)
    expect(put.body.slack.webhook_url).not.toContain("abcdefsecret")
    const read = await call(server.url, "GET", "/api/v1/approvers/notification-channels", { token: alice.key })
    expect(read.body).toMatchObject({ email: { enabled: true, recipients: ["ops@example.test"] }, slack: { enabled: true, webhook_url: put.body.slack.webhook_url } })
    const other = await call(server.url, "GET", "/api/v1/approvers/notification-channels", { token: bob.token })
    expect(other.body.slack.webhook_url).toBeNull()
    const member = await addMember(server.url, alice, "member")
    expect((await call(server.url, "GET", "/api/v1/approvers/notification-channels", { token: member.token })).status).toBe(403)
    const bad = await call(server.url, "PUT", "/api/v1/approvers/notification-channels", {
      token: alice.token,
      body: { teams: { enabled: true, webhook_url: "http://hooks.example.com/x" } }
    })
    expect(bad.status).toBe(422)
  })
})
