export {
  type AddressClass,
  type AddressRefusal,
  type Cidr,
  cidrContains,
  classifyAddress,
  formatCidr,
  formatIp,
  type IpAddress,
  type IpFamily,
  mapIPv4,
  NEVER_ALLOWED,
  parseCidr,
  parseIPv4,
  parseIPv6,
  parseIp,
  unmapIPv4
} from "./addresses.js"
export {
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_TIMEOUT_MS,
  isRedirect,
  type OutboundRequestOptions,
  type OutboundResponse,
  outbound,
  outboundRequest,
  responseText
} from "./client.js"
export { OutboundError, type OutboundErrorKind } from "./errors.js"
export { type FetchLike, outboundFetch } from "./fetch.js"
export {
  type CheckedUrl,
  checkAddress,
  checkUrl,
  chooseAddress,
  type OutboundPolicy,
  outboundPolicyOfConfig,
  PUBLIC_HTTPS_ONLY,
  parseCidrList
} from "./policy.js"
export { Outbound, type OutboundService } from "./service.js"
export { outboundStream, type StreamCall, type StreamReader, type StreamRequest } from "./stream.js"
export { destinationProblem, type LookupFunction, type ResolvedAddress, systemLookup } from "./target.js"
export {
  certificateFingerprint,
  DEFAULT_TLS_TIMEOUT_MS,
  fingerprintFromColonHex,
  fingerprintToColonHex,
  type TlsFingerprintOptions,
  tlsFingerprint,
  tlsFingerprintEffect
} from "./tls.js"
