/**
 * From a URL to the one checked address a connection may use. Shared by the
 * HTTP client and the TLS fingerprint probe, so both refuse exactly the same.
 */
import { lookup as dnsLookup } from "node:dns/promises"
import { formatIp, type IpAddress, parseIp, unmapIPv4 } from "./addresses.js"
import { OutboundError, outboundError } from "./errors.js"
import { type CheckedUrl, checkUrl, chooseAddress, type OutboundPolicy } from "./policy.js"

export interface ResolvedAddress {
  readonly address: string
  readonly family?: number
}

/** Answers every address of a host name; injectable so tests can play DNS. */
export type LookupFunction = (hostname: string) => Promise<ReadonlyArray<ResolvedAddress>>

export const systemLookup: LookupFunction = (hostname) => dnsLookup(hostname, { all: true, verbatim: true })

export interface Target {
  readonly checked: CheckedUrl
  /** The checked address, as text to hand to the socket. IPv4-mapped IPv6 is dialled as IPv4. */
  readonly connectHost: string
  /** TLS server name: the host name, or undefined when the URL named an address. */
  readonly servername: string | undefined
}

/** Rejects with the signal's reason (an OutboundError) once it aborts. */
export const raceAbort = <A>(promise: Promise<A>, signal: AbortSignal): Promise<A> => {
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<A>((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener("abort", onAbort, { once: true })
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort)
        resolve(value)
      },
      (error) => {
        signal.removeEventListener("abort", onAbort)
        reject(error)
      }
    )
  })
}

/**
 * Checks the URL, resolves the host name once, checks every answer and returns
 * the address to connect to. The socket is then opened to that address, never
 * to the name, so a second (rebinding) DNS answer cannot be used.
 */
export const resolveTarget = async (
  url: string | URL,
  policy: OutboundPolicy,
  lookup: LookupFunction,
  signal: AbortSignal
): Promise<Target> => {
  const checked = checkUrl(url, policy)
  let address: IpAddress
  if (checked.literal !== undefined) {
    address = checked.literal
  } else {
    let answers: ReadonlyArray<ResolvedAddress>
    try {
      answers = await raceAbort(lookup(checked.hostname), signal)
    } catch (error) {
      if (error instanceof OutboundError) throw error
      const code = (error as { code?: unknown })?.code
      throw outboundError("dns_failed", `could not resolve ${checked.hostname}${typeof code === "string" ? ` (${code})` : ""}`)
    }
    const parsed = answers.map((answer) => {
      const ip = parseIp(answer.address)
      if (ip === undefined) {
        throw outboundError("dns_failed", `resolver gave a malformed address for ${checked.hostname}`)
      }
      return ip
    })
    address = chooseAddress(parsed, checked, policy)
  }
  return {
    checked,
    connectHost: formatIp(unmapIPv4(address)),
    servername: checked.literal === undefined ? checked.hostname.replace(/\.$/, "") : undefined
  }
}

/**
 * A registration-time check of a URL the service will call later: the same rules as a call
 * (scheme, literal and resolved addresses). A name that does not resolve yet is accepted, since
 * every call checks again. Undefined when acceptable, else the reason.
 */
export const destinationProblem = async (url: string, policy: OutboundPolicy, lookup: LookupFunction = systemLookup, timeoutMs = 5_000): Promise<string | undefined> => {
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(outboundError("timeout", `could not resolve within ${timeoutMs} ms`)), timeoutMs)
  try {
    await resolveTarget(url, policy, lookup, controller.signal)
    return undefined
  } catch (error) {
    if (error instanceof OutboundError && (error.kind === "dns_failed" || error.kind === "timeout")) return undefined
    return error instanceof Error ? error.message : String(error)
  } finally {
    clearTimeout(timer)
  }
}
