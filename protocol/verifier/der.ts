/**
 * A minimal DER reader, just enough to walk an RFC 3161 TimeStampToken down to
 * its TSTInfo. It reads definite lengths only (DER forbids the indefinite form)
 * and checks every length against the enclosing element, so hostile input fails
 * with a DerError instead of reading out of bounds.
 */

export class DerError extends Error {
  override readonly name = "DerError"
}

export const TagClass = { universal: 0, application: 1, context: 2, private: 3 } as const

export const UniversalTag = {
  boolean: 1,
  integer: 2,
  octetString: 4,
  null: 5,
  oid: 6,
  sequence: 16,
  set: 17,
  generalizedTime: 24
} as const

export interface DerElement {
  readonly tagClass: number
  readonly constructed: boolean
  readonly tagNumber: number
  /** Offset of the first content byte in `source`. */
  readonly contentStart: number
  /** Offset just past the last content byte. */
  readonly contentEnd: number
  readonly source: Uint8Array
}

/** Reads one element starting at `offset`, not reading past `limit`. */
export const readElement = (source: Uint8Array, offset = 0, limit = source.length): DerElement => {
  let p = offset
  const next = (): number => {
    if (p >= limit) throw new DerError("unexpected end of data")
    return source[p++]
  }
  const first = next()
  const tagClass = first >>> 6
  const constructed = (first & 0x20) !== 0
  let tagNumber = first & 0x1f
  if (tagNumber === 0x1f) {
    // High tag number form: base-128 digits, high bit marks continuation.
    tagNumber = 0
    let byte: number
    do {
      byte = next()
      if (tagNumber > 0xffffff) throw new DerError("tag number too large")
      tagNumber = tagNumber * 128 + (byte & 0x7f)
    } while (byte & 0x80)
  }
  const lengthByte = next()
  let length: number
  if (lengthByte < 0x80) {
    length = lengthByte
  } else if (lengthByte === 0x80) {
    throw new DerError("indefinite length is not DER")
  } else {
    const count = lengthByte & 0x7f
    if (count > 4) throw new DerError("length too large")
    length = 0
    for (let i = 0; i < count; i++) length = length * 256 + next()
  }
  const contentStart = p
  const contentEnd = contentStart + length
  if (contentEnd > limit) throw new DerError("element longer than its container")
  return { tagClass, constructed, tagNumber, contentStart, contentEnd, source }
}

/** The child elements of a constructed element, in order. */
export const childrenOf = (element: DerElement): DerElement[] => {
  if (!element.constructed) throw new DerError("expected a constructed element")
  const children: DerElement[] = []
  let offset = element.contentStart
  while (offset < element.contentEnd) {
    const child = readElement(element.source, offset, element.contentEnd)
    children.push(child)
    offset = child.contentEnd
  }
  return children
}

export const contentOf = (element: DerElement): Uint8Array =>
  element.source.subarray(element.contentStart, element.contentEnd)

/** Reads a whole buffer as exactly one element (no trailing bytes). */
export const readSingle = (source: Uint8Array): DerElement => {
  const element = readElement(source, 0, source.length)
  if (element.contentEnd !== source.length) throw new DerError("trailing bytes after element")
  return element
}

export const expectUniversal = (element: DerElement | undefined, tag: number, what: string): DerElement => {
  if (element === undefined) throw new DerError(`missing ${what}`)
  if (element.tagClass !== TagClass.universal || element.tagNumber !== tag) {
    throw new DerError(`expected ${what}`)
  }
  const mustBeConstructed = tag === UniversalTag.sequence || tag === UniversalTag.set
  if (mustBeConstructed !== element.constructed && tag !== UniversalTag.octetString) {
    throw new DerError(`malformed ${what}`)
  }
  return element
}

