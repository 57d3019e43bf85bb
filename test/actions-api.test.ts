/**
 * Actions end to end against the real server: authorize, notarize, approvals by
 * code, legacy token and dashboard, cosign, holds, chains, idempotency and
 * cross-organization isolation.
 */
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql"
import { beforeAll, describe, expect, it } from "vitest"
import { verifyReceipt } from "../protocol/verifier/index.js"
import { addMember, call, type Org, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { enableApprovalMail, useInbox } from "./support/mail.js"
import { useServer } from "./support/server.js"

const inbox = useInbox()
const server = useServer(() => ({ SMTP_URL: inbox.url }))
const org = useFixture(() => registerOrg(server.url, "Actions Org"))
const other = useFixture(() => registerOrg(server.url, "Other Org"))

beforeAll(async () => {
  await enableApprovalMail(server.url, org)
}, 60_000)

const authorize = (key: string, body: Record<string, unknown>) => call(server.url, "POST", "/api/v1/actions", { token: key, body })
const notarize = (key: string, id: string, body: Record<string, unknown> = {}) =>
  call(server.url, "POST", `/api/v1/actions/${id}/notarize`, { token: key, body })

const verified = async (actionUuid: string) => {
  const reply = await call(server.url, "GET", `/api/v1/verify/action/${actionUuid}`)
  expect(reply.status).toBe(200)
  const signed = typeof reply.body.signed_payload === "string" ? JSON.parse(reply.body.signed_payload) : reply.body.signed_payload
  const result = verifyReceipt({
    signed_payload: signed,
    payload_hash: reply.body.payload_hash,
    signature: reply.body.signature,
    public_key: reply.body.public_key
  })
  expect(result.errors).toEqual([])
  expect(result.valid).toBe(true)
  return signed as Record<string, any>
}

const pendingAction = async (owner: Org, extra: Record<string, unknown> = {}) => {
  const reply = await authorize(owner.key, { action_type: "payment", details: "pay 10 EUR", instruction_hash: "sha256:abc", require_approval: true, ...extra })
  expect(reply.status).toBe(201)
  expect(reply.body.status).toBe("pending_approval")
  return { id: reply.body.action_uuid as string }
}

/** A pending action and the owner's personal grant for it, read from the owner's e-mail. */
const pendingWithGrant = async (owner: Org, extra: Record<string, unknown> = {}) => {
  const { id } = await pendingAction(owner, extra)
  return { id, grant: await inbox.grant(id, owner.email) }
}

describe("authorize and notarize", () => {
  it("authorizes, warns about a missing instruction_hash, and hashes the details", async () => {
    const reply = await authorize(org.key, { action_type: "send_email", details: "hello", agent_id: "mailer", unknown_field: 1 })
    expect(reply.status).toBe(201)
    expect(reply.body.status).toBe("authorized")
    expect(reply.body.action_uuid).toMatch(/^act_/)
    expect(reply.body.warnings.some((w: string) => w.includes("instruction_hash"))).toBe(true)
    expect(typeof reply.body.request_id).toBe("string")
    const detail = await call(server.url, "GET", `/api/v1/actions/${reply.body.action_uuid}`, { token: org.key })
    expect(detail.status).toBe(200)
    expect(detail.body.action_details_hash).toBe("sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824")
    expect(detail.body.details_storage_key).toBeNull()
    expect(detail.body.receipt).toBeNull()
    expect(detail.body.authorizations).toEqual([])
  })

  it("answers warnings null when there is nothing to warn about", async () => {
    const reply = await authorize(org.key, { action_type: "noop", details: "x", instruction_hash: "sha256:00" })
    expect(reply.status).toBe(201)
    expect(reply.body.warnings).toBeNull()
  })

  it("refuses a body without details (422) and a key lacking actions:write (403)", async () => {
    const missing = await authorize(org.key, { action_type: "x" })
    expect(missing.status).toBe(422)
    expect(missing.body.code).toBe("VALIDATION_ERROR")
    const created = await call(server.url, "POST", "/api/v1/api-keys", { token: org.token, body: { name: "reader", scopes: ["actions:read"] } })
    expect(created.status).toBe(201)
    const denied = await authorize(created.body.key, { action_type: "x", details: "y" })
    expect(denied.status).toBe(403)
    expect(denied.body.code).toBe("FORBIDDEN")
  })

  it("refuses the agent id the agentless chain is kept under (422), so no agent shares that chain", async () => {
    const reserved = await authorize(org.key, { action_type: "x", details: "y", agent_id: "_default" })
    expect(reserved.status).toBe(422)
    expect(reserved.body).toMatchObject({ code: "VALIDATION_ERROR", details: { issues: [{ path: "agent_id" }] } })
    expect((await authorize(org.key, { action_type: "x", details: "y", agent_id: "_default-bot" })).status).toBe(201)
  })

  it("stores details only when asked, under a storage key", async () => {
    const reply = await authorize(org.key, { action_type: "t", details: "secret details", store_details: true })
    const detail = await call(server.url, "GET", `/api/v1/actions/${reply.body.action_uuid}`, { token: org.key })
    expect(detail.body.details_storage_key).toMatch(/^dsk_/)
    expect(JSON.stringify(detail.body)).not.toContain("secret details")
  })

  it("notarizes once with a verifiable receipt, then refuses a second notarize", async () => {
    const created = await authorize(org.key, { action_type: "t", details: "d", agent_id: "notary-agent" })
    const done = await notarize(org.key, created.body.action_uuid, { outcome: "completed", outcome_details: "all good" })
    expect(done.status).toBe(200)
    expect(done.body.status).toBe("notarized")
    expect(done.body.receipt_uuid).toBeTruthy()
    const payload = await verified(created.body.action_uuid)
    expect(payload.receipt_status).toBe("notarized")
    expect(payload.outcome_hash).toBe("sha256:" + (await import("node:crypto")).createHash("sha256").update("all good").digest("hex"))
    expect(payload.agent_sequence).toBe(1)
    expect(payload.previous_payload_hash).toBeNull()
    const again = await notarize(org.key, created.body.action_uuid)
    expect(again.status).toBe(409)
    expect(again.body.code).toBe("INVALID_ACTION_STATE")
    const detail = await call(server.url, "GET", `/api/v1/actions/${created.body.action_uuid}`, { token: org.key })
    expect(detail.body.status).toBe("notarized")
    expect(detail.body.receipt.receipt_uuid).toBe(done.body.receipt_uuid)
    expect(detail.body.receipt.verify_url).toContain(`/api/v1/verify/action/${created.body.action_uuid}`)
  })

  it("records a failed outcome with its own receipt and rejects unknown outcomes", async () => {
    const created = await authorize(org.key, { action_type: "t", details: "d" })
    const bad = await notarize(org.key, created.body.action_uuid, { outcome: "maybe" })
    expect(bad.status).toBe(400)
    expect(bad.body.code).toBe("INVALID_OUTCOME")
    const failed = await notarize(org.key, created.body.action_uuid, { outcome: "failed" })
    expect(failed.status).toBe(200)
    expect(failed.body.status).toBe("failed")
    expect((await verified(created.body.action_uuid)).receipt_status).toBe("failed")
  })

  it("cannot notarize a pending action", async () => {
    const { id } = await pendingAction(org)
    const reply = await notarize(org.key, id)
    expect(reply.status).toBe(409)
    expect(reply.body.code).toBe("INVALID_ACTION_STATE")
  })

  it("lists with filters and has_more", async () => {
    for (let i = 0; i < 3; i++) await authorize(org.key, { action_type: "listed-type", details: `n${i}`, agent_id: "lister" })
    const page = await call(server.url, "GET", "/api/v1/actions?action_type=listed-type&per_page=2", { token: org.key })
    expect(page.status).toBe(200)
    expect(page.body.data).toHaveLength(2)
    expect(page.body.pagination).toEqual({ page: 1, per_page: 2, total: 3, has_more: true })
    expect(page.body.data[0]).toEqual(
      expect.objectContaining({ action_type: "listed-type", agent_id: "lister", status: "authorized", legal_hold: false })
    )
    const byStatus = await call(server.url, "GET", "/api/v1/actions?status=notarized", { token: org.key })
    expect(byStatus.body.data.every((a: any) => a.status === "notarized")).toBe(true)
    const bad = await call(server.url, "GET", "/api/v1/actions?status=weird", { token: org.key })
    expect(bad.status).toBe(422)
    const otherList = await call(server.url, "GET", "/api/v1/actions?action_type=listed-type", { token: other.key })
    expect(otherList.body.data).toHaveLength(0)
  })

  it("counts a long list's total no further than ten pages ahead, exactly near its end, with an exact has_more", async () => {
    // 300 of one agent's actions, written straight to the table (300 authorize calls would be slow).
    await server.run(
      Effect.flatMap(
        Effect.service(SqlClient.SqlClient),
        (sql) => sql`INSERT INTO actions (action_uuid, org_uuid, agent_id, action_type, action_details_hash, status, created_at)
          SELECT 'act_bulklist' || lpad(g::text, 3, '0'), ${org.orgUuid}, 'bulk-lister', 'bulk', 'sha256:00', 'authorized',
            now() - g * interval '1 second'
          FROM generate_series(1, 300) AS g`
      )
    )
    const listed = (query: string) => call(server.url, "GET", `/api/v1/actions?agent_id=bulk-lister&${query}`, { token: org.key })
    const first = await listed("per_page=20")
    expect(first.body.data[0].action_uuid).toBe("act_bulklist001")
    // Past ten pages of 20: a lower bound (ten pages and one row), so a pager shows ten pages ahead.
    expect(first.body.pagination).toEqual({ page: 1, per_page: 20, total: 201, has_more: true })
    expect((await listed("page=6&per_page=20")).body.pagination).toEqual({ page: 6, per_page: 20, total: 300, has_more: true })
    const last = await listed("page=15&per_page=20")
    expect(last.body.data.map((a: any) => a.action_uuid).at(-1)).toBe("act_bulklist300")
    expect(last.body.pagination).toEqual({ page: 15, per_page: 20, total: 300, has_more: false })
    expect((await listed("page=16&per_page=20")).body.pagination).toEqual({ page: 16, per_page: 20, total: 300, has_more: false })
    expect((await listed("page=3&per_page=100")).body.pagination).toEqual({ page: 3, per_page: 100, total: 300, has_more: false })
    expect((await listed("page=2&per_page=100&action_type=none")).body.pagination).toEqual({ page: 2, per_page: 100, total: 0, has_more: false })
  })
})

describe("policies", () => {
  it("denies by policy: persisted denied_by_policy with a verifiable denial receipt", async () => {
    const policy = await call(server.url, "POST", "/api/v1/policies", {
      token: org.key,
      body: { name: "no wires", mode: "rules", decision: "deny", conditions: [{ field: "action_type", op: "eq", value: "wire_transfer" }], activate: true }
    })
    expect(policy.status).toBe(201)
    const reply = await authorize(org.key, { action_type: "wire_transfer", details: "send it all", agent_id: "banker" })
    expect(reply.status).toBe(403)
    expect(reply.body.code).toBe("POLICY_DENIED")
    expect(reply.body.details.policy_uuid).toBe(policy.body.id)
    const id = reply.body.details.action_uuid
    const detail = await call(server.url, "GET", `/api/v1/actions/${id}`, { token: org.key })
    expect(detail.body.status).toBe("denied_by_policy")
    expect(detail.body.receipt.receipt_uuid).toBe(reply.body.details.receipt_uuid)
    expect((await verified(id)).receipt_status).toBe("denied")
  })

  it("requires approval by policy, matching context conditions", async () => {
    const policy = await call(server.url, "POST", "/api/v1/policies", {
      token: org.key,
      body: { name: "big amounts", mode: "rules", decision: "require_approval", conditions: [{ field: "context.amount", op: "gt", value: 1000 }], activate: true }
    })
    expect(policy.status).toBe(201)
    const big = await authorize(org.key, { action_type: "pay", details: "d", context: { amount: 5000 } })
    expect(big.status).toBe(201)
    expect(big.body.status).toBe("pending_approval")
    expect(big.body.warnings.length).toBeGreaterThan(0)
    const small = await authorize(org.key, { action_type: "pay", details: "d", context: { amount: 5 } })
    expect(small.body.status).toBe("authorized")
  })
})

describe("approval by code", () => {
  it("shows the action for review, confirms once, and answers 410 on reuse", async () => {
    const { id, grant } = await pendingWithGrant(org, { store_details: true, details: "pay the invoice 42" })
    expect(grant.code).toMatch(/^[0-9A-HJKMNP-TV-Z]{10}$/)
    expect(grant.approval_url).toBe(`${server.url}/approve/${grant.code}`)
    const review = await call(server.url, "GET", `/api/v1/actions/approval/${grant.code}`)
    expect(review.status).toBe(200)
    expect(review.body).toEqual(expect.objectContaining({ action_uuid: id, status: "pending_approval", details: "pay the invoice 42" }))
    const confirm = await call(server.url, "POST", `/api/v1/actions/approval/${grant.code}/confirm`, { body: { decision: "approve" } })
    expect(confirm.status).toBe(200)
    // The approver is the address the code was sent to.
    expect(confirm.body).toEqual(expect.objectContaining({ status: "approved", action_uuid: id, approver_email: org.email.toLowerCase() }))
    const reuse = await call(server.url, "POST", `/api/v1/actions/approval/${grant.code}/confirm`, { body: { decision: "approve" } })
    expect(reuse.status).toBe(410)
    expect(reuse.body.code).toBe("CODE_EXPIRED")
    const reviewAgain = await call(server.url, "GET", `/api/v1/actions/approval/${grant.code}`)
    expect(reviewAgain.status).toBe(410)
    const unknown = await call(server.url, "GET", "/api/v1/actions/approval/ZZZZZZZZZZ")
    expect(unknown.status).toBe(404)
    // Approved: notarize mints a receipt that carries the approval.
    const done = await notarize(org.key, id)
    expect(done.status).toBe(200)
    const payload = await verified(id)
    expect(payload.approval).toEqual(expect.objectContaining({ decision: "approved", via: "code", by: org.email.toLowerCase() }))
  })

  it("denies by code with a reason: denied_by_human with a receipt", async () => {
    const { id, grant } = await pendingWithGrant(org)
    const confirm = await call(server.url, "POST", `/api/v1/actions/approval/${grant.code.toLowerCase()}/confirm`, {
      body: { decision: "deny", reason: "too risky" }
    })
    expect(confirm.status).toBe(200)
    expect(confirm.body.status).toBe("denied_by_human")
    const payload = await verified(id)
    expect(payload.receipt_status).toBe("denied_by_human")
    expect(payload.approval).toEqual(expect.objectContaining({ decision: "denied", reason: "too risky" }))
  })
})

describe("legacy tokens", () => {
  it("approves with the signed token, refuses a forged one, and answers 409 once resolved", async () => {
    const { id, grant } = await pendingWithGrant(org)
    const approveUrl = new URL(grant.approve_url)
    const denyUrl = new URL(grant.deny_url)
    const grantId = approveUrl.searchParams.get("token")!.split(".")[0]
    const forged = await call(server.url, "POST", `/api/v1/actions/${id}/approve?token=${grantId}.9999999999.${"A".repeat(43)}`)
    expect(forged.status).toBe(403)
    // A token is bound to its action.
    const elsewhere = await pendingAction(org)
    const moved = await call(server.url, "POST", `/api/v1/actions/${elsewhere.id}/approve${approveUrl.search}`)
    expect(moved.status).toBe(403)
    // The deny token does not approve.
    const swapped = await call(server.url, "POST", `/api/v1/actions/${id}/approve${denyUrl.search}`)
    expect(swapped.status).toBe(403)
    const ok = await call(server.url, "POST", approveUrl.pathname + approveUrl.search)
    expect(ok.status).toBe(200)
    expect(ok.body).toEqual(expect.objectContaining({ status: "approved", approver_email: org.email.toLowerCase() }))
    const again = await call(server.url, "POST", denyUrl.pathname + denyUrl.search)
    expect(again.status).toBe(409)
    expect(again.body.code).toBe("ALREADY_RESOLVED")
  })
})

describe("dashboard approval", () => {
  it("lets an admin approve, a default approver deny, and refuses other members", async () => {
    const admin = await addMember(server.url, org, "admin")
    const approver = await addMember(server.url, org, "member")
    const outsider = await addMember(server.url, org, "member")
    const set = await call(server.url, "PUT", "/api/v1/team/default-approvers", { token: org.token, body: { emails: [approver.email] } })
    expect(set.status).toBe(200)

    const first = await pendingAction(org)
    const byKey = await call(server.url, "POST", `/api/v1/actions/${first.id}/dashboard-approve`, { token: org.key })
    expect(byKey.status).toBe(401)
    const byOutsider = await call(server.url, "POST", `/api/v1/actions/${first.id}/dashboard-approve`, { token: outsider.token })
    expect(byOutsider.status).toBe(403)
    const byAdmin = await call(server.url, "POST", `/api/v1/actions/${first.id}/dashboard-approve`, { token: admin.token })
    expect(byAdmin.status).toBe(200)
    expect(byAdmin.body).toEqual(expect.objectContaining({ status: "approved", approver_email: admin.email }))
    const twice = await call(server.url, "POST", `/api/v1/actions/${first.id}/dashboard-deny`, { token: admin.token })
    expect(twice.status).toBe(409)
    expect(twice.body.code).toBe("ALREADY_RESOLVED")

    const second = await pendingAction(org)
    const byApprover = await call(server.url, "POST", `/api/v1/actions/${second.id}/dashboard-deny`, { token: approver.token })
    expect(byApprover.status).toBe(200)
    expect(byApprover.body.status).toBe("denied_by_human")
    expect((await verified(second.id)).receipt_status).toBe("denied_by_human")

    // The action's own approvers replace the default list.
    const third = await pendingAction(org, { approvers: [outsider.email] })
    const defaultNoLonger = await call(server.url, "POST", `/api/v1/actions/${third.id}/dashboard-approve`, { token: approver.token })
    expect(defaultNoLonger.status).toBe(403)
    const listed = await call(server.url, "POST", `/api/v1/actions/${third.id}/dashboard-approve`, { token: outsider.token })
    expect(listed.status).toBe(200)
  })
})

describe("cosign, hold, chain", () => {
  it("cosigns once per user (409 ALREADY_AUTHORIZED) and lists the cosignature", async () => {
    const created = await authorize(org.key, { action_type: "t", details: "d" })
    const id = created.body.action_uuid
    const byKey = await call(server.url, "POST", `/api/v1/actions/${id}/cosign`, { token: org.key })
    expect(byKey.status).toBe(401)
    const first = await call(server.url, "POST", `/api/v1/actions/${id}/cosign`, { token: org.token })
    expect(first.status).toBe(200)
    expect(first.body).toEqual(expect.objectContaining({ action_uuid: id, cosigner_email: org.email.toLowerCase() === org.email ? org.email : expect.any(String) }))
    const second = await call(server.url, "POST", `/api/v1/actions/${id}/cosign`, { token: org.token })
    expect(second.status).toBe(409)
    expect(second.body.code).toBe("ALREADY_AUTHORIZED")
    const detail = await call(server.url, "GET", `/api/v1/actions/${id}`, { token: org.key })
    expect(detail.body.authorizations).toHaveLength(1)
    expect(detail.body.authorizations[0].cosignature_uuid).toBe(first.body.cosignature_uuid)
  })

  it("places and releases a legal hold", async () => {
    const created = await authorize(org.key, { action_type: "t", details: "d" })
    const id = created.body.action_uuid
    const hold = await call(server.url, "POST", `/api/v1/actions/${id}/hold`, { token: org.key })
    expect(hold.status).toBe(200)
    expect(hold.body).toEqual(expect.objectContaining({ action_uuid: id, legal_hold: true }))
    expect((await call(server.url, "GET", `/api/v1/actions/${id}`, { token: org.key })).body.legal_hold).toBe(true)
    const release = await call(server.url, "DELETE", `/api/v1/actions/${id}/hold`, { token: org.key })
    expect(release.status).toBe(200)
    expect(release.body.legal_hold).toBe(false)
    expect((await call(server.url, "GET", `/api/v1/actions/${id}`, { token: org.key })).body.legal_hold).toBe(false)
  })

  it("walks parent links, and a child's receipt commits to its parent's payload_hash", async () => {
    const root = await authorize(org.key, { action_type: "plan", details: "root", agent_id: "chain-agent" })
    await notarize(org.key, root.body.action_uuid)
    const child = await authorize(org.key, { action_type: "step", details: "child", agent_id: "chain-agent", parent_action_uuid: root.body.action_uuid })
    expect(child.status).toBe(201)
    const grandchild = await authorize(org.key, { action_type: "step", details: "grandchild", parent_action_uuid: child.body.action_uuid })
    const chain = await call(server.url, "GET", `/api/v1/actions/${grandchild.body.action_uuid}/chain`, { token: org.key })
    expect(chain.status).toBe(200)
    expect(chain.body.chain.map((link: any) => link.action_uuid)).toEqual([grandchild.body.action_uuid, child.body.action_uuid, root.body.action_uuid])
    await notarize(org.key, child.body.action_uuid)
    const rootPayload = await verified(root.body.action_uuid)
    const childPayload = await verified(child.body.action_uuid)
    const rootReceipt = await call(server.url, "GET", `/api/v1/verify/action/${root.body.action_uuid}`)
    expect(childPayload.parent_payload_hash).toBe(rootReceipt.body.payload_hash)
    expect(childPayload.previous_payload_hash).toBe(rootReceipt.body.payload_hash)
    expect(childPayload.agent_sequence).toBe(rootPayload.agent_sequence + 1)
  })

  it("refuses a parent from another organization (404)", async () => {
    const foreign = await authorize(other.key, { action_type: "t", details: "d" })
    const reply = await authorize(org.key, { action_type: "t", details: "d", parent_action_uuid: foreign.body.action_uuid })
    expect(reply.status).toBe(404)
    expect(reply.body.code).toBe("NOT_FOUND")
  })
})

describe("idempotency", () => {
  it("replays the same body and refuses a different one", async () => {
    const body = { action_type: "t", details: "once", idempotency_key: "idem-1" }
    const first = await authorize(org.key, body)
    expect(first.status).toBe(201)
    const replay = await authorize(org.key, { details: "once", idempotency_key: "idem-1", action_type: "t" })
    expect(replay.status).toBe(201)
    expect(replay.body.action_uuid).toBe(first.body.action_uuid)
    const different = await authorize(org.key, { ...body, details: "twice" })
    expect(different.status).toBe(409)
    expect(different.body.code).toBe("DUPLICATE_REQUEST")
    // Keys belong to one organization.
    const elsewhere = await authorize(other.key, body)
    expect(elsewhere.status).toBe(201)
    expect(elsewhere.body.action_uuid).not.toBe(first.body.action_uuid)
  })

  it("creates one action from fifty parallel identical requests", async () => {
    const body = { action_type: "parallel", details: "fifty", agent_id: "idem-agent", idempotency_key: "idem-50" }
    const replies = await Promise.all(Array.from({ length: 50 }, () => authorize(org.key, body)))
    for (const reply of replies) expect([201, 409]).toContain(reply.status)
    const created = new Set(replies.filter((r) => r.status === 201).map((r) => r.body.action_uuid))
    expect(created.size).toBe(1)
    for (const reply of replies.filter((r) => r.status === 409)) expect(reply.body.code).toBe("DUPLICATE_REQUEST")
    const listed = await call(server.url, "GET", "/api/v1/actions?action_type=parallel", { token: org.key })
    expect(listed.body.pagination.total).toBe(1)
  })

  it("honours the Idempotency-Key header the published SDK sends: fifty parallel requests, one action", async () => {
    const body = { action_type: "header-parallel", details: "fifty", agent_id: "idem-agent" }
    const send = (key: string, extra: Record<string, unknown> = {}) =>
      call(server.url, "POST", "/api/v1/actions", { token: org.key, body: { ...body, ...extra }, headers: { "idempotency-key": key } })
    const replies = await Promise.all(Array.from({ length: 50 }, () => send("hdr-50")))
    for (const reply of replies) expect([201, 409]).toContain(reply.status)
    const created = new Set(replies.filter((r) => r.status === 201).map((r) => r.body.action_uuid))
    expect(created.size).toBe(1)
    const listed = await call(server.url, "GET", "/api/v1/actions?action_type=header-parallel", { token: org.key })
    expect(listed.body.pagination.total).toBe(1)
    // The header is the body's key: the same key in the body replays, a different body conflicts.
    const replay = await authorize(org.key, { ...body, idempotency_key: "hdr-50" })
    expect(replay.body.action_uuid).toEqual([...created][0])
    expect((await send("hdr-50", { details: "other" })).body.code).toBe("DUPLICATE_REQUEST")
    const mismatch = await send("hdr-a", { idempotency_key: "hdr-b" })
    expect(mismatch.status).toBe(422)
    expect(mismatch.body.code).toBe("VALIDATION_ERROR")
    expect((await send("x".repeat(256))).status).toBe(422)
  })
})

describe("a transition that dies", () => {
  it("answers 500 at once (the agent's actor does not retry it for ever) and the agent keeps working", async () => {
    const sql = (statement: string) => server.run(Effect.flatMap(Effect.service(SqlClient.SqlClient), (client) => client.unsafe(statement)))
    const first = await authorize(org.key, { action_type: "t", details: "d", agent_id: "dying-agent" })
    await sql("ALTER TABLE receipts RENAME TO receipts_moved")
    let failed: Awaited<ReturnType<typeof notarize>>
    const started = Date.now()
    try {
      failed = await notarize(org.key, first.body.action_uuid)
    } finally {
      await sql("ALTER TABLE receipts_moved RENAME TO receipts")
    }
    expect(failed.status).toBe(500)
    expect(Date.now() - started).toBeLessThan(5_000)
    // Nothing was half-done: the action is still authorized, and the same agent notarizes next.
    expect((await call(server.url, "GET", `/api/v1/actions/${first.body.action_uuid}`, { token: org.key })).body.status).toBe("authorized")
    const retried = await notarize(org.key, first.body.action_uuid)
    expect(retried.status).toBe(200)
    expect((await verified(first.body.action_uuid)).agent_sequence).toBe(1)
  })
})

describe("cross-organization isolation", () => {
  it("answers 404 to another organization on every route with an id", async () => {
    const created = await authorize(org.key, { action_type: "t", details: "d" })
    const id = created.body.action_uuid
    const pending = await pendingAction(org)
    const checks: Array<[string, string, string | undefined]> = [
      ["GET", `/api/v1/actions/${id}`, other.key],
      ["POST", `/api/v1/actions/${id}/notarize`, other.key],
      ["POST", `/api/v1/actions/${id}/cosign`, other.token],
      ["POST", `/api/v1/actions/${id}/hold`, other.key],
      ["DELETE", `/api/v1/actions/${id}/hold`, other.key],
      ["GET", `/api/v1/actions/${id}/chain`, other.key],
      ["POST", `/api/v1/actions/${pending.id}/dashboard-approve`, other.token],
      ["POST", `/api/v1/actions/${pending.id}/dashboard-deny`, other.token]
    ]
    for (const [method, path, token] of checks) {
      const reply = await call(server.url, method, path, { token, body: method === "POST" ? {} : undefined })
      expect([path, reply.status]).toEqual([path, 404])
    }
    // Untouched by the attempts.
    const detail = await call(server.url, "GET", `/api/v1/actions/${id}`, { token: org.key })
    expect(detail.body.status).toBe("authorized")
    expect(detail.body.legal_hold).toBe(false)
    expect((await call(server.url, "GET", `/api/v1/actions/${pending.id}`, { token: org.key })).body.status).toBe("pending_approval")
  })
})

describe("dashboard review", () => {
  it("answers stored details to the action's approvers signed in, nobody else", async () => {
    const org = await registerOrg(server.url, "Review Org")
    const reply = await call(server.url, "POST", "/api/v1/actions", { token: org.key, body: { action_type: "pay", details: "pay invoice 77", require_approval: true, store_details: true } })
    const id = reply.body.action_uuid
    const review = await call(server.url, "GET", `/api/v1/actions/${id}/dashboard-review`, { token: org.token })
    expect(review.status).toBe(200)
    expect(review.body).toMatchObject({ action_uuid: id, details: "pay invoice 77", status: "pending_approval" })
    // API keys never review (the agent's own key included); members outside the approvers cannot; other organizations get 404.
    expect((await call(server.url, "GET", `/api/v1/actions/${id}/dashboard-review`, { token: org.key })).status).toBe(401)
    const member = await addMember(server.url, org, "member")
    expect((await call(server.url, "GET", `/api/v1/actions/${id}/dashboard-review`, { token: member.token })).status).toBe(403)
    const other = await registerOrg(server.url, "Review Other")
    expect((await call(server.url, "GET", `/api/v1/actions/${id}/dashboard-review`, { token: other.token })).status).toBe(404)
    const hashOnly = await call(server.url, "POST", "/api/v1/actions", { token: org.key, body: { action_type: "pay", details: "not kept", require_approval: true } })
    expect((await call(server.url, "GET", `/api/v1/actions/${hashOnly.body.action_uuid}/dashboard-review`, { token: org.token })).body.details).toBeNull()
  })
})
