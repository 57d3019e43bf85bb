/**
 * Offline receipt check, trusting nothing but the JWKS you point it at:
 *
 *   npm run verify -- receipt.json --jwks <url|file> [--previous prev.json]
 *
 * receipt.json is the body of GET /api/v1/verify/action/{id} (or any object with
 * signed_payload, payload_hash, signature, public_key_id, timestamp_token). The
 * key is looked up by kid = public_key_id in the JWKS; the receipt's own
 * `public_key` field is ignored because a forger would simply supply their own.
 * Without --jwks the JWKS is fetched from the origin of the receipt's verify_url.
 * Prints one line per check; exits 0 only if every check passes.
 */
import { readFileSync } from "node:fs"
import { parseArgs } from "node:util"
import { type Ed25519Jwk, verifyReceipt } from "../protocol/verifier/index.js"

const JWKS_PATH = "/api/v1/.well-known/jwks.json"

const usage = "usage: npm run verify -- receipt.json [--jwks <url|file>] [--previous previous-receipt.json]"

class UsageError extends Error {}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const readJsonFile = (file: string): unknown => {
  try {
    return JSON.parse(readFileSync(file, "utf8"))
  } catch (cause) {
    throw new UsageError(`cannot read ${file}: ${cause instanceof Error ? cause.message : String(cause)}`)
  }
}

const loadJwks = async (source: string): Promise<unknown> => {
  if (!/^https?:\/\//i.test(source)) return readJsonFile(source)
  try {
    const response = await fetch(source, { headers: { accept: "application/json" }, signal: AbortSignal.timeout(10_000) })
    if (!response.ok) throw new UsageError(`GET ${source} answered ${response.status}`)
    return await response.json()
  } catch (cause) {
    if (cause instanceof UsageError) throw cause
    const reason = cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : String(cause)
    throw new UsageError(`cannot fetch ${source}: ${reason}`)
  }
}

const findKey = (jwks: unknown, kid: string): Ed25519Jwk => {
  const keys = isRecord(jwks) && Array.isArray(jwks.keys) ? jwks.keys : undefined
  if (keys === undefined) throw new UsageError("the JWKS has no keys array")
  const key = keys.find((candidate): candidate is Record<string, unknown> => isRecord(candidate) && candidate.kid === kid)
  if (key === undefined) throw new UsageError(`no key with kid ${kid} in the JWKS`)
  if (key.kty !== "OKP" || key.crv !== "Ed25519" || typeof key.x !== "string") {
    throw new UsageError(`key ${kid} is not an OKP/Ed25519 JWK`)
  }
  return { kty: "OKP", crv: "Ed25519", x: key.x, kid }
}

const defaultJwksUrl = (receipt: Record<string, unknown>): string => {
  if (typeof receipt.verify_url !== "string") throw new UsageError(`--jwks is required (the receipt has no verify_url)\n${usage}`)
  return new URL(JWKS_PATH, receipt.verify_url).toString()
}

const main = async (): Promise<number> => {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { jwks: { type: "string" }, previous: { type: "string" }, help: { type: "boolean", short: "h" } }
  })
  if (values.help === true) {
    console.log(usage)
    return 0
  }
  if (positionals.length !== 1) throw new UsageError(usage)

  const receipt = readJsonFile(positionals[0])
  if (!isRecord(receipt) || !isRecord(receipt.signed_payload)) throw new UsageError("the receipt has no signed_payload object")
  const kid = receipt.public_key_id
  if (typeof kid !== "string") throw new UsageError("the receipt has no public_key_id")

  const jwksSource = values.jwks ?? defaultJwksUrl(receipt)
  if (values.jwks === undefined) console.log(`note JWKS from ${jwksSource}`)
  const publicKey = findKey(await loadJwks(jwksSource), kid)

  let previous: { payload_hash: string; signed_payload?: Record<string, unknown> } | undefined
  if (values.previous !== undefined) {
    const prior = readJsonFile(values.previous)
    if (!isRecord(prior) || typeof prior.payload_hash !== "string") throw new UsageError("the previous receipt has no payload_hash")
    previous = { payload_hash: prior.payload_hash, ...(isRecord(prior.signed_payload) ? { signed_payload: prior.signed_payload } : {}) }
  }

  const result = verifyReceipt({
    signed_payload: receipt.signed_payload,
    payload_hash: String(receipt.payload_hash),
    signature: String(receipt.signature),
    public_key: publicKey,
    previous,
    timestamp_token: typeof receipt.timestamp_token === "string" ? receipt.timestamp_token : null
  })

  for (const [check, passed] of Object.entries(result.checks)) {
    if (passed) {
      console.log(`ok   ${check}`)
    } else {
      const reasons = result.errors.filter((error) => error.startsWith(`${check}:`)).map((error) => error.slice(check.length + 1).trim())
      console.log(`FAIL ${check}: ${reasons.join("; ") || "failed"}`)
    }
  }
  if (result.checks.timestamp_imprint === undefined) console.log("note no timestamp_token: imprint not checked")
  console.log(result.valid ? `valid (key ${kid})` : "INVALID")
  return result.valid ? 0 : 1
}

main().then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    console.error(error instanceof UsageError ? error.message : error)
    process.exitCode = 2
  }
)
