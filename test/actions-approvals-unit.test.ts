/** Approval credentials, approver rules, idempotency digests and chain links, without a server. */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { mayApprove } from "../src/access/approvers.js"
import {
  actionApprovers,
  approvalCodeDigest,
  checkApprovalToken,
  newApprovalCode,
  normalizeApprovalCode,
  signApprovalToken
} from "../src/actions/approvals.js"
import { chainAgentId, DEFAULT_AGENT_ID, nextLink } from "../src/actions/chain.js"
import { requestDigest } from "../src/actions/idempotency.js"

const key = new Uint8Array(32).fill(7)

describe("approval codes", () => {
  it("are 10 Crockford base32 characters and survive how people retype them", () => {
    for (let i = 0; i < 200; i++) {
      const code = newApprovalCode()
      expect(code).toMatch(/^[0-9A-HJKMNP-TV-Z]{10}$/)
      const typed = `${code.slice(0, 5).toLowerCase()}-${code.slice(5)}`
      expect(approvalCodeDigest(key, typed)).toBe(approvalCodeDigest(key, code))
    }
    expect(normalizeApprovalCode("o1l-i")).toBe("0111")
    expect(approvalCodeDigest(key, "AAAAAAAAAA")).not.toBe(approvalCodeDigest(key, "AAAAAAAAAB"))
    // Keyed: without the server's key a digest cannot be recomputed from a guessed code.
    expect(approvalCodeDigest(new Uint8Array(32).fill(8), "AAAAAAAAAA")).not.toBe(approvalCodeDigest(key, "AAAAAAAAAA"))
  })
})

describe("legacy approval tokens", () => {
  const future = new Date(Date.now() + 3600_000)
  const grant = "apg_0123456789abcdefghijklmn"
  it("verify only for their action, grant and decision, and expire", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 40 }), fc.string({ minLength: 1, maxLength: 40 }), (action, otherAction) => {
        const token = signApprovalToken(key, action, grant, "approve", future)
        expect(checkApprovalToken(key, action, "approve", token)).toEqual({ result: "valid", grantId: grant })
        expect(checkApprovalToken(key, action, "deny", token).result).toBe("invalid")
        if (otherAction !== action) expect(checkApprovalToken(key, otherAction, "approve", token).result).toBe("invalid")
        expect(checkApprovalToken(new Uint8Array(32).fill(8), action, "approve", token).result).toBe("invalid")
      })
    )
    const past = signApprovalToken(key, "act_x", grant, "deny", new Date(Date.now() - 1000))
    expect(checkApprovalToken(key, "act_x", "deny", past).result).toBe("expired")
    const token = signApprovalToken(key, "act_x", grant, "approve", future)
    // Moving the expiry forward, or naming another grant, breaks the MAC.
    const [, seconds, mac] = token.split(".")
    expect(checkApprovalToken(key, "act_x", "approve", `${grant}.${Number(seconds) + 1000}.${mac}`).result).toBe("invalid")
    expect(checkApprovalToken(key, "act_x", "approve", `apg_${"z".repeat(24)}.${seconds}.${mac}`).result).toBe("invalid")
    expect(checkApprovalToken(key, "act_x", "approve", undefined).result).toBe("invalid")
    expect(checkApprovalToken(key, "act_x", "approve", "garbage").result).toBe("invalid")
  })
})

