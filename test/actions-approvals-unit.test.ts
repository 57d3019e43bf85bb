/** Approval credentials, approver rules, idempotency digests and chain links, without a server. */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  approvalCodeHash,
  checkApprovalToken,
  mayApprove,
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
      expect(approvalCodeHash(typed)).toBe(approvalCodeHash(code))
    }
    expect(normalizeApprovalCode("o1l-i")).toBe("0111")
    expect(approvalCodeHash("AAAAAAAAAA")).not.toBe(approvalCodeHash("AAAAAAAAAB"))
  })
})

describe("legacy approval tokens", () => {
  const future = new Date(Date.now() + 3600_000)
  it("verify only for their action and decision, and expire", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 40 }), fc.string({ minLength: 1, maxLength: 40 }), (action, otherAction) => {
        const token = signApprovalToken(key, action, "approve", future)
        expect(checkApprovalToken(key, action, "approve", token)).toBe("valid")
        expect(checkApprovalToken(key, action, "deny", token)).toBe("invalid")
        if (otherAction !== action) expect(checkApprovalToken(key, otherAction, "approve", token)).toBe("invalid")
        expect(checkApprovalToken(new Uint8Array(32).fill(8), action, "approve", token)).toBe("invalid")
      })
    )
    const past = signApprovalToken(key, "act_x", "deny", new Date(Date.now() - 1000))
    expect(checkApprovalToken(key, "act_x", "deny", past)).toBe("expired")
    const token = signApprovalToken(key, "act_x", "approve", future)
    // Moving the expiry forward breaks the MAC.
    const [seconds, mac] = token.split(".")
    expect(checkApprovalToken(key, "act_x", "approve", `${Number(seconds) + 1000}.${mac}`)).toBe("invalid")
    expect(checkApprovalToken(key, "act_x", "approve", undefined)).toBe("invalid")
    expect(checkApprovalToken(key, "act_x", "approve", "garbage")).toBe("invalid")
  })
})

describe("who may approve", () => {
  it("admins always; otherwise the action's list replaces the default list", () => {
    expect(mayApprove({ role: "admin", email: "a@x" }, [], [])).toBe(true)
    expect(mayApprove({ role: "owner", email: "o@x" }, ["z@x"], [])).toBe(true)
    expect(mayApprove({ role: "member", email: "M@x" }, null, ["m@x"])).toBe(true)
    expect(mayApprove({ role: "member", email: "m@x" }, ["z@x"], ["m@x"])).toBe(false)
    expect(mayApprove({ role: "member", email: "z@x" }, ["z@x"], ["m@x"])).toBe(true)
    expect(mayApprove({ role: "member", email: "q@x" }, null, ["m@x"])).toBe(false)
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
