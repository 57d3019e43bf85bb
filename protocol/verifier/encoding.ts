/**
 * Byte encodings used by receipts, portable to browsers (no Buffer, no node:*).
 *
 * Decoders are strict: a string that is not the one canonical encoding of its
 * bytes is rejected, so two different signature strings can never verify as the
 * same signature.
 */

const BASE64URL_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
const BASE64_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

const decodeTable = (alphabet: string): Int16Array => {
  const table = new Int16Array(128).fill(-1)
  for (let i = 0; i < alphabet.length; i++) table[alphabet.charCodeAt(i)] = i
  return table
}

const BASE64URL_DECODE = decodeTable(BASE64URL_ALPHABET)
const BASE64_DECODE = decodeTable(BASE64_ALPHABET)

export class EncodingError extends Error {
  override readonly name = "EncodingError"
}

const encodeWith = (bytes: Uint8Array, alphabet: string, pad: boolean): string => {
  let out = ""
  let i = 0
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2]
    out += alphabet[n >>> 18] + alphabet[(n >>> 12) & 63] + alphabet[(n >>> 6) & 63] + alphabet[n & 63]
  }
  const rest = bytes.length - i
  if (rest === 1) {
    const n = bytes[i] << 16
    out += alphabet[n >>> 18] + alphabet[(n >>> 12) & 63] + (pad ? "==" : "")
  } else if (rest === 2) {
    const n = (bytes[i] << 16) | (bytes[i + 1] << 8)
    out += alphabet[n >>> 18] + alphabet[(n >>> 12) & 63] + alphabet[(n >>> 6) & 63] + (pad ? "=" : "")
  }
  return out
}

const decodeWith = (text: string, table: Int16Array, what: string): Uint8Array => {
  const length = text.length
  if (length % 4 === 1) throw new EncodingError(`invalid ${what} length`)
  const out = new Uint8Array(Math.floor((length * 3) / 4))
  let bits = 0
  let buffer = 0
  let o = 0
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i)
    const value = code < 128 ? table[code] : -1
    if (value < 0) throw new EncodingError(`invalid ${what} character at ${i}`)
    buffer = ((buffer << 6) | value) & 0xffffff
    bits += 6
    if (bits >= 8) {
      bits -= 8
      out[o++] = (buffer >>> bits) & 0xff
    }
  }
  // Leftover bits must be zero, otherwise several strings would decode to the same bytes.
  if ((buffer & ((1 << bits) - 1)) !== 0) throw new EncodingError(`non-canonical ${what} (trailing bits)`)
  return out
}

/** base64url without padding (RFC 4648 §5). */
export const base64UrlEncode = (bytes: Uint8Array): string => encodeWith(bytes, BASE64URL_ALPHABET, false)

/** Strict base64url decoding: no padding, no whitespace, canonical trailing bits. */
export const base64UrlDecode = (text: string): Uint8Array => decodeWith(text, BASE64URL_DECODE, "base64url")

/** Standard base64 with padding (RFC 4648 §4). */
export const base64Encode = (bytes: Uint8Array): string => encodeWith(bytes, BASE64_ALPHABET, true)

/**
 * Standard base64; padding optional, ASCII whitespace ignored (tokens are often
 * pasted with line breaks), trailing bits must be zero.
 */
export const base64Decode = (text: string): Uint8Array => {
  const compact = text.replace(/[\t\n\r ]/g, "")
  const unpadded = compact.replace(/={1,2}$/, "")
  if (compact.length !== unpadded.length && compact.length % 4 !== 0) {
    throw new EncodingError("invalid base64 padding")
  }
  return decodeWith(unpadded, BASE64_DECODE, "base64")
}

const HEX = "0123456789abcdef"

export const bytesToHex = (bytes: Uint8Array): string => {
  let out = ""
  for (let i = 0; i < bytes.length; i++) out += HEX[bytes[i] >>> 4] + HEX[bytes[i] & 15]
  return out
}

/** Hex (either case) to bytes; throws on odd length or a non-hex character. */
export const hexToBytes = (hex: string): Uint8Array => {
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) throw new EncodingError("invalid hex")
  const out = new Uint8Array(hex.length / 2)
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16)
  return out
}

const utf8Encoder = new TextEncoder()

export const utf8Bytes = (text: string): Uint8Array => utf8Encoder.encode(text)

/** Equality of two byte arrays (not constant time: everything compared here is public). */
export const bytesEqual = (a: Uint8Array, b: Uint8Array): boolean => {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}
