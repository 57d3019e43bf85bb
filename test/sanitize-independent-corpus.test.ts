/**
 * The independent corpus (test/corpus/) is well formed, and the engine keeps the recall and
 * precision it reached on it (floors a little under the measured figures, so a regression fails;
 * the figures themselves are printed by `npm run bench:sanitize`).
 */
import { describe, expect, it } from "vitest"
import { INJECTION_FAMILIES, isHeldOut, LABEL_TYPES, loadCorpus, occurrences, scoreCorpus, summarize } from "./support/sanitize-corpus.js"

const corpus = loadCorpus()

describe("independent sanitize corpus", () => {
  it("is at least 1,000 well-formed texts, a tenth of them held out", () => {
    expect(corpus.length).toBeGreaterThanOrEqual(1000)
    const ids = new Set<string>()
    for (const t of corpus) {
      expect(ids.has(t.id), `${t.source}: duplicate id ${t.id}`).toBe(false)
      ids.add(t.id)
      expect(t.text.length, t.source).toBeGreaterThan(0)
      expect(t.injection === null || INJECTION_FAMILIES.includes(t.injection), `${t.source}: injection ${t.injection}`).toBe(true)
      for (const label of t.labels) {
        expect(LABEL_TYPES.includes(label.type), `${t.source}: type ${label.type}`).toBe(true)
        expect(occurrences(t.text, label.value).length, `${t.source}: ${JSON.stringify(label.value)} is not a whole token of the text`).toBeGreaterThan(0)
      }
    }
    const held = corpus.filter((t) => isHeldOut(t.id)).length / corpus.length
    expect(held).toBeGreaterThan(0.07)
    expect(held).toBeLessThan(0.13)
  })

  it("keeps its recall and precision on the tuning part (default pack)", () => {
    // Floors a little under what was measured when they were set (recall 0.846, precision 0.922, injection 58/58,
    // decoys changed 27.9 %): a regression fails here; the targets are printed by the benchmark.
    const s = summarize(scoreCorpus(corpus.filter((t) => !isHeldOut(t.id)), "default"))
    expect(s.recall).toBeGreaterThanOrEqual(0.83)
    expect(s.precision).toBeGreaterThanOrEqual(0.9)
    expect(s.injectionRecall).toBeGreaterThanOrEqual(0.95)
    expect(s.decoysChanged).toBeLessThanOrEqual(0.3)
    for (const type of ["card", "iban", "email", "phone", "icd10", "npi", "aws_secret"]) expect(s.recallByType[type], type).toBeGreaterThanOrEqual(0.9)
  })
})
