/**
 * Precision and recall of the sanitize engine on a hand-labelled corpus
 * (test/fixtures/sanitize/corpus.json), per entity type, printed; floors asserted. A prediction
 * counts when it overlaps a labelled entity of an accepted type; every other prediction is a
 * false positive, every unmatched label a false negative.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { type SanitizePolicy, sanitizeText } from "../src/sanitize/text.js"

interface Case {
  readonly id: string
  readonly policy?: SanitizePolicy
  readonly text: string
  readonly entities: ReadonlyArray<readonly [string, string]>
}

const corpus: { cases: ReadonlyArray<Case> } = JSON.parse(readFileSync(join(import.meta.dirname, "fixtures/sanitize/corpus.json"), "utf8"))

interface Tally {
  tp: number
  fp: number
  fn: number
}

const score = () => {
  const tallies = new Map<string, Tally>()
  const tally = (type: string) => {
    let t = tallies.get(type)
    if (t === undefined) tallies.set(type, (t = { tp: 0, fp: 0, fn: 0 }))
    return t
  }
  const misses: Array<string> = []
  for (const c of corpus.cases) {
    const expected = c.entities.map(([types, text]) => {
      const start = c.text.indexOf(text)
      if (start === -1) throw new Error(`case ${c.id}: label "${text}" is not in the text`)
      return { types: types.split("|"), start, end: start + text.length, text, matched: false }
    })
    const { spans } = sanitizeText(c.text, { policy: c.policy ?? "default", mode: "flag" })
    for (const span of spans) {
      const hit = expected.find((e) => !e.matched && e.types.includes(span.entity_type) && span.start < e.end && e.start < span.end)
      if (hit !== undefined) {
        hit.matched = true
        tally(hit.types[0]!).tp++
      } else {
        tally(span.entity_type).fp++
        misses.push(`${c.id}: false ${span.entity_type} "${c.text.slice(span.start, span.end)}"`)
      }
    }
    for (const e of expected.filter((x) => !x.matched)) {
      tally(e.types[0]!).fn++
      misses.push(`${c.id}: missed ${e.types[0]} "${e.text}"`)
    }
  }
  return { tallies, misses }
}

const ratio = (a: number, b: number) => (b === 0 ? 1 : a / b)

describe("labelled corpus", () => {
  const { tallies, misses } = score()
  const rows = [...tallies.entries()].sort(([a], [b]) => a.localeCompare(b))
  const total = rows.reduce((acc, [, t]) => ({ tp: acc.tp + t.tp, fp: acc.fp + t.fp, fn: acc.fn + t.fn }), { tp: 0, fp: 0, fn: 0 })

  it("prints precision and recall per entity type", () => {
    const lines = rows.map(
      ([type, t]) => `${type.padEnd(26)} tp ${String(t.tp).padStart(3)} fp ${String(t.fp).padStart(3)} fn ${String(t.fn).padStart(3)}  precision ${ratio(t.tp, t.tp + t.fp).toFixed(2)}  recall ${ratio(t.tp, t.tp + t.fn).toFixed(2)}`
    )
    lines.push(`${"ALL".padEnd(26)} tp ${String(total.tp).padStart(3)} fp ${String(total.fp).padStart(3)} fn ${String(total.fn).padStart(3)}  precision ${ratio(total.tp, total.tp + total.fp).toFixed(2)}  recall ${ratio(total.tp, total.tp + total.fn).toFixed(2)}`)
    console.log(`sanitize corpus (${corpus.cases.length} cases)\n${lines.join("\n")}\n\nerrors:\n${misses.join("\n")}`)
    expect(rows.length).toBeGreaterThan(20)
  })

  it("checksum-validated types: recall at least 0.95 and precision at least 0.95", () => {
    for (const type of ["credit_card", "iban", "us_ssn", "nhs_number", "npi_number"]) {
      const t = tallies.get(type) ?? { tp: 0, fp: 0, fn: 0 }
      expect(t.tp, type).toBeGreaterThan(0)
      expect(ratio(t.tp, t.tp + t.fn), `${type} recall`).toBeGreaterThanOrEqual(0.95)
      expect(ratio(t.tp, t.tp + t.fp), `${type} precision`).toBeGreaterThanOrEqual(0.95)
    }
  })

  it("other types with at least three labels: recall at least 0.5, precision at least 0.8", () => {
    for (const [type, t] of rows) {
      if (t.tp + t.fn < 3) continue
      expect(ratio(t.tp, t.tp + t.fn), `${type} recall`).toBeGreaterThanOrEqual(0.5)
      expect(ratio(t.tp, t.tp + t.fp), `${type} precision`).toBeGreaterThanOrEqual(0.8)
    }
  })

  it("overall floors", () => {
    expect(ratio(total.tp, total.tp + total.fp)).toBeGreaterThanOrEqual(0.85)
    expect(ratio(total.tp, total.tp + total.fn)).toBeGreaterThanOrEqual(0.8)
  })
})
