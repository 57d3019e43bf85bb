/** Shared vocabulary of the content scanner. */

export type Severity = "critical" | "warning" | "info"

/** Built-in recognizer libraries; `custom` marks findings from user-supplied patterns. */
export type Library = "credentials" | "pii" | "healthcare" | "prompt_injection"
export type FindingLibrary = Library | "custom"

export const SEVERITIES: ReadonlyArray<Severity> = ["info", "warning", "critical"]

const SEVERITY_RANK: Readonly<Record<Severity, number>> = { info: 0, warning: 1, critical: 2 }

/** Order used everywhere: info < warning < critical. */
export const severityRank = (severity: Severity): number => SEVERITY_RANK[severity]

export const isSeverity = (value: unknown): value is Severity =>
  value === "critical" || value === "warning" || value === "info"

export const atLeast = (severity: Severity, threshold: Severity): boolean =>
  SEVERITY_RANK[severity] >= SEVERITY_RANK[threshold]

/** A half-open span [start, end) in UTF-16 code units of the scanned text. */
export interface Span {
  readonly start: number
  readonly end: number
}

export interface Finding {
  readonly entity_type: string
  readonly severity: Severity
  readonly library: FindingLibrary
  readonly description: string
  readonly count: number
  readonly matches: ReadonlyArray<Span>
}

/**
 * One built-in detector. Built-in patterns are JavaScript RegExps written by us and
 * kept free of nested unbounded quantifiers (see test/scan.test.ts for the timing
 * guard); user patterns go through re2js instead.
 */
export interface Recognizer {
  readonly entity_type: string
  readonly library: Library
  readonly severity: Severity
  readonly description: string
  /** Must carry the `g` flag; add `d` when `group` is used. */
  readonly pattern: RegExp
  /** A substring every match contains (case-sensitive): texts without it skip this recognizer. */
  readonly hint?: string
  /** Capture group whose span is reported (context-anchored secrets); default the whole match. */
  readonly group?: number
  /**
   * Rejects look-alikes (checksums, reserved ranges, placeholders). Receives the reported
   * text; may instead return the length of a prefix that is valid (0 rejects), for hits a
   * greedy pattern ran past, such as a card number followed by its security code.
   */
  readonly validate?: (match: string) => boolean | number
  /** Grows the reported span past what the pattern matched (for multi-line blocks). */
  readonly extend?: (text: string, start: number, end: number) => number
}

/** One validation problem, as listed in a 422 VALIDATION_ERROR body's `details.issues`. */
export interface Issue {
  readonly path: string
  readonly message: string
}

/** A rejected user-supplied rule: VALIDATION_ERROR → 422; INVALID_REGEX → 400 (only regexes were wrong). */
export interface ValidationFailure {
  readonly ok: false
  readonly code: "VALIDATION_ERROR" | "INVALID_REGEX"
  readonly message: string
  readonly issues: ReadonlyArray<Issue>
}

/** A plain JSON object (not an array, not null). */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)
