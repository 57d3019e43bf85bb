/**
 * Four eyes (CONTRACT.md): a member never receives the approval code of, and can never approve,
 * deny or cosign, an action authorized with their own credential (API key or JWT), by any route.
 * When a policy demands approval, approvers named in the request join the organization's
 * approvers; when only the request asks for it, they replace them as before.
 */
import { describe, expect, it } from "vitest"
import { addMember, call, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { enableApprovalMail, useInbox } from "./support/mail.js"
import { useServer } from "./support/server.js"

const inbox = useInbox()
const server = useServer(() => ({ SMTP_URL: inbox.url }))

const team = useFixture(async () => {
  const owner = await registerOrg(server.url, "Four Eyes Org")
  await enableApprovalMail(server.url, owner)
  const member = await addMember(server.url, owner, "member")
  const colleague = await addMember(server.url, owner, "member")
  const policy = await call(server.url, "POST", "/api/v1/policies", {
    token: owner.key,
    body: { name: "wires need a human", mode: "rules", decision: "require_approval", conditions: [{ field: "action_type", op: "eq", value: "wire" }], activate: true }
  })
  expect(policy.status).toBe(201)
  return { owner, member, colleague }
})

const authorize = async (token: string, body: Record<string, unknown>) => {
  const reply = await call(server.url, "POST", "/api/v1/actions", { token, body: { details: "send 9,000 EUR to an account", ...body } })
  expect(reply.status, reply.text).toBe(201)
  expect(reply.body.status).toBe("pending_approval")
  return reply.body.action_uuid as string
}

/** Who got a personal code for the action, once the mails settle (the owner's arrives first or with the others). */
const codeHolders = async (actionUuid: string, expected: ReadonlyArray<string>) => {
  for (const email of expected) await inbox.grant(actionUuid, email)
  // Kept: a quiet spell for a code nobody expected to arrive (an absence has no event to wait for).
  await new Promise((resolve) => setTimeout(resolve, 300))
  return new Set(inbox.mails.filter((mail) => mail.text.includes(`/actions/${actionUuid}/approve?token=`)).flatMap((mail) => mail.to))
}

describe("four eyes", () => {
  it("a member naming themselves as approver past an admin's policy gets no code, and no route lets them decide or cosign", async () => {
    const { owner, member } = team
    const actionUuid = await authorize(member.key, { action_type: "wire", approvers: [member.email] })
    const holders = await codeHolders(actionUuid, [owner.email])
    expect(holders.has(owner.email.toLowerCase())).toBe(true)
    expect(holders.has(member.email.toLowerCase())).toBe(false)

    const asMember = (method: string, path: string) => call(server.url, method, path, { token: member.token })
    for (const [method, path] of [
      ["GET", `/api/v1/actions/${actionUuid}/dashboard-review`],
      ["POST", `/api/v1/actions/${actionUuid}/dashboard-approve`],
      ["POST", `/api/v1/actions/${actionUuid}/dashboard-deny?reason=mine`],
      ["POST", `/api/v1/actions/${actionUuid}/cosign`]
    ] as const) {
      const reply = await asMember(method, path)
      expect(reply.status, `${method} ${path}`).toBe(403)
      expect(reply.body.message).toMatch(/four eyes/i)
    }
    expect((await call(server.url, "GET", `/api/v1/actions/${actionUuid}`, { token: owner.key })).body.status).toBe("pending_approval")

    // The owner's own code decides it.
    const grant = await inbox.grant(actionUuid, owner.email)
    const confirmed = await call(server.url, "POST", `/api/v1/actions/approval/${grant.code}/confirm`, { body: { decision: "approve" } })
    expect(confirmed.status, confirmed.text).toBe(200)
    expect(confirmed.body.approver_email).toBe(owner.email.toLowerCase())
  })

  it("the same through the member's JWT, and when the member is one of the organization's default approvers", async () => {
    const { owner, member, colleague } = team
    const defaults = await call(server.url, "PUT", "/api/v1/team/default-approvers", { token: owner.token, body: { emails: [member.email, colleague.email] } })
    expect(defaults.status, defaults.text).toBe(200)
    try {
      const actionUuid = await authorize(member.token, { action_type: "wire" })
      const holders = await codeHolders(actionUuid, [colleague.email])
      expect([...holders]).toEqual([colleague.email.toLowerCase()])
      expect((await call(server.url, "POST", `/api/v1/actions/${actionUuid}/dashboard-approve`, { token: member.token })).status).toBe(403)
      // The colleague, a default approver, decides from the dashboard.
      const approved = await call(server.url, "POST", `/api/v1/actions/${actionUuid}/dashboard-approve`, { token: colleague.token })
      expect(approved.status, approved.text).toBe(200)
    } finally {
      await call(server.url, "PUT", "/api/v1/team/default-approvers", { token: owner.token, body: { emails: [] } })
    }
  })

  it("when a policy demands approval, named approvers join the organization's; when only the request asks, they replace them", async () => {
    const { owner, colleague } = team
    const byPolicy = await authorize(owner.key, { action_type: "wire", approvers: [colleague.email] })
    const policyHolders = await codeHolders(byPolicy, [owner.email, colleague.email])
    expect(policyHolders).toEqual(new Set([owner.email.toLowerCase(), colleague.email.toLowerCase()]))

    const byRequest = await authorize(owner.key, { action_type: "report", require_approval: true, approvers: [colleague.email] })
    const requestHolders = await codeHolders(byRequest, [colleague.email])
    expect(requestHolders).toEqual(new Set([colleague.email.toLowerCase()]))
  })

  it("a member asking for approval of their own action with only themselves named falls back to the organization's approvers", async () => {
    const { owner, member } = team
    const actionUuid = await authorize(member.key, { action_type: "report", require_approval: true, approvers: [member.email] })
    const holders = await codeHolders(actionUuid, [owner.email])
    expect(holders.has(member.email.toLowerCase())).toBe(false)
  })

  it("owners and admins may still approve what they authorized", async () => {
    const { owner } = team
    const actionUuid = await authorize(owner.key, { action_type: "wire" })
    const approved = await call(server.url, "POST", `/api/v1/actions/${actionUuid}/dashboard-approve`, { token: owner.token })
    expect(approved.status, approved.text).toBe(200)
  })
})
