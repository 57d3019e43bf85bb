/**
 * Approval notification channels: settings (URLs sealed, shown masked) and the
 * announcement of `action.approval_requested` through the outbox dispatcher
 * to a local SMTP server and local chat receivers.
 */
import { createServer, type Server } from "node:http"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { SqlClient } from "effect/sql"
import { SMTPServer } from "smtp-server"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ApprovalGrantsLive } from "../src/actions/grants.js"
import { ApprovalChannels } from "../src/approvers/service.js"
import { Events } from "../src/events/service.js"
import { Flags } from "../src/flags/service.js"
import { configLayer, loadConfig } from "../src/platform/config.js"
import { databaseLayer } from "../src/platform/db/index.js"
import { newUuid } from "../src/platform/ids.js"
import { platformMemoryLayer } from "../src/platform/redis/index.js"
import { Secrets } from "../src/platform/secrets.js"
import { Webhooks } from "../src/webhooks/service.js"
import { type FreshDatabase, freshDatabaseUrl, UNUSED_DATA_DIR } from "./support/database.js"
import { freePort } from "./support/server.js"

type Services = Webhooks | ApprovalChannels | Events | SqlClient.SqlClient
let runtime: ManagedRuntime.ManagedRuntime<Services, unknown>
let database: FreshDatabase | undefined
let smtp: SMTPServer
let chat: Server
let chatPort: number
const mails: Array<{ to: Array<string>; raw: string }> = []
const chats: Array<{ path: string; body: any }> = []

const run = <A, E>(effect: Effect.Effect<A, E, Services>) => runtime.runPromise(effect)

const newOrg = (defaultApprovers: Array<string> = []) =>
  run(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const orgUuid = newUuid()
      yield* sql`INSERT INTO organizations (org_uuid, name, slug, default_approvers) VALUES (${orgUuid}, 'Org', ${`org-${orgUuid}`}, ${JSON.stringify(defaultApprovers)}::jsonb)`
      yield* sql`INSERT INTO users (user_uuid, org_uuid, email, password_hash, role) VALUES (${newUuid()}, ${orgUuid}, ${`owner-${orgUuid}@example.test`}, 'x', 'owner')`
      yield* sql`INSERT INTO users (user_uuid, org_uuid, email, password_hash, role) VALUES (${newUuid()}, ${orgUuid}, ${`member-${orgUuid}@example.test`}, 'x', 'member')`
      return orgUuid
    })
  )

/** A pending action and its `action.approval_requested` event, then one round of the outbox dispatcher. */
const requestApproval = (orgUuid: string, actionUuid: string, request: { actionType?: string; agentId?: string } = {}) =>
  run(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const events = yield* Events
      const actionType = request.actionType ?? "payment.send"
      const agentId = request.agentId ?? "agent-7"
      const expiresAt = new Date(Date.now() + 3600_000).toISOString()
      yield* sql.withTransaction(
        Effect.andThen(
          sql`INSERT INTO actions (action_uuid, org_uuid, agent_id, action_type, action_details_hash, status, approval_expires_at)
              VALUES (${actionUuid}, ${orgUuid}, ${agentId}, ${actionType}, 'sha256:00', 'pending_approval', ${expiresAt})`,
          events.record([
            {
              orgUuid,
              type: "action.approval_requested",
              data: {
                action_uuid: actionUuid,
                action_type: actionType,
                agent_id: agentId,
                status: "pending_approval",
                expires_at: expiresAt,
                review_url: `https://gateway.example/dashboard/actions/${actionUuid}`
              }
            }
          ])
        )
      )
      yield* Effect.flatMap(Webhooks, (webhooks) => webhooks.dispatchOnce)
    })
  )

const codeLine = /Your personal approval code: ([0-9A-Z]{10})/

