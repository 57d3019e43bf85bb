/**
 * The action state table as a property: random sequences of authorize,
 * approve, deny (by code, legacy token or dashboard), notarize and expiry never
 * take an action along an edge the table forbids, every answer agrees with the
 * state it acted on, and every terminal action has exactly one receipt — valid
 * under the portable verifier and linked into its agent's unbroken chain.
 */
import fc from "fast-check"
import { beforeAll, describe, expect, it } from "vitest"
import { verifyReceipt } from "../protocol/verifier/index.js"
import { call, type Org, registerOrg } from "./support/client.js"
import { eventually } from "./support/eventually.js"
import { enableApprovalMail, type Grant, useInbox } from "./support/mail.js"
import { useServer } from "./support/server.js"

const TTL_MS = 1500

const inbox = useInbox()
// A short approval lifetime and a fast expiry sweep.
const server = useServer(() => ({ APPROVAL_TTL_MS: String(TTL_MS), APPROVAL_SWEEP_MS: "100", SMTP_URL: inbox.url }))
let org: Org

beforeAll(async () => {
  org = await registerOrg(server.url, "States Org")
  await enableApprovalMail(server.url, org)
  const policy = await call(server.url, "POST", "/api/v1/policies", {
    token: org.key,
    body: { name: "forbidden", mode: "rules", decision: "deny", conditions: [{ field: "action_type", op: "eq", value: "forbidden" }], activate: true }
  })
  expect(policy.status).toBe(201)
}, 60_000)

const TERMINAL = new Set(["notarized", "failed", "denied_by_policy", "denied_by_human"])
const ALLOWED: Record<string, ReadonlyArray<string>> = {
  authorized: ["notarized", "failed"],
  pending_approval: ["approved", "denied_by_human"],
  approved: ["notarized", "failed"],
  notarized: [],
  failed: [],
  denied_by_policy: [],
  denied_by_human: []
}
const RECEIPT_STATUS: Record<string, string> = {
  notarized: "notarized",
  failed: "failed",
  denied_by_policy: "denied",
  denied_by_human: "denied_by_human"
}

type Op =
  | { kind: "authorize"; mode: "plain" | "approval" | "forbidden" }
  | { kind: "approve" | "deny"; target: number; via: "code" | "token" | "dashboard" }
  | { kind: "notarize"; target: number; outcome: "completed" | "failed" }
  | { kind: "wait" }

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("authorize" as const), mode: fc.constantFrom("plain" as const, "approval" as const, "forbidden" as const) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constantFrom("approve" as const, "deny" as const), target: fc.nat(20), via: fc.constantFrom("code" as const, "token" as const, "dashboard" as const) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("notarize" as const), target: fc.nat(20), outcome: fc.constantFrom("completed" as const, "failed" as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("wait" as const) }) }
)

const statusOf = async (id: string): Promise<string> => {
  const reply = await call(server.url, "GET", `/api/v1/actions/${id}`, { token: org.key })
  expect(reply.status).toBe(200)
  return reply.body.status
}

/**
 * The owner's grant for an action, from their mailbox. None is mailed when the
 * action was resolved or expired before the announcement went out; then the
 * action must no longer be pending.
 */
const grants = new Map<string, Grant | null>()
const grantOf = async (id: string): Promise<Grant | null> => {
  if (!grants.has(id)) {
    const grant = await inbox.grant(id, org.email).catch(() => null)
    if (grant === null) expect(await statusOf(id)).not.toBe("pending_approval")
    grants.set(id, grant)
  }
  return grants.get(id)!
}

/** undefined: no credential was ever mailed for this action (it stopped pending first). */
const decide = async (id: string, kind: "approve" | "deny", via: "code" | "token" | "dashboard") => {
  if (via === "dashboard") return call(server.url, "POST", `/api/v1/actions/${id}/dashboard-${kind}`, { token: org.token })
  const grant = await grantOf(id)
  if (grant === null) return undefined
  if (via === "code") return call(server.url, "POST", `/api/v1/actions/approval/${grant.code}/confirm`, { body: { decision: kind } })
  const url = new URL(kind === "approve" ? grant.approve_url : grant.deny_url)
  return call(server.url, "POST", url.pathname + url.search)
}

let run = 0

