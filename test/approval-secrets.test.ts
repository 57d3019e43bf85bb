/**
 * The self-approval hole, tested as an agent would attack it: with nothing but
 * its own API key, an agent creates a webhook, opens a socket and a pending
 * action, then looks everywhere it can read for the approval secrets, and
 * tries every route that decides. Approval codes and tokens reach the
 * approvers' mailboxes and nothing else. Over the typed client (HttpApiClient
 * over GatewayApi); what the agent reads is taken as sent, as text.
 */
import { createServer } from "node:http"
import { expect } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql"
import WebSocket from "ws"
import { client, member, register } from "./support/api.js"
import type { Org } from "./support/client.js"
import { liveLayer } from "./support/effect.js"
import { eventuallyEffect } from "./support/eventually.js"
import { captureDebugOutput } from "./support/log.js"
import { type Grant, gatewayWithMail, Mailbox } from "./support/mail.js"
import { Gateway } from "./support/server.js"

/** A webhook receiver on this machine: its port and every delivery it got. */
class Receiver extends Context.Service<Receiver, { readonly port: number; readonly hooks: Array<{ headers: Record<string, unknown>; body: string }> }>()(
  "test/approval-secrets/Receiver"
) {}
/** Everything the server logs while the suite runs, at the most talkative level. */
class Logged extends Context.Service<Logged, Array<string>>()("test/approval-secrets/Logged") {}


