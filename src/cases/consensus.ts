/**
 * Consensus of a case's model answers (docs/decisions.md, "Cases"). Failed models do not vote.
 * Each answer weighs its confidence (all weights 1 when every confidence is 0). The leading
 * decision (most weight; ties go to the cautious side) wins when it has both a majority of the
 * answering models and more than half the weight, else the case is MIXED (two models that
 * disagree are always MIXED). Disagreement is the weight share against the leading decision;
 * confidence is the leading decision's mean confidence over all answering models (dissenters
 * count as 0).
 */

export type ModelDecision = "APPROVE" | "DENY" | "REVIEW"
export type ConsensusDecision = ModelDecision | "MIXED"

export interface Vote {
  readonly decision: ModelDecision
  /** 0..1 */
  readonly confidence: number
}

export interface Consensus {
  readonly decision: ConsensusDecision
  readonly text: string
  readonly confidence_score: number
  readonly disagreement_score: number
  readonly requires_human_review: boolean
  readonly human_review_reason: string | null
}

export const DEFAULT_REVIEW_THRESHOLD = 0.4

/** Ties go to the more cautious decision. */
const CAUTION: ReadonlyArray<ModelDecision> = ["DENY", "REVIEW", "APPROVE"]

const round4 = (value: number) => Math.round(value * 10_000) / 10_000
const clamp01 = (value: number) => (Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 0)

const VERB: Record<ModelDecision, [string, string]> = { APPROVE: ["approves", "approve"], DENY: ["denies", "deny"], REVIEW: ["asks for review", "ask for review"] }

const describe = (counts: ReadonlyMap<ModelDecision, number>, total: number, decision: ConsensusDecision, confidence: number) => {
  const parts = CAUTION.filter((d) => (counts.get(d) ?? 0) > 0).map((d) => {
    const n = counts.get(d) ?? 0
    return `${n} of ${total} models ${VERB[d][n === 1 ? 0 : 1]}`
  })
  const lead = decision === "MIXED" ? "No consensus" : `Consensus ${decision}`
  return `${lead}: ${parts.join(", ")} (confidence ${confidence.toFixed(2)}).`
}

export const consensusOf = (votes: ReadonlyArray<Vote>, threshold = DEFAULT_REVIEW_THRESHOLD): Consensus => {
  if (votes.length === 0) throw new RangeError("a consensus needs at least one answering model")
  const confidences = votes.map((vote) => clamp01(vote.confidence))
  const weightSum = confidences.reduce((sum, c) => sum + c, 0)
  const weights = weightSum > 0 ? confidences : confidences.map(() => 1)
  const total = weightSum > 0 ? weightSum : votes.length

  const weightOf = new Map<ModelDecision, number>()
  const countOf = new Map<ModelDecision, number>()
  const confidenceOf = new Map<ModelDecision, number>()
  votes.forEach((vote, i) => {
    weightOf.set(vote.decision, (weightOf.get(vote.decision) ?? 0) + weights[i])
    countOf.set(vote.decision, (countOf.get(vote.decision) ?? 0) + 1)
    confidenceOf.set(vote.decision, (confidenceOf.get(vote.decision) ?? 0) + confidences[i])
  })
  let leading: ModelDecision = CAUTION[0]
  for (const decision of CAUTION) if ((weightOf.get(decision) ?? 0) > (weightOf.get(leading) ?? 0)) leading = decision
  const share = (weightOf.get(leading) ?? 0) / total

  const majority = (countOf.get(leading) ?? 0) * 2 > votes.length
  const decision: ConsensusDecision = majority && share > 0.5 ? leading : "MIXED"
  const disagreement = round4(clamp01(1 - share))
  const confidence = round4(clamp01((confidenceOf.get(leading) ?? 0) / votes.length))
  const review = disagreement > threshold
  return {
    decision,
    text: describe(countOf, votes.length, decision, confidence),
    confidence_score: confidence,
    disagreement_score: disagreement,
    requires_human_review: review,
    human_review_reason: review ? `Disagreement score ${disagreement.toFixed(4)} exceeds the threshold ${threshold}` : null
  }
}
