/**
 * The five signed keys of an explanation, built from what the service stored about the action
 * (pure: the same rows give the same content, so an unchanged action keeps its content_hash).
 * Signed content holds only strings, booleans, null, safe integers and finite numbers.
 */
import type { ApprovalChainEntry, ExplanationContent, PolicyChainEntry } from "../../protocol/explanations.js"
import { decodeEvaluations, inferredDecision } from "../policies/recorded.js"
import type { CosignatureRow, ExplainedRow, ReceiptRow, StatusChange } from "./store.js"

export const REGULATION = {
  framework: "eu_ai_act",
  instrument: "Regulation (EU) 2024/1689",
  articles: ["13", "14", "86"],
  explanation_version: "1.0"
} as const

const CHANNELS = new Set(["code", "token", "dashboard", "expiry"])
const MODES = new Set(["rules", "ai", "consensus", "content_scan"])

const modeOf = (value: unknown): PolicyChainEntry["mode"] => (typeof value === "string" && MODES.has(value) ? (value as PolicyChainEntry["mode"]) : null)

/** Whether a human was asked: the action waited for approval at some point. */
const wentToApproval = (row: ExplainedRow, history: ReadonlyArray<StatusChange>): boolean =>
  row.require_approval || row.approved_at !== null || row.approval_via !== null || history.some((change) => change.status === "pending_approval")

/** One entry inferred from the outcome for actions authorized before evaluations were recorded (CONTRACT). */
const inferredEntry = (row: ExplainedRow, history: ReadonlyArray<StatusChange>): PolicyChainEntry => {
  const decision = inferredDecision(row.status, wentToApproval(row, history))
  return {
    order: 1,
    policy_uuid: row.policy_uuid,
    policy_name: row.policy_uuid === null ? null : row.policy_name,
    mode: row.policy_uuid === null ? null : modeOf(row.policy_mode),
    decision,
    confidence: null,
    reasoning: decision === "deny" ? row.denial_reason : null,
    model_votes: null,
    evaluated_at: row.created_at,
    evidence_quality: "inferred"
  }
}

const flagNames = (flags: ReadonlyArray<Record<string, unknown>>): string =>
  [...new Set(flags.map((flag) => String(flag.entity_type ?? flag.type ?? "finding")))].join(", ")

/** The notarize-time output scan: it let the outcome through (a blocked outcome is refused and never recorded). */
const outputScanEntry = (row: ExplainedRow, history: ReadonlyArray<StatusChange>, order: number): PolicyChainEntry | undefined => {
  const flags = row.output_scan_flags
  if (flags === null || flags.length === 0) return undefined
  const at = history.find((change) => change.status === "notarized" || change.status === "failed")?.changed_at ?? null
  return {
    order,
    policy_uuid: null,
    policy_name: "output policy",
    mode: "output_scan",
    decision: "allow",
    confidence: 1,
    reasoning: `output scan flagged ${flagNames(flags)}; the outcome was recorded`,
    model_votes: null,
    evaluated_at: at,
    evidence_quality: "recorded"
  }
}

export const policyChain = (row: ExplainedRow, history: ReadonlyArray<StatusChange>): Array<PolicyChainEntry> => {
  const recorded = decodeEvaluations(row.policy_evaluations)
  // No policy applied (recorded, but empty): CONTRACT's one inferred entry still says how the
  // gateway decided, so a chain is never empty.
  const chain: Array<PolicyChainEntry> =
    recorded === undefined
      ? [inferredEntry(row, history)]
      : recorded.length === 0
        ? [{ ...inferredEntry(row, history), reasoning: "no active policy applied to this action" }]
        : recorded.map((entry, index) => ({ order: index + 1, ...entry, evidence_quality: "recorded" }))
  const scan = outputScanEntry(row, history, chain.length + 1)
  return scan === undefined ? chain : [...chain, scan]
}

const channelOf = (via: string | null): ApprovalChainEntry["channel"] => (via !== null && CHANNELS.has(via) ? (via as ApprovalChainEntry["channel"]) : "dashboard")

/**
 * Approvals, denials (an expiry is a denial with channel `expiry` and no e-mail) and
 * cosignatures, in time order. Only who, how and when the service recorded; never a code or token.
 */
export const approvalChain = (row: ExplainedRow, history: ReadonlyArray<StatusChange>, cosignatures: ReadonlyArray<CosignatureRow>): Array<ApprovalChainEntry> => {
  const entries: Array<ApprovalChainEntry> = []
  const changedAt = (status: string) => history.find((change) => change.status === status)?.changed_at
  const approvedAt = changedAt("approved")
  if (approvedAt !== undefined) {
    entries.push({ kind: "approval", email: row.approved_by, channel: channelOf(row.approval_via), reason: null, at: row.approved_at ?? approvedAt })
  }
  const deniedAt = changedAt("denied_by_human")
  if (row.status === "denied_by_human" || deniedAt !== undefined) {
    const expiry = row.approval_via === "expiry"
    entries.push({
      kind: "denial",
      email: expiry ? null : row.approved_by,
      channel: expiry ? "expiry" : channelOf(row.approval_via),
      reason: row.denial_reason,
      at: (expiry ? deniedAt : row.approved_at ?? deniedAt) ?? row.created_at
    })
  }
  for (const cosignature of cosignatures) entries.push({ kind: "cosignature", email: cosignature.email, channel: "dashboard", reason: null, at: cosignature.at })
  // Stable: equal instants keep approval/denial before cosignatures.
  return entries.map((entry, index) => [entry, index] as const).sort(([a, i], [b, j]) => (a.at < b.at ? -1 : a.at > b.at ? 1 : i - j)).map(([entry]) => entry)
}

export const explanationContent = (
  row: ExplainedRow,
  history: ReadonlyArray<StatusChange>,
  cosignatures: ReadonlyArray<CosignatureRow>,
  receipt: ReceiptRow | undefined,
  verifyUrl: string
): ExplanationContent => ({
  action: {
    action_uuid: row.action_uuid,
    org_uuid: row.org_uuid,
    agent_id: row.agent_id,
    agent_version: row.agent_version,
    action_type: row.action_type,
    model_id: row.model_id,
    model_version: row.model_version,
    instruction_hash: row.instruction_hash,
    action_details_hash: row.action_details_hash,
    outcome_hash: row.outcome_hash,
    parent_action_uuid: row.parent_action_uuid,
    status: row.status,
    created_at: row.created_at
  },
  policy_chain: policyChain(row, history),
  approval_chain: approvalChain(row, history, cosignatures),
  receipt:
    receipt === undefined
      ? null
      : {
          receipt_uuid: receipt.receipt_uuid,
          receipt_status: receipt.receipt_status,
          receipt_version: receipt.receipt_version,
          payload_hash: receipt.payload_hash,
          signature: receipt.signature,
          public_key_id: receipt.public_key_id,
          timestamp_token_present: receipt.timestamp_token_present,
          verify_url: verifyUrl,
          created_at: receipt.created_at
        },
  regulation: { ...REGULATION, articles: [...REGULATION.articles] }
})