const channelResults = (orgUuid: string) =>
  run(
    Effect.map(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT channel, status FROM channel_deliveries WHERE org_uuid = ${orgUuid} ORDER BY channel`),
      (rows) => rows.map((row: any) => `${row.channel}:${row.status}`)
    )
  )

const chatUrl = (path: string) => `http://127.0.0.1:${chatPort}${path}`

beforeAll(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    onData(stream, session, callback) {
      const chunks: Array<Buffer> = []
      stream.on("data", (chunk: Buffer) => chunks.push(chunk))
      stream.on("end", () => {
        // Quoted-printable soft line breaks undone, so long links read whole.
        const raw = Buffer.concat(chunks).toString("utf8").replace(/=\r\n/g, "").replace(/=3D/g, "=")
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), raw })
        callback()
      })
    }
  })
  const smtpPort = await freePort()
  await new Promise<void>((resolve) => smtp.listen(smtpPort, "127.0.0.1", resolve))
  chat = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      if (request.url === "/down") return response.writeHead(503).end()
      chats.push({ path: request.url ?? "/", body: JSON.parse(Buffer.concat(chunks).toString("utf8")) })
      response.writeHead(200).end("ok")
    })
  })
  await new Promise<void>((resolve) => chat.listen(0, "127.0.0.1", resolve))
  chatPort = (chat.address() as { port: number }).port
  database = await freshDatabaseUrl()
  const config = loadConfig({
    DATA_DIR: UNUSED_DATA_DIR,
    DATABASE_URL: database.url,
    MASTER_KEY: "0000000000000000000000000000000000000000000000000000000000000003",
    OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8",
    OUTBOUND_ALLOW_HTTP: "true",
    SMTP_URL: `smtp://127.0.0.1:${smtpPort}`
  })
  const services = Webhooks.layer.pipe(
    Layer.provideMerge(ApprovalChannels.layer),
    Layer.provideMerge(ApprovalGrantsLive),
    Layer.provideMerge(Flags.layer),
    Layer.provideMerge(Layer.mergeAll(Events.layer, Secrets.layer)),
    Layer.provideMerge(Layer.mergeAll(configLayer(config), databaseLayer({ url: config.databaseUrl, dataDir: config.dataDir }), platformMemoryLayer()))
  )
  runtime = ManagedRuntime.make(services as Layer.Layer<Services, unknown>)
  await runtime.runPromise(Effect.void)
})

afterAll(async () => {
  await runtime?.dispose()
  await new Promise<void>((resolve) => smtp?.close(() => resolve()))
  chat?.closeAllConnections()
  await new Promise<void>((resolve) => chat?.close(() => resolve()))
  await database?.drop()
})

