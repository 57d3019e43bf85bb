/**
 * IP address parsing, CIDR matching and classification for the outbound client.
 *
 * Everything here is a pure, synchronous function over bytes: an address is 4 or
 * 16 bytes, so every special form (IPv4-mapped, NAT64, 6to4, Teredo, ...) is
 * recognised by its bytes rather than by how the text happened to be written.
 */

export type IpFamily = 4 | 6

export interface IpAddress {
  readonly family: IpFamily
  /** 4 bytes for IPv4, 16 for IPv6 (network order). */
  readonly bytes: Uint8Array
}

export interface Cidr {
  readonly family: IpFamily
  /** The network address, host bits cleared. */
  readonly bytes: Uint8Array
  readonly prefix: number
}

/** Why an address may not be called. Anything else is "public". */
export type AddressRefusal =
  | "unspecified"
  | "this-network"
  | "loopback"
  | "private"
  | "shared-address-space"
  | "link-local"
  | "ietf-protocol-assignment"
  | "documentation"
  | "benchmarking"
  | "deprecated-6to4-relay"
  | "multicast"
  | "reserved"
  | "broadcast"
  | "unique-local"
  | "site-local"
  | "discard-only"
  | "ipv4-compatible"
  | "nat64-local-use"
  | "invalid"

export type AddressClass = "public" | AddressRefusal

// ---------------------------------------------------------------------------
// Parsing

const DECIMAL_OCTET = /^(?:0|[1-9][0-9]{0,2})$/
const HEX_GROUP = /^[0-9a-fA-F]{1,4}$/

/**
 * Strict dotted-quad IPv4: four decimal octets, no leading zeros (a leading zero
 * means octal to some parsers, so it is refused rather than guessed at).
 */
export const parseIPv4 = (text: string): IpAddress | undefined => {
  const parts = text.split(".")
  if (parts.length !== 4) return undefined
  const bytes = new Uint8Array(4)
  for (let i = 0; i < 4; i++) {
    const part = parts[i]
    if (!DECIMAL_OCTET.test(part)) return undefined
    const value = Number(part)
    if (value > 255) return undefined
    bytes[i] = value
  }
  return { family: 4, bytes }
}

/**
 * IPv6 in any RFC 4291 text form: full, `::`-compressed, or with an IPv4 tail
 * (`::ffff:10.0.0.1`). A zone (`fe80::1%eth0`) is accepted and ignored: it does
 * not change which range the address belongs to.
 */
export const parseIPv6 = (text: string): IpAddress | undefined => {
  const zoneAt = text.indexOf("%")
  let body = zoneAt === -1 ? text : text.slice(0, zoneAt)
  if (zoneAt !== -1 && zoneAt === text.length - 1) return undefined
  if (body.length === 0) return undefined

  // An IPv4 tail stands for the last two groups.
  let tail: Uint8Array | undefined
  const lastColon = body.lastIndexOf(":")
  if (lastColon === -1) return undefined
  if (body.indexOf(".", lastColon) !== -1) {
    const v4 = parseIPv4(body.slice(lastColon + 1))
    if (v4 === undefined) return undefined
    tail = v4.bytes
    // Keep the colon so "::1.2.3.4" still ends in "::" and splits correctly.
    body = body.slice(0, lastColon + 1)
    if (!body.endsWith("::")) body = body.slice(0, -1)
  }
  const groupsWanted = tail === undefined ? 8 : 6

  const doubleAt = body.indexOf("::")
  if (doubleAt !== -1 && body.indexOf("::", doubleAt + 1) !== -1) return undefined

  const splitGroups = (part: string): Array<number> | undefined => {
    if (part.length === 0) return []
    const out: Array<number> = []
    for (const group of part.split(":")) {
      if (!HEX_GROUP.test(group)) return undefined
      out.push(Number.parseInt(group, 16))
    }
    return out
  }

  let groups: Array<number>
  if (doubleAt === -1) {
    const all = splitGroups(body)
    if (all === undefined || all.length !== groupsWanted) return undefined
    groups = all
  } else {
    const head = splitGroups(body.slice(0, doubleAt))
    const rest = splitGroups(body.slice(doubleAt + 2))
    if (head === undefined || rest === undefined) return undefined
    const missing = groupsWanted - head.length - rest.length
    // "::" must stand for at least one group.
    if (missing < 1) return undefined
    groups = [...head, ...new Array<number>(missing).fill(0), ...rest]
  }

  const bytes = new Uint8Array(16)
  groups.forEach((group, i) => {
    bytes[i * 2] = group >> 8
    bytes[i * 2 + 1] = group & 0xff
  })
  if (tail !== undefined) bytes.set(tail, 12)
  return { family: 6, bytes }
}

/** Either family; an IPv6 literal may be given in URL brackets (`[::1]`). */
export const parseIp = (text: string): IpAddress | undefined => {
  if (text.startsWith("[") && text.endsWith("]")) return parseIPv6(text.slice(1, -1))
  return text.includes(":") ? parseIPv6(text) : parseIPv4(text)
}

