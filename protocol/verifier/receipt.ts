/**
 * Offline verification of a signed receipt: payload hash, Ed25519 signature,
 * hash-chain link to the previous receipt, RFC 3161 message imprint, and for an
 * action receipt of version 1.3 its replay context hash. Everything here runs in
 * a browser; the only trust anchor is the public key (from the platform's JWKS or
 * DID document).
 */
import * as ed from "@noble/ed25519"
import { sha256, sha512 } from "@noble/hashes/sha2.js"
import { canonicalBytes, payloadHash, sha256Tagged } from "./canonical.js"
import { base64UrlDecode, bytesEqual, bytesToHex } from "./encoding.js"
import { OID_SHA256, readTimestampImprint } from "./timestamp.js"

// The synchronous noble API needs a SHA-512; set it once unless the host already did.
if (ed.hashes.sha512 === undefined) ed.hashes.sha512 = sha512

export interface Ed25519Jwk {
  readonly kty: "OKP"
  readonly crv: "Ed25519"
  readonly x: string
  readonly kid?: string
}

export type PublicKeyInput = Ed25519Jwk | Uint8Array

export interface ReceiptInput {
  readonly signed_payload: Record<string, unknown>
  readonly payload_hash: string
  /** `"ed25519:" + base64url(signature)` without padding. */
  readonly signature: string
  readonly public_key: PublicKeyInput
  /** The receipt before this one in the same (org, agent) chain. */
  readonly previous?: {
    readonly payload_hash: string
    readonly signed_payload?: Record<string, unknown>
  } | null
  /** Base64 DER RFC 3161 TimeStampToken over sha256(JCS bytes). */
  readonly timestamp_token?: string | Uint8Array | null
  /** The action's replay context (GET /api/v1/actions/{id}/replay-context), to check a 1.3 receipt's `replay_context_hash` against. */
  readonly replay_context?: ReplayContextInput | null
}

/** The four replay fields an SDK sends on authorize; absent ones count as null. */
export interface ReplayContextInput {
  readonly system_prompt_hash?: string | null
  readonly tool_inputs_hash?: string | null
  readonly model_params?: Record<string, unknown> | null
  readonly execution_env?: Record<string, unknown> | null
}

/** Action receipts are `1.1`, or `1.3` when they carry `replay_context_hash` (`1.2` is never issued). */
export const REPLAY_RECEIPT_VERSION = "1.3"

/** `sha256:` + hex SHA-256 of the JCS of {system_prompt_hash, tool_inputs_hash, model_params, execution_env}, absent ones null. */
export const replayContextHash = (context: ReplayContextInput): string =>
  payloadHash({
    system_prompt_hash: context.system_prompt_hash ?? null,
    tool_inputs_hash: context.tool_inputs_hash ?? null,
    model_params: context.model_params ?? null,
    execution_env: context.execution_env ?? null
  })

export interface ReceiptChecks {
  payload_hash: boolean
  signature: boolean
  chain?: boolean
  timestamp_imprint?: boolean
  /** Present for a receipt that commits to a replay context (1.3), or when one is given to check. */
  replay_context?: boolean
}

export interface ReceiptVerification {
  readonly valid: boolean
  readonly checks: ReceiptChecks
  /** Each message starts with the name of the failed check and a colon. */
  readonly errors: string[]
}

const SIGNATURE_PREFIX = "ed25519:"

/** `"rk_"` + first 16 hex characters of sha256(raw public key). */
export const publicKeyId = (rawPublicKey: Uint8Array): string => "rk_" + bytesToHex(sha256(rawPublicKey)).slice(0, 16)

/** The 32 raw bytes of an Ed25519 public key given as an OKP JWK or raw bytes. */
export const rawPublicKey = (key: PublicKeyInput): Uint8Array => {
  if (key instanceof Uint8Array) {
    if (key.length !== 32) throw new Error("an Ed25519 public key is 32 bytes")
    return key
  }
  if (key === null || typeof key !== "object") throw new Error("public key must be a JWK or 32 bytes")
  if (key.kty !== "OKP" || key.crv !== "Ed25519" || typeof key.x !== "string") {
    throw new Error("public key JWK must be kty OKP, crv Ed25519")
  }
  const raw = base64UrlDecode(key.x)
  if (raw.length !== 32) throw new Error("JWK x must encode 32 bytes")
  return raw
}

/** Signature bytes from the `ed25519:<base64url>` form. */
export const decodeSignature = (signature: string): Uint8Array => {
  if (typeof signature !== "string" || !signature.startsWith(SIGNATURE_PREFIX)) {
    throw new Error('signature must start with "ed25519:"')
  }
  const bytes = base64UrlDecode(signature.slice(SIGNATURE_PREFIX.length))
  if (bytes.length !== 64) throw new Error("an Ed25519 signature is 64 bytes")
  return bytes
}

/**
 * Ed25519 verification with RFC 8032 rules (not ZIP-215), matching OpenSSL as
 * used by the server.
 */
export const verifyEd25519 = (signature: Uint8Array, message: Uint8Array, rawKey: Uint8Array): boolean => {
  try {
    return ed.verify(signature, message, rawKey, { zip215: false })
  } catch {
    return false
  }
}

const errorText = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

