/**
 * Primitive costs on the receipt hot path, compared in one run with the
 * reference product's figures (NOTES.md: Python + OpenSSL on the same machine)
 * and with JSON.stringify as the baseline for canonical JSON.
 *
 *   npx tsx bench/primitives.ts        (npm run bench:primitives)
 *
 * The machine is shared and noisy: read the ratios. The last line of output is
 * one JSON object with every figure.
 */
import { createHash } from "node:crypto"
import { sha256 as nobleSha256 } from "@noble/hashes/sha2.js"
import canonicalize from "canonicalize"
import { verifyInclusion as portableVerifyInclusion, verifyReceipt } from "../protocol/verifier/index.js"
import { leafHash, MerkleTree, merkleRoot, verifyInclusion } from "../src/receipts/merkle.js"
import {
  canonicalJsonBytes,
  generateSigningKey,
  importSigningKey,
  publicJwk,
  sha256Digest,
  sha256Hex,
  signPayload,
  verifySignedPayload
} from "../src/receipts/signing.js"
import { createTimestampAuthority, generateTsaMaterial } from "../src/receipts/tsa/authority.js"

const PAYLOAD = {
  agent_id: "agent_lending_001",
  action_type: "loan_decision",
  details: "Approved €200,000 loan for customer C-4521. Credit score 742, annual income €85,000, debt €12,000.",
  model_id: "claude-sonnet-4-6",
  timestamp: "2026-04-10T11:24:00Z",
  metadata: { ip: "10.0.1.42", user_id: "user_admin_001", session_id: "sess_a8f3c1e7" }
}

/** Reference figures in µs per operation (NOTES.md). */
const REFERENCE_US = {
  receipt_mint: 32.7,
  verify: 92,
  rules_eval_3: 0.63,
  content_scan_6: 7.7,
  merkle_root_1000: 1090
} as const

/** Decided target for one receipt as the server mints it: Ed25519 receipt plus its RFC 3161 token. */
const MINT_WITH_TOKEN_TARGET_US = 80

interface Result {
  readonly key: string
  readonly label: string
  readonly opsPerSec: number
  readonly p50Us: number
  readonly referenceUs?: number
}

const MEASURE_MS = 1_100
const WARMUP_MS = 250
/** Ops are timed in batches of about this long, so sub-µs ops are not swamped by the clock. */
const BATCH_TARGET_NS = 200_000

const now = (): bigint => process.hrtime.bigint()

// Results are accumulated here so the JIT cannot drop the measured work.
let sink = 0
const consume = (value: unknown): void => {
  if (value === undefined || value === null || value === false) sink++
}

const measure = (key: string, label: string, op: () => unknown, referenceUs?: number): Result => {
  const warmupEnd = now() + BigInt(WARMUP_MS * 1e6)
  let calibrationOps = 0
  const calibrationStart = now()
  while (now() < warmupEnd) {
    consume(op())
    calibrationOps++
  }
  const perOpNs = Number(now() - calibrationStart) / calibrationOps
  const batch = Math.max(1, Math.round(BATCH_TARGET_NS / perOpNs))
  const samples: number[] = []
  let ops = 0
  const start = now()
  const end = start + BigInt(MEASURE_MS * 1e6)
  let batchStart = start
  while (batchStart < end) {
    for (let i = 0; i < batch; i++) consume(op())
    const batchEnd = now()
    samples.push(Number(batchEnd - batchStart) / batch)
    ops += batch
    batchStart = batchEnd
  }
  const elapsedNs = Number(batchStart - start)
  samples.sort((a, b) => a - b)
  const result: Result = {
    key,
    label,
    opsPerSec: (ops / elapsedNs) * 1e9,
    p50Us: samples[Math.floor(samples.length / 2)] / 1000,
    ...(referenceUs === undefined ? {} : { referenceUs })
  }
  printRow(result)
  return result
}

// --- table ----------------------------------------------------------------

const columns = ["primitive", "ops/s", "p50 µs", "reference µs", "vs reference"] as const
const widths = [52, 12, 10, 13, 16]
const pad = (text: string, width: number, right = false): string => (right ? text.padStart(width) : text.padEnd(width))
const formatUs = (us: number): string => (us >= 100 ? us.toFixed(0) : us >= 10 ? us.toFixed(1) : us.toFixed(2))
const formatOps = (ops: number): string => Math.round(ops).toLocaleString("en-US")
/** >1 means we are faster than the reference. */
const speedup = (r: Result): number | undefined => (r.referenceUs === undefined ? undefined : r.referenceUs / r.p50Us)
const describeSpeedup = (ratio: number): string => (ratio >= 1 ? `${ratio.toFixed(2)}x faster` : `${(1 / ratio).toFixed(2)}x slower`)

const printHeader = (): void => {
  console.log(columns.map((c, i) => pad(c, widths[i], i > 0)).join(" "))
  console.log(widths.map((w) => "-".repeat(w)).join(" "))
}