describe("action state table", () => {
  it("never takes a forbidden edge, and every terminal action has exactly one valid chained receipt", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 12 }), async (ops) => {
        const agent = `prop-agent-${++run}`
        const actions: Array<{ id: string; pendingOnce: boolean; history: Array<string> }> = []
        let waited = false
        for (const op of ops) {
          if (op.kind === "authorize") {
            const action_type = op.mode === "forbidden" ? "forbidden" : "task"
            const reply = await call(server.url, "POST", "/api/v1/actions", {
              token: org.key,
              body: { action_type, details: `d${actions.length}`, agent_id: agent, instruction_hash: "sha256:00", require_approval: op.mode === "approval" }
            })
            if (op.mode === "forbidden") {
              expect(reply.status).toBe(403)
              expect(reply.body.code).toBe("POLICY_DENIED")
              actions.push({ id: reply.body.details.action_uuid, pendingOnce: false, history: ["denied_by_policy"] })
            } else {
              expect(reply.status).toBe(201)
              expect(reply.body.status).toBe(op.mode === "approval" ? "pending_approval" : "authorized")
              actions.push({ id: reply.body.action_uuid, pendingOnce: op.mode === "approval", history: [reply.body.status] })
            }
            continue
          }
          if (op.kind === "wait") {
            // Let pending approvals pass their lifetime (once per run keeps the suite fast): until the expiry sweep
            // has resolved every one still pending (at once when none is).
            if (!waited) {
              await eventually(
                async () => {
                  for (const action of actions) if (action.pendingOnce && (await statusOf(action.id)) === "pending_approval") return false
                  return true
                },
                { timeoutMs: TTL_MS + 10_000, intervalMs: 100 }
              )
            }
            waited = true
            for (const action of actions) action.history.push(await statusOf(action.id))
            continue
          }
          if (actions.length === 0) continue
          const action = actions[op.target % actions.length]!
          if (op.kind === "notarize") {
            const reply = await call(server.url, "POST", `/api/v1/actions/${action.id}/notarize`, { token: org.key, body: { outcome: op.outcome } })
            const after = await statusOf(action.id)
            if (reply.status === 200) {
              expect(after).toBe(op.outcome === "completed" ? "notarized" : "failed")
              expect(["authorized", "approved"]).toContain(action.history.at(-1))
            } else {
              expect(reply.status).toBe(409)
              expect(reply.body.code).toBe("INVALID_ACTION_STATE")
              expect(["authorized", "approved"]).not.toContain(after)
            }
            action.history.push(after)
            continue
          }
          if (!action.pendingOnce) {
            // Never pending: no code or token exists; the dashboard answers ALREADY_RESOLVED.
            const reply = await call(server.url, "POST", `/api/v1/actions/${action.id}/dashboard-${op.kind}`, { token: org.token })
            expect(reply.status).toBe(409)
            expect(reply.body.code).toBe("ALREADY_RESOLVED")
            action.history.push(await statusOf(action.id))
            continue
          }
          const reply = await decide(action.id, op.kind, op.via)
          const after = await statusOf(action.id)
          if (reply === undefined) {
            expect(after).not.toBe("pending_approval")
          } else if (reply.status === 200) {
            expect(reply.body.status).toBe(op.kind === "approve" ? "approved" : "denied_by_human")
            expect(after).toBe(reply.body.status)
          } else {
            expect(op.via === "code" ? [409, 410] : op.via === "token" ? [409, 410] : [409]).toContain(reply.status)
            expect(after).not.toBe("pending_approval")
          }
          action.history.push(after)
        }

        // Every observed step follows the table (or stays put).
        for (const action of actions) {
          for (let i = 1; i < action.history.length; i++) {
            const [from, to] = [action.history[i - 1]!, action.history[i]!]
            if (from !== to) expect([from, ALLOWED[from]]).toEqual([from, expect.arrayContaining([to])])
          }
        }

        // Terminal ⇔ one receipt; the receipts of the agent form an unbroken chain. A sentinel receipt
        // closes the chain first, and the actions are read after it: a pending approval may expire at
        // any moment on a loaded machine, but one that expired before the sentinel is terminal by the
        // time it is read, so every receipt up to the sentinel's sequence is seen (an extra, unseen
        // receipt would break the links or the count).
        const sentinel = await call(server.url, "POST", "/api/v1/actions", { token: org.key, body: { action_type: "task", details: "sentinel", agent_id: agent, instruction_hash: "sha256:00" } })
        await call(server.url, "POST", `/api/v1/actions/${sentinel.body.action_uuid}/notarize`, { token: org.key, body: {} })
        const last = await call(server.url, "GET", `/api/v1/verify/action/${sentinel.body.action_uuid}`)
        const lastSigned = typeof last.body.signed_payload === "string" ? JSON.parse(last.body.signed_payload) : last.body.signed_payload
        const seen: Array<{ sequence: number; previous: string | null; hash: string }> = [
          { sequence: lastSigned.agent_sequence, previous: lastSigned.previous_payload_hash, hash: last.body.payload_hash }
        ]
        for (const action of actions) {
          const detail = await call(server.url, "GET", `/api/v1/actions/${action.id}`, { token: org.key })
          const status = detail.body.status as string
          if (!TERMINAL.has(status)) {
            expect(detail.body.receipt).toBeNull()
            continue
          }
          expect(detail.body.receipt).not.toBeNull()
          const verify = await call(server.url, "GET", `/api/v1/verify/action/${action.id}`)
          const signed = typeof verify.body.signed_payload === "string" ? JSON.parse(verify.body.signed_payload) : verify.body.signed_payload
          const check = verifyReceipt({ signed_payload: signed, payload_hash: verify.body.payload_hash, signature: verify.body.signature, public_key: verify.body.public_key })
          expect(check.errors).toEqual([])
          expect(signed.receipt_status).toBe(RECEIPT_STATUS[status])
          expect(verify.body.receipt_uuid).toBe(detail.body.receipt.receipt_uuid)
          seen.push({ sequence: signed.agent_sequence, previous: signed.previous_payload_hash, hash: verify.body.payload_hash })
        }
        // Receipts made after the sentinel (expiries while the actions were read) are past its sequence.
        const receipts = seen.filter((r) => r.sequence <= lastSigned.agent_sequence).sort((a, b) => a.sequence - b.sequence)
        expect(receipts.map((r) => r.sequence)).toEqual(receipts.map((_, i) => i + 1))
        for (let i = 0; i < receipts.length; i++) expect(receipts[i]!.previous).toBe(i === 0 ? null : receipts[i - 1]!.hash)
      }),
      { numRuns: 12 }
    )
  }, 300_000)
})

