// A small DER writer for the stamping hot path: asn1js takes milliseconds per token,
// while a token is mostly constant fragments (prepared once with asn1js/pkijs) around
// a few dynamic values.
import { randomView } from "../../platform/ids.js"

/** A view on exactly the bytes of an ArrayBuffer or view, without copying. */
export const bytesOf = (source: ArrayBuffer | ArrayBufferView): Uint8Array =>
  source instanceof ArrayBuffer
    ? new Uint8Array(source)
    : new Uint8Array(source.buffer, source.byteOffset, source.byteLength)

/** Lexicographic order of encodings, as DER requires for the members of a SET OF. */
export const compareBytes = (left: Uint8Array, right: Uint8Array): number => {
  const length = Math.min(left.length, right.length)
  for (let index = 0; index < length; index++) {
    if (left[index] !== right[index]) return left[index] - right[index]
  }
  return left.length - right.length
}

const encodeLength = (length: number): Uint8Array => {
  if (length < 0x80) return Uint8Array.of(length)
  const bytes: number[] = []
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest & 0xff)
  return Uint8Array.of(0x80 | bytes.length, ...bytes)
}

/** One DER tag-length-value whose content is the concatenation of `parts`. */
export const tlv = (tag: number, ...parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  let contentLength = 0
  for (const part of parts) contentLength += part.length
  const length = encodeLength(contentLength)
  const out = new Uint8Array(1 + length.length + contentLength)
  out[0] = tag
  out.set(length, 1)
  let offset = 1 + length.length
  for (const part of parts) {
    out.set(part, offset)
    offset += part.length
  }
  return out
}

/** Size of the tag and length octets of a TLV whose content is `contentLength` bytes. */
export const headerLength = (contentLength: number): number =>
  contentLength < 0x80 ? 2 : contentLength < 0x100 ? 3 : contentLength < 0x10000 ? 4 : contentLength < 0x1000000 ? 5 : 6

/** Writes a tag and DER length octets at `offset`; returns the offset of the content. */
export const writeHeader = (out: Uint8Array, offset: number, tag: number, contentLength: number): number => {
  out[offset++] = tag
  if (contentLength < 0x80) {
    out[offset++] = contentLength
    return offset
  }
  const octets = headerLength(contentLength) - 2
  out[offset++] = 0x80 | octets
  for (let shift = (octets - 1) * 8; shift >= 0; shift -= 8) out[offset++] = (contentLength / 2 ** shift) & 0xff
  return offset
}

export const TAG = {
  integer: 0x02,
  octetString: 0x04,
  utcTime: 0x17,
  generalizedTime: 0x18,
  sequence: 0x30,
  set: 0x31,
  contextConstructed0: 0xa0,
} as const

/** Minimal two's-complement INTEGER, as DER requires. */
export const derInteger = (value: bigint): Uint8Array => {
  const bytes: number[] = []
  let rest = value
  for (;;) {
    const byte = Number(rest & 0xffn)
    bytes.unshift(byte)
    rest >>= 8n
    // Stop once the remaining bits are pure sign extension of the byte just written.
    if ((rest === 0n && (byte & 0x80) === 0) || (rest === -1n && (byte & 0x80) !== 0)) break
  }
  return tlv(TAG.integer, Uint8Array.from(bytes))
}

const twoDigits = (value: number): string => (value < 10 ? "0" : "") + value

const ascii = (text: string): Uint8Array => {
  const out = new Uint8Array(text.length)
  for (let index = 0; index < text.length; index++) out[index] = text.charCodeAt(index)
  return out
}

/** GeneralizedTime in UTC with milliseconds when non-zero, trailing zeros dropped (RFC 3161 §2.4.2). */
export const derGeneralizedTime = (date: Date): Uint8Array => {
  let text =
    String(date.getUTCFullYear()).padStart(4, "0") +
    twoDigits(date.getUTCMonth() + 1) +
    twoDigits(date.getUTCDate()) +
    twoDigits(date.getUTCHours()) +
    twoDigits(date.getUTCMinutes()) +
    twoDigits(date.getUTCSeconds())
  const millis = date.getUTCMilliseconds()
  if (millis !== 0) text += "." + String(millis).padStart(3, "0").replace(/0+$/, "")
  return tlv(TAG.generalizedTime, ascii(text + "Z"))
}

/** UTCTime (years 1950–2049), as CMS signingTime requires for those years. */
export const derUtcTime = (date: Date): Uint8Array => {
  const text =
    twoDigits(date.getUTCFullYear() % 100) +
    twoDigits(date.getUTCMonth() + 1) +
    twoDigits(date.getUTCDate()) +
    twoDigits(date.getUTCHours()) +
    twoDigits(date.getUTCMinutes()) +
    twoDigits(date.getUTCSeconds())
  return tlv(TAG.utcTime, ascii(text + "Z"))
}

/** A random positive integer of at most `byteLength` bytes, for serials and nonces. */
export const randomPositiveInteger = (byteLength: number): bigint => {
  const bytes = Buffer.from(randomView(byteLength))
  // Clearing the sign bit keeps it positive; the encoders pick the minimal DER form.
  bytes[0] &= 0x7f
  return BigInt("0x" + bytes.toString("hex"))
}
