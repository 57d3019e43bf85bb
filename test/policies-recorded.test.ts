/**
 * The policy evaluations authorize records (src/policies/recorded.ts): hand-built JSON text that
 * must parse, whatever the policy names and reasons hold, and read back to what was evaluated.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { Judgement } from "../src/policies/ai-judge.js"
import type { PolicyMatch, PolicyStep } from "../src/policies/evaluate.js"
import { decodeEvaluations, encodeEvaluations, storableText } from "../src/policies/recorded.js"
import type { EvaluablePolicy, PolicyDecision, PolicyMode } from "../src/policies/types.js"

const modes: ReadonlyArray<PolicyMode> = ["rules", "ai", "consensus", "content_scan"]
const decisions: ReadonlyArray<PolicyDecision> = ["allow", "require_approval", "deny"]

const step = fc.record({
  id: fc.string({ minLength: 1, maxLength: 40, unit: "binary" }),
  name: fc.string({ maxLength: 60, unit: "binary" }),
  mode: fc.constantFrom(...modes),
  decision: fc.constantFrom(...decisions),
  match: fc.oneof(
    fc.record({ kind: fc.constant("match" as const), reason: fc.string({ maxLength: 80, unit: "binary" }) }),
    fc.constant({ kind: "no_match" as const }),
    fc.record({ kind: fc.constant("unavailable" as const), warning: fc.string({ maxLength: 80 }) })
  ),
  judged: fc.option(fc.record({ confidence: fc.double({ noNaN: false }), votes: fc.array(fc.record({ model: fc.string(), decision: fc.constantFrom("APPROVE", "DENY", "REVIEW"), confidence: fc.double({ min: 0, max: 1, noNaN: true }) }), { maxLength: 3 }) }))
})

describe("recorded policy evaluations", () => {
  it("encode to JSON that reads back to the same policies, decisions and reasons", () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 12 }), (steps) => {
        const policies = steps.map((s, index) => ({ ...s, id: `${s.id}#${index}` }))
        const trace: Array<PolicyStep> = policies.map((s) => {
          const policy = { id: s.id, name: s.name, mode: s.mode, decision: s.decision, priority: 0, created_at: "2026-01-01T00:00:00Z" } satisfies EvaluablePolicy
          const produced = s.match.kind === "no_match" ? "allow" : s.match.kind === "unavailable" ? "require_approval" : s.decision
          return { policy, match: s.match as PolicyMatch, produced }
        })
        const judgements = new Map<string, Judgement>()
        for (const s of policies) if (s.judged !== null) judgements.set(s.id, { match: s.match as PolicyMatch, confidence: s.judged.confidence, votes: s.judged.votes })
        const at = "2026-11-25T10:00:00.000Z"
        const text = encodeEvaluations(trace, judgements, at)
        const decoded = decodeEvaluations(JSON.parse(text))!
        expect(decoded).toHaveLength(trace.length)
        decoded.forEach((entry, index) => {
          const s = policies[index]!
          expect(entry.policy_uuid).toBe(s.id)
          expect(entry.policy_name).toBe(s.name)
          expect(entry.mode).toBe(s.mode)
          expect(entry.decision).toBe(trace[index]!.produced)
          expect(entry.evaluated_at).toBe(at)
          if (s.match.kind === "match") expect(entry.reasoning).toBe(storableText(s.match.reason))
          if (s.match.kind === "unavailable") expect(entry.reasoning).toBe(storableText(s.match.warning))
          // Only finite confidences in 0..1 are kept (signed content must survive a JSON round trip).
          expect(entry.confidence === null || (entry.confidence >= 0 && entry.confidence <= 1)).toBe(true)
          expect(entry.model_votes === null).toBe(!(s.mode === "consensus" && s.judged !== null))
          for (const vote of entry.model_votes ?? []) expect(decisions).toContain(vote.decision)
        })
      }),
      { numRuns: 300 }
    )
  })

  it("keeps text Postgres jsonb accepts as it is and mends the rest (NUL, lone surrogates)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 50 }), (text) => {
        const stored = storableText(text)
        expect(stored).not.toContain("\u0000")
        expect(stored).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/)
        const clean = !text.includes("\u0000") && Buffer.from(text, "utf8").toString("utf8") === text
        if (clean) expect(stored).toBe(text)
      })
    )
  })

  it("reads nothing from a value that is not this format", () => {
    for (const value of [null, [], "text", { steps: [] }, { v: 2, steps: [] }]) expect(decodeEvaluations(value)).toBeUndefined()
  })
})
