/**
 * Offline checks, trusting nothing but the JWKS you point it at:
 *
 *   npm run verify -- receipt.json --jwks <url|file> [--previous prev.json] [--replay-context replay.json]
 *   npm run verify -- settlement.json --jwks <url|file>
 *   npm run verify -- inclusion-proof.json [--receipt receipt.json] [--settlement settlement.json --jwks …] [--bundle bundle.json --jwks …]
 *   npm run verify -- consistency.json [--settlement from.json --settlement to.json --jwks …]
 *   npm run verify -- checkpoint.json --jwks <url|file>
 *   npm run verify -- report.json --jwks <url|file> [--pdf report.pdf]
 *   npm run verify -- explanation.json [--jwks <url|file>]
 *   npm run verify -- evidence-package.json --jwks <url|file>
 *   npm run verify -- compliance-snapshot.json --jwks <url|file>
 *   npm run verify -- reputation.json --jwks <url|file>
 *   npm run verify -- bundle-export.json --jwks <url|file>
 *   npm run verify -- bundle.json --jwks <url|file>
 *
 * A reputation answer (GET /api/v1/agents/{slug}/reputation/verify, or one snapshot of
 * .../reputation/history; read by `score_hash` and `inputs`): score and tier recomputed from the
 * inputs with formula 1.0, score_hash over the JCS of {formula_version, inputs, score}, and the
 * signature by the JWKS key `public_key_id`.
 *
 * A compliance bundle export (GET /api/v1/compliance/bundles/{id}/export, read by `bundle_hash` and
 * `receipts`): the signed record `bundle` (hash, signature, its token's imprint = merkle_root), every
 * receipt (payload_hash of its signed_payload text, signature by its public_key_id), the RFC 9162 root
 * over the receipts in leaf order against merkle_root and the record's, and receipt_count. Only the
 * JWKS given is trusted (never the export's own `signing.public_keys`). The file is read whole; an
 * export of 50,000 receipts (~130 MB) fits. A bundle alone (GET .../bundles/{id}) is checked over
 * exactly its record's keys. A bundle's inclusion proof is checked like a settlement's: against its own
 * payload_hash (or --receipt), and with --bundle against the bundle's signed merkle_root.
 *
 * An evidence package (GET /api/v1/evidence/packages/{id}, read by `package_hash`) or a compliance
 * snapshot (as answered, read by `snapshot_hash`) is checked over exactly its signed keys: hash,
 * signature by the JWKS key `public_key_id`, timestamp imprint.
 *
 * The kind of file is read from its fields (settlement_hash, siblings, from/to/proof, checkpoint;
 * `_envelope`, `envelope` or `policy_chain` for a signed explanation, whose JWKS defaults to the
 * origin of its receipt's verify_url; report_metadata or descriptor for a compliance report).
 *
 * report.json is a compliance report object (GET /api/v1/compliance/reports/{id}), or
 * `{descriptor, signature, signing_key_id, timestamp_token}` with the descriptor of the verify
 * answer. With --pdf the downloaded file is hashed against the descriptor's content_hash.
 *
 * receipt.json is the body of GET /api/v1/verify/action/{id}, a receipt export
 * (GET /api/v1/receipts/{id}/export, whose `previous` link is checked unless
 * --previous names another file), or any object with signed_payload, payload_hash,
 * signature, public_key_id, timestamp_token. The key is looked up by kid =
 * public_key_id in the JWKS; the receipt's own `public_key` field is ignored
 * because a forger would simply supply their own. Without --jwks the JWKS is
 * fetched from the export's jwks_url, else from the origin of the receipt's verify_url.
 * A receipt of version 1.3 commits to its action's replay context: --replay-context
 * takes GET /api/v1/actions/{id}/replay-context (or the four fields) to check it.
 * Prints one line per check; exits 0 only if every check passes.
 */
import { readFileSync } from "node:fs"
import { parseArgs } from "node:util"
import {
  base64UrlDecode,
  type Ed25519Jwk,
  parseCheckpoint,
  verifyBundle,
  verifyBundleExport,
  verifyCheckpoint,
  verifyEvidencePackage,
  verifyExplanation,
  verifyReceipt,
  verifyReportDescriptor,
  verifyReputation,
  verifySettlement,
  verifySettlementConsistency,
  verifySettlementInclusion,
  verifySnapshot
} from "../protocol/verifier/index.js"

const JWKS_PATH = "/api/v1/.well-known/jwks.json"

