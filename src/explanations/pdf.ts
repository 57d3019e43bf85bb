/**
 * The printed explanation: the same content as the signed JSON, with the envelope's content_hash,
 * signature and signing key id so a reader can tie the paper to the JSON. The PDF itself is not
 * signed (CONTRACT.md); its date is the action's latest recorded change, never the clock.
 */
import type { Explanation } from "../../protocol/explanations.js"
import type { PdfBlock, PdfDocumentModel } from "../platform/pdf.js"

/** The latest instant the explanation's content names: the PDF's date, stable for an unchanged action. */
export const latestChange = (explanation: Explanation): Date => {
  const instants = [
    explanation.action.created_at,
    ...explanation.policy_chain.map((entry) => entry.evaluated_at),
    ...explanation.approval_chain.map((entry) => entry.at),
    explanation.receipt?.created_at ?? null
  ]
  let latest = 0
  for (const instant of instants) {
    const ms = instant === null ? Number.NaN : Date.parse(instant)
    if (!Number.isNaN(ms) && ms > latest) latest = ms
  }
  return new Date(latest)
}

const confidenceText = (value: number | null): string => (value === null ? "—" : value.toFixed(2))

export const explanationPdfModel = (explanation: Explanation): PdfDocumentModel => {
  const { action, receipt, regulation, _envelope: envelope } = explanation
  const blocks: Array<PdfBlock> = [
    { kind: "heading", text: "Action" },
    {
      kind: "fields",
      rows: [
        ["Action", action.action_uuid],
        ["Organization", action.org_uuid],
        ["Action type", action.action_type],
        ["Status", action.status],
        ["Agent", action.agent_id],
        ["Agent version", action.agent_version],
        ["Model", action.model_id],
        ["Model version", action.model_version],
        ["Parent action", action.parent_action_uuid],
        ["Created", action.created_at]
      ]
    },
    { kind: "code", text: `details ${action.action_details_hash}\ninstruction ${action.instruction_hash ?? "—"}\noutcome ${action.outcome_hash ?? "—"}` },
    { kind: "heading", text: "Policy decisions" },
    explanation.policy_chain.length === 0
      ? { kind: "paragraph", text: "No policy applied to this action." }
      : {
          kind: "table",
          columns: ["#", "Policy", "Mode", "Decision", "Confidence", "Evidence"],
          rows: explanation.policy_chain.map((entry) => [
            String(entry.order),
            entry.policy_name ?? entry.policy_uuid ?? "—",
            entry.mode ?? "—",
            entry.decision,
            confidenceText(entry.confidence),
            entry.evidence_quality
          ])
        },
    ...explanation.policy_chain.flatMap((entry): Array<PdfBlock> =>
      entry.reasoning === null ? [] : [{ kind: "paragraph", text: `${entry.order}. ${entry.reasoning}` }]
    ),
    { kind: "heading", text: "Human oversight" },
    explanation.approval_chain.length === 0
      ? { kind: "paragraph", text: "No human approval, denial or cosignature was recorded." }
      : {
          kind: "table",
          columns: ["When", "Kind", "Who", "Channel", "Reason"],
          rows: explanation.approval_chain.map((entry) => [entry.at, entry.kind, entry.email ?? "—", entry.channel, entry.reason ?? "—"])
        },
    { kind: "heading", text: "Receipt" },
    receipt === null
      ? { kind: "paragraph", text: "No receipt yet: the action has not reached a terminal state." }
      : {
          kind: "fields",
          rows: [
            ["Receipt", receipt.receipt_uuid],
            ["Status", receipt.receipt_status],
            ["Version", receipt.receipt_version],
            ["Key", receipt.public_key_id],
            ["Timestamp token", receipt.timestamp_token_present],
            ["Verify at", receipt.verify_url],
            ["Created", receipt.created_at]
          ]
        },
    ...(receipt === null ? [] : [{ kind: "code", text: `${receipt.payload_hash}\n${receipt.signature}` } satisfies PdfBlock]),
    { kind: "heading", text: "Regulation" },
    {
      kind: "paragraph",
      text: `${regulation.instrument} (EU AI Act), Articles ${regulation.articles.join(", ")}; explanation version ${regulation.explanation_version}.`
    },
    { kind: "heading", text: "Signature" },
    {
      kind: "paragraph",
      text: "The JSON explanation is signed: content_hash is sha256 of the RFC 8785 canonical form of its five content keys, signed with Ed25519 by the receipt key below (published in /api/v1/.well-known/jwks.json). This PDF is a print of it and is not signed itself."
    },
    { kind: "fields", rows: [["Algorithm", envelope.alg], ["Signing key", envelope.signing_key_id]] },
    { kind: "code", text: `content_hash ${envelope.content_hash}` },
    { kind: "code", text: `signature ${envelope.signature}` }
  ]
  return {
    title: "Explanation of an AI agent action",
    subtitle: `${action.action_type} · ${action.action_uuid}`,
    createdAt: latestChange(explanation),
    documentId: `explanation-${action.action_uuid}-${envelope.content_hash}`,
    blocks
  }
}
