/**
 * Access tokens for Vertex AI from an organization's service-account key, minted here rather than
 * by google-auth-library: the signed JWT assertion (RFC 7523) goes to Google's fixed token
 * endpoint through the outbound client, and the library is handed only a finished token, so it
 * never resolves credentials, reads files or makes a call of its own.
 */
import { createHash } from "node:crypto"
import { importPKCS8, SignJWT } from "jose"
import type { FetchLike } from "../platform/outbound/index.js"
import { GOOGLE_TOKEN_URL, type ServiceAccountKey } from "../provider-credentials/service-account.js"

const SCOPE = "https://www.googleapis.com/auth/cloud-platform"
/** A token is renewed this long before Google says it expires. */
const RENEW_BEFORE_MS = 5 * 60_000
const MAX_CACHED = 1_000

interface Cached {
  readonly token: string
  readonly renewAt: number
}

const cache = new Map<string, Cached>()

const cacheKey = (key: ServiceAccountKey) => createHash("sha256").update(`${key.clientEmail}\n${key.privateKeyId ?? ""}\n${key.privateKey}`).digest("hex")

const assertion = async (key: ServiceAccountKey) =>
  new SignJWT({ scope: SCOPE })
    .setProtectedHeader({ alg: "RS256", typ: "JWT", ...(key.privateKeyId === undefined ? {} : { kid: key.privateKeyId }) })
    .setIssuer(key.clientEmail)
    .setAudience(GOOGLE_TOKEN_URL)
    .setIssuedAt()
    .setExpirationTime("1h")
    .sign(await importPKCS8(key.privateKey, "RS256"))

/** A bearer token for the key, from the cache while it is fresh. */
export const googleAccessToken = async (key: ServiceAccountKey, fetch: FetchLike): Promise<string> => {
  const id = cacheKey(key)
  const cached = cache.get(id)
  if (cached !== undefined && cached.renewAt > Date.now()) return cached.token
  const response = await fetch(GOOGLE_TOKEN_URL, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion: await assertion(key) }).toString()
  })
  const answer = (await response.json().catch(() => undefined)) as { access_token?: unknown; expires_in?: unknown } | undefined
  if (!response.ok || typeof answer?.access_token !== "string") throw new Error(`Google's token endpoint refused the service account (HTTP ${response.status})`)
  const lifetimeMs = typeof answer.expires_in === "number" && answer.expires_in > 0 ? answer.expires_in * 1000 : 3_600_000
  if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!)
  cache.set(id, { token: answer.access_token, renewAt: Date.now() + Math.max(0, lifetimeMs - RENEW_BEFORE_MS) })
  return answer.access_token
}

/**
 * What the Vertex provider asks of `googleAuthOptions.authClient`: it calls `getAccessToken()` on
 * the client it is given and nothing else (checked by test/model-providers.test.ts).
 */
export const tokenClient = (key: ServiceAccountKey, fetch: FetchLike) => ({
  getAccessToken: async () => ({ token: await googleAccessToken(key, fetch) })
})
