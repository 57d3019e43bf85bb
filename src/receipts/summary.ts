/** The receipt as actions and their answers show it: what identifies and verifies it, not the signed payload. */

export interface ReceiptSummary {
  readonly receipt_uuid: string
  readonly payload_hash: string
  readonly signature: string
  readonly public_key_id: string
  readonly timestamp_token: string | null
  readonly receipt_version: string
  readonly verify_url: string
}

/** Picks the summary fields of a minted or stored receipt (and nothing else). */
export const receiptSummary = (receipt: ReceiptSummary): ReceiptSummary => ({
  receipt_uuid: receipt.receipt_uuid,
  payload_hash: receipt.payload_hash,
  signature: receipt.signature,
  public_key_id: receipt.public_key_id,
  timestamp_token: receipt.timestamp_token,
  receipt_version: receipt.receipt_version,
  verify_url: receipt.verify_url
})
