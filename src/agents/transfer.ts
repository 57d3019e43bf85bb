/**
 * What the owner signs to transfer an agent: the JCS of `{agent_slug, from_org, to_org}`,
 * HMAC-SHA256 keyed by the bearer credential the request is made with (the API key, or the
 * dashboard JWT), written `hmac-sha256:` + 64 lowercase hex. The server holds that credential only
 * while the request runs, so the signature binds exactly this transfer to whoever holds it.
 */
import { createHmac, timingSafeEqual } from "node:crypto"
import { canonicalJson } from "../../protocol/verifier/canonical.js"

export interface TransferTerms {
  readonly agent_slug: string
  readonly from_org: string
  readonly to_org: string
}

export const transferSignature = (credential: string, terms: TransferTerms): string =>
  `hmac-sha256:${createHmac("sha256", credential).update(canonicalJson({ agent_slug: terms.agent_slug, from_org: terms.from_org, to_org: terms.to_org })).digest("hex")}`

/** Constant-time comparison with the expected signature. */
export const transferSignatureValid = (credential: string, terms: TransferTerms, signature: string): boolean => {
  const expected = Buffer.from(transferSignature(credential, terms))
  const given = Buffer.from(signature)
  return expected.length === given.length && timingSafeEqual(expected, given)
}
