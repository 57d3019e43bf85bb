/**
 * Reputation formula "1.0" (CONTRACT-sdk-beyond §3) and the offline check of a signed reputation
 * answer. The server computes its scores with these very functions. Integers only: every step is
 * BigInt, so each quotient is the floor of the exact one however large the counts are.
 */
import { canonicalBytes, sha256Tagged } from "./canonical.js"
import { decodeSignature, type PublicKeyInput, rawPublicKey, verifyEd25519 } from "./receipt.js"

export const REPUTATION_FORMULA_VERSION = "1.0"

/** The counts the score is computed from (the answer's `inputs` also hold `agent_slug` and `computed_at`). */
export interface ReputationCounts {
  readonly notarized: number
  readonly failed: number
  readonly denied_by_policy: number
  readonly denied_by_human: number
  readonly human_approved: number
  readonly attested_success: number
  readonly attested_failure: number
  readonly attestations: number
  readonly age_days: number
  readonly decommissioned: boolean
}

export const REPUTATION_COUNT_KEYS = [
  "notarized",
  "failed",
  "denied_by_policy",
  "denied_by_human",
  "human_approved",
  "attested_success",
  "attested_failure",
  "attestations",
  "age_days"
] as const

export type ReputationTierName = "decommissioned" | "unrated" | "untrusted" | "provisional" | "established" | "trusted" | "exemplary"

export interface ScoreParts {
  readonly reliability: number
  readonly compliance: number
  readonly oversight: number
  readonly endorsement: number
  readonly tenure: number
}

const min = (a: bigint, b: bigint): bigint => (a < b ? a : b)
const max = (a: bigint, b: bigint): bigint => (a > b ? a : b)

/** BigInt division truncates toward zero, which is the floor for the non-negative operands here. */
export const scoreParts = (inputs: ReputationCounts): ScoreParts => {
  const n = (value: number) => BigInt(value)
  const executed = n(inputs.notarized) + n(inputs.failed)
  const decided = executed + n(inputs.denied_by_policy) + n(inputs.denied_by_human)
  return {
    reliability: Number((40n * (n(inputs.notarized) + 5n)) / (executed + 10n)),
    compliance: Number((20n * (executed + 5n)) / (decided + 10n)),
    oversight: Number(min(10n, n(inputs.human_approved))),
    endorsement: Number(min(20n, max(0n, 2n * n(inputs.attested_success) - 4n * n(inputs.attested_failure)))),
    tenure: Number(min(10n, n(inputs.age_days) / 30n))
  }
}

export const reputationScore = (inputs: ReputationCounts): number => {
  if (inputs.decommissioned) return 0
  const parts = scoreParts(inputs)
  return parts.reliability + parts.compliance + parts.oversight + parts.endorsement + parts.tenure
}

export const reputationTier = (inputs: ReputationCounts, score: number): ReputationTierName => {
  if (inputs.decommissioned) return "decommissioned"
  const decided = BigInt(inputs.notarized) + BigInt(inputs.failed) + BigInt(inputs.denied_by_policy) + BigInt(inputs.denied_by_human)
  if (decided + BigInt(inputs.attestations) === 0n) return "unrated"
  if (score < 30) return "untrusted"
  if (score < 50) return "provisional"
  if (score < 70) return "established"
  if (score < 85) return "trusted"
  return "exemplary"
}

/** The signed statement: `score_hash` is sha256 over its JCS, and the signature covers the same bytes. */
export const reputationStatement = <I>(formulaVersion: string, inputs: I, score: number) => ({ formula_version: formulaVersion, inputs, score })

export interface ReputationChecks {
  /** `score` recomputed from `inputs` with formula 1.0. */
  score: boolean
  tier: boolean
  score_hash: boolean
  signature: boolean
  /** Present when the answer names its agent (`agent_slug`, outside the signature): it must be the signed inputs' agent. */
  agent_slug?: boolean
}

export interface ReputationVerification {
  readonly valid: boolean
  readonly checks: ReputationChecks
  /** Each message starts with the name of the failed check and a colon. */
  readonly errors: string[]
}

const countProblems = (inputs: Record<string, unknown>): string[] => {
  const problems = REPUTATION_COUNT_KEYS.filter((key) => {
    const value = inputs[key]
    return typeof value !== "number" || !Number.isSafeInteger(value) || value < 0
  }).map((key) => `inputs.${key} is not a non-negative integer`)
  if (typeof inputs.decommissioned !== "boolean") problems.push("inputs.decommissioned is not a boolean")
  return problems
}

/**
 * A reputation answer (`GET /api/v1/agents/{slug}/reputation/verify`, or a snapshot of
 * `.../reputation/history`) against the key its `public_key_id` names.
 */
export const verifyReputation = (answer: Record<string, unknown>, key: PublicKeyInput): ReputationVerification => {
  const errors: string[] = []
  const checks: ReputationChecks = { score: false, tier: false, score_hash: false, signature: false }
  const inputs = answer.inputs
  const counts = inputs !== null && typeof inputs === "object" && !Array.isArray(inputs) ? (inputs as Record<string, unknown>) : undefined

  if (counts === undefined) {
    errors.push("score: inputs is not an object", "tier: inputs is not an object")
  } else if (answer.formula_version !== REPUTATION_FORMULA_VERSION) {
    const reason = `formula_version ${String(answer.formula_version)} is not ${REPUTATION_FORMULA_VERSION}, the formula this verifier knows`
    errors.push(`score: ${reason}`, `tier: ${reason}`)
  } else {
    const problems = countProblems(counts)
    if (problems.length > 0) {
      for (const problem of problems) errors.push(`score: ${problem}`)
      errors.push("tier: the inputs cannot be read")
    } else {
      const known = counts as unknown as ReputationCounts
      const score = reputationScore(known)
      checks.score = score === answer.score
      if (!checks.score) errors.push(`score: computed ${score}, answer says ${String(answer.score)}`)
      const tier = reputationTier(known, score)
      checks.tier = tier === answer.tier
      if (!checks.tier) errors.push(`tier: computed ${tier}, answer says ${String(answer.tier)}`)
    }
  }

  let bytes: Uint8Array | undefined
  try {
    bytes = canonicalBytes({ formula_version: answer.formula_version, inputs, score: answer.score })
  } catch (cause) {
    errors.push(`score_hash: cannot canonicalize the statement: ${cause instanceof Error ? cause.message : String(cause)}`)
  }
  if (bytes !== undefined) {
    const computed = sha256Tagged(bytes)
    checks.score_hash = computed === answer.score_hash
    if (!checks.score_hash) errors.push(`score_hash: computed ${computed}, answer says ${String(answer.score_hash)}`)
    try {
      checks.signature = verifyEd25519(decodeSignature(String(answer.signature)), bytes, rawPublicKey(key))
      if (!checks.signature) errors.push("signature: does not verify against the public key")
    } catch (cause) {
      errors.push(`signature: ${cause instanceof Error ? cause.message : String(cause)}`)
    }
  } else {
    errors.push("signature: no canonical bytes to verify")
  }

  if ("agent_slug" in answer) {
    checks.agent_slug = counts !== undefined && counts.agent_slug === answer.agent_slug
    if (!checks.agent_slug) errors.push(`agent_slug: ${String(answer.agent_slug)} is not the signed inputs' agent_slug`)
  }

  const valid = Object.values(checks).every((passed) => passed === true)
  return { valid, checks, errors }
}
