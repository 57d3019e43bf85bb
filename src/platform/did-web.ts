/**
 * did:web identifiers (W3C did:web method): the host of BASE_URL with its port percent-encoded,
 * path segments after it joined by ":"; the document lives at https://host/path/did.json, or
 * at /.well-known/did.json for a bare host.
 */
import bs58 from "bs58"

/** `did:web:host` or `did:web:host%3Aport` of BASE_URL: the platform's root DID. */
export const platformDid = (baseUrl: string): string => {
  const url = new URL(baseUrl)
  return `did:web:${url.hostname}${url.port === "" ? "" : `%3A${url.port}`}`
}

/** `did:web:{host}:agents:{slug}`. */
export const agentDid = (baseUrl: string, slug: string): string => `${platformDid(baseUrl)}:agents:${slug}`

/** The agent slug when `did` is one of this platform's agent DIDs, else undefined. */
export const localAgentSlug = (baseUrl: string, did: string): string | undefined => {
  const prefix = `${platformDid(baseUrl)}:agents:`
  if (!did.startsWith(prefix)) return undefined
  const slug = did.slice(prefix.length)
  return /^[a-z0-9-]{3,64}$/.test(slug) ? slug : undefined
}

/** Where a did:web document is fetched from; undefined when `did` is not a well-formed did:web. */
export const didWebDocumentUrl = (did: string): URL | undefined => {
  if (!did.startsWith("did:web:")) return undefined
  const [host, ...path] = did.slice("did:web:".length).split(":")
  if (host === undefined || host === "" || path.some((segment) => segment === "")) return undefined
  let decodedHost: string
  try {
    decodedHost = decodeURIComponent(host)
  } catch {
    return undefined
  }
  if (!/^[A-Za-z0-9.-]+(:\d{1,5})?$/.test(decodedHost) && !/^\[[0-9a-fA-F:]+\](:\d{1,5})?$/.test(decodedHost)) return undefined
  try {
    const url = new URL(`https://${decodedHost}/`)
    url.pathname = path.length === 0 ? "/.well-known/did.json" : `/${path.map((segment) => decodeURIComponent(segment)).join("/")}/did.json`
    return url
  } catch {
    return undefined
  }
}

const ED25519_MULTICODEC = Uint8Array.of(0xed, 0x01)

/** `z` + base58btc(0xed 0x01 ‖ key): an Ed25519 public key as Ed25519VerificationKey2020 writes it. */
export const ed25519Multibase = (publicKeyRaw: Uint8Array): string => `z${bs58.encode(Buffer.concat([ED25519_MULTICODEC, publicKeyRaw]))}`

/** The raw 32-byte key of an Ed25519 multibase value; undefined for any other key format. */
export const ed25519FromMultibase = (value: string): Uint8Array | undefined => {
  if (!value.startsWith("z")) return undefined
  let bytes: Uint8Array
  try {
    bytes = bs58.decode(value.slice(1))
  } catch {
    return undefined
  }
  return bytes.length === 34 && bytes[0] === 0xed && bytes[1] === 0x01 ? bytes.slice(2) : undefined
}