const ReceiverLayer = Layer.effect(
  Receiver,
  Effect.acquireRelease(
    Effect.promise(async () => {
      const hooks: Array<{ headers: Record<string, unknown>; body: string }> = []
      const server = createServer((request, response) => {
        const chunks: Array<Buffer> = []
        request.on("data", (chunk: Buffer) => chunks.push(chunk))
        request.on("end", () => {
          hooks.push({ headers: request.headers, body: Buffer.concat(chunks).toString("utf8") })
          response.writeHead(200).end("ok")
        })
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      return { server, port: (server.address() as { port: number }).port, hooks }
    }),
    ({ server }) =>
      Effect.promise(() => {
        server.closeAllConnections()
        return new Promise<void>((resolve) => server.close(() => resolve()))
      })
  )
)

const Server = gatewayWithMail({ OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8", OUTBOUND_ALLOW_HTTP: "true" })

// Once the server is up (it sets its own level as it starts): debug, and stdout kept.
const LoggedLayer = Layer.effect(Logged, Effect.flatMap(Gateway, () => captureDebugOutput))

const Setup = LoggedLayer.pipe(Layer.provideMerge(Server), Layer.provideMerge(ReceiverLayer))

const waitUntil = (check: () => boolean) => eventuallyEffect(Effect.sync(check), { timeoutMs: 10_000, intervalMs: 50 })

/** The text of an answer, as sent. */
const textOf = <E, R>(response: Effect.Effect<HttpClientResponse.HttpClientResponse, E, R>) => Effect.flatMap(response, (reply) => reply.text)

/** Every string by which a grant could be used: the code (as typed and normalized) and both tokens. */
const secretsOf = (grant: Grant) => [
  grant.code,
  grant.code.toLowerCase(),
  new URL(grant.approve_url).searchParams.get("token")!,
  new URL(grant.deny_url).searchParams.get("token")!
]

const grantOf = (id: string, email: string) => Effect.flatMap(Mailbox, (inbox) => Effect.promise(() => inbox.grant(id, email)))
/** Turns on the organization's e-mail channel, so its approvers receive codes. */
const enableApprovalMail = (org: Org) => Effect.flatMap(client(org.token), (api) => api.notificationChannels.put({ payload: { email: { enabled: true } } }))

liveLayer(Setup)((it) => {
  it.describe("approval secrets reach approvers only", () => {
    it.effect("an agent's key finds no approval secret anywhere it can read, and cannot decide through any route", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const inbox = yield* Mailbox
        const { port, hooks } = yield* Receiver
        const logged = yield* Logged
        const org = yield* register("Victim Org")
        yield* enableApprovalMail(org)
        const agent = yield* client(org.key)
        const [webhook, webhookReply] = yield* agent.webhooks.create({ payload: { url: `http://127.0.0.1:${port}/hook` }, responseMode: "decoded-and-response" })
        expect(webhookReply.status).toBe(201)

        const frames: Array<string> = []
        const socket = new WebSocket(`${server.url.replace("http", "ws")}/api/v1/ws`, { headers: { authorization: `Bearer ${org.key}` } })
        socket.on("message", (data) => frames.push(String(data)))
        yield* Effect.promise(() => new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject)))
        for (const channel of ["actions", "notifications"]) socket.send(JSON.stringify({ type: "subscribe", channel }))
        yield* waitUntil(() => frames.filter((frame) => frame.includes('"subscribed"')).length === 2)

        // The agent names an address it controls as approver, hoping the code is mailed there.
        const evil = "agent-controlled@attacker.test"
        const [created, createdReply] = yield* agent.actions.authorize({
          headers: {},
          payload: { action_type: "wire.transfer", details: "send 1M", require_approval: true, approvers: [evil], store_details: true },
          responseMode: "decoded-and-response"
        })
        expect(createdReply.status).toBe(201)
        const id = created.action_uuid
        expect(created.warnings!.join(" ")).toContain(evil)

        // A human approver (the owner, as the named address is not vouched for) got a personal code.
        const grant = yield* grantOf(id, org.email)
        yield* waitUntil(() => hooks.some((hook) => hook.body.includes(id)))
        yield* waitUntil(() => frames.some((frame) => frame.includes("notification.created") && frame.includes(id)))
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

        // What the agent reads, as sent: a secret in a key outside the contract must show too.
        const params = { action_uuid: id }
        const readable = [
          JSON.stringify(hooks),
          yield* textOf(agent.webhooks.deliveries({ params: { webhook_id: webhook.id }, query: {}, responseMode: "response-only" })),
          yield* textOf(agent.actions.get({ params, responseMode: "response-only" })),
          yield* textOf(agent.actions.list({ query: {}, responseMode: "response-only" })),
          yield* textOf(agent.actions.chain({ params, responseMode: "response-only" })),
          yield* textOf(agent.notifications.pending({ responseMode: "response-only" })),
          yield* textOf(agent.notificationChannels.get({ responseMode: "response-only" })),
          frames.join("\n"),
          logged.join("")
        ]
        const stored = yield* Effect.promise(() =>
          server.run(
            Effect.gen(function* () {
              const sql = yield* SqlClient.SqlClient
              const events = yield* sql`SELECT data FROM events WHERE org_uuid = ${org.orgUuid}`
              const grants = yield* sql`SELECT * FROM approval_grants WHERE org_uuid = ${org.orgUuid}`
              const deliveries = yield* sql`SELECT detail FROM channel_deliveries WHERE org_uuid = ${org.orgUuid}`
              const actions = yield* sql`SELECT * FROM actions WHERE action_uuid = ${id}`
              return JSON.stringify([events, grants, deliveries, actions])
            })
          )
        )
        for (const secret of secretsOf(grant)) {
          for (const text of [...readable, stored]) expect(text).not.toContain(secret)
        }

        // Every route that decides refuses the agent.
        const anonymous = yield* client()
        expect((yield* agent.actions.dashboardApprove({ params, responseMode: "response-only" })).status).toBe(401)
        expect((yield* agent.actions.dashboardDeny({ params, query: {}, responseMode: "response-only" })).status).toBe(401)
        expect((yield* anonymous.actionApprovals.confirm({ params: { code: "ZZZZZZZZZZ" }, payload: { decision: "approve" }, responseMode: "response-only" })).status).toBe(404)
        expect((yield* anonymous.actionApprovals.tokenApprove({ params, query: { token: "x" }, responseMode: "response-only" })).status).toBe(403)
        expect((yield* anonymous.actionApprovals.tokenApprove({ params, query: {}, responseMode: "response-only" })).status).toBe(403)
        expect((yield* agent.actions.get({ params })).status).toBe("pending_approval")

        // The human decides; the receipt names them.
        const confirm = yield* anonymous.actionApprovals.confirm({ params: { code: grant.code }, payload: { decision: "approve" } })
        expect(confirm).toEqual(expect.objectContaining({ status: "approved", approver_email: org.email.toLowerCase() }))
        socket.terminate()
      })
    )

    it.effect("gives each approver a personal code, and a member who left can no longer use theirs", () =>
      Effect.gen(function* () {
        const inbox = yield* Mailbox
        const org = yield* register("Two Approvers")
        yield* enableApprovalMail(org)
        const first = yield* member(org, "member")
        const second = yield* member(org, "member")
        const created = yield* (yield* client(org.key)).actions.authorize({
          headers: {},
          payload: { action_type: "deploy", details: "prod", require_approval: true, approvers: [first.email, second.email] }
        })
        const id = created.action_uuid
        expect(created.warnings!.join(" ")).not.toContain("receive no approval code")
        const [mine, theirs] = yield* Effect.all([grantOf(id, first.email), grantOf(id, second.email)], { concurrency: "unbounded" })
        expect(mine.code).not.toBe(theirs.code)
        // The owner is not a named approver of this action: no mail for them.
        expect(inbox.mails.some((mail) => mail.to.includes(org.email.toLowerCase()) && mail.text.includes(id))).toBe(false)

        const [, left] = yield* (yield* client(second.token)).auth.leaveOrg({ responseMode: "decoded-and-response" })
        expect(left.status).toBe(200)
        const anonymous = yield* client()
        const refused = yield* anonymous.actionApprovals.confirm({ params: { code: theirs.code }, payload: { decision: "approve" }, responseMode: "response-only" })
        expect(refused.status).toBe(403)
        // The deny link mailed to the first approver: it names this action and carries their token.
        const byToken = new URL(mine.deny_url)
        expect(byToken.pathname).toBe(`/api/v1/actions/${id}/deny`)
        const denied = yield* anonymous.actionApprovals.tokenDeny({ params: { action_uuid: id }, query: { token: byToken.searchParams.get("token")! } })
        expect(denied).toEqual(expect.objectContaining({ status: "denied_by_human", approver_email: first.email.toLowerCase() }))
        // The first approver's code was spent with their token.
        expect((yield* anonymous.actionApprovals.confirm({ params: { code: mine.code }, payload: { decision: "approve" }, responseMode: "response-only" })).status).toBe(410)
      })
    )

    it.effect("issues no code without an e-mail channel; the dashboard still decides", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const inbox = yield* Mailbox
        const org = yield* register("No Mail")
        const created = yield* (yield* client(org.key)).actions.authorize({ headers: {}, payload: { action_type: "t", details: "d", require_approval: true } })
        const id = created.action_uuid
        // Kept: the check is that nothing happens (no grant, no mail), which no event announces.
        yield* Effect.sleep("600 millis")
        const grants = yield* Effect.promise(() =>
          server.run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT count(*)::int AS n FROM approval_grants WHERE action_uuid = ${id}`))
        )
        expect((grants[0] as any).n).toBe(0)
        expect(inbox.mails.some((mail) => mail.text.includes(id))).toBe(false)
        const approved = yield* (yield* client(org.token)).actions.dashboardApprove({ params: { action_uuid: id } })
        expect(approved).toEqual(expect.objectContaining({ status: "approved", approver_email: org.email.toLowerCase() }))
      })
    )
  })
})
