/** A receipt's content for tests that mint or build receipts directly: every field set, neutral values, `overrides` on top. */
import type { ReceiptContent } from "../../src/receipts/ports.js"

export const receiptContent = (overrides: Partial<ReceiptContent> = {}): ReceiptContent => ({
  receipt_status: "notarized",
  action_uuid: "act_1",
  org_uuid: "org_1",
  agent_id: null,
  agent_version: null,
  action_type: "t",
  action_details_hash: `sha256:${"00".repeat(32)}`,
  instruction_hash: null,
  model_id: null,
  model_version: null,
  outcome: "completed",
  outcome_hash: null,
  output_scan_flags: null,
  policy_uuid: null,
  approval: null,
  parent_payload_hash: null,
  agent_sequence: 1,
  previous_payload_hash: null,
  ...overrides
})
