/**
 * What the outbound client may call: the allow-list from the environment, the
 * URL check done before any DNS query, and the check of every resolved address.
 */
import {
  type Cidr,
  cidrContains,
  classifyAddress,
  formatIp,
  type IpAddress,
  NEVER_ALLOWED,
  parseCidr,
  parseIPv4,
  parseIPv6
} from "./addresses.js"
import { type OutboundError, outboundError } from "./errors.js"

export interface OutboundPolicy {
  /** Ranges that may be called even though they are not public (OUTBOUND_ALLOW_PRIVATE). */
  readonly allowPrivate: ReadonlyArray<Cidr>
  /** Plain http:// to addresses inside `allowPrivate` (OUTBOUND_ALLOW_HTTP). */
  readonly allowHttp: boolean
}

/** Public HTTPS only: the default when nothing is configured. */
export const PUBLIC_HTTPS_ONLY: OutboundPolicy = { allowPrivate: [], allowHttp: false }

/** Parses a comma list of CIDRs; throws naming the bad entry, so a typo stops start-up. */
export const parseCidrList = (text: string | undefined, settingName = "OUTBOUND_ALLOW_PRIVATE"): Array<Cidr> => {
  const out: Array<Cidr> = []
  for (const entry of (text ?? "").split(",")) {
    const trimmed = entry.trim()
    if (trimmed.length === 0) continue
    const cidr = parseCidr(trimmed)
    if (cidr === undefined) throw new Error(`${settingName}: "${trimmed}" is not an IP address or CIDR range`)
    out.push(cidr)
  }
  return out
}

/** The policy of the gateway's configuration (OUTBOUND_ALLOW_PRIVATE / OUTBOUND_ALLOW_HTTP as the Config read them). */
export const outboundPolicyOfConfig = (config: { readonly outboundAllowPrivate: string | undefined; readonly outboundAllowHttp: boolean }): OutboundPolicy => ({
  allowPrivate: parseCidrList(config.outboundAllowPrivate),
  allowHttp: config.outboundAllowHttp
})

export interface CheckedUrl {
  readonly url: URL
  /** Host name or address without URL brackets: what DNS is asked and TLS names (SNI). */
  readonly hostname: string
  /** Set when the URL names an address rather than a host. */
  readonly literal: IpAddress | undefined
  readonly port: number
  readonly secure: boolean
}

const describe = (url: string | URL): string => {
  const text = typeof url === "string" ? url : url.href
  return text.length > 200 ? `${text.slice(0, 200)}...` : text
}

/**
 * Checks a URL before anything touches the network. Numeric hosts in odd forms
 * (`2130706433`, `0x7f.1`, `0177.0.0.1`) need no special case: the WHATWG parser
 * turns them into dotted quads, which are then classified like any address.
 * Throws `OutboundError`.
 */
export const checkUrl = (input: string | URL, policy: OutboundPolicy): CheckedUrl => {
  let url: URL
  try {
    url = new URL(typeof input === "string" ? input : input.href)
  } catch {
    throw outboundError("invalid_url", `not a valid URL: ${describe(input)}`)
  }
  const secure = url.protocol === "https:"
  if (!secure && url.protocol !== "http:") {
    throw outboundError("scheme_not_allowed", `only https:// URLs may be called, not ${url.protocol}//`)
  }
  if (url.username !== "" || url.password !== "") {
    throw outboundError("invalid_url", "URLs with a user name or password are not allowed")
  }
  if (!secure && !policy.allowHttp) {
    throw outboundError("scheme_not_allowed", "plain http:// is not allowed; use https://")
  }
  const bracketed = url.hostname.startsWith("[")
  const hostname = bracketed ? url.hostname.slice(1, -1) : url.hostname
  if (hostname.length === 0) throw outboundError("invalid_url", `URL has no host: ${describe(input)}`)
  const literal = bracketed ? parseIPv6(hostname) : parseIPv4(hostname)
  if (bracketed && literal === undefined) throw outboundError("invalid_url", `bad IPv6 address in URL: ${hostname}`)
  const checked: CheckedUrl = {
    url,
    hostname,
    literal,
    port: url.port === "" ? (secure ? 443 : 80) : Number(url.port),
    secure
  }
  if (literal !== undefined) {
    const refusal = checkAddress(literal, checked, policy)
    if (refusal !== undefined) throw refusal
  }
  return checked
}

/** Why this address may not be called for this URL, or undefined when it may. */
export const checkAddress = (
  address: IpAddress,
  target: Pick<CheckedUrl, "hostname" | "secure">,
  policy: OutboundPolicy
): OutboundError | undefined => {
  const addressClass = classifyAddress(address)
  const shown = formatIp(address)
  const of = shown === target.hostname ? "" : ` (for ${target.hostname})`
  if (NEVER_ALLOWED.has(addressClass)) {
    return outboundError("address_not_allowed", `address ${shown}${of} is ${addressClass} and can never be called`)
  }
  const allowListed = policy.allowPrivate.some((cidr) => cidrContains(cidr, address))
  if (!target.secure) {
    // Plain http only ever reaches the operator's own allow-listed networks.
    if (policy.allowHttp && allowListed) return undefined
    return outboundError(
      "scheme_not_allowed",
      `plain http:// to ${shown}${of} is not allowed: only to OUTBOUND_ALLOW_PRIVATE ranges with OUTBOUND_ALLOW_HTTP=true`
    )
  }
  if (allowListed || addressClass === "public") return undefined
  return outboundError("address_not_allowed", `address ${shown}${of} is ${addressClass} and may not be called`)
}

/**
 * Checks every address a name resolved to and returns the one to connect to.
 * One refused answer refuses the request: a name that can point inside must not
 * be called at all, whichever answer the connection would have used.
 */
export const chooseAddress = (
  addresses: ReadonlyArray<IpAddress>,
  target: Pick<CheckedUrl, "hostname" | "secure">,
  policy: OutboundPolicy
): IpAddress => {
  if (addresses.length === 0) throw outboundError("dns_failed", `${target.hostname} has no addresses`)
  for (const address of addresses) {
    const refusal = checkAddress(address, target, policy)
    if (refusal !== undefined) throw refusal
  }
  return addresses[0]
}