const printRow = (r: Result, note?: string): void => {
  const ratio = speedup(r)
  const comparison = note ?? (ratio === undefined ? "" : describeSpeedup(ratio))
  console.log(
    [
      pad(r.label, widths[0]),
      pad(formatOps(r.opsPerSec), widths[1], true),
      pad(formatUs(r.p50Us), widths[2], true),
      pad(r.referenceUs === undefined ? "" : formatUs(r.referenceUs), widths[3], true),
      pad(comparison, widths[4], true)
    ].join(" ")
  )
}

// --- optional modules written elsewhere -------------------------------------

type Loose = Record<string, unknown>

const tryImport = async (specifier: string): Promise<Loose | undefined> => {
  try {
    return (await import(specifier)) as Loose
  } catch {
    return undefined
  }
}

const fn = (module: Loose | undefined, name: string): ((...args: unknown[]) => any) | undefined =>
  module !== undefined && typeof module[name] === "function" ? (module[name] as (...args: unknown[]) => any) : undefined

// --- the run ----------------------------------------------------------------

const main = async (): Promise<void> => {
  const results: Result[] = []
  const skipped: string[] = []
  const key = generateSigningKey()
  const signer = importSigningKey(key.privateKeyPkcs8Der)
  const jwk = publicJwk(signer.publicKeyRaw, signer.publicKeyId)
  const canonicalBytes = canonicalJsonBytes(PAYLOAD)
  const minted = signPayload(signer, PAYLOAD)
  const leaves = (n: number) => Array.from({ length: n }, (_, i) => createHash("sha256").update(`receipt ${i}`).digest())
  const leaves100 = leaves(100)
  const leaves1000 = leaves(1000)
  const tree100 = new MerkleTree(leaves100)
  const proof42 = tree100.inclusionProof(42)
  const leaf42 = leafHash(leaves100[42])
  // The server's internal TSA uses ECDSA P-256 (src/receipts/keys.ts).
  const authority = await createTimestampAuthority(await generateTsaMaterial({ algorithm: "ECDSA-P256" }))
  const mintedDigest = sha256Digest(minted.bytes)

  console.log(`primitives on Node ${process.version}, payload ${canonicalBytes.length} bytes of canonical JSON`)
  printHeader()

  const stringify = measure("json_stringify", "JSON.stringify (baseline)", () => JSON.stringify(PAYLOAD))
  const canonical = measure("canonical_json", "canonical JSON (RFC 8785, canonicalize)", () => canonicalize(PAYLOAD))
  results.push(stringify, canonical)
  results.push(measure("canonical_bytes", "canonical JSON → UTF-8 bytes", () => canonicalJsonBytes(PAYLOAD)))
  results.push(measure("sha256_node", "sha256 of canonical bytes (node:crypto)", () => sha256Hex(canonicalBytes)))
  results.push(measure("sha256_noble", "sha256 of canonical bytes (@noble/hashes)", () => nobleSha256(canonicalBytes)))
  results.push(
    measure("receipt_mint", "receipt mint (canonicalize + hash + sign)", () => signPayload(signer, PAYLOAD), REFERENCE_US.receipt_mint)
  )
  results.push(measure("timestamp_token", "RFC 3161 token (ECDSA P-256 TSA)", () => authority.stampSync(mintedDigest)))
  // What sign() in src/receipts/service.ts does per receipt.
  const mintWithToken = measure("receipt_mint_with_token", "receipt mint + timestamp token", () => {
    const signed = signPayload(signer, PAYLOAD)
    return authority.stampSync(sha256Digest(signed.bytes))
  })
  results.push(mintWithToken)
  results.push(
    measure(
      "verify_node",
      "verify (node:crypto: canonicalize + hash + Ed25519)",
      () => verifySignedPayload(signer.publicKey, PAYLOAD, minted.payload_hash, minted.signature),
      REFERENCE_US.verify
    )
  )
  results.push(
    measure(
      "verify_noble",
      "verify (portable verifier, @noble)",
      () => verifyReceipt({ signed_payload: PAYLOAD, payload_hash: minted.payload_hash, signature: minted.signature, public_key: jwk }).valid,
      REFERENCE_US.verify
    )
  )
  results.push(measure("merkle_root_100", "Merkle root, 100 leaves", () => merkleRoot(leaves100)))
  results.push(
    measure("merkle_root_1000", "Merkle root, 1,000 leaves", () => merkleRoot(leaves1000), REFERENCE_US.merkle_root_1000)
  )
  results.push(measure("inclusion_proof_100", "inclusion proof in 100 (build tree + path)", () => new MerkleTree(leaves100).inclusionProof(42)))
  results.push(measure("inclusion_verify_100", "inclusion proof verify in 100 (node:crypto)", () => verifyInclusion(leaf42, 42, 100, proof42, tree100.root)))
  results.push(
    measure("inclusion_verify_100_noble", "inclusion proof verify in 100 (@noble)", () => portableVerifyInclusion(leaf42, 42, 100, proof42, tree100.root))
  )

  // Rules and content scan live in other modules; measured when they are there.
  const conditions = await tryImport("../src/policies/conditions.js")
  const evaluate = await tryImport("../src/policies/evaluate.js")
  const compileConditions = fn(conditions, "compileConditions")
  const evaluateRules = fn(evaluate, "evaluateRules")
  const subject = {
    action_type: PAYLOAD.action_type,
    details: PAYLOAD.details,
    agent_id: PAYLOAD.agent_id,
    model_id: PAYLOAD.model_id,
    context: { amount: 200_000, credit_score: 742, ...PAYLOAD.metadata }
  }
  const compiledRules = compileConditions?.([
    { field: "action_type", op: "eq", value: "loan_decision" },
    { field: "context.amount", op: "gt", value: 100_000 },
    { field: "details", op: "contains", value: "loan" }
  ])
  if (evaluateRules !== undefined && compiledRules?.ok === true && evaluateRules(compiledRules.compiled, subject) === true) {
    results.push(measure("rules_eval_3", "rules evaluation (3 conditions)", () => evaluateRules(compiledRules.compiled, subject), REFERENCE_US.rules_eval_3))
  } else {
    skipped.push("rules_eval_3")
    console.log(pad("rules evaluation (3 conditions)", widths[0]) + "  skipped: src/policies evaluateRules/compileConditions not available")
  }

  const scan = await tryImport("../src/scan/index.js")
  const scanText = fn(scan, "scanText")
  const compileCustomPatterns = fn(scan, "compileCustomPatterns")
  const patterns = compileCustomPatterns?.([
    { name: "email", regex: "[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}" },
    { name: "card", regex: "\\b(?:\\d[ -]?){13,16}\\b" },
    { name: "iban", regex: "\\b[A-Z]{2}\\d{2}[A-Z0-9]{11,30}\\b" },
    { name: "ssn", regex: "\\b\\d{3}-\\d{2}-\\d{4}\\b" },
    { name: "api_key", regex: "\\b(?:sk|pk)_[A-Za-z0-9]{16,}\\b" },
    { name: "customer_id", regex: "\\bC-\\d{4}\\b" }
  ])
  if (scanText !== undefined && patterns?.ok === true) {
    const options = { libraries: [], customPatterns: patterns.patterns }
    const findings = scanText(PAYLOAD.details, options) as unknown[]
    if (Array.isArray(findings) && findings.length > 0) {
      results.push(
        measure("content_scan_6", "content scan (6 custom patterns, RE2)", () => scanText(PAYLOAD.details, options), REFERENCE_US.content_scan_6)
      )
      results.push(
        measure("content_scan_pii", "content scan (built-in pii library)", () => scanText(PAYLOAD.details, { libraries: ["pii"] }))
      )
    } else {
      skipped.push("content_scan_6")
      console.log(pad("content scan (6 patterns)", widths[0]) + "  skipped: scanText found nothing in the payload")
    }
  } else {
    skipped.push("content_scan_6")
    console.log(pad("content scan (6 patterns)", widths[0]) + "  skipped: src/scan scanText/compileCustomPatterns not available")
  }

  const canonicalOverStringify = canonical.p50Us / stringify.p50Us
  console.log("")
  console.log(`canonical JSON costs ${canonicalOverStringify.toFixed(2)}x JSON.stringify in this run`)
  const mint = results.find((r) => r.key === "receipt_mint")!
  console.log(`receipts per second per core at mint cost alone: ${formatOps(mint.opsPerSec)}`)
  const targetMet = mintWithToken.p50Us <= MINT_WITH_TOKEN_TARGET_US
  console.log(
    `receipt mint + timestamp token: ${formatUs(mintWithToken.p50Us)} µs, target ≤ ${MINT_WITH_TOKEN_TARGET_US} µs: ${targetMet ? "met" : "NOT met"}`
  )

  const figures: Record<string, Record<string, number>> = {}
  for (const r of results) {
    const ratio = speedup(r)
    figures[r.key] = {
      ops_per_sec: Math.round(r.opsPerSec),
      p50_us: Number(r.p50Us.toFixed(3)),
      ...(r.referenceUs === undefined ? {} : { reference_us: r.referenceUs }),
      ...(ratio === undefined ? {} : { speedup_vs_reference: Number(ratio.toFixed(3)) })
    }
  }
  if (sink < 0) console.log(sink)
  console.log(
    JSON.stringify({
      bench: "primitives",
      node: process.version,
      payload_bytes: canonicalBytes.length,
      results: figures,
      canonical_over_json_stringify: Number(canonicalOverStringify.toFixed(3)),
      timestamp_token_us: figures.timestamp_token.p50_us,
      receipt_mint_with_token_us: figures.receipt_mint_with_token.p50_us,
      receipt_mint_with_token_target_us: MINT_WITH_TOKEN_TARGET_US,
      receipt_mint_with_token_target_met: targetMet,
      skipped
    })
  )
}

await main()
