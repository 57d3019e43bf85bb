/**
 * User-supplied regular expressions run on re2js: RE2 semantics, linear time in the
 * input, no backreferences or lookaround. A length bound keeps compiled programs small.
 */
import { RE2JS } from "re2js"

export const MAX_PATTERN_LENGTH = 1_000

export type SafeRegexResult =
  | { readonly ok: true; readonly regex: RE2JS }
  | { readonly ok: false; readonly code: "INVALID_REGEX"; readonly message: string }

export const compileSafeRegex = (pattern: string): SafeRegexResult => {
  if (pattern.length === 0) {
    return { ok: false, code: "INVALID_REGEX", message: "regex must not be empty" }
  }
  if (pattern.length > MAX_PATTERN_LENGTH) {
    return {
      ok: false,
      code: "INVALID_REGEX",
      message: `regex is longer than ${MAX_PATTERN_LENGTH} characters`
    }
  }
  try {
    return { ok: true, regex: RE2JS.compile(pattern) }
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error)
    return { ok: false, code: "INVALID_REGEX", message: `regex cannot be compiled: ${detail}` }
  }
}

/** Unanchored search, like RegExp.prototype.test. */
export const safeRegexTest = (regex: RE2JS, input: string): boolean => regex.test(input)