/**
 * `10.0.0.0/8`, `fc00::/7`, or a bare address (a single host). Host bits set
 * below the prefix are cleared (`127.0.0.1/8` means `127.0.0.0/8`).
 */
export const parseCidr = (text: string): Cidr | undefined => {
  const trimmed = text.trim()
  const slash = trimmed.indexOf("/")
  const address = parseIp(slash === -1 ? trimmed : trimmed.slice(0, slash))
  if (address === undefined) return undefined
  const maxPrefix = address.family === 4 ? 32 : 128
  let prefix = maxPrefix
  if (slash !== -1) {
    const prefixText = trimmed.slice(slash + 1)
    if (!/^(?:0|[1-9][0-9]{0,2})$/.test(prefixText)) return undefined
    prefix = Number(prefixText)
    if (prefix > maxPrefix) return undefined
  }
  return { family: address.family, bytes: maskBytes(address.bytes, prefix), prefix }
}

const maskBytes = (bytes: Uint8Array, prefix: number): Uint8Array => {
  const out = new Uint8Array(bytes.length)
  for (let i = 0; i < bytes.length; i++) {
    const bitsHere = Math.max(0, Math.min(8, prefix - i * 8))
    out[i] = bytes[i] & ((0xff << (8 - bitsHere)) & 0xff)
  }
  return out
}

// ---------------------------------------------------------------------------
// Formatting

/** Dotted quad, or compressed lowercase IPv6 exactly as the WHATWG URL parser prints it. */
export const formatIp = (address: IpAddress): string => {
  const b = address.bytes
  if (address.family === 4) return `${b[0]}.${b[1]}.${b[2]}.${b[3]}`
  const groups: Array<number> = []
  for (let i = 0; i < 16; i += 2) groups.push((b[i] << 8) | b[i + 1])
  // Compress the first longest run of two or more zero groups (RFC 5952).
  let bestStart = -1
  let bestLength = 1
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++
      continue
    }
    let end = i
    while (end < 8 && groups[end] === 0) end++
    if (end - i > bestLength) {
      bestStart = i
      bestLength = end - i
    }
    i = end
  }
  const hex = (list: Array<number>) => list.map((g) => g.toString(16)).join(":")
  if (bestStart === -1) return hex(groups)
  return `${hex(groups.slice(0, bestStart))}::${hex(groups.slice(bestStart + bestLength))}`
}

// ---------------------------------------------------------------------------
// Embedded IPv4 forms

const startsWith = (bytes: Uint8Array, prefixBytes: ReadonlyArray<number>): boolean =>
  prefixBytes.every((value, i) => bytes[i] === value)

const ipv4 = (bytes: Uint8Array): IpAddress => ({ family: 4, bytes })

const MAPPED_PREFIX = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]

/** `::ffff:a.b.c.d` (however it was written) → `a.b.c.d`; anything else unchanged. */
export const unmapIPv4 = (address: IpAddress): IpAddress =>
  address.family === 6 && startsWith(address.bytes, MAPPED_PREFIX)
    ? ipv4(address.bytes.slice(12, 16))
    : address

/** `a.b.c.d` → `::ffff:a.b.c.d`. */
export const mapIPv4 = (address: IpAddress): IpAddress => {
  if (address.family === 6) return address
  const bytes = new Uint8Array(16)
  bytes[10] = 0xff
  bytes[11] = 0xff
  bytes.set(address.bytes, 12)
  return { family: 6, bytes }
}

// ---------------------------------------------------------------------------
// CIDR matching

const prefixMatches = (network: Uint8Array, bytes: Uint8Array, prefix: number): boolean => {
  const fullBytes = prefix >> 3
  for (let i = 0; i < fullBytes; i++) if (network[i] !== bytes[i]) return false
  const remainingBits = prefix & 7
  if (remainingBits === 0) return true
  const mask = (0xff << (8 - remainingBits)) & 0xff
  return (network[fullBytes] & mask) === (bytes[fullBytes] & mask)
}

/**
 * Whether the range holds the address. An IPv4-mapped IPv6 address and its IPv4
 * form are the same host, so each matches ranges written in the other family.
 */
export const cidrContains = (cidr: Cidr, address: IpAddress): boolean => {
  if (cidr.family === address.family) return prefixMatches(cidr.bytes, address.bytes, cidr.prefix)
  if (cidr.family === 4) {
    const unmapped = unmapIPv4(address)
    return unmapped.family === 4 && prefixMatches(cidr.bytes, unmapped.bytes, cidr.prefix)
  }
  return prefixMatches(cidr.bytes, mapIPv4(address).bytes, cidr.prefix)
}

export const formatCidr = (cidr: Cidr): string => `${formatIp({ family: cidr.family, bytes: cidr.bytes })}/${cidr.prefix}`

// ---------------------------------------------------------------------------
// Classification

interface Range {
  readonly cidr: Cidr
  readonly reason: AddressRefusal
}

