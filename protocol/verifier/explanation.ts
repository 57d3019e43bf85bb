/**
 * Offline verification of a signed explanation (CONTRACT.md "Signed explanations"): the JCS of the
 * five signed keys, its `sha256:` hash against `_envelope.content_hash`, and the Ed25519 signature
 * by the receipt key the envelope names (from the platform's JWKS, retired keys included).
 * Runs anywhere: no service imports.
 */
import { canonicalBytes, sha256Tagged } from "./canonical.js"
import { decodeSignature, type Ed25519Jwk, rawPublicKey, verifyEd25519 } from "./receipt.js"

/** The keys that are hashed and signed, in no particular order (JCS sorts them). */
export const EXPLANATION_SIGNED_KEYS = ["action", "policy_chain", "approval_chain", "receipt", "regulation"] as const

/** `true`, or why the check failed; "not checked" after an earlier failure. */
export type ExplanationCheck = true | string

export interface ExplanationChecks {
  envelope_present: ExplanationCheck
  key_known: ExplanationCheck
  content_hash_matches: ExplanationCheck
  signature_valid: ExplanationCheck
}

export interface ExplanationVerification {
  readonly valid: boolean
  readonly checks: ExplanationChecks
  /** From the envelope, or null when it names none. */
  readonly signing_key_id: string | null
}

export const NOT_CHECKED = "not checked"

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/** The signed content: the five keys that are present, `receipt` null when absent (as the Python SDK rebuilds it). */
export const explanationSignedContent = (explanation: Record<string, unknown>): Record<string, unknown> => {
  const content: Record<string, unknown> = {}
  for (const key of EXPLANATION_SIGNED_KEYS) {
    if (Object.hasOwn(explanation, key)) content[key] = explanation[key]
  }
  if (!Object.hasOwn(content, "receipt")) content.receipt = null
  return content
}

/** The envelope, read from `_envelope` or (the Python dict form) `envelope`. */
export const explanationEnvelope = (explanation: Record<string, unknown>): unknown =>
  Object.hasOwn(explanation, "_envelope") ? explanation._envelope : explanation.envelope

/** What is wrong with an envelope's shape, or undefined when it has every signed field. */
const envelopeProblem = (envelope: unknown): string | undefined => {
  if (envelope === undefined || envelope === null) return "no _envelope"
  if (!isObject(envelope)) return "_envelope is not an object"
  if (envelope.alg !== "Ed25519") return "_envelope.alg is not Ed25519"
  for (const field of ["signing_key_id", "content_hash", "signature"]) {
    if (typeof envelope[field] !== "string" || envelope[field] === "") return `_envelope.${field} is missing`
  }
  return undefined
}

const errorText = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

/**
 * Checks an explanation against `keys` (JWKs whose `kid` is the `rk_...` key id). Each check runs
 * only when the ones before it passed.
 */
export const verifyExplanation = (explanation: unknown, keys: ReadonlyArray<Ed25519Jwk>): ExplanationVerification => {
  const checks: ExplanationChecks = { envelope_present: NOT_CHECKED, key_known: NOT_CHECKED, content_hash_matches: NOT_CHECKED, signature_valid: NOT_CHECKED }
  const done = (signingKeyId: string | null) => ({
    valid: Object.values(checks).every((check) => check === true),
    checks,
    signing_key_id: signingKeyId
  })
  if (!isObject(explanation)) {
    checks.envelope_present = "the explanation is not a JSON object"
    return done(null)
  }
  const envelope = explanationEnvelope(explanation)
  const keyId = isObject(envelope) && typeof envelope.signing_key_id === "string" ? envelope.signing_key_id : null
  const problem = envelopeProblem(envelope)
  if (problem !== undefined) {
    checks.envelope_present = problem
    return done(keyId)
  }
  checks.envelope_present = true
  const signed = envelope as { signing_key_id: string; content_hash: string; signature: string }

  const jwk = keys.find((key) => key.kid === signed.signing_key_id)
  let raw: Uint8Array | undefined
  try {
    raw = jwk === undefined ? undefined : rawPublicKey(jwk)
  } catch {
    raw = undefined
  }
  if (raw === undefined) {
    checks.key_known = `signing key ${signed.signing_key_id} is not a published receipt key`
    return done(keyId)
  }
  checks.key_known = true

  let bytes: Uint8Array
  try {
    bytes = canonicalBytes(explanationSignedContent(explanation))
  } catch (cause) {
    checks.content_hash_matches = `the content cannot be canonicalized: ${errorText(cause)}`
    return done(keyId)
  }
  const computed = sha256Tagged(bytes)
  if (computed !== signed.content_hash) {
    checks.content_hash_matches = `the content hashes to ${computed}, the envelope says ${signed.content_hash}`
    return done(keyId)
  }
  checks.content_hash_matches = true

  try {
    checks.signature_valid = verifyEd25519(decodeSignature(signed.signature), bytes, raw) ? true : "the signature does not verify with the signing key"
  } catch (cause) {
    checks.signature_valid = `the signature cannot be read: ${errorText(cause)}`
  }
  return done(keyId)
}
