/**
 * IP address parsing, CIDR matching and classification for the outbound client.
 *
 * An address is kept as its 4 or 16 bytes, so every special form (IPv4-mapped, NAT64,
 * 6to4, Teredo, ...) is recognised by its bytes rather than by how the text was written.
 *
 * Libraries do the work: `node:net`'s `isIPv4`/`isIPv6` decide which strings are addresses (strict
 * RFC text only: no `0x7f.1`, `127.1`, `0177.0.0.1` or `2130706433`, whose meaning differs
 * between parsers), and `ipaddr.js` turns them into bytes, prints them, builds masks and
 * matches ranges. Still written here, because neither library has them: the table of
 * refused ranges with our reasons (finer than `ipaddr.js`'s `range()`, which for instance
 * puts 0.0.0.0 and 0.1.2.3 in one class), the IPv4 addresses embedded in NAT64, 6to4,
 * Teredo and IPv4-compatible addresses, the cutting of a zone (`%eth0`, any text, as
 * before: `isIPv6` takes fewer characters), and the rewriting of an IPv4 tail (`::1.2.3.4`)
 * to hex before `ipaddr.js` sees it, since it would read `::1.2.3.4` as `::ffff:1.2.3.4`.
 */
import { isIPv4, isIPv6 } from "node:net"
import ipaddr from "ipaddr.js"

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

type Lib = ipaddr.IPv4 | ipaddr.IPv6
type RangeList = Record<string, Array<[Lib, number]>>

const toLib = (address: IpAddress): Lib => ipaddr.fromByteArray(Array.from(address.bytes))
const fromLib = (address: Lib): IpAddress => ({
  family: address.kind() === "ipv4" ? 4 : 6,
  bytes: Uint8Array.from(address.toByteArray())
})

// ---------------------------------------------------------------------------
// Parsing

/** Strict dotted quad: four decimal octets, no leading zeros (octal to some parsers). */
export const parseIPv4 = (text: string): IpAddress | undefined => (isIPv4(text) ? fromLib(ipaddr.IPv4.parse(text)) : undefined)

/**
 * IPv6 in any RFC 4291 text form: full, `::`-compressed, or with an IPv4 tail
 * (`::ffff:10.0.0.1`). A zone (`fe80::1%eth0`, any non-empty text: `isIPv6` allows
 * fewer characters) is cut off and ignored: it does not change the address's range.
 */
