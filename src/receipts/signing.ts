/**
 * Server-side receipt crypto on node:crypto (OpenSSL), the hot path of every
 * notarization. Produces exactly the bytes and strings the portable verifier in
 * protocol/verifier checks: JCS via the same `canonicalize`, SHA-256, Ed25519.
 */

import type { KeyObject } from "node:crypto"
import * as nodeCrypto from "node:crypto"
import canonicalize from "canonicalize"
import { agentDid } from "../platform/did-web.js"
import { sha256Tagged } from "../platform/digest.js"

export { sha256Tagged }

const SIGNATURE_PREFIX = "ed25519:"
/** DER SubjectPublicKeyInfo header for an Ed25519 key; the 32 raw bytes follow it. */
const ED25519_SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex")

type HashFn = (algorithm: string, data: Uint8Array | string, outputEncoding: "hex" | "binary") => string
// crypto.hash (Node ≥ 20.12) skips the Hash object: about 3x faster on small inputs.
const oneShotHash: HashFn | undefined = (nodeCrypto as unknown as { hash?: HashFn }).hash

export const sha256Hex = (data: Uint8Array | string): string =>
  oneShotHash !== undefined
    ? oneShotHash("sha256", data, "hex")
    : nodeCrypto.createHash("sha256").update(data).digest("hex")

export const sha256Digest = (data: Uint8Array | string): Buffer =>
  oneShotHash !== undefined
    ? Buffer.from(oneShotHash("sha256", data, "binary"), "latin1")
    : nodeCrypto.createHash("sha256").update(data).digest()

/** RFC 8785 canonical JSON as UTF-8 bytes (same library as the verifier). */
export const canonicalJsonBytes = (value: unknown): Buffer => {
  const text = canonicalize(value)
  if (text === undefined) throw new TypeError("value has no JSON representation")
  return Buffer.from(text, "utf8")
}

/** `"rk_"` + first 16 hex characters of sha256(raw public key). */
export const publicKeyIdOf = (publicKeyRaw: Uint8Array): string => "rk_" + sha256Hex(publicKeyRaw).slice(0, 16)

export interface Ed25519PublicJwk {
  readonly kty: "OKP"
  readonly crv: "Ed25519"
  readonly x: string
  readonly kid: string
  readonly alg: "EdDSA"
  readonly use: "sig"
}

export const publicJwk = (publicKeyRaw: Uint8Array, kid: string = publicKeyIdOf(publicKeyRaw)): Ed25519PublicJwk => ({
  kty: "OKP",
  crv: "Ed25519",
  x: Buffer.from(publicKeyRaw).toString("base64url"),
  kid,
  alg: "EdDSA",
  use: "sig"
})

export interface GeneratedSigningKey {
  /** PKCS#8 DER private key: what gets sealed at rest. */
  readonly privateKeyPkcs8Der: Uint8Array
  readonly publicKeyRaw: Uint8Array
  readonly publicKeyId: string
}

const rawFromPublicKeyObject = (publicKey: KeyObject): Uint8Array => {
  const spki = publicKey.export({ format: "der", type: "spki" })
  return new Uint8Array(spki.subarray(ED25519_SPKI_PREFIX.length))
}

export const generateSigningKey = (): GeneratedSigningKey => {
  const { privateKey, publicKey } = nodeCrypto.generateKeyPairSync("ed25519")
  const publicKeyRaw = rawFromPublicKeyObject(publicKey)
  return {
    privateKeyPkcs8Der: new Uint8Array(privateKey.export({ format: "der", type: "pkcs8" })),
    publicKeyRaw,
    publicKeyId: publicKeyIdOf(publicKeyRaw)
  }
}

/** A node:crypto public key object from the 32 raw bytes; import once, verify many times. */
export const importVerifyKey = (publicKeyRaw: Uint8Array): KeyObject => {
  if (publicKeyRaw.length !== 32) throw new RangeError("an Ed25519 public key is 32 bytes")
  return nodeCrypto.createPublicKey({
    key: Buffer.concat([ED25519_SPKI_PREFIX, publicKeyRaw]),
    format: "der",
    type: "spki"
  })
}

/**
 * Signature bytes from `"ed25519:" + base64url`, or undefined when the text is
 * not the canonical encoding of 64 bytes (Buffer's own decoder is lenient).
 */
export const decodeSignature = (signature: string): Buffer | undefined => {
  if (typeof signature !== "string" || !signature.startsWith(SIGNATURE_PREFIX)) return undefined
  const text = signature.slice(SIGNATURE_PREFIX.length)
  if (text.length !== 86) return undefined
  const bytes = Buffer.from(text, "base64url")
  if (bytes.length !== 64 || bytes.toString("base64url") !== text) return undefined
  return bytes
}

export const encodeSignature = (signature: Uint8Array): string =>
  SIGNATURE_PREFIX + Buffer.from(signature.buffer, signature.byteOffset, signature.byteLength).toString("base64url")

