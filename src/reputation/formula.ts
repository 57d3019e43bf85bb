/**
 * Formula "1.0" (CONTRACT-sdk-beyond §3): one home, the portable verifier
 * (protocol/verifier/reputation.ts), so the server scores exactly as an offline auditor recomputes.
 */
import type { ReputationInputs, ReputationTier } from "../../protocol/reputation.js"
import { reputationScore, reputationStatement, reputationTier } from "../../protocol/verifier/reputation.js"

export { FORMULA_VERSION } from "../../protocol/reputation.js"
export { type ScoreParts, scoreParts } from "../../protocol/verifier/reputation.js"

export const scoreOf = (inputs: ReputationInputs): number => reputationScore(inputs)

export const tierOf = (inputs: ReputationInputs, score: number): ReputationTier => reputationTier(inputs, score)

/** The signed statement: `score_hash` is sha256 over its JCS, and the signature covers the same bytes. */
export const signedStatement = (formulaVersion: string, inputs: ReputationInputs, score: number) => reputationStatement(formulaVersion, inputs, score)

/** Equal apart from `computed_at`: the latest snapshot still stands. */
export const sameInputs = (a: ReputationInputs, b: ReputationInputs): boolean => {
  const { computed_at: _a, ...restA } = a
  const { computed_at: _b, ...restB } = b
  const keys = Object.keys(restA) as Array<keyof typeof restA>
  return keys.length === Object.keys(restB).length && keys.every((key) => restA[key] === restB[key])
}