export const parseIPv6 = (text: string): IpAddress | undefined => {
  const zoneAt = text.indexOf("%")
  let body = zoneAt === -1 ? text : text.slice(0, zoneAt)
  if (zoneAt === text.length - 1 || !isIPv6(body)) return undefined
  const tail = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(body)
  if (tail !== null) {
    const [a, b, c, d] = ipaddr.IPv4.parse(tail[2]).octets
    body = `${tail[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  return fromLib(ipaddr.IPv6.parse(body))
}

/** Either family; an IPv6 literal may be given in URL brackets (`[::1]`). */
export const parseIp = (text: string): IpAddress | undefined => {
  if (text.startsWith("[") && text.endsWith("]")) return parseIPv6(text.slice(1, -1))
  return text.includes(":") ? parseIPv6(text) : parseIPv4(text)
}

/**
 * `10.0.0.0/8`, `fc00::/7`, or a bare address (a single host). Host bits set
 * below the prefix are cleared (`127.0.0.1/8` means `127.0.0.0/8`). Not
 * `ipaddr.parseCIDR`: it reads legacy IPv4 forms and prefixes such as `08`.
 */
export const parseCidr = (text: string): Cidr | undefined => {
  const [host, prefixText, ...rest] = text.trim().split("/")
  const address = parseIp(host)
  if (address === undefined || rest.length > 0) return undefined
  const maxPrefix = address.family === 4 ? 32 : 128
  if (prefixText !== undefined && !/^(?:0|[1-9][0-9]{0,2})$/.test(prefixText)) return undefined
  const prefix = prefixText === undefined ? maxPrefix : Number(prefixText)
  if (prefix > maxPrefix) return undefined
  const mask = (address.family === 4 ? ipaddr.IPv4 : ipaddr.IPv6).subnetMaskFromPrefixLength(prefix).toByteArray()
  return { family: address.family, bytes: address.bytes.map((byte, i) => byte & mask[i]), prefix }
}

// ---------------------------------------------------------------------------
// Formatting

/** Dotted quad, or compressed lowercase IPv6 (RFC 5952) exactly as the WHATWG URL parser prints it. */
export const formatIp = (address: IpAddress): string => toLib(address).toString()

export const formatCidr = (cidr: Cidr): string => `${formatIp(cidr)}/${cidr.prefix}`

// ---------------------------------------------------------------------------
// IPv4-mapped forms and CIDR matching

// Not `isIPv4MappedAddress()`/`toIPv4Address()`: both go through `range()`, a scan of
// every special range of the library, which made a containment check twice as slow.
const MAPPED = ipaddr.parseCIDR("::ffff:0:0/96")

/** `::ffff:a.b.c.d` (however it was written) → `a.b.c.d`; anything else unchanged. */
export const unmapIPv4 = (address: IpAddress): IpAddress =>
  address.family === 6 && toLib(address).match(MAPPED) ? { family: 4, bytes: address.bytes.slice(12) } : address

/** `a.b.c.d` → `::ffff:a.b.c.d`. */
export const mapIPv4 = (address: IpAddress): IpAddress =>
  address.family === 4 ? fromLib(new ipaddr.IPv4(Array.from(address.bytes)).toIPv4MappedAddress()) : address

/**
 * Whether the range holds the address. An IPv4-mapped IPv6 address and its IPv4
 * form are the same host, so each matches ranges written in the other family.
 */
export const cidrContains = (cidr: Cidr, address: IpAddress): boolean => {
  const candidate = cidr.family === 4 ? unmapIPv4(address) : mapIPv4(address)
  return candidate.family === cidr.family && toLib(candidate).match(toLib(cidr), cidr.prefix)
}

// ---------------------------------------------------------------------------
// Classification

/** Ranges by name; the first name with a range holding the address wins (`ipaddr.subnetMatch`). */
const rangeList = (ranges: ReadonlyArray<readonly [string, ReadonlyArray<string>]>): RangeList =>
  Object.fromEntries(ranges.map(([name, cidrs]) => [name, cidrs.map((cidr) => ipaddr.parseCIDR(cidr))]))

// IANA IPv4 special-purpose registry, plus multicast and the reserved block.
// Order matters where ranges nest (0.0.0.0/32 before 0/8, broadcast before 240/4).
const IPV4_RANGES = rangeList([
  ["unspecified", ["0.0.0.0/32"]],
  ["this-network", ["0.0.0.0/8"]],
  ["private", ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"]],
  ["shared-address-space", ["100.64.0.0/10"]],
  ["loopback", ["127.0.0.0/8"]],
  ["link-local", ["169.254.0.0/16"]],
  ["ietf-protocol-assignment", ["192.0.0.0/24"]],
  ["documentation", ["192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"]],
  ["deprecated-6to4-relay", ["192.88.99.0/24"]],
  ["benchmarking", ["198.18.0.0/15"]],
  ["multicast", ["224.0.0.0/4"]],
  ["broadcast", ["255.255.255.255/32"]],
  ["reserved", ["240.0.0.0/4"]]
])

// IPv6, in order. The names in EMBEDDING are forms carrying an IPv4 address, classified by
// it; "public" is 2000::/3 (global unicast); anything in no range is "reserved".
const EMBEDDING = ["ipv4-mapped", "nat64", "ipv4-compatible", "6to4", "teredo"] as const
const IPV6_RANGES = rangeList([
  ["unspecified", ["::/128"]],
  ["loopback", ["::1/128"]],
  ["ipv4-mapped", ["::ffff:0:0/96"]],
  ["nat64", ["64:ff9b::/96"]],
  ["ipv4-compatible", ["::/96"]],
  ["6to4", ["2002::/16"]],
  ["teredo", ["2001::/32"]],
  ["nat64-local-use", ["64:ff9b:1::/48"]],
  ["discard-only", ["100::/64"]],
  ["benchmarking", ["2001:2::/48"]],
  ["documentation", ["2001:db8::/32", "3fff::/20"]],
  ["ietf-protocol-assignment", ["2001::/23"]],
  ["unique-local", ["fc00::/7"]],
  ["link-local", ["fe80::/10"]],
  ["site-local", ["fec0::/10"]],
  ["multicast", ["ff00::/8"]],
  ["public", ["2000::/3"]]
])

const classifyIPv4Bytes = (bytes: ArrayLike<number>): AddressClass =>
  ipaddr.subnetMatch(new ipaddr.IPv4(Array.from(bytes)), IPV4_RANGES, "public") as AddressClass

const classifyIPv6 = (address: IpAddress): AddressClass => {
  const name = ipaddr.subnetMatch(toLib(address), IPV6_RANGES, "reserved") as AddressClass | (typeof EMBEDDING)[number]
  const bytes = address.bytes
  switch (name) {
    // IPv4-mapped and NAT64 (64:ff9b::/96) reach exactly the embedded IPv4 host.
    case "ipv4-mapped":
    case "nat64":
      return classifyIPv4Bytes(bytes.subarray(12, 16))
    // Deprecated IPv4-compatible form: never routed, so refused whatever it embeds,
    // but a private embedded address is reported as what it is.
    case "ipv4-compatible": {
      const embedded = classifyIPv4Bytes(bytes.subarray(12, 16))
      return embedded === "public" ? "ipv4-compatible" : embedded
    }
    // 6to4 carries an IPv4 address in bytes 2..5; Teredo carries the client's
    // IPv4 address inverted in bytes 12..15. Refuse both when that address is not public.
    case "6to4":
      return classifyIPv4Bytes(bytes.subarray(2, 6))
    case "teredo":
      return classifyIPv4Bytes(bytes.subarray(12, 16).map((b) => b ^ 0xff))
    default:
      return name
  }
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
