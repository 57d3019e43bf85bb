/**
 * `/approve/{code}`: the HTML page for a pending action, its Approve / Deny
 * form posts, escaping of everything interpolated, and the 404 / 410 pages.
 * The page is a plain router route outside the contract, so its requests stay
 * raw; the actions it decides go through the typed client (HttpApiClient over GatewayApi).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import fc from "fast-check"
import { escapeHtml } from "../src/approve/render.js"
import { client, register } from "./support/api.js"
import { call, type Org } from "./support/client.js"
import { liveLayer } from "./support/effect.js"
import { gatewayWithMail, Mailbox } from "./support/mail.js"
import { Gateway } from "./support/server.js"

class Approvers extends Context.Service<Approvers, Org>()("test/approval-page/Approvers") {}

const Setup = Layer.effect(
  Approvers,
  Effect.gen(function* () {
    const org = yield* register("Approvers")
    // The e-mail channel on, so the owner receives approval codes.
    yield* (yield* client(org.token)).notificationChannels.put({ payload: { email: { enabled: true } } })
    return org
  })
).pipe(Layer.provideMerge(gatewayWithMail()))

/** Creates a pending action and returns its id and approval code. */
const pendingAction = (payload: { action_type: string; details: string; agent_id?: string; store_details?: boolean }) =>
  Effect.gen(function* () {
    const org = yield* Approvers
    const inbox = yield* Mailbox
    const [created, reply] = yield* (yield* client(org.key)).actions.authorize({
      headers: {},
      payload: { require_approval: true, ...payload },
      responseMode: "decoded-and-response"
    })
    expect(reply.status).toBe(201)
    const { code } = yield* Effect.promise(() => inbox.grant(created.action_uuid, org.email))
    return { actionUuid: created.action_uuid, code }
  })

/** Raw: the approval page is HTML served outside the contract; `form` posts it as a browser does. */
const page = (method: "GET" | "POST", code: string, form?: Record<string, string>) =>
  Effect.flatMap(Gateway, (server) =>
    Effect.promise(() =>
      call(
        server.url,
        method,
        `/approve/${code}`,
        form === undefined ? {} : { raw: new URLSearchParams(form).toString(), headers: { "content-type": "application/x-www-form-urlencoded" } }
      )
    )
  )

const actionStatus = (actionUuid: string) =>
  Effect.flatMap(Approvers, (org) => Effect.flatMap(client(org.key), (api) => api.actions.get({ params: { action_uuid: actionUuid } }))).pipe(
    Effect.map((action) => action.status)
  )

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

liveLayer(Setup)((it) => {
  it.describe("GET /approve/{code}", () => {
    it.effect("renders an accessible page for a valid code with the action and both decisions", () =>
      Effect.gen(function* () {
        const { actionUuid, code } = yield* pendingAction({ action_type: "payments.send", details: "pay 10 EUR", agent_id: "billing-bot", store_details: true })
        const reply = yield* page("GET", code)
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
    )

    it.effect("escapes what the agent sent", () =>
      Effect.gen(function* () {
        const hostile = `<script>alert("x")</script>&'`
        const { code } = yield* pendingAction({ action_type: "<b>bold</b>", details: hostile, agent_id: "a<i>gent", store_details: true })
        const html = (yield* page("GET", code)).text
        expect(html).not.toContain("<script>")
        expect(html).not.toContain("<b>bold</b>")
        expect(html).not.toContain("a<i>gent")
        expect(html).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;")
        expect(html).toContain("&lt;b&gt;bold&lt;/b&gt;")
      })
    )

    it.effect("answers an unknown code with a 404 HTML page", () =>
      Effect.gen(function* () {
        const reply = yield* page("GET", "ZZZZZZZZZZZZ")
        expect(reply.status).toBe(404)
        expect(reply.headers.get("content-type")).toContain("text/html")
        expect(reply.text).toContain('<html lang="en">')
        expect(reply.text).toContain("Approval not found")
      })
    )
  })

  it.describe("POST /approve/{code}", () => {
    it.effect("approves, shows the result, and a reused code is 410", () =>
      Effect.gen(function* () {
        const { actionUuid, code } = yield* pendingAction({ action_type: "email.send", details: "hello" })
        const reply = yield* page("POST", code, { decision: "approve" })
        expect(reply.status).toBe(200)
        expect(reply.text).toContain("Action approved")
        expect(reply.text).toContain(actionUuid)
        expect(yield* actionStatus(actionUuid)).toBe("approved")
        const reused = yield* page("POST", code, { decision: "approve" })
        expect(reused.status).toBe(410)
        expect(reused.headers.get("content-type")).toContain("text/html")
        expect((yield* page("GET", code)).status).toBe(410)
      })
    )

    it.effect("denies with a reason", () =>
      Effect.gen(function* () {
        const { actionUuid, code } = yield* pendingAction({ action_type: "files.delete", details: "rm -rf" })
        const reply = yield* page("POST", code, { decision: "deny", reason: "not <expected>" })
        expect(reply.status).toBe(200)
        expect(reply.text).toContain("Action denied")
        expect(yield* actionStatus(actionUuid)).toBe("denied_by_human")
      })
    )

    it.effect("asks for a decision when the form has none, changing nothing", () =>
      Effect.gen(function* () {
        const { actionUuid, code } = yield* pendingAction({ action_type: "noop", details: "x" })
        const reply = yield* page("POST", code, { decision: "maybe" })
        expect(reply.status).toBe(400)
        expect(yield* actionStatus(actionUuid)).toBe("pending_approval")
      })
    )

    it.effect("answers an unknown code with 404", () =>
      Effect.gen(function* () {
        expect((yield* page("POST", "ZZZZZZZZZZZZ", { decision: "approve" })).status).toBe(404)
      })
    )
  })
})
