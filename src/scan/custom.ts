/** Organization-defined patterns (content_scan `custom_patterns`), compiled once with re2js. */
import type { RE2JS } from "re2js"
import { compileSafeRegex } from "./safe-regex.js"
import { type Issue, isRecord, isSeverity, type Severity, type ValidationFailure } from "./types.js"

export interface CustomPatternInput {
  readonly name: string
  readonly regex: string
  readonly severity?: Severity
  readonly description?: string | null
}

export interface CompiledCustomPattern {
  readonly name: string
  readonly severity: Severity
  readonly description: string
  readonly source: string
  readonly regex: RE2JS
}

export const MAX_CUSTOM_PATTERNS = 50
export const MAX_PATTERN_NAME_LENGTH = 100
export const DEFAULT_CUSTOM_SEVERITY: Severity = "warning"

export type CustomPatternsResult =
  | { readonly ok: true; readonly patterns: ReadonlyArray<CompiledCustomPattern> }
  | ValidationFailure

/**
 * Validates and compiles `[{name, regex, severity?, description?}]`. Every problem is
 * reported; shape problems win over regex problems in the returned code.
 */
export const compileCustomPatterns = (input: unknown, basePath = "custom_patterns"): CustomPatternsResult => {
  if (!Array.isArray(input)) {
    return validationFailure([{ path: basePath, message: "must be an array" }], [])
  }
  const shapeIssues: Array<Issue> = []
  const regexIssues: Array<Issue> = []
  if (input.length > MAX_CUSTOM_PATTERNS) {
    shapeIssues.push({ path: basePath, message: `at most ${MAX_CUSTOM_PATTERNS} patterns` })
  }
  const patterns: Array<CompiledCustomPattern> = []
  const names = new Set<string>()
  input.forEach((item, index) => {
    const path = `${basePath}[${index}]`
    if (!isRecord(item)) {
      shapeIssues.push({ path, message: "must be an object {name, regex, severity, description}" })
      return
    }
    const { name, regex, severity, description } = item
    let valid = true
    if (typeof name !== "string" || name.trim().length === 0 || name.length > MAX_PATTERN_NAME_LENGTH) {
      shapeIssues.push({ path: `${path}.name`, message: `must be a string of 1-${MAX_PATTERN_NAME_LENGTH} characters` })
      valid = false
    } else if (names.has(name)) {
      shapeIssues.push({ path: `${path}.name`, message: "duplicate pattern name" })
      valid = false
    } else {
      names.add(name)
    }
    if (severity !== undefined && severity !== null && !isSeverity(severity)) {
      shapeIssues.push({ path: `${path}.severity`, message: "must be one of critical, warning, info" })
      valid = false
    }
    if (description !== undefined && description !== null && typeof description !== "string") {
      shapeIssues.push({ path: `${path}.description`, message: "must be a string" })
      valid = false
    }
    if (typeof regex !== "string") {
      shapeIssues.push({ path: `${path}.regex`, message: "must be a string" })
      return
    }
    const compiled = compileSafeRegex(regex)
    if (!compiled.ok) {
      regexIssues.push({ path: `${path}.regex`, message: compiled.message })
      return
    }
    if (valid) {
      patterns.push({
        name: name as string,
        severity: isSeverity(severity) ? severity : DEFAULT_CUSTOM_SEVERITY,
        description: typeof description === "string" && description.length > 0 ? description : `Custom pattern ${name}`,
        source: regex,
        regex: compiled.regex
      })
    }
  })
  if (shapeIssues.length > 0 || regexIssues.length > 0) return validationFailure(shapeIssues, regexIssues)
  return { ok: true, patterns }
}

const validationFailure = (shapeIssues: Array<Issue>, regexIssues: Array<Issue>): CustomPatternsResult =>
  shapeIssues.length > 0
    ? {
        ok: false,
        code: "VALIDATION_ERROR",
        message: "custom_patterns is invalid",
        issues: [...shapeIssues, ...regexIssues]
      }
    : { ok: false, code: "INVALID_REGEX", message: regexIssues[0].message, issues: regexIssues }
