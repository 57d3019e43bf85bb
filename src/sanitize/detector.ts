/** What a detector is, and how a regex recognizer becomes one. */
import type { Library, Severity } from "./types.js"

/** Reports [start, end) in UTF-16 code units; returns false to stop early. */
export type Emit = (start: number, end: number) => boolean

export interface Detector {
  readonly entity_type: string
  readonly library: Library
  readonly severity: Severity
  readonly description: string
  readonly run: (text: string, emit: Emit) => void
}

/** Bound on hits per detector, so a hostile payload cannot grow the result without limit. */
export const MAX_HITS_PER_DETECTOR = 20_000

export interface RegexRule {
  readonly entity_type: string
  readonly library: Library
  readonly severity: Severity
  readonly description: string
  /** Must carry `g` (and `d` when `group` is set). Quantifiers bounded or behind a literal: linear scanning. */
  readonly pattern: RegExp
  /** A substring every match contains (case-sensitive): texts without it skip the rule. */
  readonly hint?: string
  readonly group?: number
  /** false/0 rejects; a number accepts that long a prefix. */
  readonly validate?: (match: string, text: string, start: number) => boolean | number
  readonly extend?: (text: string, start: number, end: number) => number
}

export const regexDetector = (rule: RegexRule): Detector => ({
  entity_type: rule.entity_type,
  library: rule.library,
  severity: rule.severity,
  description: rule.description,
  run: (text, emit) => {
    if (rule.hint !== undefined && !text.includes(rule.hint)) return
    // A private copy: the shared RegExp's lastIndex must not leak between concurrent callers.
    const pattern = new RegExp(rule.pattern.source, rule.pattern.flags)
    let hits = 0
    let match: RegExpExecArray | null
    while ((match = pattern.exec(text)) !== null) {
      let start = match.index
      let end = start + match[0].length
      if (rule.group !== undefined) {
        const indices = match.indices?.[rule.group]
        if (indices === undefined) continue
        start = indices[0]
        end = indices[1]
      }
      if (end <= start) {
        if (match[0].length === 0) pattern.lastIndex++
        continue
      }
      if (rule.validate !== undefined) {
        const verdict = rule.validate(text.slice(start, end), text, start)
        if (verdict === false || verdict === 0) continue
        if (typeof verdict === "number" && verdict < end - start) {
          end = start + verdict
          pattern.lastIndex = end
        }
      }
      if (rule.extend !== undefined) end = rule.extend(text, start, end)
      if (!emit(start, end) || ++hits >= MAX_HITS_PER_DETECTOR) return
      if (pattern.lastIndex < end) pattern.lastIndex = end
    }
  }
})