describe("notification channel settings", () => {
  it("stores chat URLs sealed and shows them masked", async () => {
    const org = await newOrg()
    const put = (input: any) => run(Effect.flatMap(ApprovalChannels, (c) => c.put(org, input)))
    const view = await put({ email: { enabled: true, recipients: ["a@example.test"] }, slack: { enabled: true, webhook_url: chatUrl("/slack/T000/B000/secretpart") } })
    expect(view.email).toEqual({ enabled: true, recipients: ["a@example.test"] })
    expect(view.slack.enabled).toBe(true)
    expect(view.slack.webhook_url).not.toContain("secretpart")
    expect(view.slack.webhook_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/…part$/)
    expect(view.teams).toEqual({ enabled: false, webhook_url: null })
    const stored = await run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT slack_url_sealed FROM notification_channels WHERE org_uuid = ${org}`))
    expect(String((stored[0] as any).slack_url_sealed)).not.toContain("secretpart")
    // Omitting the URL keeps it.
    expect((await put({ slack: { enabled: false } })).slack.webhook_url).toBe(view.slack.webhook_url)
    const refused = await run(Effect.flip(Effect.flatMap(ApprovalChannels, (c) => c.put(org, { teams: { enabled: true, webhook_url: "http://hooks.example.com/x" } }))))
    expect(refused.reason).toMatchObject({ code: "VALIDATION_ERROR" })
  })
})

describe("approval announcements", () => {
  it("mails approvers their own code, recipients a notice, chats a link only; one channel down does not stop the others", async () => {
    const org = await newOrg()
    await run(
      Effect.flatMap(ApprovalChannels, (c) =>
        c.put(org, {
          email: { enabled: true, recipients: ["watcher@example.test"] },
          slack: { enabled: true, webhook_url: chatUrl(`/slack/${org}`) },
          teams: { enabled: true, webhook_url: chatUrl("/down") }
        })
      )
    )
    await requestApproval(org, "act_mail1")
    await expect.poll(() => mails.filter((m) => m.raw.includes("act_mail1")).length).toBe(2)
    const personal = mails.find((m) => m.raw.includes("act_mail1") && m.to.includes(`owner-${org}@example.test`))
    expect(personal?.raw).toMatch(codeLine)
    const notice = mails.find((m) => m.raw.includes("act_mail1") && m.to.includes("watcher@example.test"))
    expect(notice?.raw).toContain("https://gateway.example/dashboard/actions/act_mail1")
    expect(notice?.raw).not.toMatch(/approval code|token=/i)
    const slack = chats.find((c) => c.path === `/slack/${org}`)
    expect(slack?.body.text).toContain("https://gateway.example/dashboard/actions/act_mail1")
    expect(JSON.stringify(slack?.body)).not.toMatch(/approval code|token=|\/approve\//i)
    expect(await channelResults(org)).toEqual(["email:sent", "slack:sent", "teams:failed"])
  })

  it("posts a Teams card, and gives codes to default approvers, else admins and owners", async () => {
    const withDefaults = await newOrg(["default@example.test"])
    await run(
      Effect.flatMap(ApprovalChannels, (c) =>
        c.put(withDefaults, { email: { enabled: true }, teams: { enabled: true, webhook_url: chatUrl(`/teams/${withDefaults}`) } })
      )
    )
    await requestApproval(withDefaults, "act_mail2")
    const toDefault = mails.find((m) => m.raw.includes("act_mail2"))
    expect(toDefault?.to).toEqual(["default@example.test"])
    expect(toDefault?.raw).toMatch(codeLine)
    const card = chats.find((c) => c.path === `/teams/${withDefaults}`)
    expect(card?.body.text).toContain("https://gateway.example/dashboard/actions/act_mail2")

    const plain = await newOrg()
    await run(Effect.flatMap(ApprovalChannels, (c) => c.put(plain, { email: { enabled: true } })))
    await requestApproval(plain, "act_mail3")
    expect(mails.filter((m) => m.raw.includes("act_mail3")).map((m) => m.to)).toEqual([[`owner-${plain}@example.test`]])
  })

  it("escapes request text for each chat's markup: no mentions, no disguised links", async () => {
    const org = await newOrg()
    await run(
      Effect.flatMap(ApprovalChannels, (c) =>
        c.put(org, { slack: { enabled: true, webhook_url: chatUrl(`/slack/${org}`) }, teams: { enabled: true, webhook_url: chatUrl(`/teams/${org}`) } })
      )
    )
    await requestApproval(org, "act_markup", {
      actionType: "<!channel> pay <https://evil.example|your bank> *now*",
      agentId: "[Click to approve](https://evil.example) <b>bot</b>\nsecond line"
    })
    const slack = JSON.stringify(chats.find((c) => c.path === `/slack/${org}`)?.body)
    expect(slack).not.toContain("<!channel>")
    expect(slack).not.toContain("<https://evil.example|")
    expect(slack).toContain("&lt;!channel&gt;")
    const teams = chats.find((c) => c.path === `/teams/${org}`)?.body
    expect(`${teams.title} ${teams.text}`).not.toMatch(/(^|[^\\])\[Click to approve\]\(/)
    expect(teams.text).not.toContain("<b>")
    expect(teams.text).toContain("&lt;b&gt;")
  })

  it("sends nothing for an organization without channels", async () => {
    const org = await newOrg()
    const before = mails.length + chats.length
    await requestApproval(org, "act_none")
    expect(mails.length + chats.length).toBe(before)
    expect(await channelResults(org)).toEqual([])
  })
})
