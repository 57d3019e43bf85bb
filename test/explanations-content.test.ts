/**
 * The explanation's content built from stored rows (src/explanations/content.ts), for the cases the
 * end-to-end tests cannot reach quickly: an approval that expired, an output scan that flagged the
 * outcome, a recorded chain that is empty (one inferred entry), and time order across approvals and cosignatures.
 */
import { describe, expect, it } from "vitest"
import { approvalChain, explanationContent, policyChain } from "../src/explanations/content.js"
import type { ExplainedRow } from "../src/explanations/store.js"

const row = (overrides: Partial<ExplainedRow> = {}): ExplainedRow => ({
  action_uuid: "act_1",
  org_uuid: "org_1",
  agent_id: "agent",
  agent_version: null,
  action_type: "payment",
  model_id: null,
  model_version: null,
  instruction_hash: null,
  action_details_hash: "sha256:00",
  outcome_hash: null,
  parent_action_uuid: null,
  status: "authorized",
  require_approval: false,
  policy_uuid: null,
  policy_name: null,
  policy_mode: null,
  approved_by: null,
  approved_at: null,
  approval_via: null,
  denial_reason: null,
  output_scan_flags: null,
  policy_evaluations: null,
  created_at: "2026-11-01T10:00:00.000Z",
  ...overrides
})

describe("explanation content", () => {
  it("an expired approval is a denial with channel expiry and no e-mail", () => {
    const expired = row({ status: "denied_by_human", require_approval: true, approval_via: "expiry", denial_reason: "expired" })
    const history = [
      { status: "pending_approval", changed_at: "2026-11-01T10:00:00.000Z" },
      { status: "denied_by_human", changed_at: "2026-11-04T10:00:00.000Z" }
    ]
    expect(approvalChain(expired, history, [])).toEqual([{ kind: "denial", email: null, channel: "expiry", reason: "expired", at: "2026-11-04T10:00:00.000Z" }])
    expect(policyChain(expired, history)).toEqual([expect.objectContaining({ decision: "require_approval", evidence_quality: "inferred" })])
  })

  it("approvals and cosignatures come in time order", () => {
    const approved = row({ status: "notarized", approved_by: "boss@example.test", approved_at: "2026-11-01T11:00:00.000Z", approval_via: "code" })
    const history = [
      { status: "pending_approval", changed_at: "2026-11-01T10:00:00.000Z" },
      { status: "approved", changed_at: "2026-11-01T11:00:00.000Z" },
      { status: "notarized", changed_at: "2026-11-01T12:00:00.000Z" }
    ]
    const chain = approvalChain(approved, history, [{ email: "early@example.test", at: "2026-11-01T10:30:00.000Z" }, { email: "late@example.test", at: "2026-11-01T11:30:00.000Z" }])
    expect(chain.map((entry) => [entry.kind, entry.email, entry.channel])).toEqual([
      ["cosignature", "early@example.test", "dashboard"],
      ["approval", "boss@example.test", "code"],
      ["cosignature", "late@example.test", "dashboard"]
    ])
  })

  it("an empty recorded chain gets the one inferred entry; a flagged output adds a recorded output_scan entry", () => {
    const flagged = row({ status: "notarized", policy_evaluations: { v: 1, at: "2026-11-01T10:00:00.000Z", steps: [] }, output_scan_flags: [{ entity_type: "EMAIL" }, { entity_type: "EMAIL" }] })
    const history = [{ status: "notarized", changed_at: "2026-11-01T12:00:00.000Z" }]
    const noPolicy = row({ policy_evaluations: { v: 1, at: "2026-11-01T10:00:00.000Z", steps: [] } })
    const inferred = {
      order: 1,
      policy_uuid: null,
      policy_name: null,
      mode: null,
      decision: "allow",
      confidence: null,
      reasoning: "no active policy applied to this action",
      model_votes: null,
      evaluated_at: noPolicy.created_at,
      evidence_quality: "inferred"
    }
    expect(policyChain(noPolicy, [])).toEqual([inferred])
    expect(policyChain(row({ policy_evaluations: { v: 1, at: "2026-11-01T10:00:00.000Z", steps: [] }, require_approval: true }), [])).toEqual([
      { ...inferred, decision: "require_approval" }
    ])
    expect(policyChain(flagged, history)).toEqual([
      { ...inferred, evaluated_at: flagged.created_at },
      {
        order: 2,
        policy_uuid: null,
        policy_name: "output policy",
        mode: "output_scan",
        decision: "allow",
        confidence: 1,
        reasoning: "output scan flagged EMAIL; the outcome was recorded",
        model_votes: null,
        evaluated_at: "2026-11-01T12:00:00.000Z",
        evidence_quality: "recorded"
      }
    ])
  })

  it("holds only JSON-stable values: a non-finite stored confidence becomes null", () => {
    const stored = { v: 1, at: "2026-11-01T10:00:00.000Z", steps: [["pol_1", "p", "ai", "deny", Number.POSITIVE_INFINITY, "r", null]] }
    const content = explanationContent(row({ policy_evaluations: stored }), [], [], undefined, "http://x/verify")
    expect(content.policy_chain[0]!.confidence).toBeNull()
    expect(JSON.parse(JSON.stringify(content))).toEqual(content)
    expect(content.receipt).toBeNull()
  })
})