/** The single element inside an EXPLICIT context tag `[n]`. */
export const explicitContent = (element: DerElement | undefined, tagNumber: number, what: string): DerElement => {
  if (element === undefined) throw new DerError(`missing ${what}`)
  if (element.tagClass !== TagClass.context || element.tagNumber !== tagNumber || !element.constructed) {
    throw new DerError(`expected [${tagNumber}] ${what}`)
  }
  const inner = childrenOf(element)
  if (inner.length !== 1) throw new DerError(`expected one element inside ${what}`)
  return inner[0]
}

/** Dotted form of an OBJECT IDENTIFIER. */
export const readOid = (element: DerElement | undefined, what = "object identifier"): string => {
  const oid = expectUniversal(element, UniversalTag.oid, what)
  const bytes = contentOf(oid)
  if (bytes.length === 0) throw new DerError(`empty ${what}`)
  const arcs: number[] = []
  let value = 0
  for (let i = 0; i < bytes.length; i++) {
    if (value === 0 && bytes[i] === 0x80) throw new DerError(`non-minimal ${what}`)
    if (value > 2 ** 45) throw new DerError(`${what} arc too large`)
    value = value * 128 + (bytes[i] & 0x7f)
    if ((bytes[i] & 0x80) === 0) {
      arcs.push(value)
      value = 0
    } else if (i === bytes.length - 1) {
      throw new DerError(`truncated ${what}`)
    }
  }
  // The first subidentifier packs the first two arcs (X.690 §8.19.4).
  const first = arcs[0]
  const head = first < 40 ? [0, first] : first < 80 ? [1, first - 40] : [2, first - 80]
  return [...head, ...arcs.slice(1)].join(".")
}

/** OCTET STRING content; a constructed (BER-style) string is concatenated. */
export const readOctetString = (element: DerElement | undefined, what = "octet string"): Uint8Array => {
  const octets = expectUniversal(element, UniversalTag.octetString, what)
  if (!octets.constructed) return contentOf(octets)
  const parts = childrenOf(octets).map((part) => readOctetString(part, what))
  const total = parts.reduce((sum, part) => sum + part.length, 0)
  const out = new Uint8Array(total)
  let offset = 0
  for (const part of parts) {
    out.set(part, offset)
    offset += part.length
  }
  return out
}

/** INTEGER content bytes (two's complement, big-endian). */
export const readIntegerBytes = (element: DerElement | undefined, what = "integer"): Uint8Array => {
  const integer = expectUniversal(element, UniversalTag.integer, what)
  const bytes = contentOf(integer)
  if (bytes.length === 0) throw new DerError(`empty ${what}`)
  return bytes
}

const GENERALIZED_TIME = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:\.(\d+))?Z$/

/** GeneralizedTime in its DER form `YYYYMMDDHHMMSS[.fff]Z`, to a Date (millisecond precision). */
export const readGeneralizedTime = (element: DerElement | undefined, what = "time"): Date => {
  const time = expectUniversal(element, UniversalTag.generalizedTime, what)
  const bytes = contentOf(time)
  let text = ""
  for (let i = 0; i < bytes.length; i++) text += String.fromCharCode(bytes[i])
  const match = GENERALIZED_TIME.exec(text)
  if (match === null) throw new DerError(`malformed ${what}: ${text}`)
  const [, year, month, day, hour, minute, second, fraction] = match
  const millis = fraction === undefined ? 0 : Number((fraction + "00").slice(0, 3))
  const [y, mo, d, h, mi, s] = [year, month, day, hour, minute, second].map(Number)
  const date = new Date(0)
  date.setUTCFullYear(y, mo - 1, d)
  date.setUTCHours(h, mi, s, millis)
  // Date silently rolls over out-of-range fields (Feb 30, 24:00): compare back.
  const exact =
    date.getUTCFullYear() === y &&
    date.getUTCMonth() === mo - 1 &&
    date.getUTCDate() === d &&
    date.getUTCHours() === h &&
    date.getUTCMinutes() === mi &&
    date.getUTCSeconds() === s
  if (!exact) throw new DerError(`invalid ${what}: ${text}`)
  return date
}
