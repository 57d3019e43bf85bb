/**
 * Formula "1.0" (CONTRACT-sdk-beyond §3), exactly as written: integers only, each quotient the
 * floor of the exact one (BigInt division, so no float rounding can lift a value to the next
 * integer), the score 0 once the agent is decommissioned.
 */
import type { ReputationInputs, ReputationTier } from "../../protocol/reputation.js"

export { FORMULA_VERSION } from "../../protocol/reputation.js"

const floorDiv = (numerator: number, denominator: number): number => Number(BigInt(numerator) / BigInt(denominator))

export interface ScoreParts {
  readonly reliability: number
  readonly compliance: number
  readonly oversight: number
  readonly endorsement: number
  readonly tenure: number
}

export const scoreParts = (inputs: ReputationInputs): ScoreParts => {
  const executed = inputs.notarized + inputs.failed
  const decided = executed + inputs.denied_by_policy + inputs.denied_by_human
  return {
    reliability: floorDiv(40 * (inputs.notarized + 5), executed + 10),
    compliance: floorDiv(20 * (executed + 5), decided + 10),
    oversight: Math.min(10, inputs.human_approved),
    endorsement: Math.min(20, Math.max(0, 2 * inputs.attested_success - 4 * inputs.attested_failure)),
    tenure: Math.min(10, floorDiv(inputs.age_days, 30))
  }
}

export const scoreOf = (inputs: ReputationInputs): number => {
  if (inputs.decommissioned) return 0
  const parts = scoreParts(inputs)
  return parts.reliability + parts.compliance + parts.oversight + parts.endorsement + parts.tenure
}

export const tierOf = (inputs: ReputationInputs, score: number): ReputationTier => {
  if (inputs.decommissioned) return "decommissioned"
  const decided = inputs.notarized + inputs.failed + inputs.denied_by_policy + inputs.denied_by_human
  if (decided + inputs.attestations === 0) return "unrated"
  if (score < 30) return "untrusted"
  if (score < 50) return "provisional"
  if (score < 70) return "established"
  if (score < 85) return "trusted"
  return "exemplary"
}

/** The signed statement: `score_hash` is sha256 over its JCS, and the signature covers the same bytes. */
export const signedStatement = (formulaVersion: string, inputs: ReputationInputs, score: number) => ({ formula_version: formulaVersion, inputs, score })

/** Equal apart from `computed_at`: the latest snapshot still stands. */
export const sameInputs = (a: ReputationInputs, b: ReputationInputs): boolean => {
  const { computed_at: _a, ...restA } = a
  const { computed_at: _b, ...restB } = b
  const keys = Object.keys(restA) as Array<keyof typeof restA>
  return keys.length === Object.keys(restB).length && keys.every((key) => restA[key] === restB[key])
}