export const verifyReceipt = (input: ReceiptInput): ReceiptVerification => {
  const errors: string[] = []
  const checks: ReceiptChecks = { payload_hash: false, signature: false }

  let bytes: Uint8Array | undefined
  try {
    if (input.signed_payload === null || typeof input.signed_payload !== "object" || Array.isArray(input.signed_payload)) {
      throw new Error("signed_payload must be a JSON object")
    }
    bytes = canonicalBytes(input.signed_payload)
  } catch (cause) {
    errors.push(`payload_hash: cannot canonicalize signed_payload: ${errorText(cause)}`)
  }

  if (bytes !== undefined) {
    const computed = sha256Tagged(bytes)
    checks.payload_hash = computed === input.payload_hash
    if (!checks.payload_hash) errors.push(`payload_hash: computed ${computed}, receipt says ${String(input.payload_hash)}`)

    try {
      const key = rawPublicKey(input.public_key)
      checks.signature = verifyEd25519(decodeSignature(input.signature), bytes, key)
      if (!checks.signature) errors.push("signature: does not verify against the public key")
    } catch (cause) {
      errors.push(`signature: ${errorText(cause)}`)
    }
  } else {
    errors.push("signature: no canonical bytes to verify")
  }

  if (input.previous != null) {
    const problems = chainProblems(input.signed_payload ?? {}, input.previous)
    checks.chain = problems.length === 0
    for (const problem of problems) errors.push(`chain: ${problem}`)
  }

  const token = input.timestamp_token
  if (token != null && token !== "") {
    checks.timestamp_imprint = false
    if (bytes !== undefined) {
      try {
        const imprint = readTimestampImprint(token)
        if (imprint.hashAlgorithm !== OID_SHA256) {
          errors.push(`timestamp_imprint: hash algorithm ${imprint.hashAlgorithm} is not sha256`)
        } else if (!bytesEqual(imprint.hashedMessage, sha256(bytes))) {
          errors.push("timestamp_imprint: token imprint differs from sha256 of the signed payload")
        } else {
          checks.timestamp_imprint = true
        }
      } catch (cause) {
        errors.push(`timestamp_imprint: cannot read token: ${errorText(cause)}`)
      }
    } else {
      errors.push("timestamp_imprint: no canonical bytes to compare")
    }
  }

  const replay = replayProblems(input.signed_payload ?? {}, input.replay_context)
  if (replay !== undefined) {
    checks.replay_context = replay.length === 0
    for (const problem of replay) errors.push(`replay_context: ${problem}`)
  }

  const valid = Object.values(checks).every((passed) => passed === true)
  return { valid, checks, errors }
}

const SHA256_FORM = /^sha256:[0-9a-f]{64}$/

/** Undefined when there is nothing to check: a receipt without a replay context (1.1) and none given. */
const replayProblems = (payload: Record<string, unknown>, context: ReplayContextInput | null | undefined): string[] | undefined => {
  const committed = "replay_context_hash" in payload || payload.receipt_version === REPLAY_RECEIPT_VERSION
  if (!committed && context == null) return undefined
  const problems: string[] = []
  if (!committed) {
    const given = context!
    if (given.system_prompt_hash != null || given.tool_inputs_hash != null || given.model_params != null || given.execution_env != null) {
      problems.push("the receipt commits to no replay context, but one was given")
    }
    return problems
  }
  const hash = payload.replay_context_hash
  if (payload.receipt_version !== REPLAY_RECEIPT_VERSION) problems.push(`replay_context_hash in a receipt of version ${String(payload.receipt_version)}, not ${REPLAY_RECEIPT_VERSION}`)
  if (typeof hash !== "string" || !SHA256_FORM.test(hash)) {
    problems.push(`replay_context_hash ${String(hash)} is not sha256:<64 hex>`)
  } else if (context != null) {
    let computed: string | undefined
    try {
      computed = replayContextHash(context)
    } catch (cause) {
      problems.push(`cannot canonicalize the replay context: ${errorText(cause)}`)
    }
    if (computed !== undefined && computed !== hash) problems.push(`computed ${computed}, receipt says ${hash}`)
  }
  return problems
}

const chainProblems = (
  payload: Record<string, unknown>,
  previous: NonNullable<ReceiptInput["previous"]>
): string[] => {
  const problems: string[] = []
  if (payload.previous_payload_hash !== previous.payload_hash) {
    problems.push(
      `previous_payload_hash ${String(payload.previous_payload_hash)} does not match previous receipt ${String(previous.payload_hash)}`
    )
  }
  const before = previous.signed_payload
  if (before == null) return problems
  try {
    if (payloadHash(before) !== previous.payload_hash) problems.push("previous receipt's payload_hash does not match its signed_payload")
  } catch (cause) {
    problems.push(`cannot canonicalize previous signed_payload: ${errorText(cause)}`)
  }
  const sequence = payload.agent_sequence
  const previousSequence = before.agent_sequence
  if (typeof sequence !== "number" || typeof previousSequence !== "number" || sequence !== previousSequence + 1) {
    problems.push(`agent_sequence ${String(sequence)} does not follow ${String(previousSequence)}`)
  }
  // One chain per (org, agent): a link across chains is not a link.
  for (const field of ["org_uuid", "agent_id"] as const) {
    if (field in payload && field in before && payload[field] !== before[field]) {
      problems.push(`${field} differs from the previous receipt`)
    }
  }
  return problems
}
