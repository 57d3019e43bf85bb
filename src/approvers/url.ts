/**
 * Registration-time check of a webhook URL (CONTRACT.md "Webhooks"): HTTPS, or
 * plain http:// only when every address of the target lies inside
 * OUTBOUND_ALLOW_PRIVATE and OUTBOUND_ALLOW_HTTP is on. Every send is checked
 * again by the outbound client.
 */
import { checkUrl, cidrContains, type LookupFunction, type OutboundPolicy, parseIp, systemLookup } from "../platform/outbound/index.js"

/** Undefined when acceptable, else the reason. */
export const webhookUrlProblem = async (url: string, policy: OutboundPolicy, lookup: LookupFunction = systemLookup): Promise<string | undefined> => {
  let checked: ReturnType<typeof checkUrl>
  try {
    checked = checkUrl(url, policy)
  } catch (error) {
    return (error as Error).message
  }
  if (checked.secure) return undefined
  const refusal = "plain http:// is only allowed to addresses inside OUTBOUND_ALLOW_PRIVATE; use https://"
  if (!policy.allowHttp || policy.allowPrivate.length === 0) return refusal
  let addresses: ReadonlyArray<string>
  if (checked.literal !== undefined) addresses = [checked.hostname]
  else {
    try {
      addresses = (await lookup(checked.hostname)).map((answer) => answer.address)
    } catch {
      return `cannot resolve ${checked.hostname}`
    }
  }
  const inside = (text: string) => {
    const address = parseIp(text)
    return address !== undefined && policy.allowPrivate.some((cidr) => cidrContains(cidr, address))
  }
  return addresses.length > 0 && addresses.every(inside) ? undefined : refusal
}
