/**
 * content_scan policies: `scan_config` validation and the match test.
 *
 * A content_scan policy matches when the scanned text holds a finding of severity
 * `warning` or `critical` from one of its libraries (info findings such as IP addresses
 * never trigger a decision), or any match of one of its custom patterns, whatever that
 * pattern's severity: writing a custom pattern is an explicit request to act on it.
 *
 * Scanned text: the action's `details` and every string leaf of `context` (nested
 * objects and arrays included, to a bounded depth) — a secret hidden in a context
 * header is still a secret. Other subject fields (ids, versions, hashes, endpoint_url)
 * are identifiers, not content, and are not scanned.
 */
import { type CompiledCustomPattern, compileCustomPatterns } from "../scan/custom.js"
import { AVAILABLE_LIBRARIES } from "../scan/recognizers.js"
import { type FirstHit, firstHit } from "../scan/scanner.js"
import { type Issue, isRecord, type Library, type ValidationFailure } from "../scan/types.js"
import type { CompiledScanConfig, PolicySubject } from "./types.js"

/** Used when a content_scan policy is created without `scan_config`. */
export const DEFAULT_SCAN_LIBRARIES: ReadonlyArray<Library> = ["credentials", "pii"]

export type ScanConfigResult =
  | { readonly ok: true; readonly compiled: CompiledScanConfig }
  | ValidationFailure

/**
 * Validates `{libraries?: string[], custom_patterns?: [...]}`. A missing scan_config
 * means both available libraries; a present one must name at least one library or
 * custom pattern.
 */
export const compileScanConfig = (input: unknown, base = "scan_config"): ScanConfigResult => {
  if (input === undefined || input === null) {
    return { ok: true, compiled: { libraries: DEFAULT_SCAN_LIBRARIES, customPatterns: [] } }
  }
  if (!isRecord(input)) {
    return invalid([{ path: base, message: "must be an object {libraries, custom_patterns}" }])
  }
  const issues: Array<Issue> = []
  const libraries: Array<Library> = []
  const rawLibraries = input.libraries
  if (rawLibraries !== undefined && rawLibraries !== null) {
    if (!Array.isArray(rawLibraries)) {
      issues.push({ path: `${base}.libraries`, message: "must be an array of strings" })
    } else {
      rawLibraries.forEach((library, index) => {
        if (AVAILABLE_LIBRARIES.includes(library as Library)) {
          if (!libraries.includes(library as Library)) libraries.push(library as Library)
        } else {
          issues.push({
            path: `${base}.libraries[${index}]`,
            message: `unknown library; available: ${AVAILABLE_LIBRARIES.join(", ")}`
          })
        }
      })
    }
  }
  let customPatterns: ReadonlyArray<CompiledCustomPattern> = []
  let regexOnly: ReadonlyArray<Issue> = []
  const rawPatterns = input.custom_patterns
  if (rawPatterns !== undefined && rawPatterns !== null) {
    const result = compileCustomPatterns(rawPatterns, `${base}.custom_patterns`)
    if (result.ok) customPatterns = result.patterns
    else if (result.code === "INVALID_REGEX") regexOnly = result.issues
    else issues.push(...result.issues)
  }
  const nothingToScan =
    libraries.length === 0 && customPatterns.length === 0 && regexOnly.length === 0 && issues.length === 0
  if (nothingToScan) {
    issues.push({ path: base, message: "needs at least one library or custom pattern" })
  }
  if (issues.length > 0) return invalid([...issues, ...regexOnly])
  if (regexOnly.length > 0) {
    return { ok: false, code: "INVALID_REGEX", message: regexOnly[0].message, issues: regexOnly }
  }
  return { ok: true, compiled: { libraries, customPatterns } }
}

const invalid = (issues: ReadonlyArray<Issue>): ScanConfigResult => ({
  ok: false,
  code: "VALIDATION_ERROR",
  message: "scan_config is invalid",
  issues
})

const MAX_CONTEXT_DEPTH = 8

const collectStrings = (value: unknown, depth: number, out: Array<string>): void => {
  if (typeof value === "string") {
    if (value.length > 0) out.push(value)
    return
  }
  if (depth >= MAX_CONTEXT_DEPTH || typeof value !== "object" || value === null) return
  const children = Array.isArray(value) ? value : Object.values(value)
  for (const child of children) collectStrings(child, depth + 1, out)
}

/** The texts a content_scan policy looks at, `details` first. */
export const scannedTexts = (subject: PolicySubject): Array<string> => {
  const texts: Array<string> = []
  if (subject.details.length > 0) texts.push(subject.details)
  if (subject.context !== undefined && subject.context !== null) collectStrings(subject.context, 0, texts)
  return texts
}

/** The first triggering hit, or undefined when the policy does not match. */
export const matchContentScan = (config: CompiledScanConfig, subject: PolicySubject): FirstHit | undefined => {
  for (const text of scannedTexts(subject)) {
    const hit = firstHit(text, config.libraries, config.customPatterns, "warning")
    if (hit !== undefined) return hit
  }
  return undefined
}