/** Verifies `"ed25519:..."` over bytes; false for malformed signatures or keys. */
export const verifySignature = (publicKey: KeyObject | Uint8Array, bytes: Uint8Array, signature: string): boolean => {
  const decoded = decodeSignature(signature)
  if (decoded === undefined) return false
  try {
    const key = publicKey instanceof Uint8Array ? importVerifyKey(publicKey) : publicKey
    return nodeCrypto.verify(null, bytes, key, decoded)
  } catch {
    return false
  }
}

export interface ReceiptSigner {
  readonly publicKeyRaw: Uint8Array
  readonly publicKeyId: string
  readonly publicKey: KeyObject
  /** `"ed25519:" + base64url(Ed25519(bytes))`. */
  readonly sign: (bytes: Uint8Array) => string
  /** The raw 64-byte Ed25519 signature (for proof formats that encode it their own way). */
  readonly signRaw: (bytes: Uint8Array) => Uint8Array
  readonly verify: (bytes: Uint8Array, signature: string) => boolean
}

export const importSigningKey = (privateKeyPkcs8Der: Uint8Array): ReceiptSigner => {
  const privateKey = nodeCrypto.createPrivateKey({ key: Buffer.from(privateKeyPkcs8Der), format: "der", type: "pkcs8" })
  if (privateKey.asymmetricKeyType !== "ed25519") throw new TypeError("signing key is not Ed25519")
  const publicKey = nodeCrypto.createPublicKey(privateKey)
  const publicKeyRaw = rawFromPublicKeyObject(publicKey)
  return {
    publicKeyRaw,
    publicKeyId: publicKeyIdOf(publicKeyRaw),
    publicKey,
    sign: (bytes) => encodeSignature(nodeCrypto.sign(null, bytes, privateKey)),
    signRaw: (bytes) => new Uint8Array(nodeCrypto.sign(null, bytes, privateKey)),
    verify: (bytes, signature) => verifySignature(publicKey, bytes, signature)
  }
}

export interface SignedPayload {
  /** The JCS bytes that were hashed and signed. */
  readonly bytes: Buffer
  readonly payload_hash: string
  readonly signature: string
  readonly public_key_id: string
}

/** Receipt mint: canonicalize, hash, sign. */
export const signPayload = (signer: ReceiptSigner, payload: unknown): SignedPayload => {
  const bytes = canonicalJsonBytes(payload)
  return {
    bytes,
    payload_hash: sha256Tagged(bytes),
    signature: signer.sign(bytes),
    public_key_id: signer.publicKeyId
  }
}

/** Server-side counterpart of the portable verifyReceipt's hash and signature checks. */
export const verifySignedPayload = (
  publicKey: KeyObject | Uint8Array,
  payload: unknown,
  payloadHash: string,
  signature: string
): boolean => {
  const bytes = canonicalJsonBytes(payload)
  return sha256Tagged(bytes) === payloadHash && verifySignature(publicKey, bytes, signature)
}

/** The version both kinds of transfer receipt have carried since the first; part of the signed bytes. */
export const TRANSFER_RECEIPT_VERSION = "1.0"

interface TransferTermsBase {
  readonly agent_slug: string
  readonly previous_owner: string
  readonly new_owner: string
}

/** What a transfer receipt attests: a move to another organization, or a will's succession within one. */
export type TransferTerms =
  | (TransferTermsBase & { readonly kind: "agent_transfer" })
  | (TransferTermsBase & { readonly kind: "agent_succession"; readonly successor_slug: string; readonly certificate_id: string })

/** A transfer receipt as `agent_transfers` stores it (both kinds). */
export interface TransferReceipt {
  readonly transfer_receipt_id: string
  readonly agent_slug: string
  readonly previous_owner: string
  readonly new_owner: string
  /** The JCS text that was hashed and signed. */
  readonly signed_payload: string
  readonly payload_hash: string
  readonly signature: string
  readonly public_key_id: string
  readonly transferred_at: string
}

/**
 * The one place a transfer receipt's payload is built and signed (agents' transfers, estate's
 * successions): the portable verifier checks it like any receipt, with the platform key.
 */
export const mintTransferReceipt = (
  signer: ReceiptSigner,
  baseUrl: string,
  terms: TransferTerms,
  transferReceiptId: string,
  transferredAt: string
): TransferReceipt => {
  const payload = {
    receipt_type: terms.kind,
    receipt_version: TRANSFER_RECEIPT_VERSION,
    transfer_receipt_id: transferReceiptId,
    agent_slug: terms.agent_slug,
    agent_did: agentDid(baseUrl, terms.agent_slug),
    previous_owner: terms.previous_owner,
    new_owner: terms.new_owner,
    ...(terms.kind === "agent_succession"
      ? { successor_slug: terms.successor_slug, successor_did: agentDid(baseUrl, terms.successor_slug), certificate_id: terms.certificate_id }
      : {}),
    transferred_at: transferredAt
  }
  const signed = signPayload(signer, payload)
  return {
    transfer_receipt_id: transferReceiptId,
    agent_slug: terms.agent_slug,
    previous_owner: terms.previous_owner,
    new_owner: terms.new_owner,
    signed_payload: signed.bytes.toString("utf8"),
    payload_hash: signed.payload_hash,
    signature: signed.signature,
    public_key_id: signed.public_key_id,
    transferred_at: transferredAt
  }
}
