/**
 * Formula "1.0" (CONTRACT-sdk-beyond §3) as a property: for any inputs, the server's score and
 * tier equal an independent implementation's (test/support/reputation.ts), the score stays within
 * its parts' bounds, and equal inputs apart from `computed_at` are the same inputs. The signed side
 * (score_hash against the published JWKS key) is checked end to end in test/reputation.test.ts.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { ReputationInputs } from "../protocol/reputation.js"
import { sameInputs, scoreOf, scoreParts, tierOf } from "../src/reputation/formula.js"
import { exactFloor, expectedScore, expectedTier } from "./support/reputation.js"

/** Counts from empty records to huge ones (40 × (n + 5) stays below 2^53). */
/** The inputs of an agent that has done nothing yet. */
const noHistory = (agent_slug: string): ReputationInputs => ({
  agent_slug,
  notarized: 0,
  failed: 0,
  denied_by_policy: 0,
  denied_by_human: 0,
  human_approved: 0,
  attested_success: 0,
  attested_failure: 0,
  attestations: 0,
  age_days: 0,
  decommissioned: false,
  computed_at: "2026-01-01T00:00:00.000Z"
})

const count = fc.oneof(fc.nat({ max: 20 }), fc.nat({ max: 10_000 }), fc.nat({ max: 2 ** 47 }))

const inputs: fc.Arbitrary<ReputationInputs> = fc.record({
  agent_slug: fc.stringMatching(/^[a-z0-9-]{3,64}$/),
  notarized: count,
  failed: count,
  denied_by_policy: count,
  denied_by_human: count,
  human_approved: count,
  attested_success: count,
  attested_failure: count,
  attestations: count,
  age_days: count,
  decommissioned: fc.boolean(),
  computed_at: fc.date({ min: new Date("2020-01-01T00:00:00Z"), max: new Date("2100-01-01T00:00:00Z"), noInvalidDate: true }).map((d) => d.toISOString())
})

describe("reputation formula 1.0", () => {
  it("score and tier equal an independent implementation for any inputs", () => {
    fc.assert(
      fc.property(inputs, (i) => {
        const score = scoreOf(i)
        expect(score).toBe(expectedScore(i))
        expect(tierOf(i, score)).toBe(expectedTier(i, score))
      }),
      { numRuns: 5_000 }
    )
  })

  it("each part stays within the contract's range; the score within 0-98", () => {
    fc.assert(
      fc.property(inputs, (i) => {
        const parts = scoreParts(i)
        expect(parts.reliability).toBeGreaterThanOrEqual(0)
        expect(parts.reliability).toBeLessThanOrEqual(39)
        expect(parts.compliance).toBeGreaterThanOrEqual(0)
        expect(parts.compliance).toBeLessThanOrEqual(19)
        expect(parts.oversight).toBeLessThanOrEqual(10)
        expect(parts.endorsement).toBeLessThanOrEqual(20)
        expect(parts.tenure).toBeLessThanOrEqual(10)
        const score = scoreOf(i)
        expect(Number.isInteger(score)).toBe(true)
        expect(score).toBeGreaterThanOrEqual(0)
        expect(score).toBeLessThanOrEqual(98)
      }),
      { numRuns: 2_000 }
    )
  })

  it("an agent without history scores 20 + 10 and is unrated", () => {
    const empty = noHistory("fresh")
    expect(scoreParts(empty)).toEqual({ reliability: 20, compliance: 10, oversight: 0, endorsement: 0, tenure: 0 })
    expect(scoreOf(empty)).toBe(30)
    expect(tierOf(empty, 30)).toBe("unrated")
    expect(tierOf({ ...empty, attestations: 1 }, 30)).toBe("provisional")
    expect(scoreOf({ ...empty, decommissioned: true, notarized: 1000 })).toBe(0)
    expect(tierOf({ ...empty, decommissioned: true }, 0)).toBe("decommissioned")
  })

  it("worked examples: floors, caps and the decommissioned zero", () => {
    const base = noHistory("worked")
    // 40 × 15 / 20 = 30 exactly; 20 × 15 / 22 = 13.6… → 13; human approvals capped at 10; 2 × 3 − 4 × 1 = 2; 95 days → 3.
    const worked = { ...base, notarized: 10, failed: 0, denied_by_policy: 2, human_approved: 12, attested_success: 3, attested_failure: 1, attestations: 5, age_days: 95 }
    expect(scoreParts(worked)).toEqual({ reliability: 30, compliance: 13, oversight: 10, endorsement: 2, tenure: 3 })
    expect(scoreOf(worked)).toBe(58)
    expect(tierOf(worked, 58)).toBe("established")
    // Failures only: reliability falls, endorsement never below 0, tenure capped at 10.
    const poor = { ...base, failed: 30, attested_failure: 2, attestations: 2, age_days: 10_000 }
    expect(scoreParts(poor)).toEqual({ reliability: 5, compliance: 17, oversight: 0, endorsement: 0, tenure: 10 })
    expect(tierOf(poor, scoreOf(poor))).toBe("provisional")
    expect(exactFloor(200, 10)).toBe(20)
  })

  it("counts whose products pass 2^53 still floor the exact quotient", () => {
    const max = Number.MAX_SAFE_INTEGER
    // 40 × (M + 5) / (2M + 10) is exactly 20; the float product 40 × (M + 5) rounds down and would give 19.
    const huge = { ...noHistory("huge"), notarized: max, failed: max }
    expect(scoreParts(huge)).toEqual({ reliability: 20, compliance: 19, oversight: 0, endorsement: 0, tenure: 0 })
    expect(scoreOf({ ...huge, human_approved: max, attested_success: max, age_days: max })).toBe(20 + 19 + 10 + 20 + 10)
    expect(scoreOf({ ...huge, attested_failure: max, attested_success: max })).toBe(39)
  })

  it("inputs equal apart from computed_at are the same inputs; any other difference is not", () => {
    fc.assert(
      fc.property(inputs, fc.date({ noInvalidDate: true }), (i, other) => {
        expect(sameInputs(i, { ...i, computed_at: other.toISOString() })).toBe(true)
        expect(sameInputs(i, { ...i, notarized: i.notarized + 1 })).toBe(false)
        expect(sameInputs(i, { ...i, decommissioned: !i.decommissioned })).toBe(false)
      })
    )
  })
})