const usage =
  "usage: npm run verify -- <receipt|settlement|inclusion-proof|consistency|checkpoint|explanation|report|evidence-package|compliance-snapshot|reputation|bundle-export|bundle>.json [--jwks <url|file>] [--previous previous-receipt.json] [--replay-context replay.json] [--receipt receipt.json] [--settlement settlement.json]… [--bundle bundle.json] [--pdf report.pdf]"

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
  // A receipt export names its JWKS.
  if (typeof receipt.jwks_url === "string") return receipt.jwks_url
  if (typeof receipt.verify_url !== "string") throw new UsageError(`--jwks is required (the receipt has no verify_url)\n${usage}`)
  return new URL(JWKS_PATH, receipt.verify_url).toString()
}

const main = async (): Promise<number> => {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      jwks: { type: "string" },
      previous: { type: "string" },
      "replay-context": { type: "string" },
      receipt: { type: "string" },
      settlement: { type: "string", multiple: true },
      bundle: { type: "string" },
      pdf: { type: "string" },
      help: { type: "boolean", short: "h" }
    }
  })
  if (values.help === true) {
    console.log(usage)
    return 0
  }
  if (positionals.length !== 1) throw new UsageError(usage)

  const document = readJsonFile(positionals[0])
  if (isRecord(document) && isRecord(document.explanation)) return explanationKind(document.explanation, values.jwks)
  if (isRecord(document) && isExplanation(document)) return explanationKind(document, values.jwks)
  if (isRecord(document) && (isRecord(document.descriptor) || (isRecord(document.report_metadata) && "content_hash" in document))) {
    return reportChecks(document, values.jwks, values.pdf)
  }
  if (isRecord(document) && "score_hash" in document && "inputs" in document) return sealedKind(document, verifyReputation, values.jwks)
  if (isRecord(document) && typeof document.bundle_hash === "string") {
    return Array.isArray(document.receipts) ? bundleExportKind(document, values.jwks) : sealedKind(document, verifyBundle, values.jwks)
  }
  if (isRecord(document) && typeof document.package_hash === "string") return sealedKind(document, verifyEvidencePackage, values.jwks)
  if (isRecord(document) && "snapshot_hash" in document && "snapshot_uuid" in document) return sealedKind(document, verifySnapshot, values.jwks)
  if (isRecord(document) && !isRecord(document.signed_payload)) {
    return settlementKinds(document, { jwks: values.jwks, receipt: values.receipt, settlements: values.settlement ?? [], bundle: values.bundle })
  }
  const receipt = document
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
  } else if (isRecord(receipt.previous) && typeof receipt.previous.payload_hash === "string") {
    // A receipt export carries the previous link of its chain.
    const prior = receipt.previous
    previous = { payload_hash: String(prior.payload_hash), ...(isRecord(prior.signed_payload) ? { signed_payload: prior.signed_payload } : {}) }
  }

  let replayContext: Record<string, unknown> | undefined
  if (values["replay-context"] !== undefined) {
    const given = readJsonFile(values["replay-context"])
    if (!isRecord(given)) throw new UsageError("the replay context is not a JSON object")
    replayContext = given
  }

  const result = verifyReceipt({
    signed_payload: receipt.signed_payload,
    payload_hash: String(receipt.payload_hash),
    signature: String(receipt.signature),
    public_key: publicKey,
    previous,
    timestamp_token: typeof receipt.timestamp_token === "string" ? receipt.timestamp_token : null,
    replay_context: replayContext ?? null
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
  if (replayContext === undefined && typeof receipt.signed_payload.replay_context_hash === "string") {
    console.log(
      `note receipt_version ${String(receipt.signed_payload.receipt_version)} commits to replay_context_hash ${receipt.signed_payload.replay_context_hash}: --replay-context checks it`
    )
  }
  console.log(result.valid ? `valid (key ${kid})` : "INVALID")
  return result.valid ? 0 : 1
}

const isExplanation = (document: Record<string, unknown>) => "_envelope" in document || "envelope" in document || "policy_chain" in document

/** A signed explanation (GET /api/v1/actions/{id}/explanation, `{explanation}` accepted too) against every key of the JWKS. */
const explanationKind = async (document: Record<string, unknown>, jwks: string | undefined): Promise<number> => {
  const receipt = isRecord(document.receipt) ? document.receipt : {}
  const source = jwks ?? defaultJwksUrl(receipt)
  if (jwks === undefined) console.log(`note JWKS from ${source}`)
  const published = await loadJwks(source)
  const keys = isRecord(published) && Array.isArray(published.keys) ? published.keys.filter(isRecord) : []
  const result = verifyExplanation(document, keys as unknown as ReadonlyArray<Ed25519Jwk>)
  for (const [check, outcome] of Object.entries(result.checks)) console.log(outcome === true ? `ok   ${check}` : `FAIL ${check}: ${outcome}`)
  console.log(result.valid ? `valid (key ${result.signing_key_id})` : "INVALID")
  return result.valid ? 0 : 1
}

interface Verification {
  readonly valid: boolean
  readonly checks: object
  readonly errors: ReadonlyArray<string>
}

/** One line per check, with the reasons of a failed one; `timestamp_imprint` noted when the document has no token. */
const printChecks = (document: Record<string, unknown>, result: Verification, kid: string): number => {
  const checks = result.checks as Record<string, boolean | undefined>
  for (const [check, passed] of Object.entries(checks)) {
    const reasons = result.errors.filter((error) => error.startsWith(`${check}:`)).map((error) => error.slice(check.length + 1).trim())
    console.log(passed ? `ok   ${check}` : `FAIL ${check}: ${reasons.join("; ") || "failed"}`)
  }
  if ("timestamp_token" in document && checks.timestamp_imprint === undefined) console.log("note no timestamp_token: imprint not checked")
  console.log(result.valid ? `valid (key ${kid})` : "INVALID")
  return result.valid ? 0 : 1
}

/**
 * An evidence package (`GET /api/v1/evidence/packages/{id}`), a compliance snapshot (its create
 * answer or list item), a reputation answer or a compliance bundle: against the JWKS key
 * `public_key_id` names.
 */
const sealedKind = async (document: Record<string, unknown>, verify: (document: Record<string, unknown>, key: Ed25519Jwk) => Verification, jwks: string | undefined): Promise<number> => {
  if (document.signature === null) throw new UsageError("this snapshot was recorded before snapshots were signed: it carries no signature to check")
  const key = await requireJwks(jwks, document.public_key_id)
  return printChecks(document, verify(document, key), String(document.public_key_id))
}

/** The Ed25519 keys of a JWKS. */
const jwksKeys = (source: unknown): ReadonlyArray<Ed25519Jwk> =>
  isRecord(source) && Array.isArray(source.keys)
    ? source.keys.filter((key): key is Ed25519Jwk => isRecord(key) && key.kty === "OKP" && key.crv === "Ed25519" && typeof key.x === "string")
    : []

/** A compliance bundle export: the record and every receipt against the keys of the JWKS given (never the export's own). */
const bundleExportKind = async (document: Record<string, unknown>, jwks: string | undefined): Promise<number> => {
  if (jwks === undefined) throw new UsageError(`--jwks is required to check a bundle export\n${usage}`)
  const result = verifyBundleExport(document, jwksKeys(await loadJwks(jwks)))
  const receipts = Array.isArray(document.receipts) ? document.receipts.length : 0
  console.log(`note ${receipts} receipt${receipts === 1 ? "" : "s"}`)
  return printChecks(document, result, String(document.public_key_id))
}

/** The signed bundle of `--bundle`: a bundle object, or an export (its record with the export's seal). */
const bundleChecks = async (file: string, jwks: string | undefined): Promise<{ merkleRoot: unknown; checks: Array<readonly [string, boolean]> }> => {
  const given = readJsonFile(file)
  if (!isRecord(given) || typeof given.bundle_hash !== "string") throw new UsageError(`${file} is not a compliance bundle`)
  const bundle = isRecord(given.bundle) ? { ...given.bundle, bundle_hash: given.bundle_hash, signature: given.signature } : given
  const result = verifyBundle(bundle, await requireJwks(jwks, given.public_key_id))
  return {
    merkleRoot: bundle.merkle_root,
    checks: Object.entries(result.checks).map(([check, passed]) => [`bundle ${check}`, passed === true] as const)
  }
}

/** Prints each check; answers the exit code. */
const report = (checks: ReadonlyArray<readonly [string, boolean]>): number => {
  for (const [check, passed] of checks) console.log(passed ? `ok   ${check}` : `FAIL ${check}`)
  const valid = checks.every(([, passed]) => passed)
  console.log(valid ? "valid" : "INVALID")
  return valid ? 0 : 1
}

const requireJwks = async (jwks: string | undefined, kid: unknown): Promise<Ed25519Jwk> => {
  if (jwks === undefined) throw new UsageError(`--jwks is required to check a signature\n${usage}`)
  if (typeof kid !== "string") throw new UsageError("the document names no signing key")
  return findKey(await loadJwks(jwks), kid)
}

const settlementChecks = async (settlement: Record<string, unknown>, jwks: string | undefined, label = "settlement") => {
  const key = await requireJwks(jwks, settlement.signing_key_id)
  const checks = verifySettlement(settlement, key)
  return [
    [`${label} settlement_hash`, checks.settlement_hash],
    [`${label} signature`, checks.signature]
  ] as const
}

/** A compliance report: the signed descriptor against the JWKS, and the PDF when given. */
const reportChecks = async (document: Record<string, unknown>, jwks: string | undefined, pdfFile: string | undefined): Promise<number> => {
  if (typeof document.signature !== "string") throw new UsageError("the report has no signature (save the report object, or add signature and signing_key_id beside the descriptor)")
  if (jwks === undefined) throw new UsageError(`--jwks is required to check a report\n${usage}`)
  const source = await loadJwks(jwks)
  const keys = isRecord(source) && Array.isArray(source.keys) ? source.keys.filter((key): key is Ed25519Jwk => isRecord(key) && key.kty === "OKP" && key.crv === "Ed25519") : []
  let pdf: Uint8Array | undefined
  if (pdfFile !== undefined) {
    try {
      pdf = new Uint8Array(readFileSync(pdfFile))
    } catch (cause) {
      throw new UsageError(`cannot read ${pdfFile}: ${cause instanceof Error ? cause.message : String(cause)}`)
    }
  }
  const result = verifyReportDescriptor(
    {
      descriptor: isRecord(document.descriptor) ? document.descriptor : document,
      signature: document.signature,
      signing_key_id: document.signing_key_id,
      timestamp_token: document.timestamp_token
    },
    keys,
    pdf
  )
  for (const [check, outcome] of Object.entries(result.checks)) console.log(outcome === true ? `ok   ${check}` : `FAIL ${check}: ${outcome}`)
  if (pdf === undefined) console.log("note no --pdf: content_hash not checked against the file")
  console.log(result.valid ? `valid (key ${String(document.signing_key_id)})` : "INVALID")
  return result.valid ? 0 : 1
}

const settlementKinds = async (
  document: Record<string, unknown>,
  options: { jwks: string | undefined; receipt: string | undefined; settlements: ReadonlyArray<string>; bundle: string | undefined }
): Promise<number> => {
  const settlements = options.settlements.map((file) => {
    const settlement = readJsonFile(file)
    if (!isRecord(settlement)) throw new UsageError(`${file} is not a settlement`)
    return settlement
  })
  if (typeof document.settlement_hash === "string") return report(await settlementChecks(document, options.jwks))
  if (Array.isArray(document.siblings)) {
    const checks: Array<readonly [string, boolean]> = []
    let payloadHash: string | undefined
    if (options.receipt !== undefined) {
      const receipt = readJsonFile(options.receipt)
      if (!isRecord(receipt) || typeof receipt.payload_hash !== "string") throw new UsageError("the receipt has no payload_hash")
      payloadHash = receipt.payload_hash
    }
    // A bundle's proof names its receipt's payload_hash itself.
    const own = payloadHash === undefined && typeof document.payload_hash === "string"
    if (own) payloadHash = document.payload_hash as string
    const label = payloadHash === undefined ? "inclusion" : own ? "inclusion of the proof's payload_hash" : "inclusion of the receipt's payload_hash"
    checks.push([label, verifySettlementInclusion(document as never, payloadHash)])
    if (options.bundle !== undefined) {
      const bundle = await bundleChecks(options.bundle, options.jwks)
      checks.push(["root is the bundle's merkle_root", bundle.merkleRoot === document.merkle_root], ...bundle.checks)
    }
    for (const settlement of settlements) {
      checks.push(["root is the settlement's merkle_root", settlement.merkle_root === document.merkle_root], ...(await settlementChecks(settlement, options.jwks)))
    }
    return report(checks)
  }
  if (isRecord(document.from) && isRecord(document.to) && Array.isArray(document.proof)) {
    const checks: Array<readonly [string, boolean]> = [["consistency", verifySettlementConsistency(document as never)]]
    const heads = [document.from, document.to]
    for (const [position, settlement] of settlements.entries()) {
      const head = heads[position]
      if (head === undefined) throw new UsageError("at most two --settlement files (from, then to)")
      checks.push([`${position === 0 ? "from" : "to"} root is the settlement's merkle_root`, settlement.merkle_root === head.merkle_root])
      checks.push(...(await settlementChecks(settlement, options.jwks, position === 0 ? "from" : "to")))
    }
    return report(checks)
  }
  if (typeof document.checkpoint === "string") {
    const key = await requireJwks(options.jwks, document.signing_key_id)
    const text = document.checkpoint
    let name = ""
    let body = { treeSize: -1, root: "" }
    try {
      const parsed = parseCheckpoint(text)
      name = parsed.signatures[0]?.name ?? ""
      body = { treeSize: parsed.treeSize, root: `sha256:${Buffer.from(parsed.rootHash).toString("hex")}` }
    } catch {
      // The signature check below fails for a malformed note.
    }
    return report([
      ["checkpoint signature", verifyCheckpoint(text, name, base64UrlDecode(key.x))],
      ["checkpoint size and root match", body.treeSize === document.tree_size && body.root === document.merkle_root]
    ])
  }
  throw new UsageError("cannot tell what the file is: it has no signed_payload, settlement_hash, siblings, from/to/proof or checkpoint")
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
