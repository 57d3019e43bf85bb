/**
 * Offline checks of a compliance bundle (CONTRACT-sdk-beyond §4): the signed record (`bundle_hash`
 * over its JCS, the Ed25519 signature over the same bytes, the RFC 3161 token whose imprint is the
 * Merkle root, as a settlement's is) and, for an export, every receipt (payload hash of its exact
 * signed text, its signature) and the RFC 9162 root over them in leaf order. The root is folded
 * receipt by receipt, so a 50,000-receipt export holds no array of leaves.
 */
import { sha256 } from "@noble/hashes/sha2.js"
import { canonicalBytes, canonicalJson, sha256Tagged } from "./canonical.js"
import { bytesEqual, bytesToHex, utf8Bytes } from "./encoding.js"
import { hashBytes, MerkleRootBuilder } from "./merkle.js"
import { decodeSignature, type Ed25519Jwk, type PublicKeyInput, rawPublicKey, verifyEd25519 } from "./receipt.js"
import { signedContent } from "./sealed.js"
import { receiptLeafHash } from "./settlement.js"
import { OID_SHA256, readTimestampImprint } from "./timestamp.js"

/** The keys of a bundle's signed record (`bundle_hash` is over their JCS). */
export const BUNDLE_RECORD_KEYS = [
  "bundle_version",
  "bundle_uuid",
  "org_uuid",
  "framework",
  "title",
  "period_start",
  "period_end",
  "agent_filter",
  "receipt_count",
  "merkle_root",
  "framework_summary",
  "timestamp_token",
  "sealed_at"
] as const

export interface BundleChecks {
  bundle_hash: boolean
  signature: boolean
  /** Present when the record carries a token: its imprint is the 32 bytes of `merkle_root`. */
  timestamp_imprint?: boolean
}

export interface BundleExportChecks extends BundleChecks {
  /** The export's unsigned copies (bundle_uuid, framework, title, period, …) equal the signed record's. */
  header_matches_record: boolean
  /** Receipt `i` of the list has `index` i. */
  receipt_indexes: boolean
  receipt_payload_hashes: boolean
  receipt_signatures: boolean
  /** Present when a receipt carries a token: its imprint is sha256 of the receipt's signed bytes. */
  receipt_timestamp_imprints?: boolean
  /** The root over the receipts equals the export's `merkle_root`… */
  merkle_root: boolean
  /** …and the signed record's. */
  record_merkle_root: boolean
  receipt_count: boolean
}

export interface BundleVerification<C extends BundleChecks = BundleChecks> {
  readonly valid: boolean
  readonly checks: C
  /** Each message starts with the name of the failed check and a colon. */
  readonly errors: string[]
}

const errorText = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))
const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/** Failures of one check over many receipts: the first few named, the rest counted. */
class Failures {
  private readonly shown: string[] = []
  private count = 0
  constructor(private readonly check: string) {}
  add(message: string): void {
    if (this.count++ < 5) this.shown.push(`${this.check}: ${message}`)
  }
  get passed(): boolean {
    return this.count === 0
  }
  report(errors: string[]): void {
    errors.push(...this.shown)
    if (this.count > this.shown.length) errors.push(`${this.check}: and ${this.count - this.shown.length} more`)
  }
}

const recordChecks = (record: Record<string, unknown>, hash: unknown, signature: unknown, key: PublicKeyInput | string, errors: string[]): BundleChecks => {
  const checks: BundleChecks = { bundle_hash: false, signature: false }
  let bytes: Uint8Array | undefined
  try {
    bytes = canonicalBytes(record)
  } catch (cause) {
    errors.push(`bundle_hash: cannot canonicalize the record: ${errorText(cause)}`, "signature: no canonical bytes to verify")
  }
  if (bytes !== undefined) {
    const computed = sha256Tagged(bytes)
    checks.bundle_hash = computed === hash
    if (!checks.bundle_hash) errors.push(`bundle_hash: computed ${computed}, the bundle says ${String(hash)}`)
    if (typeof key === "string") errors.push(`signature: ${key}`)
    else {
      try {
        checks.signature = verifyEd25519(decodeSignature(String(signature)), bytes, rawPublicKey(key))
        if (!checks.signature) errors.push("signature: does not verify against the public key")
      } catch (cause) {
        errors.push(`signature: ${errorText(cause)}`)
      }
    }
  }
  const token = record.timestamp_token
  if (typeof token === "string" && token !== "") {
    checks.timestamp_imprint = false
    try {
      const imprint = readTimestampImprint(token)
      if (imprint.hashAlgorithm !== OID_SHA256) errors.push(`timestamp_imprint: hash algorithm ${imprint.hashAlgorithm} is not sha256`)
      else if (!bytesEqual(imprint.hashedMessage, hashBytes(String(record.merkle_root)))) errors.push("timestamp_imprint: token imprint differs from merkle_root")
      else checks.timestamp_imprint = true
    } catch (cause) {
      errors.push(`timestamp_imprint: ${errorText(cause)}`)
    }
  }
  return checks
}

const done = <C extends BundleChecks>(checks: C, errors: string[]): BundleVerification<C> => ({
  valid: Object.values(checks).every((passed) => passed === true),
  checks,
  errors
})

/** A bundle as answered (`GET /api/v1/compliance/bundles/{id}`): exactly its record's keys, against the key `public_key_id` names. */
export const verifyBundle = (bundle: Record<string, unknown>, key: PublicKeyInput): BundleVerification => {
  const errors: string[] = []
  return done(recordChecks(signedContent(bundle, BUNDLE_RECORD_KEYS), bundle.bundle_hash, bundle.signature, key, errors), errors)
}

const sameJson = (a: unknown, b: unknown): boolean => {
  try {
    return canonicalJson(a ?? null) === canonicalJson(b ?? null)
  } catch {
    return false
  }
}

