/**
 * Offline checks of settlements: the signed tree head, a receipt's inclusion
 * in it, and one settlement's log being an extension of an earlier one.
 */
import { canonicalBytes, sha256Tagged } from "./canonical.js"
import { bytesToHex } from "./encoding.js"
import { hashBytes, leafHash, verifyConsistency, verifyInclusion } from "./merkle.js"
import { decodeSignature, type PublicKeyInput, rawPublicKey, verifyEd25519 } from "./receipt.js"

/** The settlement fields that `settlement_hash` covers and `signature` signs (JCS). */
export const SETTLEMENT_SIGNED_FIELDS = [
  "id",
  "org_uuid",
  "period_start",
  "period_end",
  "receipt_count",
  "merkle_root",
  "signing_key_id",
  "timestamp_token",
  "sealed_at"
] as const

export const settlementRecord = (settlement: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(SETTLEMENT_SIGNED_FIELDS.map((field) => [field, settlement[field] ?? null]))

export interface SettlementChecks {
  readonly settlement_hash: boolean
  readonly signature: boolean
}

export const verifySettlement = (settlement: Record<string, unknown>, publicKey: PublicKeyInput): SettlementChecks => {
  const bytes = canonicalBytes(settlementRecord(settlement))
  const signature = typeof settlement.signature === "string" ? decodeSignature(settlement.signature) : undefined
  let key: Uint8Array | undefined
  try {
    key = rawPublicKey(publicKey)
  } catch {
    key = undefined
  }
  return {
    settlement_hash: sha256Tagged(bytes) === settlement.settlement_hash,
    signature: signature !== undefined && key !== undefined && verifyEd25519(signature, bytes, key)
  }
}

/** A leaf is the 32-byte digest of a receipt's `payload_hash`; its leaf hash is SHA-256(0x00 ‖ digest). */
export const receiptLeafHash = (payloadHash: string): Uint8Array => leafHash(hashBytes(payloadHash))

export interface InclusionProofInput {
  readonly merkle_root: string
  readonly leaf_hash: string
  readonly index: number
  readonly leaf_count: number
  readonly siblings: ReadonlyArray<string>
}

/** The proof is valid for its root; with `payloadHash`, its leaf is also that receipt's. */
export const verifySettlementInclusion = (proof: InclusionProofInput, payloadHash?: string): boolean => {
  try {
    if (payloadHash !== undefined && `sha256:${bytesToHex(receiptLeafHash(payloadHash))}` !== proof.leaf_hash.toLowerCase()) return false
    return verifyInclusion(proof.leaf_hash, proof.index, proof.leaf_count, proof.siblings, proof.merkle_root)
  } catch {
    return false
  }
}

export interface TreeHead {
  readonly tree_size: number
  readonly merkle_root: string
}

export interface ConsistencyProofInput {
  readonly from: TreeHead
  readonly to: TreeHead
  readonly proof: ReadonlyArray<string>
}

export const verifySettlementConsistency = (answer: ConsistencyProofInput): boolean =>
  verifyConsistency(answer.from.tree_size, answer.to.tree_size, answer.proof, answer.from.merkle_root, answer.to.merkle_root)

