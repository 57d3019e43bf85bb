/**
 * What a caller may sign when opening a dispute (optional): the JCS of `{account_uuid, amount,
 * reason, evidence_package_uuid}` (amount as the canonical decimal string, e.g. "100.50"; no
 * evidence → null), HMAC-SHA256 keyed by the bearer credential of the request, written
 * `hmac-sha256:` + 64 lowercase hex. The same scheme as an agent transfer (src/agents/transfer.ts).
 */
import { createHmac, timingSafeEqual } from "node:crypto"
import { canonicalJson } from "../../protocol/verifier/canonical.js"

export interface DisputeTerms {
  readonly account_uuid: string
  readonly amount: string
  readonly reason: string
  readonly evidence_package_uuid: string | null
}

export const disputeSignature = (credential: string, terms: DisputeTerms): string =>
  `hmac-sha256:${createHmac("sha256", credential)
    .update(canonicalJson({ account_uuid: terms.account_uuid, amount: terms.amount, reason: terms.reason, evidence_package_uuid: terms.evidence_package_uuid }))
    .digest("hex")}`

/** Constant-time comparison with the expected signature. */
export const disputeSignatureValid = (credential: string, terms: DisputeTerms, signature: string): boolean => {
  const expected = Buffer.from(disputeSignature(credential, terms))
  const given = Buffer.from(signature)
  return expected.length === given.length && timingSafeEqual(expected, given)
}