/**
 * An export (`GET /api/v1/compliance/bundles/{id}/export`), parsed. `keys` are the trusted JWKS
 * keys: the record's `public_key_id` and each receipt's must be among them.
 */
export const verifyBundleExport = (document: Record<string, unknown>, keys: ReadonlyArray<Ed25519Jwk>): BundleVerification<BundleExportChecks> => {
  const errors: string[] = []
  const rawKeys = new Map<string, Uint8Array>()
  for (const jwk of keys) {
    try {
      if (typeof jwk.kid === "string") rawKeys.set(jwk.kid, rawPublicKey(jwk))
    } catch {
      // Not an Ed25519 key: nothing it could have signed.
    }
  }
  const record = isRecord(document.bundle) ? document.bundle : {}
  if (!isRecord(document.bundle)) errors.push("bundle_hash: the export has no bundle record")
  const base = recordChecks(record, document.bundle_hash, document.signature, rawKeys.get(String(document.public_key_id)) ?? `no key ${String(document.public_key_id)} in the JWKS`, errors)
  const copies: ReadonlyArray<readonly [unknown, unknown]> = [
    [document.bundle_uuid, record.bundle_uuid],
    [document.framework, record.framework],
    [document.title, record.title],
    [isRecord(document.period) ? document.period.start : undefined, record.period_start],
    [isRecord(document.period) ? document.period.end : undefined, record.period_end],
    [document.agent_filter, record.agent_filter],
    [document.timestamp_token, record.timestamp_token],
    [document.framework_summary, record.framework_summary]
  ]
  const headerMatches = copies.every(([copy, signed]) => sameJson(copy, signed))
  if (!headerMatches) errors.push("header_matches_record: a field outside `bundle` differs from the signed record")

  const indexes = new Failures("receipt_indexes")
  const hashes = new Failures("receipt_payload_hashes")
  const signatures = new Failures("receipt_signatures")
  const imprints = new Failures("receipt_timestamp_imprints")
  let tokens = 0
  const tree = new MerkleRootBuilder()
  let treeBroken = false
  const receipts = Array.isArray(document.receipts) ? document.receipts : []
  if (!Array.isArray(document.receipts)) errors.push("receipt_count: the export has no receipts array")
  for (const [position, receipt] of receipts.entries()) {
    if (!isRecord(receipt)) {
      indexes.add(`receipt ${position} is not an object`)
      treeBroken = true
      continue
    }
    const name = `receipt ${position} (${String(receipt.receipt_uuid)})`
    if (receipt.index !== position) indexes.add(`${name} has index ${String(receipt.index)}`)
    try {
      tree.append(receiptLeafHash(String(receipt.payload_hash)))
    } catch (cause) {
      treeBroken = true
      hashes.add(`${name}: payload_hash ${String(receipt.payload_hash)}: ${errorText(cause)}`)
    }
    if (typeof receipt.signed_payload !== "string") {
      hashes.add(`${name} has no signed_payload text`)
      signatures.add(`${name} has no signed_payload text`)
      continue
    }
    const bytes = utf8Bytes(receipt.signed_payload)
    const digest = sha256(bytes)
    const computed = `sha256:${bytesToHex(digest)}`
    if (computed !== receipt.payload_hash) hashes.add(`${name}: computed ${computed}, the receipt says ${String(receipt.payload_hash)}`)
    const key = rawKeys.get(String(receipt.public_key_id))
    if (key === undefined) signatures.add(`${name}: no key ${String(receipt.public_key_id)} in the JWKS`)
    else {
      try {
        if (!verifyEd25519(decodeSignature(String(receipt.signature)), bytes, key)) signatures.add(`${name} does not verify against its key`)
      } catch (cause) {
        signatures.add(`${name}: ${errorText(cause)}`)
      }
    }
    if (typeof receipt.timestamp_token === "string" && receipt.timestamp_token !== "") {
      tokens++
      try {
        const imprint = readTimestampImprint(receipt.timestamp_token)
        if (imprint.hashAlgorithm !== OID_SHA256 || !bytesEqual(imprint.hashedMessage, digest)) imprints.add(`${name}: token imprint differs from sha256 of its signed_payload`)
      } catch (cause) {
        imprints.add(`${name}: ${errorText(cause)}`)
      }
    }
  }

  const root = treeBroken ? undefined : `sha256:${bytesToHex(tree.root())}`
  const rootMatches = root !== undefined && root === document.merkle_root
  const recordRootMatches = root !== undefined && root === record.merkle_root
  if (root === undefined) errors.push("merkle_root: a receipt's payload_hash is not a SHA-256 hash", "record_merkle_root: no root to compare")
  else {
    if (!rootMatches) errors.push(`merkle_root: computed ${root}, the export says ${String(document.merkle_root)}`)
    if (!recordRootMatches) errors.push(`record_merkle_root: computed ${root}, the signed record says ${String(record.merkle_root)}`)
  }
  const countMatches = receipts.length === record.receipt_count && receipts.length === document.receipt_count
  if (!countMatches) errors.push(`receipt_count: ${receipts.length} receipts, the record says ${String(record.receipt_count)}, the export ${String(document.receipt_count)}`)
  for (const failures of [indexes, hashes, signatures, imprints]) failures.report(errors)

  const checks: BundleExportChecks = {
    ...base,
    header_matches_record: headerMatches,
    receipt_indexes: indexes.passed,
    receipt_payload_hashes: hashes.passed,
    receipt_signatures: signatures.passed,
    ...(tokens === 0 ? {} : { receipt_timestamp_imprints: imprints.passed }),
    merkle_root: rootMatches,
    record_merkle_root: recordRootMatches,
    receipt_count: countMatches
  }
  return done(checks, errors)
}
