/**
 * The code review's own parsers, as properties: the lines of a unified diff an inline comment may
 * point at (src/code-review/diff.ts), checked against diffs generated from a model of hunks whose
 * new-side lines are known; and the normalization of a model's answer (src/code-review/model-review.ts),
 * which must hold its limits whatever the model sends.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { commentableLines } from "../src/code-review/diff.js"
import { CATEGORIES, MAX_VIOLATIONS, normalizeReview } from "../src/code-review/model-review.js"

type Kind = "add" | "remove" | "context"
interface Hunk {
  readonly gap: number
  readonly noNewline: boolean
  readonly lines: ReadonlyArray<{ readonly kind: Kind; readonly text: string }>
}
interface File {
  readonly path: string
  readonly deleted: boolean
  readonly hunks: ReadonlyArray<Hunk>
}

const text = fc.string({ maxLength: 30 }).map((value) => value.replace(/[\r\n]/g, " "))
const hunk = fc.record({
  gap: fc.integer({ min: 0, max: 50 }),
  noNewline: fc.boolean(),
  lines: fc.array(fc.record({ kind: fc.constantFrom<Kind>("add", "remove", "context"), text }), { minLength: 1, maxLength: 12 })
})
const file = fc.record({
  path: fc.stringMatching(/^[a-z]{1,8}(\/[a-z]{1,8}){0,2}\.(ts|md)$/),
  deleted: fc.boolean(),
  hunks: fc.array(hunk, { minLength: 1, maxLength: 4 })
})

const prefix: Record<Kind, string> = { add: "+", remove: "-", context: " " }

/** The diff text of `files`, and the new-side lines each shows (what GitHub lets a comment point at). */
const render = (files: ReadonlyArray<File>) => {
  const out: Array<string> = []
  const expected = new Map<string, Set<number>>()
  for (const entry of files) {
    out.push(`diff --git a/${entry.path} b/${entry.path}`, "index 1111111..2222222 100644", `--- a/${entry.path}`, entry.deleted ? "+++ /dev/null" : `+++ b/${entry.path}`)
    let oldLine = 1
    let newLine = 1
    for (const part of entry.hunks) {
      oldLine += part.gap
      newLine += part.gap
      const lines = entry.deleted ? part.lines.map((line) => ({ ...line, kind: "remove" as Kind })) : part.lines
      const oldCount = lines.filter((line) => line.kind !== "add").length
      const newCount = lines.filter((line) => line.kind !== "remove").length
      out.push(`@@ -${oldLine},${oldCount} +${newLine},${newCount} @@ context`)
      for (const line of lines) {
        out.push(prefix[line.kind] + line.text)
        if (line.kind !== "remove" && !entry.deleted) {
          const seen = expected.get(entry.path) ?? new Set<number>()
          seen.add(newLine)
          expected.set(entry.path, seen)
        }
        if (line.kind !== "add") oldLine++
        if (line.kind !== "remove") newLine++
      }
      if (part.noNewline) out.push("\\ No newline at end of file")
    }
  }
  return { diff: `${out.join("\n")}\n`, expected }
}

const asPlain = (lines: ReadonlyMap<string, ReadonlySet<number>>) =>
  Object.fromEntries([...lines].filter(([, set]) => set.size > 0).map(([path, set]) => [path, [...set].sort((a, b) => a - b)]))

describe("code review parsers", () => {
  it("commentable lines are exactly the new-side lines each hunk shows (added and context), per file", () => {
    fc.assert(
      fc.property(fc.uniqueArray(file, { selector: (entry) => entry.path, minLength: 1, maxLength: 4 }), (files) => {
        const { diff, expected } = render(files)
        expect(asPlain(commentableLines(diff))).toEqual(asPlain(expected))
      }),
      { numRuns: 300 }
    )
  })

  it("a line that looks like a file header inside a hunk is content, not a new file", () => {
    const diff = ["diff --git a/a.ts b/a.ts", "--- a/a.ts", "+++ b/a.ts", "@@ -1,1 +1,3 @@", " keep", "+++ b/not-a-file", "+second"].join("\n")
    expect(asPlain(commentableLines(diff))).toEqual({ "a.ts": [1, 2, 3] })
  })

  it("a model's answer is held to the limits whatever it sends", () => {
    const anything = fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.boolean(), fc.double())
    const violation = fc.record(
      {
        file: fc.oneof(fc.string({ maxLength: 1_200 }), anything),
        line: fc.oneof(fc.integer({ min: -5, max: 3_000_000_000 }), fc.double(), anything),
        finding: fc.oneof(fc.string({ maxLength: 300 }), anything),
        category: fc.oneof(fc.constantFrom(...CATEGORIES, "Security", "data-protection", "style"), anything),
        severity: fc.oneof(fc.constantFrom("critical", "warning"), anything),
        description: fc.oneof(fc.string({ maxLength: 5_000 }), anything),
        fix: fc.oneof(fc.string({ maxLength: 5_000 }), anything)
      },
      { requiredKeys: [] }
    )
    fc.assert(
      fc.property(fc.array(fc.oneof(violation, anything), { maxLength: 260 }), (list) => {
        const result = normalizeReview({ violations: list })
        if (!result.success) throw new Error("a list of violations is always an answer")
        expect(result.value.length).toBeLessThanOrEqual(MAX_VIOLATIONS)
        for (const finding of result.value) {
          expect(CATEGORIES).toContain(finding.category)
          const critical = finding.category === "security" || finding.category === "data_protection"
          expect(finding.severity).toBe(critical ? "critical" : "warning")
          expect(finding.blocksMerge).toBe(critical)
          expect(finding.file.length).toBeGreaterThan(0)
          expect(finding.finding.length).toBeGreaterThan(0)
          expect(finding.finding.length).toBeLessThanOrEqual(200)
          expect(finding.description.length).toBeLessThanOrEqual(4_000)
          expect(finding.fix === null || (finding.fix.length > 0 && finding.fix.length <= 4_000)).toBe(true)
          expect(finding.line === null || (Number.isInteger(finding.line) && finding.line >= 1)).toBe(true)
        }
      }),
      { numRuns: 200 }
    )
    expect(normalizeReview({ findings: [] }).success).toBe(false)
    expect(normalizeReview("[]").success).toBe(false)
  })
})
