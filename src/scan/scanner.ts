/** Runs recognizers over text: one pass per recognizer, only for the requested libraries. */
import type { CompiledCustomPattern } from "./custom.js"
import { recognizersFor } from "./recognizers.js"
import { atLeast, type Finding, type Library, type Recognizer, type Severity, type Span } from "./types.js"

export interface ScanOptions {
  readonly libraries: ReadonlyArray<Library>
  readonly customPatterns?: ReadonlyArray<CompiledCustomPattern>
}

/** Bound on spans collected per entity, so a hostile payload cannot grow the result without limit. */
export const MAX_MATCHES_PER_ENTITY = 10_000

interface Accumulator {
  entity_type: string
  severity: Severity
  library: Finding["library"]
  description: string
  matches: Array<Span>
}

/** Calls `onMatch(start, end)` for each validated hit of a built-in recognizer; stops when it returns false. */
const eachBuiltinMatch = (
  text: string,
  recognizer: Recognizer,
  onMatch: (start: number, end: number) => boolean
): void => {
  if (recognizer.hint !== undefined && !text.includes(recognizer.hint)) return
  const pattern = recognizer.pattern
  pattern.lastIndex = 0
  let match: RegExpExecArray | null
  while ((match = pattern.exec(text)) !== null) {
    let start = match.index
    let end = start + match[0].length
    if (recognizer.group !== undefined) {
      const indices = match.indices?.[recognizer.group]
      if (indices === undefined) continue
      start = indices[0]
      end = indices[1]
    }
    if (end === start) {
      pattern.lastIndex++
      continue
    }
    if (recognizer.validate !== undefined) {
      const verdict = recognizer.validate(text.slice(start, end))
      if (verdict === false || verdict === 0) continue
      if (typeof verdict === "number" && verdict < end - start) {
        end = start + verdict
        // Scan what the prefix left over again.
        pattern.lastIndex = end
      }
    }
    if (recognizer.extend !== undefined) end = recognizer.extend(text, start, end)
    if (!onMatch(start, end)) break
    if (pattern.lastIndex < end) pattern.lastIndex = end
  }
  pattern.lastIndex = 0
}

const eachCustomMatch = (
  text: string,
  custom: CompiledCustomPattern,
  onMatch: (start: number, end: number) => boolean
): void => {
  const matcher = custom.regex.matcher(text)
  // re2js's find() steps past empty matches itself, so this loop always advances.
  while (matcher.find()) {
    const start = matcher.start()
    const end = matcher.end()
    if (end === start) continue
    if (!onMatch(start, end)) break
  }
}

/**
 * Every finding in `text` for the given libraries and custom patterns. Findings are
 * grouped by entity type (two recognizers may report the same type, e.g. IPv4 and IPv6);
 * spans are in UTF-16 code units, in the order found.
 */
export const scanText = (text: string, options: ScanOptions): Array<Finding> => {
  const found = new Map<string, Accumulator>()
  const collect = (entity_type: string, seed: Omit<Accumulator, "matches" | "entity_type">) => {
    let entry = found.get(entity_type)
    return (start: number, end: number): boolean => {
      if (entry === undefined) {
        entry = { entity_type, ...seed, matches: [] }
        found.set(entity_type, entry)
      }
      entry.matches.push({ start, end })
      return entry.matches.length < MAX_MATCHES_PER_ENTITY
    }
  }
  if (text.length > 0) {
    for (const library of options.libraries) {
      for (const recognizer of recognizersFor(library)) {
        eachBuiltinMatch(
          text,
          recognizer,
          collect(recognizer.entity_type, {
            severity: recognizer.severity,
            library: recognizer.library,
            description: recognizer.description
          })
        )
      }
    }
    for (const custom of options.customPatterns ?? []) {
      eachCustomMatch(
        text,
        custom,
        collect(custom.name, { severity: custom.severity, library: "custom", description: custom.description })
      )
    }
  }
  const findings: Array<Finding> = []
  for (const entry of found.values()) {
    findings.push({
      entity_type: entry.entity_type,
      severity: entry.severity,
      library: entry.library,
      description: entry.description,
      count: entry.matches.length,
      matches: entry.matches
    })
  }
  return findings
}

export interface FirstHit {
  readonly entity_type: string
  readonly severity: Severity
  readonly library: Finding["library"]
}

/**
 * The first hit at or above `minSeverity` among the libraries' recognizers, or the first
 * custom-pattern hit of any severity (a custom pattern is an explicit request to act).
 * Stops at the first hit: this is what policy evaluation needs on the hot path.
 */
export const firstHit = (
  text: string,
  libraries: ReadonlyArray<Library>,
  customPatterns: ReadonlyArray<CompiledCustomPattern>,
  minSeverity: Severity
): FirstHit | undefined => {
  if (text.length === 0) return undefined
  let hit: FirstHit | undefined
  const stop = () => false
  for (const library of libraries) {
    for (const recognizer of recognizersFor(library)) {
      if (!atLeast(recognizer.severity, minSeverity)) continue
      eachBuiltinMatch(text, recognizer, () => {
        hit = { entity_type: recognizer.entity_type, severity: recognizer.severity, library }
        return stop()
      })
      if (hit !== undefined) return hit
    }
  }
  for (const custom of customPatterns) {
    // test() is the fast DFA path; the matcher confirms a non-empty match, as scanText counts them.
    if (!custom.regex.test(text)) continue
    eachCustomMatch(text, custom, () => {
      hit = { entity_type: custom.name, severity: custom.severity, library: "custom" }
      return stop()
    })
    if (hit !== undefined) return hit
  }
  return undefined
}
