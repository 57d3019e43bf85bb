/**
 * Actions end to end against the real server: authorize, notarize, approvals by
 * code, legacy token and dashboard, cosign, holds, chains, idempotency and
 * cross-organization isolation. Over the typed client (HttpApiClient over GatewayApi).
 */
import { createHash } from "node:crypto"
import { expect } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql"
import type { AuthorizeRequest } from "../protocol/actions.js"
import { verifyReceipt } from "../protocol/verifier/index.js"
import { answer, client, type GatewayClient, member, register } from "./support/api.js"
import { call, type Org } from "./support/client.js"
import { liveLayer } from "./support/effect.js"
import { gatewayWithMail, Mailbox } from "./support/mail.js"
import { Gateway } from "./support/server.js"

class Orgs extends Context.Service<Orgs, { readonly org: Org; readonly other: Org }>()("test/actions-api/Orgs") {}

const Server = gatewayWithMail()

const Setup = Layer.effect(
  Orgs,
  Effect.gen(function* () {
    const orgs = yield* Effect.all({ org: register("Actions Org"), other: register("Other Org") })
    // The e-mail channel on, so the owner receives approval codes.
    yield* (yield* client(orgs.org.token)).notificationChannels.put({ payload: { email: { enabled: true } } })
    return orgs
  })
).pipe(Layer.provideMerge(Server))

const sha256 = (text: string) => "sha256:" + createHash("sha256").update(text).digest("hex")

/** The receipt as served, verified on its wire form (the signature covers the payload exactly as sent). */
const receiptOf = (actionUuid: string) =>
  Effect.gen(function* () {
    const server = yield* Gateway
    const reply = yield* Effect.promise(() => call(server.url, "GET", `/api/v1/verify/action/${actionUuid}`))
    expect(reply.status).toBe(200)
    const signed = typeof reply.body.signed_payload === "string" ? JSON.parse(reply.body.signed_payload) : reply.body.signed_payload
    const result = verifyReceipt({ signed_payload: signed, payload_hash: reply.body.payload_hash, signature: reply.body.signature, public_key: reply.body.public_key })
    expect(result.errors).toEqual([])
    expect(result.valid).toBe(true)
    return { payload: signed as Record<string, any>, payloadHash: reply.body.payload_hash as string }
  })
const verified = (actionUuid: string) => Effect.map(receiptOf(actionUuid), (receipt) => receipt.payload)

/** A new action, answered 201. */
const authorized = (api: GatewayClient, payload: AuthorizeRequest) =>
  Effect.gen(function* () {
    const [created, reply] = yield* api.actions.authorize({ headers: {}, payload, responseMode: "decoded-and-response" })
    expect(reply.status).toBe(201)
    return created
  })
/** An authorize expected to be refused, as answered. */
const refusedAuthorize = (api: GatewayClient, payload: AuthorizeRequest) => answer(api.actions.authorize({ headers: {}, payload, responseMode: "response-only" }))

const pendingAction = (owner: Org, extra: Partial<AuthorizeRequest> = {}) =>
  Effect.gen(function* () {
    const created = yield* authorized(yield* client(owner.key), {
      action_type: "payment",
      details: "pay 10 EUR",
      instruction_hash: "sha256:abc",
      require_approval: true,
      ...extra
    })
    expect(created.status).toBe("pending_approval")
    return { id: created.action_uuid }
  })

/** A pending action and the owner's personal grant for it, read from the owner's e-mail. */
const pendingWithGrant = (owner: Org, extra: Partial<AuthorizeRequest> = {}) =>
  Effect.gen(function* () {
    const { id } = yield* pendingAction(owner, extra)
    const inbox = yield* Mailbox
    return { id, grant: yield* Effect.promise(() => inbox.grant(id, owner.email)) }
  })

/** The token of a mailed approve or deny link, once the link is seen to name the action and the decision. */
const mailedToken = (link: string, id: string, decision: "approve" | "deny") => {
  const url = new URL(link)
  expect(url.pathname).toBe(`/api/v1/actions/${id}/${decision}`)
  return url.searchParams.get("token")!
}

