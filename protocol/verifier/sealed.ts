/**
 * Offline checks of the documents signed like a receipt inside an answer (CONTRACT-sdk-beyond §8):
 * an evidence package and a compliance snapshot. The signed content is exactly the listed keys of
 * the answer (every other key — the seal, aliases, `request_id` — is outside it); its JCS bytes
 * hash to the document's hash, the Ed25519 signature by the published key covers the same bytes,
 * and the RFC 3161 token's imprint is their sha256. Pure and portable, like the receipt verifier.
 */
import { type PublicKeyInput, type ReceiptVerification, verifyReceipt } from "./receipt.js"

/** The keys an evidence package seals (`package_hash` is over their JCS). */
export const SEALED_PACKAGE_KEYS = [
  "package_uuid",
  "org_uuid",
  "title",
  "purpose",
  "status",
  "action_count",
  "actions",
  "metadata",
  "sealed_at",
  "created_by"
] as const

/** The keys a compliance snapshot signs (`snapshot_hash` is over their JCS). */
export const SNAPSHOT_SIGNED_KEYS = [
  "snapshot_uuid",
  "framework",
  "agent_slug",
  "overall_status",
  "findings",
  "notes",
  "finding_count",
  "pass_count",
  "fail_count",
  "partial_count",
  "created_at",
  "created_by"
] as const

/** Exactly `keys` of the document; a key it lacks stays absent (so the hash no longer matches). */
export const signedContent = (document: Record<string, unknown>, keys: ReadonlyArray<string>): Record<string, unknown> =>
  Object.fromEntries(keys.filter((key) => key in document).map((key) => [key, document[key]]))

const checkSealed = (document: Record<string, unknown>, keys: ReadonlyArray<string>, hash: unknown, key: PublicKeyInput): ReceiptVerification =>
  verifyReceipt({
    signed_payload: signedContent(document, keys),
    payload_hash: String(hash),
    signature: String(document.signature),
    public_key: key,
    timestamp_token: typeof document.timestamp_token === "string" ? document.timestamp_token : null
  })

/** An evidence package as answered by `GET /api/v1/evidence/packages/{id}`, against the key `public_key_id` names. */
export const verifyEvidencePackage = (pkg: Record<string, unknown>, key: PublicKeyInput): ReceiptVerification =>
  checkSealed(pkg, SEALED_PACKAGE_KEYS, pkg.package_hash, key)

/** A compliance snapshot as answered (create or list item), against the key `public_key_id` names. */
export const verifySnapshot = (snapshot: Record<string, unknown>, key: PublicKeyInput): ReceiptVerification =>
  checkSealed(snapshot, SNAPSHOT_SIGNED_KEYS, snapshot.snapshot_hash, key)
