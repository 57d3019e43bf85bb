/**
 * Offline checks of a compliance report (CONTRACT "Compliance reports", "Signing (decided)"): the
 * signature is Ed25519 by a JWKS key over the JCS of the 12-key descriptor; the timestamp token's
 * message imprint is sha256 of those bytes; with the PDF, its sha256 and length are the
 * descriptor's `content_hash` and `pdf_size_bytes`. Pure and portable, like the receipt verifier;
 * the service's verify route runs this same code.
 */
import { sha256 } from "@noble/hashes/sha2.js"
import { canonicalBytes, sha256Tagged } from "./canonical.js"
import { bytesEqual } from "./encoding.js"
import { decodeSignature, type Ed25519Jwk, rawPublicKey, verifyEd25519 } from "./receipt.js"
import { OID_SHA256, readTimestampImprint } from "./timestamp.js"

/** The report fields the signature covers, in the contract's order (JCS sorts them anyway). */
export const REPORT_DESCRIPTOR_FIELDS = [
  "report_uuid",
  "org_uuid",
  "framework",
  "period_start",
  "period_end",
  "action_uuid",
  "agent_filter",
  "receipt_count",
  "pdf_size_bytes",
  "content_hash",
  "report_metadata",
  "generated_at"
] as const

/** The descriptor of a report object (or of a descriptor itself): exactly the 12 keys, absent ones null. */
export const reportDescriptor = (report: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(REPORT_DESCRIPTOR_FIELDS.map((field) => [field, report[field] ?? null]))

/** The exact bytes that are signed and timestamped. */
export const reportDescriptorBytes = (report: Record<string, unknown>): Uint8Array => canonicalBytes(reportDescriptor(report))

/** Each check is `true` or a sentence saying why it failed. */
export type ReportCheck = true | string

export interface ReportChecks {
  key_known: ReportCheck
  content_hash_matches?: ReportCheck
  signature_valid: ReportCheck
  timestamp_token_matches?: ReportCheck
}

export interface ReportInput {
  /** The descriptor, or the whole report object (extra keys are ignored). */
  readonly descriptor: Record<string, unknown>
  readonly signature: unknown
  readonly signing_key_id: unknown
  readonly timestamp_token?: unknown
}

export interface ReportVerification {
  readonly valid: boolean
  readonly checks: ReportChecks
  readonly descriptor: Record<string, unknown>
}

const NOT_CHECKED = "not checked"

/**
 * Verifies a report descriptor against published keys (JWKS `keys`). With `pdf` (the downloaded
 * bytes) `content_hash_matches` is checked too; without it that check is left out.
 */
export const verifyReportDescriptor = (input: ReportInput, keys: ReadonlyArray<Ed25519Jwk>, pdf?: Uint8Array): ReportVerification => {
  const descriptor = reportDescriptor(input.descriptor)
  const checks: ReportChecks = { key_known: NOT_CHECKED, signature_valid: NOT_CHECKED }

  const kid = input.signing_key_id
  const jwk = typeof kid === "string" ? keys.find((key) => key.kid === kid) : undefined
  let rawKey: Uint8Array | undefined
  if (jwk === undefined) {
    checks.key_known = typeof kid === "string" ? `signing key ${kid} is not published` : "the report names no signing key"
  } else {
    try {
      rawKey = rawPublicKey(jwk)
      checks.key_known = true
    } catch (cause) {
      checks.key_known = `signing key ${String(kid)} is unusable: ${cause instanceof Error ? cause.message : String(cause)}`
    }
  }

  if (pdf !== undefined) {
    const computed = sha256Tagged(pdf)
    checks.content_hash_matches =
      computed !== descriptor.content_hash
        ? `the PDF hashes to ${computed}, the descriptor says ${String(descriptor.content_hash)}`
        : pdf.length !== descriptor.pdf_size_bytes
          ? `the PDF has ${pdf.length} bytes, the descriptor says ${String(descriptor.pdf_size_bytes)}`
          : true
  }

  let bytes: Uint8Array | undefined
  try {
    bytes = canonicalBytes(descriptor)
  } catch (cause) {
    checks.signature_valid = `the descriptor cannot be canonicalized: ${cause instanceof Error ? cause.message : String(cause)}`
  }

  if (bytes !== undefined && rawKey !== undefined) {
    let signature: Uint8Array | undefined
    try {
      signature = decodeSignature(String(input.signature))
    } catch (cause) {
      checks.signature_valid = `malformed signature: ${cause instanceof Error ? cause.message : String(cause)}`
    }
    if (signature !== undefined) checks.signature_valid = verifyEd25519(signature, bytes, rawKey) ? true : "the signature does not match the descriptor"
  }

  const token = input.timestamp_token
  if (typeof token === "string" && token !== "") {
    if (bytes === undefined) checks.timestamp_token_matches = NOT_CHECKED
    else {
      try {
        const imprint = readTimestampImprint(token)
        checks.timestamp_token_matches =
          imprint.hashAlgorithm !== OID_SHA256
            ? `the token's hash algorithm ${imprint.hashAlgorithm} is not sha256`
            : bytesEqual(imprint.hashedMessage, sha256(bytes))
              ? true
              : "the token's message imprint differs from sha256 of the descriptor"
      } catch (cause) {
        checks.timestamp_token_matches = `the token cannot be read: ${cause instanceof Error ? cause.message : String(cause)}`
      }
    }
  }

  const valid = Object.values(checks).every((check) => check === true)
  return { valid, checks, descriptor }
}
