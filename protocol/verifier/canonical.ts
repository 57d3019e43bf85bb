import { sha256 } from "@noble/hashes/sha2.js"
import canonicalize from "canonicalize"
import { bytesToHex, utf8Bytes } from "./encoding.js"

/**
 * RFC 8785 (JCS) canonical text of a JSON value. Throws on values JSON cannot
 * represent (NaN, Infinity, lone surrogates, cycles) or on a top-level undefined.
 */
export const canonicalJson = (value: unknown): string => {
  const text = canonicalize(value)
  if (text === undefined) throw new TypeError("value has no JSON representation")
  return text
}

/** UTF-8 bytes of the JCS text: the exact bytes that receipts hash and sign. */
export const canonicalBytes = (value: unknown): Uint8Array => utf8Bytes(canonicalJson(value))

/** `"sha256:" + hex` of the given bytes. */
export const sha256Tagged = (bytes: Uint8Array): string => "sha256:" + bytesToHex(sha256(bytes))

/** `"sha256:" + hex(sha256(JCS bytes))`, the receipt's `payload_hash`. */
export const payloadHash = (payload: unknown): string => sha256Tagged(canonicalBytes(payload))

/** `"sha256:" + hex` of the UTF-8 bytes of a text (action_details_hash, outcome_hash). */
export const textHash = (text: string): string => sha256Tagged(utf8Bytes(text))
