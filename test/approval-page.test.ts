/**
 * `/approve/{code}`: the HTML page for a pending action, its Approve / Deny
 * form posts, escaping of everything interpolated, and the 404 / 410 pages.
 */
import fc from "fast-check"
import { beforeAll, describe, expect, it } from "vitest"
import { escapeHtml } from "../src/approve/render.js"
import { call, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { enableApprovalMail, useInbox } from "./support/mail.js"
import { useServer } from "./support/server.js"

const inbox = useInbox()
const server = useServer(() => ({ SMTP_URL: inbox.url }))
const org = useFixture(() => registerOrg(server.url, "Approvers"))

/** Creates a pending action and returns its id and approval code. */
const pendingAction = async (body: Record<string, unknown>) => {
  const reply = await call(server.url, "POST", "/api/v1/actions", { token: org.key, body: { require_approval: true, ...body } })
  expect(reply.status).toBe(201)
  const { code } = await inbox.grant(reply.body.action_uuid, org.email)
  return { actionUuid: reply.body.action_uuid as string, code }
}

const form = (fields: Record<string, string>) => ({
  raw: new URLSearchParams(fields).toString(),
  headers: { "content-type": "application/x-www-form-urlencoded" }
})

beforeAll(async () => {
  await enableApprovalMail(server.url, org)
}, 60_000)

describe("escapeHtml", () => {
  it("leaves no markup-significant character unescaped and round-trips through entity decoding", () => {
    const decode = (text: string) =>
      text.replace(/&(amp|lt|gt|quot|#39);/g, (_, name) => ({ amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'" })[name as string]!)
    fc.assert(
      fc.property(fc.string(), (text) => {
        const escaped = escapeHtml(text)
        expect(/[<>"']/.test(escaped)).toBe(false)
        expect(decode(escaped)).toBe(text)
      })
    )
  })
})

describe("GET /approve/{code}", () => {
  it("renders an accessible page for a valid code with the action and both decisions", async () => {
    const { actionUuid, code } = await pendingAction({ action_type: "payments.send", details: "pay 10 EUR", agent_id: "billing-bot", store_details: true })
    const reply = await call(server.url, "GET", `/approve/${code}`)
    expect(reply.status).toBe(200)
    expect(reply.headers.get("content-type")).toContain("text/html")
    const html = reply.text
    expect(html).toMatch(/^<!doctype html>/i)
    expect(html).toContain('<html lang="en">')
    expect(html).toContain("payments.send")
    expect(html).toContain("billing-bot")
    expect(html).toContain("pay 10 EUR")
    expect(html).toContain(actionUuid)
    expect(html).toMatch(/sha256:[0-9a-f]{64}/)
    expect(html).toContain(`action="/approve/${code}"`)
    expect(html).toContain('name="decision" value="approve"')
    expect(html).toContain('name="decision" value="deny"')
    expect(html).toContain('<label for="reason">')
    expect(html).toContain('<textarea id="reason" name="reason"')
    // Self-contained: no scripts or external resources.
    expect(html).not.toMatch(/<script|<link|src=|https?:\/\//i)
  })

  it("escapes what the agent sent", async () => {
    const hostile = `<script>alert("x")</script>&'`
    const { code } = await pendingAction({ action_type: "<b>bold</b>", details: hostile, agent_id: "a<i>gent", store_details: true })
    const html = (await call(server.url, "GET", `/approve/${code}`)).text
    expect(html).not.toContain("<script>")
    expect(html).not.toContain("<b>bold</b>")
    expect(html).not.toContain("a<i>gent")
    expect(html).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;")
    expect(html).toContain("&lt;b&gt;bold&lt;/b&gt;")
  })

  it("answers an unknown code with a 404 HTML page", async () => {
    const reply = await call(server.url, "GET", "/approve/ZZZZZZZZZZZZ")
    expect(reply.status).toBe(404)
    expect(reply.headers.get("content-type")).toContain("text/html")
    expect(reply.text).toContain('<html lang="en">')
    expect(reply.text).toContain("Approval not found")
  })
})

describe("POST /approve/{code}", () => {
  it("approves, shows the result, and a reused code is 410", async () => {
    const { actionUuid, code } = await pendingAction({ action_type: "email.send", details: "hello" })
    const reply = await call(server.url, "POST", `/approve/${code}`, form({ decision: "approve" }))
    expect(reply.status).toBe(200)
    expect(reply.text).toContain("Action approved")
    expect(reply.text).toContain(actionUuid)
    const action = await call(server.url, "GET", `/api/v1/actions/${actionUuid}`, { token: org.key })
    expect(action.body.status).toBe("approved")
    const reused = await call(server.url, "POST", `/approve/${code}`, form({ decision: "approve" }))
    expect(reused.status).toBe(410)
    expect(reused.headers.get("content-type")).toContain("text/html")
    expect((await call(server.url, "GET", `/approve/${code}`)).status).toBe(410)
  })

  it("denies with a reason", async () => {
    const { actionUuid, code } = await pendingAction({ action_type: "files.delete", details: "rm -rf" })
    const reply = await call(server.url, "POST", `/approve/${code}`, form({ decision: "deny", reason: "not <expected>" }))
    expect(reply.status).toBe(200)
    expect(reply.text).toContain("Action denied")
    const action = await call(server.url, "GET", `/api/v1/actions/${actionUuid}`, { token: org.key })
    expect(action.body.status).toBe("denied_by_human")
  })

  it("asks for a decision when the form has none, changing nothing", async () => {
    const { actionUuid, code } = await pendingAction({ action_type: "noop", details: "x" })
    const reply = await call(server.url, "POST", `/approve/${code}`, form({ decision: "maybe" }))
    expect(reply.status).toBe(400)
    expect((await call(server.url, "GET", `/api/v1/actions/${actionUuid}`, { token: org.key })).body.status).toBe("pending_approval")
  })

  it("answers an unknown code with 404", async () => {
    expect((await call(server.url, "POST", "/approve/ZZZZZZZZZZZZ", form({ decision: "approve" }))).status).toBe(404)
  })
})
