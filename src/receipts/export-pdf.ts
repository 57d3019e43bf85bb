/**
 * The printed receipt export (`GET /api/v1/receipts/{id}/export?format=pdf`): the fields of the
 * JSON export, dated by the receipt's `created_at`, so every download of one receipt is the same
 * bytes. `exported_at` is left out for that reason. The PDF is not signed: the signed bytes are
 * the canonical payload printed in it.
 */
import type { ReceiptExport } from "../../protocol/receipts.js"
import type { PdfBlock, PdfDocumentModel } from "../platform/pdf.js"

const text = (value: unknown): string | null => (value === null || value === undefined ? null : typeof value === "string" ? value : JSON.stringify(value))

export const receiptExportPdfModel = (document: ReceiptExport): PdfDocumentModel => {
  const { receipt, previous } = document
  const payload = document.signed_payload
  const blocks: Array<PdfBlock> = [
    { kind: "heading", text: "Receipt" },
    {
      kind: "fields",
      rows: [
        ["Receipt", document.receipt_uuid],
        ["Action", document.action_uuid],
        ["Organization", receipt.org_uuid],
        ["Agent", receipt.agent_id],
        ["Sequence", receipt.agent_sequence],
        ["Status", receipt.receipt_status],
        ["Version", receipt.receipt_version],
        ["Action type", text(payload.action_type)],
        ["Outcome", text(payload.outcome)],
        ["Created", receipt.created_at],
        ["Format", `${document.format}, export ${document.export_version}`]
      ]
    },
    // Hashes are code: a long unbroken value wraps there, not in a label/value line.
    ...(payload.replay_context_hash === undefined ? [] : [{ kind: "code", text: `replay_context_hash ${text(payload.replay_context_hash)}` } satisfies PdfBlock]),
    { kind: "heading", text: "Signed payload" },
    {
      kind: "paragraph",
      text: "The exact RFC 8785 canonical text that was hashed (payload_hash), signed (signature) and timestamped:"
    },
    { kind: "code", text: document.canonical_payload },
    { kind: "heading", text: "Signature" },
    {
      kind: "fields",
      rows: [
        ["Algorithm", "Ed25519"],
        ["Key id", document.public_key_id],
        ["Public key (x, base64url)", document.public_key?.x ?? null]
      ]
    },
    { kind: "code", text: `payload_hash ${document.payload_hash}\nsignature ${document.signature}` },
    { kind: "heading", text: "Timestamp" },
    document.timestamp_token === null
      ? { kind: "paragraph", text: "The receipt carries no RFC 3161 timestamp token." }
      : { kind: "code", text: `timestamp_token (base64 DER)\n${document.timestamp_token}` },
    document.tsa_certificate === null
      ? { kind: "paragraph", text: "The token was not issued by this gateway's internal timestamp authority." }
      : { kind: "code", text: document.tsa_certificate },
    { kind: "heading", text: "Previous receipt" },
    previous === null
      ? { kind: "paragraph", text: "None: this receipt opens its agent's chain (sequence 1)." }
      : { kind: "fields", rows: [["Receipt", previous.receipt_uuid], ["Sequence", text(previous.signed_payload.agent_sequence)]] },
    ...(previous === null ? [] : [{ kind: "code", text: `payload_hash ${previous.payload_hash}` } satisfies PdfBlock]),
    { kind: "heading", text: "Verification" },
    {
      kind: "fields",
      rows: [
        ["Verify at", document.verify_url],
        ["Keys (JWKS)", document.jwks_url],
        ["Platform DID", document.platform_did]
      ]
    },
    {
      kind: "paragraph",
      text:
        "Offline: canonicalize signed_payload with RFC 8785; its sha256 is payload_hash, and signature is Ed25519 over those bytes by the JWKS key public_key_id. The timestamp token's imprint is the same sha256 (openssl ts -verify -digest). This PDF is a print of the JSON export and is not signed itself."
    }
  ]
  return {
    title: "Receipt of an AI agent action",
    subtitle: `${receipt.receipt_status} · ${document.receipt_uuid}`,
    createdAt: new Date(receipt.created_at),
    documentId: `receipt-${document.receipt_uuid}-${document.payload_hash}`,
    blocks
  }
}