describe("who receives approval codes and decides (four eyes)", () => {
  const members = [
    { user_uuid: "u-owner", email: "Owner@x", role: "owner" },
    { user_uuid: "u-admin", email: "admin@x", role: "admin" },
    { user_uuid: "u-member", email: "member@x", role: "member" },
    { user_uuid: "u-other", email: "other@x", role: "member" }
  ]
  const byRequest = (approvers: Array<string> | null, authorized_by: string | null = null) => ({ approvers, approval_by_policy: false, authorized_by })
  const byPolicy = (approvers: Array<string> | null, authorized_by: string | null = null) => ({ approvers, approval_by_policy: true, authorized_by })

  it("when only the request asks: named approvers people vouched for, else the default approvers, else admins and owner", () => {
    expect(actionApprovers(byRequest(["member@x", "outsider@evil"]), [], members)).toEqual(["member@x"])
    expect(actionApprovers(byRequest(["partner@y"]), ["partner@y"], members)).toEqual(["partner@y"])
    // An agent naming only addresses nobody vouched for gets the usual approvers, never its own address.
    expect(actionApprovers(byRequest(["outsider@evil"]), ["partner@y"], members)).toEqual(["partner@y"])
    expect(actionApprovers(byRequest(["outsider@evil"]), [], members)).toEqual(["owner@x", "admin@x"])
    expect(actionApprovers(byRequest(null), [], members)).toEqual(["owner@x", "admin@x"])
  })

  it("when a policy demands it: the named approvers join the organization's, never replace them", () => {
    expect(actionApprovers(byPolicy(["other@x"]), [], members)).toEqual(["owner@x", "admin@x", "other@x"])
    expect(actionApprovers(byPolicy(["other@x", "outsider@evil"]), ["partner@y"], members)).toEqual(["partner@y", "other@x"])
    expect(actionApprovers(byPolicy(null), ["partner@y"], members)).toEqual(["partner@y"])
  })

  it("a member never approves their own action: naming themselves, or being a default approver, gives them nothing", () => {
    expect(actionApprovers(byPolicy(["member@x"], "u-member"), [], members)).toEqual(["owner@x", "admin@x"])
    expect(actionApprovers(byRequest(["member@x"], "u-member"), [], members)).toEqual(["owner@x", "admin@x"])
    expect(actionApprovers(byRequest(null, "u-member"), ["member@x", "other@x"], members)).toEqual(["other@x"])
    expect(actionApprovers(byRequest(null, "u-member"), ["member@x"], members)).toEqual(["owner@x", "admin@x"])
    // Owners and admins could change the policy anyway: their own actions stay theirs to approve.
    expect(actionApprovers(byRequest(["admin@x"], "u-admin"), [], members)).toEqual(["admin@x"])
  })

  it("never include an address that is neither a member nor a default approver, nor the authorizing member, and always someone", () => {
    fc.assert(
      fc.property(
        fc.array(fc.emailAddress(), { maxLength: 5 }),
        fc.array(fc.emailAddress(), { maxLength: 5 }),
        fc.array(fc.emailAddress(), { minLength: 1, maxLength: 5 }),
        fc.boolean(),
        fc.nat(5),
        (named, defaults, people, policy, authorizer) => {
          const roster = people.map((email, index) => ({ user_uuid: `u${index}`, email, role: index === 0 ? "owner" : "member" }))
          const vouched = new Set([...defaults, ...people].map((email) => email.toLowerCase()))
          const subject = { approvers: [...named, ...people.slice(1, 2)], approval_by_policy: policy, authorized_by: `u${authorizer}` }
          const chosen = actionApprovers(subject, [...defaults, ...people.slice(1, 2)], roster)
          for (const email of chosen) expect(vouched.has(email)).toBe(true)
          const self = roster[authorizer]
          if (self !== undefined && self.role === "member" && self.email.toLowerCase() !== roster[0]!.email.toLowerCase()) {
            expect(chosen).not.toContain(self.email.toLowerCase())
          }
          expect(chosen.length).toBeGreaterThan(0)
        }
      )
    )
  })
})

describe("who may approve", () => {
  it("admins and owners always; members when the list names them", () => {
    expect(mayApprove({ role: "admin", email: "a@x" }, [])).toBe(true)
    expect(mayApprove({ role: "owner", email: "o@x" }, ["z@x"])).toBe(true)
    expect(mayApprove({ role: "member", email: "M@x" }, ["m@x"])).toBe(true)
    expect(mayApprove({ role: "member", email: "q@x" }, ["m@x"])).toBe(false)
  })
})

describe("idempotency digests", () => {
  it("ignore key order and the idempotency key, and see every other change", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 })), fc.string(), (body, idemKey) => {
        const reversed = Object.fromEntries(Object.entries(body).reverse())
        expect(requestDigest({ ...reversed, idempotency_key: idemKey })).toBe(requestDigest(body))
        expect(requestDigest({ ...body, __extra_marker: 1 })).not.toBe(requestDigest(body))
      })
    )
  })
})

describe("per-agent chain links", () => {
  it("number links from 1 with a null first previous hash, and give agentless actions one default chain", () => {
    expect(nextLink({ lastSequence: 0, lastPayloadHash: null })).toEqual({ agent_sequence: 1, previous_payload_hash: null })
    expect(nextLink({ lastSequence: 4, lastPayloadHash: "sha256:aa" })).toEqual({ agent_sequence: 5, previous_payload_hash: "sha256:aa" })
    expect(chainAgentId(null)).toBe(DEFAULT_AGENT_ID)
  })
})