liveLayer(Setup)((it) => {
  it.describe("authorize and notarize", () => {
    it.effect("authorizes, warns about a missing instruction_hash, and hashes the details", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const { org } = yield* Orgs
        // Raw: a field outside the contract (ignored by the server) and request_id, which the decoder strips.
        const reply = yield* Effect.promise(() =>
          call(server.url, "POST", "/api/v1/actions", { token: org.key, body: { action_type: "send_email", details: "hello", agent_id: "mailer", unknown_field: 1 } })
        )
        expect(reply.status).toBe(201)
        expect(reply.body.status).toBe("authorized")
        expect(reply.body.action_uuid).toMatch(/^act_/)
        expect(reply.body.warnings.some((w: string) => w.includes("instruction_hash"))).toBe(true)
        expect(typeof reply.body.request_id).toBe("string")
        const [detail, detailReply] = yield* (yield* client(org.key)).actions.get({ params: { action_uuid: reply.body.action_uuid }, responseMode: "decoded-and-response" })
        expect(detailReply.status).toBe(200)
        expect(detail.action_details_hash).toBe("sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824")
        expect(detail.details_storage_key).toBeNull()
        expect(detail.receipt).toBeNull()
        expect(detail.authorizations).toEqual([])
      })
    )

    it.effect("answers warnings null when there is nothing to warn about", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const created = yield* authorized(yield* client(org.key), { action_type: "noop", details: "x", instruction_hash: "sha256:00" })
        expect(created.warnings).toBeNull()
      })
    )

    it.effect("refuses a body without details (422) and a key lacking actions:write (403)", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const { org } = yield* Orgs
        // Raw: a body the contract refuses to encode (details is required).
        const missing = yield* Effect.promise(() => call(server.url, "POST", "/api/v1/actions", { token: org.key, body: { action_type: "x" } }))
        expect(missing.status).toBe(422)
        expect(missing.body.code).toBe("VALIDATION_ERROR")
        const [key, keyReply] = yield* (yield* client(org.token)).apiKeys.create({
          payload: { name: "reader", scopes: ["actions:read"] },
          responseMode: "decoded-and-response"
        })
        expect(keyReply.status).toBe(201)
        const denied = yield* refusedAuthorize(yield* client(key.key), { action_type: "x", details: "y" })
        expect(denied.status).toBe(403)
        expect(denied.body.code).toBe("FORBIDDEN")
      })
    )

    it.effect("refuses the agent id the agentless chain is kept under (422), so no agent shares that chain", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* client(org.key)
        const reserved = yield* refusedAuthorize(api, { action_type: "x", details: "y", agent_id: "_default" })
        expect(reserved.status).toBe(422)
        expect(reserved.body).toMatchObject({ code: "VALIDATION_ERROR", details: { issues: [{ path: "agent_id" }] } })
        yield* authorized(api, { action_type: "x", details: "y", agent_id: "_default-bot" })
      })
    )

    it.effect("stores details only when asked, under a storage key", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* client(org.key)
        const created = yield* authorized(api, { action_type: "t", details: "secret details", store_details: true })
        // The answer as sent: the details must be in none of its keys, those outside the contract included.
        const detail = yield* answer(api.actions.get({ params: { action_uuid: created.action_uuid }, responseMode: "response-only" }))
        expect(detail.body.details_storage_key).toMatch(/^dsk_/)
        expect(JSON.stringify(detail.body)).not.toContain("secret details")
      })
    )

    it.effect("notarizes once with a verifiable receipt, then refuses a second notarize", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* client(org.key)
        const created = yield* authorized(api, { action_type: "t", details: "d", agent_id: "notary-agent" })
        const params = { action_uuid: created.action_uuid }
        const [done, doneReply] = yield* api.actions.notarize({
          params,
          payload: { outcome: "completed", outcome_details: "all good" },
          responseMode: "decoded-and-response"
        })
        expect(doneReply.status).toBe(200)
        expect(done.status).toBe("notarized")
        expect(done.receipt_uuid).toBeTruthy()
        const payload = yield* verified(created.action_uuid)
        expect(payload.receipt_status).toBe("notarized")
        expect(payload.outcome_hash).toBe(sha256("all good"))
        expect(payload.agent_sequence).toBe(1)
        expect(payload.previous_payload_hash).toBeNull()
        const again = yield* answer(api.actions.notarize({ params, payload: {}, responseMode: "response-only" }))
        expect(again.status).toBe(409)
        expect(again.body.code).toBe("INVALID_ACTION_STATE")
        const detail = yield* api.actions.get({ params })
        expect(detail.status).toBe("notarized")
        expect(detail.receipt!.receipt_uuid).toBe(done.receipt_uuid)
        expect(detail.receipt!.verify_url).toContain(`/api/v1/verify/action/${created.action_uuid}`)
      })
    )

    it.effect("records a failed outcome with its own receipt and rejects unknown outcomes", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* client(org.key)
        const created = yield* authorized(api, { action_type: "t", details: "d" })
        const params = { action_uuid: created.action_uuid }
        const bad = yield* answer(api.actions.notarize({ params, payload: { outcome: "maybe" }, responseMode: "response-only" }))
        expect(bad.status).toBe(400)
        expect(bad.body.code).toBe("INVALID_OUTCOME")
        const [failed, failedReply] = yield* api.actions.notarize({ params, payload: { outcome: "failed" }, responseMode: "decoded-and-response" })
        expect(failedReply.status).toBe(200)
        expect(failed.status).toBe("failed")
        expect((yield* verified(created.action_uuid)).receipt_status).toBe("failed")
      })
    )

    it.effect("cannot notarize a pending action", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const { id } = yield* pendingAction(org)
        const reply = yield* answer((yield* client(org.key)).actions.notarize({ params: { action_uuid: id }, payload: {}, responseMode: "response-only" }))
        expect(reply.status).toBe(409)
        expect(reply.body.code).toBe("INVALID_ACTION_STATE")
      })
    )

    it.effect("lists with filters and has_more", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const { org, other } = yield* Orgs
        const api = yield* client(org.key)
        for (let i = 0; i < 3; i++) yield* authorized(api, { action_type: "listed-type", details: `n${i}`, agent_id: "lister" })
        const [page, pageReply] = yield* api.actions.list({ query: { action_type: "listed-type", per_page: 2 }, responseMode: "decoded-and-response" })
        expect(pageReply.status).toBe(200)
        expect(page.data).toHaveLength(2)
        expect(page.pagination).toEqual({ page: 1, per_page: 2, total: 3, has_more: true })
        expect(page.data[0]).toEqual(expect.objectContaining({ action_type: "listed-type", agent_id: "lister", status: "authorized", legal_hold: false }))
        const byStatus = yield* api.actions.list({ query: { status: "notarized" } })
        expect(byStatus.data.every((a) => a.status === "notarized")).toBe(true)
        // Raw: a status outside the contract's list, which the typed client refuses to encode.
        const bad = yield* Effect.promise(() => call(server.url, "GET", "/api/v1/actions?status=weird", { token: org.key }))
        expect(bad.status).toBe(422)
        const otherList = yield* (yield* client(other.key)).actions.list({ query: { action_type: "listed-type" } })
        expect(otherList.data).toHaveLength(0)
      })
    )

    it.effect("counts a long list's total no further than ten pages ahead, exactly near its end, with an exact has_more", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const { org } = yield* Orgs
        // 300 of one agent's actions, written straight to the table (300 authorize calls would be slow).
        yield* Effect.promise(() =>
          server.run(
            Effect.flatMap(
              Effect.service(SqlClient.SqlClient),
              (sql) => sql`INSERT INTO actions (action_uuid, org_uuid, agent_id, action_type, action_details_hash, status, created_at)
                SELECT 'act_bulklist' || lpad(g::text, 3, '0'), ${org.orgUuid}, 'bulk-lister', 'bulk', 'sha256:00', 'authorized',
                  now() - g * interval '1 second'
                FROM generate_series(1, 300) AS g`
            )
          )
        )
        const api = yield* client(org.key)
        const listed = (query: { readonly page?: number; readonly per_page?: number; readonly action_type?: string }) =>
          api.actions.list({ query: { agent_id: "bulk-lister", ...query } })
        const first = yield* listed({ per_page: 20 })
        expect(first.data[0]!.action_uuid).toBe("act_bulklist001")
        // Past ten pages of 20: a lower bound (ten pages and one row), so a pager shows ten pages ahead.
        expect(first.pagination).toEqual({ page: 1, per_page: 20, total: 201, has_more: true })
        expect((yield* listed({ page: 6, per_page: 20 })).pagination).toEqual({ page: 6, per_page: 20, total: 300, has_more: true })
        const last = yield* listed({ page: 15, per_page: 20 })
        expect(last.data.map((a) => a.action_uuid).at(-1)).toBe("act_bulklist300")
        expect(last.pagination).toEqual({ page: 15, per_page: 20, total: 300, has_more: false })
        expect((yield* listed({ page: 16, per_page: 20 })).pagination).toEqual({ page: 16, per_page: 20, total: 300, has_more: false })
        expect((yield* listed({ page: 3, per_page: 100 })).pagination).toEqual({ page: 3, per_page: 100, total: 300, has_more: false })
        expect((yield* listed({ page: 2, per_page: 100, action_type: "none" })).pagination).toEqual({ page: 2, per_page: 100, total: 0, has_more: false })
      })
    )
  })

  it.describe("policies", () => {
    it.effect("denies by policy: persisted denied_by_policy with a verifiable denial receipt", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* client(org.key)
        const [policy, policyReply] = yield* api.policies.create({
          payload: { name: "no wires", mode: "rules", decision: "deny", conditions: [{ field: "action_type", op: "eq", value: "wire_transfer" }], activate: true },
          responseMode: "decoded-and-response"
        })
        expect(policyReply.status).toBe(201)
        const reply = yield* refusedAuthorize(api, { action_type: "wire_transfer", details: "send it all", agent_id: "banker" })
        expect(reply.status).toBe(403)
        expect(reply.body.code).toBe("POLICY_DENIED")
        expect(reply.body.details.policy_uuid).toBe(policy.id)
        const id = reply.body.details.action_uuid
        const detail = yield* api.actions.get({ params: { action_uuid: id } })
        expect(detail.status).toBe("denied_by_policy")
        expect(detail.receipt!.receipt_uuid).toBe(reply.body.details.receipt_uuid)
        expect((yield* verified(id)).receipt_status).toBe("denied")
      })
    )

    it.effect("requires approval by policy, matching context conditions", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* client(org.key)
        const [, policyReply] = yield* api.policies.create({
          payload: { name: "big amounts", mode: "rules", decision: "require_approval", conditions: [{ field: "context.amount", op: "gt", value: 1000 }], activate: true },
          responseMode: "decoded-and-response"
        })
        expect(policyReply.status).toBe(201)
        const big = yield* authorized(api, { action_type: "pay", details: "d", context: { amount: 5000 } })
        expect(big.status).toBe("pending_approval")
        expect(big.warnings!.length).toBeGreaterThan(0)
        const small = yield* authorized(api, { action_type: "pay", details: "d", context: { amount: 5 } })
        expect(small.status).toBe("authorized")
      })
    )
  })

  it.describe("approval by code", () => {
    it.effect("shows the action for review, confirms once, and answers 410 on reuse", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const { org } = yield* Orgs
        const { id, grant } = yield* pendingWithGrant(org, { store_details: true, details: "pay the invoice 42" })
        expect(grant.code).toMatch(/^[0-9A-HJKMNP-TV-Z]{10}$/)
        expect(grant.approval_url).toBe(`${server.url}/approve/${grant.code}`)
        const anonymous = yield* client()
        const params = { code: grant.code }
        const [review, reviewReply] = yield* anonymous.actionApprovals.review({ params, responseMode: "decoded-and-response" })
        expect(reviewReply.status).toBe(200)
        expect(review).toEqual(expect.objectContaining({ action_uuid: id, status: "pending_approval", details: "pay the invoice 42" }))
        const [confirm, confirmReply] = yield* anonymous.actionApprovals.confirm({ params, payload: { decision: "approve" }, responseMode: "decoded-and-response" })
        expect(confirmReply.status).toBe(200)
        // The approver is the address the code was sent to.
        expect(confirm).toEqual(expect.objectContaining({ status: "approved", action_uuid: id, approver_email: org.email.toLowerCase() }))
        const reuse = yield* answer(anonymous.actionApprovals.confirm({ params, payload: { decision: "approve" }, responseMode: "response-only" }))
        expect(reuse.status).toBe(410)
        expect(reuse.body.code).toBe("CODE_EXPIRED")
        expect((yield* anonymous.actionApprovals.review({ params, responseMode: "response-only" })).status).toBe(410)
        expect((yield* anonymous.actionApprovals.review({ params: { code: "ZZZZZZZZZZ" }, responseMode: "response-only" })).status).toBe(404)
        // Approved: notarize mints a receipt that carries the approval.
        const done = yield* (yield* client(org.key)).actions.notarize({ params: { action_uuid: id }, payload: {}, responseMode: "response-only" })
        expect(done.status).toBe(200)
        const payload = yield* verified(id)
        expect(payload.approval).toEqual(expect.objectContaining({ decision: "approved", via: "code", by: org.email.toLowerCase() }))
      })
    )

    it.effect("denies by code with a reason: denied_by_human with a receipt", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const { id, grant } = yield* pendingWithGrant(org)
        const [confirm, reply] = yield* (yield* client()).actionApprovals.confirm({
          params: { code: grant.code.toLowerCase() },
          payload: { decision: "deny", reason: "too risky" },
          responseMode: "decoded-and-response"
        })
        expect(reply.status).toBe(200)
        expect(confirm.status).toBe("denied_by_human")
        const payload = yield* verified(id)
        expect(payload.receipt_status).toBe("denied_by_human")
        expect(payload.approval).toEqual(expect.objectContaining({ decision: "denied", reason: "too risky" }))
      })
    )
  })

  it.describe("legacy tokens", () => {
    it.effect("approves with the signed token, refuses a forged one, and answers 409 once resolved", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const { id, grant } = yield* pendingWithGrant(org)
        const approveToken = mailedToken(grant.approve_url, id, "approve")
        const denyToken = mailedToken(grant.deny_url, id, "deny")
        const grantId = approveToken.split(".")[0]
        const anonymous = yield* client()
        const params = { action_uuid: id }
        const forged = yield* anonymous.actionApprovals.tokenApprove({
          params,
          query: { token: `${grantId}.9999999999.${"A".repeat(43)}` },
          responseMode: "response-only"
        })
        expect(forged.status).toBe(403)
        // A token is bound to its action.
        const elsewhere = yield* pendingAction(org)
        const moved = yield* anonymous.actionApprovals.tokenApprove({ params: { action_uuid: elsewhere.id }, query: { token: approveToken }, responseMode: "response-only" })
        expect(moved.status).toBe(403)
        // The deny token does not approve.
        const swapped = yield* anonymous.actionApprovals.tokenApprove({ params, query: { token: denyToken }, responseMode: "response-only" })
        expect(swapped.status).toBe(403)
        const [ok, okReply] = yield* anonymous.actionApprovals.tokenApprove({ params, query: { token: approveToken }, responseMode: "decoded-and-response" })
        expect(okReply.status).toBe(200)
        expect(ok).toEqual(expect.objectContaining({ status: "approved", approver_email: org.email.toLowerCase() }))
        const again = yield* answer(anonymous.actionApprovals.tokenDeny({ params, query: { token: denyToken }, responseMode: "response-only" }))
        expect(again.status).toBe(409)
        expect(again.body.code).toBe("ALREADY_RESOLVED")
      })
    )
  })

  it.describe("dashboard approval", () => {
    it.effect("lets an admin approve, a default approver deny, and refuses other members", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const admin = yield* member(org, "admin")
        const approver = yield* member(org, "member")
        const outsider = yield* member(org, "member")
        const [, set] = yield* (yield* client(org.token)).team.setDefaultApprovers({ payload: { emails: [approver.email] }, responseMode: "decoded-and-response" })
        expect(set.status).toBe(200)
        const byAdmin = yield* client(admin.token)
        const byApprover = yield* client(approver.token)
        const byOutsider = yield* client(outsider.token)

        const first = { action_uuid: (yield* pendingAction(org)).id }
        expect((yield* (yield* client(org.key)).actions.dashboardApprove({ params: first, responseMode: "response-only" })).status).toBe(401)
        expect((yield* byOutsider.actions.dashboardApprove({ params: first, responseMode: "response-only" })).status).toBe(403)
        const [approved, approvedReply] = yield* byAdmin.actions.dashboardApprove({ params: first, responseMode: "decoded-and-response" })
        expect(approvedReply.status).toBe(200)
        expect(approved).toEqual(expect.objectContaining({ status: "approved", approver_email: admin.email }))
        const twice = yield* answer(byAdmin.actions.dashboardDeny({ params: first, query: {}, responseMode: "response-only" }))
        expect(twice.status).toBe(409)
        expect(twice.body.code).toBe("ALREADY_RESOLVED")

        const second = yield* pendingAction(org)
        const [denied, deniedReply] = yield* byApprover.actions.dashboardDeny({ params: { action_uuid: second.id }, query: {}, responseMode: "decoded-and-response" })
        expect(deniedReply.status).toBe(200)
        expect(denied.status).toBe("denied_by_human")
        expect((yield* verified(second.id)).receipt_status).toBe("denied_by_human")

        // The action's own approvers replace the default list.
        const third = { action_uuid: (yield* pendingAction(org, { approvers: [outsider.email] })).id }
        expect((yield* byApprover.actions.dashboardApprove({ params: third, responseMode: "response-only" })).status).toBe(403)
        expect((yield* byOutsider.actions.dashboardApprove({ params: third, responseMode: "response-only" })).status).toBe(200)
      })
    )
  })

  it.describe("cosign, hold, chain", () => {
    it.effect("cosigns once per user (409 ALREADY_AUTHORIZED) and lists the cosignature", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const agent = yield* client(org.key)
        const owner = yield* client(org.token)
        const id = (yield* authorized(agent, { action_type: "t", details: "d" })).action_uuid
        const params = { action_uuid: id }
        expect((yield* agent.actions.cosign({ params, responseMode: "response-only" })).status).toBe(401)
        const [first, firstReply] = yield* owner.actions.cosign({ params, responseMode: "decoded-and-response" })
        expect(firstReply.status).toBe(200)
        expect(first).toEqual(expect.objectContaining({ action_uuid: id, cosigner_email: org.email.toLowerCase() === org.email ? org.email : expect.any(String) }))
        const second = yield* answer(owner.actions.cosign({ params, responseMode: "response-only" }))
        expect(second.status).toBe(409)
        expect(second.body.code).toBe("ALREADY_AUTHORIZED")
        const detail = yield* agent.actions.get({ params })
        expect(detail.authorizations).toHaveLength(1)
        expect(detail.authorizations[0]!.cosignature_uuid).toBe(first.cosignature_uuid)
      })
    )

    it.effect("places and releases a legal hold", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* client(org.key)
        const id = (yield* authorized(api, { action_type: "t", details: "d" })).action_uuid
        const params = { action_uuid: id }
        const [hold, holdReply] = yield* api.actions.hold({ params, responseMode: "decoded-and-response" })
        expect(holdReply.status).toBe(200)
        expect(hold).toEqual(expect.objectContaining({ action_uuid: id, legal_hold: true }))
        expect((yield* api.actions.get({ params })).legal_hold).toBe(true)
        const [release, releaseReply] = yield* api.actions.release({ params, responseMode: "decoded-and-response" })
        expect(releaseReply.status).toBe(200)
        expect(release.legal_hold).toBe(false)
        expect((yield* api.actions.get({ params })).legal_hold).toBe(false)
      })
    )

    it.effect("walks parent links, and a child's receipt commits to its parent's payload_hash", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* client(org.key)
        const notarize = (id: string) => api.actions.notarize({ params: { action_uuid: id }, payload: {}, responseMode: "response-only" })
        const root = yield* authorized(api, { action_type: "plan", details: "root", agent_id: "chain-agent" })
        yield* notarize(root.action_uuid)
        const child = yield* authorized(api, { action_type: "step", details: "child", agent_id: "chain-agent", parent_action_uuid: root.action_uuid })
        const grandchild = yield* authorized(api, { action_type: "step", details: "grandchild", parent_action_uuid: child.action_uuid })
        const [chain, chainReply] = yield* api.actions.chain({ params: { action_uuid: grandchild.action_uuid }, responseMode: "decoded-and-response" })
        expect(chainReply.status).toBe(200)
        expect(chain.chain.map((link) => link.action_uuid)).toEqual([grandchild.action_uuid, child.action_uuid, root.action_uuid])
        yield* notarize(child.action_uuid)
        const rootReceipt = yield* receiptOf(root.action_uuid)
        const childPayload = yield* verified(child.action_uuid)
        expect(childPayload.parent_payload_hash).toBe(rootReceipt.payloadHash)
        expect(childPayload.previous_payload_hash).toBe(rootReceipt.payloadHash)
        expect(childPayload.agent_sequence).toBe(rootReceipt.payload.agent_sequence + 1)
      })
    )

    it.effect("refuses a parent from another organization (404)", () =>
      Effect.gen(function* () {
        const { org, other } = yield* Orgs
        const foreign = yield* authorized(yield* client(other.key), { action_type: "t", details: "d" })
        const reply = yield* refusedAuthorize(yield* client(org.key), { action_type: "t", details: "d", parent_action_uuid: foreign.action_uuid })
        expect(reply.status).toBe(404)
        expect(reply.body.code).toBe("NOT_FOUND")
      })
    )
  })

  it.describe("idempotency", () => {
    it.effect("replays the same body and refuses a different one", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const { org, other } = yield* Orgs
        const api = yield* client(org.key)
        const body = { action_type: "t", details: "once", idempotency_key: "idem-1" }
        const first = yield* authorized(api, body)
        // Raw: the same body with its keys in another order (the typed client writes them in the contract's order).
        const replay = yield* Effect.promise(() =>
          call(server.url, "POST", "/api/v1/actions", { token: org.key, body: { details: "once", idempotency_key: "idem-1", action_type: "t" } })
        )
        expect(replay.status).toBe(201)
        expect(replay.body.action_uuid).toBe(first.action_uuid)
        const different = yield* refusedAuthorize(api, { ...body, details: "twice" })
        expect(different.status).toBe(409)
        expect(different.body.code).toBe("DUPLICATE_REQUEST")
        // Keys belong to one organization.
        const elsewhere = yield* authorized(yield* client(other.key), body)
        expect(elsewhere.action_uuid).not.toBe(first.action_uuid)
      })
    )

    it.effect("creates one action from fifty parallel identical requests", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* client(org.key)
        const body = { action_type: "parallel", details: "fifty", agent_id: "idem-agent", idempotency_key: "idem-50" }
        const replies = yield* Effect.all(
          Array.from({ length: 50 }, () => refusedAuthorize(api, body)),
          { concurrency: "unbounded" }
        )
        for (const reply of replies) expect([201, 409]).toContain(reply.status)
        const created = new Set(replies.filter((r) => r.status === 201).map((r) => r.body.action_uuid))
        expect(created.size).toBe(1)
        for (const reply of replies.filter((r) => r.status === 409)) expect(reply.body.code).toBe("DUPLICATE_REQUEST")
        const listed = yield* api.actions.list({ query: { action_type: "parallel" } })
        expect(listed.pagination.total).toBe(1)
      })
    )

    it.effect("honours the Idempotency-Key header the published SDK sends: fifty parallel requests, one action", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const { org } = yield* Orgs
        const api = yield* client(org.key)
        const body = { action_type: "header-parallel", details: "fifty", agent_id: "idem-agent" }
        const send = (key: string, extra: Partial<AuthorizeRequest> = {}) =>
          answer(api.actions.authorize({ headers: { "idempotency-key": key }, payload: { ...body, ...extra }, responseMode: "response-only" }))
        const replies = yield* Effect.all(
          Array.from({ length: 50 }, () => send("hdr-50")),
          { concurrency: "unbounded" }
        )
        for (const reply of replies) expect([201, 409]).toContain(reply.status)
        const created = new Set(replies.filter((r) => r.status === 201).map((r) => r.body.action_uuid))
        expect(created.size).toBe(1)
        const listed = yield* api.actions.list({ query: { action_type: "header-parallel" } })
        expect(listed.pagination.total).toBe(1)
        // The header is the body's key: the same key in the body replays, a different body conflicts.
        const replay = yield* authorized(api, { ...body, idempotency_key: "hdr-50" })
        expect(replay.action_uuid).toEqual([...created][0])
        expect((yield* send("hdr-50", { details: "other" })).body.code).toBe("DUPLICATE_REQUEST")
        const mismatch = yield* send("hdr-a", { idempotency_key: "hdr-b" })
        expect(mismatch.status).toBe(422)
        expect(mismatch.body.code).toBe("VALIDATION_ERROR")
        // Raw: a header longer than the contract allows, which the typed client refuses to encode.
        const tooLong = yield* Effect.promise(() =>
          call(server.url, "POST", "/api/v1/actions", { token: org.key, body, headers: { "idempotency-key": "x".repeat(256) } })
        )
        expect(tooLong.status).toBe(422)
      })
    )
  })

  it.describe("a transition that dies", () => {
    it.effect("answers 500 at once (the agent's actor does not retry it for ever) and the agent keeps working", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const { org } = yield* Orgs
        const api = yield* client(org.key)
        const sql = (statement: string) =>
          Effect.promise(() => server.run(Effect.flatMap(Effect.service(SqlClient.SqlClient), (database) => database.unsafe(statement))))
        const first = yield* authorized(api, { action_type: "t", details: "d", agent_id: "dying-agent" })
        const params = { action_uuid: first.action_uuid }
        yield* sql("ALTER TABLE receipts RENAME TO receipts_moved")
        const started = Date.now()
        const failed = yield* api.actions
          .notarize({ params, payload: {}, responseMode: "response-only" })
          .pipe(Effect.ensuring(sql("ALTER TABLE receipts_moved RENAME TO receipts")))
        expect(failed.status).toBe(500)
        expect(Date.now() - started).toBeLessThan(5_000)
        // Nothing was half-done: the action is still authorized, and the same agent notarizes next.
        expect((yield* api.actions.get({ params })).status).toBe("authorized")
        const retried = yield* api.actions.notarize({ params, payload: {}, responseMode: "response-only" })
        expect(retried.status).toBe(200)
        expect((yield* verified(first.action_uuid)).agent_sequence).toBe(1)
      })
    )
  })

  it.describe("cross-organization isolation", () => {
    it.effect("answers 404 to another organization on every route with an id", () =>
      Effect.gen(function* () {
        const { org, other } = yield* Orgs
        const api = yield* client(org.key)
        const id = (yield* authorized(api, { action_type: "t", details: "d" })).action_uuid
        const pending = yield* pendingAction(org)
        const byKey = yield* client(other.key)
        const byJwt = yield* client(other.token)
        const params = { action_uuid: id }
        const decided = { action_uuid: pending.id }
        const checks = [
          [`GET /api/v1/actions/${id}`, byKey.actions.get({ params, responseMode: "response-only" })],
          [`POST /api/v1/actions/${id}/notarize`, byKey.actions.notarize({ params, payload: {}, responseMode: "response-only" })],
          [`POST /api/v1/actions/${id}/cosign`, byJwt.actions.cosign({ params, responseMode: "response-only" })],
          [`POST /api/v1/actions/${id}/hold`, byKey.actions.hold({ params, responseMode: "response-only" })],
          [`DELETE /api/v1/actions/${id}/hold`, byKey.actions.release({ params, responseMode: "response-only" })],
          [`GET /api/v1/actions/${id}/chain`, byKey.actions.chain({ params, responseMode: "response-only" })],
          [`POST /api/v1/actions/${pending.id}/dashboard-approve`, byJwt.actions.dashboardApprove({ params: decided, responseMode: "response-only" })],
          [`POST /api/v1/actions/${pending.id}/dashboard-deny`, byJwt.actions.dashboardDeny({ params: decided, query: {}, responseMode: "response-only" })]
        ] as const
        for (const [route, request] of checks) {
          const reply = yield* request
          expect([route, reply.status]).toEqual([route, 404])
        }
        // Untouched by the attempts.
        const detail = yield* api.actions.get({ params })
        expect(detail.status).toBe("authorized")
        expect(detail.legal_hold).toBe(false)
        expect((yield* api.actions.get({ params: decided })).status).toBe("pending_approval")
      })
    )
  })

  it.describe("dashboard review", () => {
    it.effect("answers stored details to the action's approvers signed in, nobody else", () =>
      Effect.gen(function* () {
        const org = yield* register("Review Org")
        const agent = yield* client(org.key)
        const owner = yield* client(org.token)
        const id = (yield* authorized(agent, { action_type: "pay", details: "pay invoice 77", require_approval: true, store_details: true })).action_uuid
        const params = { action_uuid: id }
        const [review, reviewReply] = yield* owner.actions.dashboardReview({ params, responseMode: "decoded-and-response" })
        expect(reviewReply.status).toBe(200)
        expect(review).toMatchObject({ action_uuid: id, details: "pay invoice 77", status: "pending_approval" })
        // API keys never review (the agent's own key included); members outside the approvers cannot; other organizations get 404.
        expect((yield* agent.actions.dashboardReview({ params, responseMode: "response-only" })).status).toBe(401)
        const teammate = yield* client((yield* member(org, "member")).token)
        expect((yield* teammate.actions.dashboardReview({ params, responseMode: "response-only" })).status).toBe(403)
        const stranger = yield* client((yield* register("Review Other")).token)
        expect((yield* stranger.actions.dashboardReview({ params, responseMode: "response-only" })).status).toBe(404)
        const hashOnly = yield* authorized(agent, { action_type: "pay", details: "not kept", require_approval: true })
        expect((yield* owner.actions.dashboardReview({ params: { action_uuid: hashOnly.action_uuid } })).details).toBeNull()
      })
    )
  })
})
