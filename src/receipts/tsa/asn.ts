// Shared ASN.1 vocabulary for the RFC 3161 authority, client and parser.

export const OID = {
  sha1: "1.3.14.3.2.26",
  sha256: "2.16.840.1.101.3.4.2.1",
  sha384: "2.16.840.1.101.3.4.2.2",
  sha512: "2.16.840.1.101.3.4.2.3",
  rsaEncryption: "1.2.840.113549.1.1.1",
  rsaPss: "1.2.840.113549.1.1.10",
  sha1WithRsa: "1.2.840.113549.1.1.5",
  sha256WithRsa: "1.2.840.113549.1.1.11",
  sha384WithRsa: "1.2.840.113549.1.1.12",
  sha512WithRsa: "1.2.840.113549.1.1.13",
  ecPublicKey: "1.2.840.10045.2.1",
  ecdsaWithSha256: "1.2.840.10045.4.3.2",
  ecdsaWithSha384: "1.2.840.10045.4.3.3",
  ecdsaWithSha512: "1.2.840.10045.4.3.4",
  ed25519: "1.3.101.112",
  signedData: "1.2.840.113549.1.7.2",
  tstInfo: "1.2.840.113549.1.9.16.1.4",
  contentTypeAttr: "1.2.840.113549.1.9.3",
  messageDigestAttr: "1.2.840.113549.1.9.4",
  signingTimeAttr: "1.2.840.113549.1.9.5",
  signingCertificateAttr: "1.2.840.113549.1.9.16.2.12",
  signingCertificateV2Attr: "1.2.840.113549.1.9.16.2.47",
  commonName: "2.5.4.3",
  keyUsage: "2.5.29.15",
  extKeyUsage: "2.5.29.37",
  basicConstraints: "2.5.29.19",
  subjectKeyIdentifier: "2.5.29.14",
  timeStamping: "1.3.6.1.5.5.7.3.8",
} as const

/** node:crypto hash names for the digest OIDs a timestamp token may use. */
export const hashNameByOid: Readonly<Record<string, string>> = {
  [OID.sha1]: "sha1",
  [OID.sha256]: "sha256",
  [OID.sha384]: "sha384",
  [OID.sha512]: "sha512",
}

/** A view on exactly the bytes of an ArrayBuffer or view, without copying. */
export const bytesOf = (source: ArrayBuffer | ArrayBufferView): Uint8Array =>
  source instanceof ArrayBuffer
    ? new Uint8Array(source)
    : new Uint8Array(source.buffer, source.byteOffset, source.byteLength)

export const bytesEqual = (left: Uint8Array, right: Uint8Array): boolean => {
  if (left.length !== right.length) return false
  for (let index = 0; index < left.length; index++) {
    if (left[index] !== right[index]) return false
  }
  return true
}

/** Lexicographic order of encodings, as DER requires for the members of a SET OF. */
export const compareBytes = (left: Uint8Array, right: Uint8Array): number => {
  const length = Math.min(left.length, right.length)
  for (let index = 0; index < length; index++) {
    if (left[index] !== right[index]) return left[index] - right[index]
  }
  return left.length - right.length
}


// A small DER writer for the stamping hot path: asn1js takes milliseconds per token,
// while the token is mostly constant fragments (prepared once with asn1js/pkijs)
// around a few dynamic values.

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

