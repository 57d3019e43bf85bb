/** Consensus math (docs/decisions.md, "Cases"): properties over any set of votes, and the worked cases. */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { consensusOf, type Vote } from "../src/cases/consensus.js"

const vote = fc.record({ decision: fc.constantFrom("APPROVE" as const, "DENY" as const, "REVIEW" as const), confidence: fc.double({ min: 0, max: 1, noNaN: true }) })
const votes = fc.array(vote, { minLength: 1, maxLength: 3 })
const threshold = fc.double({ min: 0, max: 1, noNaN: true })

describe("consensusOf", () => {
  it("keeps both scores in 0..1, a decision only with a majority of models and of weight, review exactly above the threshold", () => {
    fc.assert(
      fc.property(votes, threshold, (input, limit) => {
        const result = consensusOf(input, limit)
        expect(result.confidence_score).toBeGreaterThanOrEqual(0)
        expect(result.confidence_score).toBeLessThanOrEqual(1)
        expect(result.disagreement_score).toBeGreaterThanOrEqual(0)
        expect(result.disagreement_score).toBeLessThanOrEqual(1)
        if (result.decision !== "MIXED") {
          expect(result.disagreement_score).toBeLessThanOrEqual(0.5)
          expect(input.filter((vote) => vote.decision === result.decision).length * 2).toBeGreaterThan(input.length)
        } else if (new Set(input.map((vote) => vote.decision)).size === 1) throw new Error("unanimous models cannot be MIXED")
        expect(result.requires_human_review).toBe(result.disagreement_score > limit)
        expect(result.human_review_reason === null).toBe(!result.requires_human_review)
      })
    )
  })

  it("does not depend on the order the models answered in", () => {
    fc.assert(
      fc.property(votes, (input) => {
        const reversed = [...input].reverse()
        const a = consensusOf(input)
        const b = consensusOf(reversed)
        expect({ ...a, text: "" }).toEqual({ ...b, text: "" })
      })
    )
  })

  it("agrees with unanimous models, with no disagreement", () => {
    fc.assert(
      fc.property(vote, fc.integer({ min: 1, max: 3 }), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 3, maxLength: 3 }), (one, n, confidences) => {
        const input: Array<Vote> = confidences.slice(0, n).map((confidence) => ({ decision: one.decision, confidence }))
        const result = consensusOf(input)
        expect(result.decision).toBe(one.decision)
        expect(result.disagreement_score).toBe(0)
        expect(result.requires_human_review).toBe(false)
      })
    )
  })

  it("works the documented examples", () => {
    expect(consensusOf([{ decision: "APPROVE", confidence: 0.9 }, { decision: "APPROVE", confidence: 0.7 }])).toMatchObject({ decision: "APPROVE", confidence_score: 0.8, disagreement_score: 0 })
    const split = consensusOf([{ decision: "APPROVE", confidence: 0.8 }, { decision: "DENY", confidence: 0.8 }])
    expect(split).toMatchObject({ decision: "MIXED", disagreement_score: 0.5, requires_human_review: true })
    // A tie leans to the cautious side for the reported confidence.
    expect(split.confidence_score).toBe(0.4)
    const twoToOne = consensusOf([{ decision: "DENY", confidence: 0.9 }, { decision: "DENY", confidence: 0.6 }, { decision: "APPROVE", confidence: 0.9 }])
    expect(twoToOne).toMatchObject({ decision: "DENY", confidence_score: 0.5, disagreement_score: 0.375, requires_human_review: false })
    expect(twoToOne.text).toBe("Consensus DENY: 2 of 3 models deny, 1 of 3 models approves (confidence 0.50).")
    expect(consensusOf([{ decision: "APPROVE", confidence: 0 }, { decision: "DENY", confidence: 0 }]).decision).toBe("MIXED")
    // Two models that disagree never make a consensus, however sure one of them is.
    const lopsided = consensusOf([{ decision: "APPROVE", confidence: 0.9 }, { decision: "DENY", confidence: 0.1 }])
    expect(lopsided).toMatchObject({ decision: "MIXED", disagreement_score: 0.1, requires_human_review: false })
  })
})