describe("expiry of pending approvals", () => {
  it("turns an unanswered approval into denied_by_human (expired) with a receipt, and retires its code", async () => {
    const created = await call(server.url, "POST", "/api/v1/actions", {
      token: org.key,
      body: { action_type: "task", details: "waits forever", agent_id: "expiry-agent", require_approval: true }
    })
    expect(created.status).toBe(201)
    const id = created.body.action_uuid as string
    const grant = await inbox.grant(id, org.email)
    const pending = await call(server.url, "GET", `/api/v1/actions/${id}`, { token: org.key })
    expect(Date.parse(pending.body.approval_expires_at) - Date.parse(created.body.created_at)).toBeLessThanOrEqual(TTL_MS + 50)
    const deadline = Date.now() + 10_000
    let detail = await call(server.url, "GET", `/api/v1/actions/${id}`, { token: org.key })
    while (detail.body.status === "pending_approval" && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      detail = await call(server.url, "GET", `/api/v1/actions/${id}`, { token: org.key })
    }
    expect(detail.body.status).toBe("denied_by_human")
    expect(detail.body.denial_reason).toBe("expired")
    expect(detail.body.receipt).not.toBeNull()
    const verify = await call(server.url, "GET", `/api/v1/verify/action/${id}`)
    const signed = typeof verify.body.signed_payload === "string" ? JSON.parse(verify.body.signed_payload) : verify.body.signed_payload
    expect(signed.receipt_status).toBe("denied_by_human")
    expect(signed.approval).toEqual(expect.objectContaining({ decision: "denied", via: "expiry", reason: "expired" }))
    const late = await call(server.url, "POST", `/api/v1/actions/approval/${grant.code}/confirm`, { body: { decision: "approve" } })
    expect(late.status).toBe(410)
    expect(late.body.code).toBe("CODE_EXPIRED")
  }, 30_000)
})
