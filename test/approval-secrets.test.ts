/**
 * The self-approval hole, tested as an agent would attack it: with nothing but
 * its own API key, an agent creates a webhook, opens a socket and a pending
 * action, then looks everywhere it can read for the approval secrets, and
 * tries every route that decides. Approval codes and tokens reach the
 * approvers' mailboxes and nothing else.
 */
import { createServer, type Server } from "node:http"
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import WebSocket from "ws"
import { setLogLevel } from "../src/platform/log.js"
import { addMember, call, registerOrg } from "./support/client.js"
import { enableApprovalMail, type Grant, useInbox } from "./support/mail.js"
import { useServer } from "./support/server.js"

const inbox = useInbox()
const server = useServer(() => ({ SMTP_URL: inbox.url, OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8", OUTBOUND_ALLOW_HTTP: "true" }))
let receiver: Server
let receiverPort: number
const hooks: Array<{ headers: Record<string, unknown>; body: string }> = []
const logged: Array<string> = []
const realWrite = process.stdout.write.bind(process.stdout)

beforeAll(async () => {
  receiver = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      hooks.push({ headers: request.headers, body: Buffer.concat(chunks).toString("utf8") })
      response.writeHead(200).end("ok")
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  receiverPort = (receiver.address() as { port: number }).port
  // Everything the server logs while the attack runs, at the most talkative level.
  setLogLevel("debug")
  process.stdout.write = ((chunk: string | Uint8Array) => {
    logged.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"))
    return true
  }) as typeof process.stdout.write
}, 60_000)

afterAll(async () => {
  process.stdout.write = realWrite
  setLogLevel("silent")
  receiver?.closeAllConnections()
  await new Promise<void>((resolve) => receiver?.close(() => resolve()))
})

const waitUntil = async (check: () => boolean | Promise<boolean>, what: string, ms = 10_000) => {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** Every string by which a grant could be used: the code (as typed and normalized) and both tokens. */
const secretsOf = (grant: Grant) => [
  grant.code,
  grant.code.toLowerCase(),
  new URL(grant.approve_url).searchParams.get("token")!,
  new URL(grant.deny_url).searchParams.get("token")!
]

describe("approval secrets reach approvers only", () => {
  it("an agent's key finds no approval secret anywhere it can read, and cannot decide through any route", async () => {
    const org = await registerOrg(server.url, "Victim Org")
    await enableApprovalMail(server.url, org)
    const agentKey = org.key
    const webhook = await call(server.url, "POST", "/api/v1/webhooks", { token: agentKey, body: { url: `http://127.0.0.1:${receiverPort}/hook` } })
    expect(webhook.status).toBe(201)

    const frames: Array<string> = []
    const socket = new WebSocket(`${server.url.replace("http", "ws")}/api/v1/ws`, { headers: { authorization: `Bearer ${agentKey}` } })
    socket.on("message", (data) => frames.push(String(data)))
    await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject))
    for (const channel of ["actions", "notifications"]) socket.send(JSON.stringify({ type: "subscribe", channel }))
    await waitUntil(() => frames.filter((frame) => frame.includes('"subscribed"')).length === 2, "subscriptions")

    // The agent names an address it controls as approver, hoping the code is mailed there.
    const evil = "agent-controlled@attacker.test"
    const created = await call(server.url, "POST", "/api/v1/actions", {
      token: agentKey,
      body: { action_type: "wire.transfer", details: "send 1M", require_approval: true, approvers: [evil], store_details: true }
    })
    expect(created.status).toBe(201)
    const id = created.body.action_uuid as string
    expect(created.body.warnings.join(" ")).toContain(evil)

    // A human approver (the owner, as the named address is not vouched for) got a personal code.
    const grant = await inbox.grant(id, org.email)
    await waitUntil(() => hooks.some((hook) => hook.body.includes(id)), "the webhook delivery")
    await waitUntil(() => frames.some((frame) => frame.includes("notification.created") && frame.includes(id)), "the live notification")
    expect(inbox.mails.some((mail) => mail.to.includes(evil))).toBe(false)

    const event = JSON.parse(hooks.find((hook) => hook.body.includes(id))!.body)
    expect(event.event).toBe("action.approval_requested")
    expect(event.data).toEqual({
      action_uuid: id,
      action_type: "wire.transfer",
      agent_id: null,
      status: "pending_approval",
      expires_at: expect.any(String),
      review_url: `${server.url}/dashboard/actions/${id}`
    })

    const readable = [
      JSON.stringify(hooks),
      (await call(server.url, "GET", `/api/v1/webhooks/${webhook.body.id}/deliveries`, { token: agentKey })).text,
      (await call(server.url, "GET", `/api/v1/actions/${id}`, { token: agentKey })).text,
      (await call(server.url, "GET", "/api/v1/actions", { token: agentKey })).text,
      (await call(server.url, "GET", `/api/v1/actions/${id}/chain`, { token: agentKey })).text,
      (await call(server.url, "GET", "/api/v1/notifications/pending", { token: agentKey })).text,
      (await call(server.url, "GET", "/api/v1/approvers/notification-channels", { token: agentKey })).text,
      frames.join("\n"),
      logged.join("")
    ]
    const stored = await server.run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const events = yield* sql`SELECT data FROM events WHERE org_uuid = ${org.orgUuid}`
        const grants = yield* sql`SELECT * FROM approval_grants WHERE org_uuid = ${org.orgUuid}`
        const deliveries = yield* sql`SELECT detail FROM channel_deliveries WHERE org_uuid = ${org.orgUuid}`
        const actions = yield* sql`SELECT * FROM actions WHERE action_uuid = ${id}`
        return JSON.stringify([events, grants, deliveries, actions])
      })
    )
    for (const secret of secretsOf(grant)) {
      for (const text of [...readable, stored]) expect(text).not.toContain(secret)
    }

    // Every route that decides refuses the agent.
    const byKey = await call(server.url, "POST", `/api/v1/actions/${id}/dashboard-approve`, { token: agentKey })
    expect(byKey.status).toBe(401)
    expect((await call(server.url, "POST", `/api/v1/actions/${id}/dashboard-deny`, { token: agentKey })).status).toBe(401)
    expect((await call(server.url, "POST", "/api/v1/actions/approval/ZZZZZZZZZZ/confirm", { body: { decision: "approve" } })).status).toBe(404)
    expect((await call(server.url, "POST", `/api/v1/actions/${id}/approve?token=x`)).status).toBe(403)
    expect((await call(server.url, "POST", `/api/v1/actions/${id}/approve`)).status).toBe(403)
    expect((await call(server.url, "GET", `/api/v1/actions/${id}`, { token: agentKey })).body.status).toBe("pending_approval")

    // The human decides; the receipt names them.
    const confirm = await call(server.url, "POST", `/api/v1/actions/approval/${grant.code}/confirm`, { body: { decision: "approve" } })
    expect(confirm.body).toEqual(expect.objectContaining({ status: "approved", approver_email: org.email.toLowerCase() }))
    socket.terminate()
  })

  it("gives each approver a personal code, and a member who left can no longer use theirs", async () => {
    const org = await registerOrg(server.url, "Two Approvers")
    await enableApprovalMail(server.url, org)
    const first = await addMember(server.url, org, "member")
    const second = await addMember(server.url, org, "member")
    const created = await call(server.url, "POST", "/api/v1/actions", {
      token: org.key,
      body: { action_type: "deploy", details: "prod", require_approval: true, approvers: [first.email, second.email] }
    })
    const id = created.body.action_uuid as string
    expect(created.body.warnings.join(" ")).not.toContain("receive no approval code")
    const [mine, theirs] = await Promise.all([inbox.grant(id, first.email), inbox.grant(id, second.email)])
    expect(mine.code).not.toBe(theirs.code)
    // The owner is not a named approver of this action: no mail for them.
    expect(inbox.mails.some((mail) => mail.to.includes(org.email.toLowerCase()) && mail.text.includes(id))).toBe(false)

    const left = await call(server.url, "POST", "/api/v1/auth/leave-org", { token: second.token })
    expect(left.status).toBe(200)
    const refused = await call(server.url, "POST", `/api/v1/actions/approval/${theirs.code}/confirm`, { body: { decision: "approve" } })
    expect(refused.status).toBe(403)
    const byToken = new URL(mine.deny_url)
    const denied = await call(server.url, "POST", `${byToken.pathname}${byToken.search}`, { body: {} })
    expect(denied.body).toEqual(expect.objectContaining({ status: "denied_by_human", approver_email: first.email.toLowerCase() }))
    // The first approver's code was spent with their token.
    expect((await call(server.url, "POST", `/api/v1/actions/approval/${mine.code}/confirm`, { body: { decision: "approve" } })).status).toBe(410)
  })

  it("issues no code without an e-mail channel; the dashboard still decides", async () => {
    const org = await registerOrg(server.url, "No Mail")
    const created = await call(server.url, "POST", "/api/v1/actions", { token: org.key, body: { action_type: "t", details: "d", require_approval: true } })
    const id = created.body.action_uuid as string
    // Kept: the check is that nothing happens (no grant, no mail), which no event announces.
    await new Promise((resolve) => setTimeout(resolve, 600))
    const grants = await server.run(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT count(*)::int AS n FROM approval_grants WHERE action_uuid = ${id}`)
    )
    expect((grants[0] as any).n).toBe(0)
    expect(inbox.mails.some((mail) => mail.text.includes(id))).toBe(false)
    const approved = await call(server.url, "POST", `/api/v1/actions/${id}/dashboard-approve`, { token: org.token })
    expect(approved.body).toEqual(expect.objectContaining({ status: "approved", approver_email: org.email.toLowerCase() }))
  })
})