const range = (text: string, reason: AddressRefusal): Range => {
  const cidr = parseCidr(text)
  if (cidr === undefined) throw new Error(`bad built-in range ${text}`)
  return { cidr, reason }
}

// IANA IPv4 special-purpose registry, plus multicast and the reserved block.
// Order matters where ranges nest (0.0.0.0/32 before 0/8, broadcast before 240/4).
const IPV4_RANGES: ReadonlyArray<Range> = [
  range("0.0.0.0/32", "unspecified"),
  range("0.0.0.0/8", "this-network"),
  range("10.0.0.0/8", "private"),
  range("100.64.0.0/10", "shared-address-space"),
  range("127.0.0.0/8", "loopback"),
  range("169.254.0.0/16", "link-local"),
  range("172.16.0.0/12", "private"),
  range("192.0.0.0/24", "ietf-protocol-assignment"),
  range("192.0.2.0/24", "documentation"),
  range("192.88.99.0/24", "deprecated-6to4-relay"),
  range("192.168.0.0/16", "private"),
  range("198.18.0.0/15", "benchmarking"),
  range("198.51.100.0/24", "documentation"),
  range("203.0.113.0/24", "documentation"),
  range("224.0.0.0/4", "multicast"),
  range("255.255.255.255/32", "broadcast"),
  range("240.0.0.0/4", "reserved")
]

// IPv6 ranges that refuse outright. Forms embedding an IPv4 address are handled
// before this list; everything outside 2000::/3 is refused after it.
const IPV6_RANGES: ReadonlyArray<Range> = [
  range("::/128", "unspecified"),
  range("::1/128", "loopback"),
  range("64:ff9b:1::/48", "nat64-local-use"),
  range("100::/64", "discard-only"),
  range("2001:2::/48", "benchmarking"),
  range("2001:db8::/32", "documentation"),
  range("2001::/23", "ietf-protocol-assignment"),
  range("3fff::/20", "documentation"),
  range("fc00::/7", "unique-local"),
  range("fe80::/10", "link-local"),
  range("fec0::/10", "site-local"),
  range("ff00::/8", "multicast")
]

const IPV4_COMPATIBLE = range("::/96", "ipv4-compatible").cidr
const NAT64_WELL_KNOWN = range("64:ff9b::/96", "reserved").cidr
const SIX_TO_FOUR = range("2002::/16", "reserved").cidr
const TEREDO = range("2001::/32", "reserved").cidr
const GLOBAL_UNICAST = range("2000::/3", "reserved").cidr

const classifyIPv4Bytes = (bytes: Uint8Array): AddressClass => {
  for (const { cidr, reason } of IPV4_RANGES) {
    if (prefixMatches(cidr.bytes, bytes, cidr.prefix)) return reason
  }
  return "public"
}

const classifyIPv6 = (address: IpAddress): AddressClass => {
  const bytes = address.bytes
  // IPv4-mapped and NAT64 (64:ff9b::/96) reach exactly the embedded IPv4 host.
  if (startsWith(bytes, MAPPED_PREFIX) || cidrContains(NAT64_WELL_KNOWN, address)) {
    return classifyIPv4Bytes(bytes.slice(12, 16))
  }
  for (const { cidr, reason } of IPV6_RANGES.slice(0, 2)) {
    if (cidrContains(cidr, address)) return reason
  }
  // Deprecated IPv4-compatible form: never routed, so refused whatever it embeds,
  // but a private embedded address is reported as what it is.
  if (cidrContains(IPV4_COMPATIBLE, address)) {
    const embedded = classifyIPv4Bytes(bytes.slice(12, 16))
    return embedded === "public" ? "ipv4-compatible" : embedded
  }
  // 6to4 carries an IPv4 address in bytes 2..5; Teredo carries the client's
  // IPv4 address inverted in bytes 12..15. Refuse both when that address is not public.
  if (cidrContains(SIX_TO_FOUR, address)) return classifyIPv4Bytes(bytes.slice(2, 6))
  if (cidrContains(TEREDO, address)) return classifyIPv4Bytes(bytes.slice(12, 16).map((b) => b ^ 0xff))
  for (const { cidr, reason } of IPV6_RANGES) {
    if (cidrContains(cidr, address)) return reason
  }
  return cidrContains(GLOBAL_UNICAST, address) ? "public" : "reserved"
}

/** "public" for an address anyone may call, otherwise why not. Unparsable text is "invalid". */
export const classifyAddress = (address: string | IpAddress): AddressClass => {
  const parsed = typeof address === "string" ? parseIp(address) : address
  if (parsed === undefined) return "invalid"
  return parsed.family === 4 ? classifyIPv4Bytes(parsed.bytes) : classifyIPv6(parsed)
}

/**
 * Classes no allow-list opens: they are not a single reachable host (0.0.0.0
 * reaches the local machine on Linux; multicast and broadcast reach many).
 */
export const NEVER_ALLOWED: ReadonlySet<AddressClass> = new Set<AddressClass>([
  "unspecified",
  "this-network",
  "multicast",
  "broadcast",
  "invalid"
])
