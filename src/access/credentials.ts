/**
 * API keys, passwords and dashboard JWTs.
 *
 * Keys are `svc_live_` + base58 of 32 random bytes and are stored only as
 * HMAC-SHA256 under a server pepper; JWTs are EdDSA. Both secrets are derived
 * from the master key, so every gateway process sharing `MASTER_KEY` agrees.
 */
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto"
import bs58 from "bs58"
import { jwtVerify, SignJWT } from "jose"
import type { Role } from "../../protocol/auth.js"
import { hmacSha256Hex } from "../platform/hmac.js"
import type { ServerSecrets } from "../platform/secrets.js"

export const KEY_PREFIX = "svc_live_"
/** Characters of a key shown as its `key_prefix` (and counted per prefix when keys fail). */
export const KEY_PREFIX_LENGTH = KEY_PREFIX.length + 6
export const JWT_LIFETIME_SECONDS = 86_400

export const generateApiKey = (): { key: string; prefix: string } => {
  const key = KEY_PREFIX + bs58.encode(randomBytes(32))
  return { key, prefix: key.slice(0, KEY_PREFIX_LENGTH) }
}

export const looksLikeApiKey = (token: string): boolean => token.startsWith(KEY_PREFIX) || token.startsWith("svc_test_")

export const keyDigest = (secrets: ServerSecrets, key: string): string => hmacSha256Hex(secrets.pepper, key)

export const inviteDigest = (secrets: ServerSecrets, code: string): string => hmacSha256Hex(secrets.invitePepper, code)

/** Constant-time comparison of two hex digests of equal length. */
export const digestsEqual = (a: string, b: string): boolean => {
  const left = Buffer.from(a, "hex")
  const right = Buffer.from(b, "hex")
  return left.length === right.length && timingSafeEqual(left, right)
}

// scrypt N=2^15 keeps a login near 50-100 ms on this class of machine.
const SCRYPT = { N: 1 << 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 }

const scryptAsync = (password: string, salt: Buffer, length: number, params: typeof SCRYPT) =>
  new Promise<Buffer>((resolve, reject) =>
    scrypt(password, salt, length, params, (error, derived) => (error ? reject(error) : resolve(derived)))
  )

export const hashPassword = async (password: string): Promise<string> => {
  const salt = randomBytes(16)
  const hash = await scryptAsync(password, salt, 32, SCRYPT)
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString("base64")}$${hash.toString("base64")}`
}

/** A hash to verify against when the e-mail is unknown, so both answers take the same time. */
export const decoyPasswordHash = hashPassword(randomBytes(16).toString("hex"))

export const verifyPassword = async (password: string, stored: string): Promise<boolean> => {
  const [scheme, n, r, p, salt, hash] = stored.split("$")
  if (scheme !== "scrypt" || !salt || !hash) return false
  const expected = Buffer.from(hash, "base64")
  const actual = await scryptAsync(password, Buffer.from(salt, "base64"), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: SCRYPT.maxmem
  })
  return timingSafeEqual(actual, expected)
}

export interface JwtClaims {
  readonly userUuid: string
  readonly orgUuid: string
  readonly role: Role
  readonly email: string
}

export const issueJwt = (secrets: ServerSecrets, claims: JwtClaims): Promise<string> =>
  new SignJWT({ org: claims.orgUuid, role: claims.role, email: claims.email })
    .setProtectedHeader({ alg: "EdDSA", typ: "JWT" })
    .setSubject(claims.userUuid)
    .setIssuer(secrets.jwtIssuer)
    .setIssuedAt()
    .setExpirationTime(`${JWT_LIFETIME_SECONDS}s`)
    .sign(secrets.jwtPrivateKey)

/**
 * The user and organization a valid JWT names and when it expires (epoch ms), or undefined. Role comes
 * from the database, not the token.
 * `legacyIssuers` are also accepted: tokens from before the shared issuer carry the issuing node's BASE_URL.
 */
export const verifyJwt = async (
  secrets: ServerSecrets,
  token: string,
  legacyIssuers: ReadonlyArray<string> = []
): Promise<{ userUuid: string; orgUuid: string; expiresAt: number | null } | undefined> => {
  try {
    const { payload } = await jwtVerify(token, secrets.jwtPublicKey, { algorithms: ["EdDSA"], issuer: [secrets.jwtIssuer, ...legacyIssuers] })
    if (typeof payload.sub !== "string" || typeof payload.org !== "string") return undefined
    return { userUuid: payload.sub, orgUuid: payload.org, expiresAt: typeof payload.exp === "number" ? payload.exp * 1000 : null }
  } catch {
    return undefined
  }
}