export const TAG = {
  boolean: 0x01,
  integer: 0x02,
  bitString: 0x03,
  oid: 0x06,
  utf8String: 0x0c,
  octetString: 0x04,
  utcTime: 0x17,
  generalizedTime: 0x18,
  sequence: 0x30,
  set: 0x31,
  contextConstructed0: 0xa0,
  contextConstructed1: 0xa1,
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

// A small strict DER reader for the parse/verify paths: through asn1js + pkijs one
// token took ~15 ms to parse and ~23 ms to verify; this reads it in microseconds.

export interface DerNode {
  /** The identifier octet (single-byte tags only, which is all X.509/CMS/TSP use). */
  readonly tag: number
  /** The whole encoding: tag, length and content. */
  readonly der: Uint8Array
  readonly content: Uint8Array
}

export class DerError extends Error {
  override readonly name = "DerError"
}

const readNode = (bytes: Uint8Array, offset: number): DerNode => {
  if (offset + 2 > bytes.length) throw new DerError("truncated DER header")
  const tag = bytes[offset]
  if ((tag & 0x1f) === 0x1f) throw new DerError("multi-byte tags are not supported")
  let cursor = offset + 1
  const first = bytes[cursor++]
  let length = first
  if (first & 0x80) {
    const count = first & 0x7f
    // 0x80 is BER's indefinite length, which DER forbids; four bytes is plenty here.
    if (count === 0 || count > 4) throw new DerError("unsupported DER length")
    if (cursor + count > bytes.length) throw new DerError("truncated DER length")
    length = 0
    for (let index = 0; index < count; index++) length = length * 256 + bytes[cursor++]
  }
  const end = cursor + length
  if (end > bytes.length) throw new DerError("DER value runs past its container")
  return { tag, der: bytes.subarray(offset, end), content: bytes.subarray(cursor, end) }
}

/** The single DER value that must fill `bytes` exactly. */
export const readDer = (bytes: Uint8Array): DerNode => {
  const node = readNode(bytes, 0)
  if (node.der.length !== bytes.length) throw new DerError("trailing bytes after the DER value")
  return node
}

/** The values inside a constructed node, in order. */
export const childrenOf = (node: DerNode): DerNode[] => {
  if ((node.tag & 0x20) === 0) throw new DerError("expected a constructed DER value")
  const children: DerNode[] = []
  for (let offset = 0; offset < node.content.length; ) {
    const child = readNode(node.content, offset)
    children.push(child)
    offset += child.der.length
  }
  return children
}

export const expectTag = (node: DerNode | undefined, tag: number, what: string): DerNode => {
  if (node === undefined || node.tag !== tag) throw new DerError(`${what}: unexpected DER structure`)
  return node
}

export const readOid = (node: DerNode): string => {
  expectTag(node, TAG.oid, "OBJECT IDENTIFIER")
  const arcs: bigint[] = []
  let value = 0n
  for (const byte of node.content) {
    value = (value << 7n) | BigInt(byte & 0x7f)
    if ((byte & 0x80) === 0) {
      arcs.push(value)
      value = 0n
    }
  }
  if (arcs.length === 0 || (node.content[node.content.length - 1] & 0x80) !== 0) throw new DerError("malformed OID")
  const head = arcs[0]
  const first = head < 40n ? 0n : head < 80n ? 1n : 2n
  return [first, head - first * 40n, ...arcs.slice(1)].join(".")
}

export const readInteger = (node: DerNode): bigint => {
  expectTag(node, TAG.integer, "INTEGER")
  if (node.content.length === 0) throw new DerError("empty INTEGER")
  let value = 0n
  for (const byte of node.content) value = (value << 8n) | BigInt(byte)
  // Negative when the sign bit is set: subtract 2^(8n).
  if (node.content[0] & 0x80) value -= 1n << BigInt(8 * node.content.length)
  return value
}

const GENERALIZED_TIME = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:[.,](\d+))?Z$/

/** A UTC GeneralizedTime as RFC 3161 mandates (seconds, optional fraction, "Z"). */
export const readGeneralizedTime = (node: DerNode): Date => {
  expectTag(node, TAG.generalizedTime, "GeneralizedTime")
  const match = GENERALIZED_TIME.exec(Buffer.from(node.content).toString("latin1"))
  if (match === null) throw new DerError("GeneralizedTime is not YYYYMMDDHHMMSS[.f]Z")
  const [, year, month, day, hour, minute, second, fraction] = match
  // Milliseconds from the first three fraction digits, truncated, without float rounding.
  const millis = fraction === undefined ? 0 : Number((fraction + "00").slice(0, 3))
  const date = new Date(0)
  // setUTCFullYear keeps years below 100 literal (Date.UTC would map 99 to 1999).
  date.setUTCFullYear(Number(year), Number(month) - 1, Number(day))
  date.setUTCHours(Number(hour), Number(minute), Number(second), millis)
  return date
}

/** The AlgorithmIdentifier's OID. */
export const algorithmOid = (node: DerNode): string => readOid(childrenOf(expectTag(node, TAG.sequence, "AlgorithmIdentifier"))[0])

/** The TBSCertificate fields of a DER certificate. */
const tbsFields = (certificateDer: Uint8Array): { fields: DerNode[]; first: number } => {
  const certificate = expectTag(readDer(certificateDer), TAG.sequence, "certificate")
  const tbs = expectTag(childrenOf(certificate)[0], TAG.sequence, "TBSCertificate")
  const fields = childrenOf(tbs)
  // An explicit [0] version shifts the remaining fields by one.
  return { fields, first: fields[0]?.tag === TAG.contextConstructed0 ? 1 : 0 }
}

/** The DER of the issuer Name and serialNumber INTEGER inside a certificate, byte for byte. */
export const issuerAndSerialOf = (certificateDer: Uint8Array): { issuerDer: Uint8Array; serialDer: Uint8Array } => {
  const { fields, first } = tbsFields(certificateDer)
  const serial = expectTag(fields[first], TAG.integer, "certificate serialNumber")
  const issuer = expectTag(fields[first + 2], TAG.sequence, "certificate issuer")
  return { issuerDer: new Uint8Array(issuer.der), serialDer: new Uint8Array(serial.der) }
}

/** The subjectKeyIdentifier extension value, if the certificate has one. */
export const subjectKeyIdentifierOf = (certificateDer: Uint8Array): Uint8Array | undefined => {
  const { fields } = tbsFields(certificateDer)
  const extensionsWrapper = fields.find((field) => field.tag === 0xa3)
  if (extensionsWrapper === undefined) return undefined
  const extensions = childrenOf(expectTag(childrenOf(extensionsWrapper)[0], TAG.sequence, "extensions"))
  for (const extension of extensions) {
    const parts = childrenOf(extension)
    if (readOid(parts[0]) !== OID.subjectKeyIdentifier) continue
    const value = expectTag(parts[parts.length - 1], TAG.octetString, "extnValue")
    return expectTag(readDer(value.content), TAG.octetString, "subjectKeyIdentifier").content
  }
  return undefined
}
