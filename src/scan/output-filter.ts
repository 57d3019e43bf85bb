/**
 * Output filtering of `outcome_details` on notarize (release 2026-04-15): the scan result
 * goes into the signed receipt as `output_scan_flags`; `deny` mode refuses the notarize
 * (422 OUTPUT_SCAN_VIOLATION) and `redact` mode hands back a cleaned text.
 */
import type { CompiledCustomPattern } from "./custom.js"
import { AVAILABLE_LIBRARIES } from "./recognizers.js"
import { redact } from "./redact.js"
import { scanText } from "./scanner.js"
import { atLeast, type FindingLibrary, type Issue, isSeverity, type Library, type Severity } from "./types.js"

export type OutputFilterMode = "flag" | "deny" | "redact"

export interface OutputPolicy {
  readonly enabled: boolean
  readonly mode: OutputFilterMode
  readonly libraries: ReadonlyArray<Library>
  readonly deny_severity_threshold: Severity
  readonly redact_severity_threshold: Severity
  readonly customPatterns?: ReadonlyArray<CompiledCustomPattern>
}

export interface OutputScanFlag {
  readonly entity_type: string
  readonly severity: Severity
  readonly library: FindingLibrary
  readonly count: number
}

export interface OutputFilterResult {
  /** Every finding, any severity; stored in the receipt as `output_scan_flags`. */
  readonly flags: ReadonlyArray<OutputScanFlag>
  readonly denied: boolean
  /** Present in `redact` mode only. */
  readonly redacted_text?: string
}

export const DEFAULT_OUTPUT_POLICY: OutputPolicy = {
  enabled: true,
  mode: "flag",
  libraries: ["credentials", "pii"],
  deny_severity_threshold: "critical",
  redact_severity_threshold: "warning"
}

export const filterOutput = (text: string, policy: OutputPolicy): OutputFilterResult => {
  if (!policy.enabled) return { flags: [], denied: false }
  const findings = scanText(text, { libraries: policy.libraries, customPatterns: policy.customPatterns })
  const flags = findings.map(
    (f): OutputScanFlag => ({ entity_type: f.entity_type, severity: f.severity, library: f.library, count: f.count })
  )
  switch (policy.mode) {
    case "flag":
      return { flags, denied: false }
    case "deny":
      return { flags, denied: findings.some((f) => atLeast(f.severity, policy.deny_severity_threshold)) }
    case "redact":
      return {
        flags,
        denied: false,
        redacted_text: redact(text, findings, { minSeverity: policy.redact_severity_threshold })
      }
  }
}

const MODES: ReadonlyArray<OutputFilterMode> = ["flag", "deny", "redact"]

export type OutputPolicyResult =
  | { readonly ok: true; readonly policy: OutputPolicy }
  | { readonly ok: false; readonly issues: ReadonlyArray<Issue> }

/**
 * Validates a partial update of the output policy over `base` (PATCH semantics: only
 * provided fields change). Unknown fields are ignored, as everywhere in the API.
 */
export const mergeOutputPolicy = (base: OutputPolicy, input: unknown): OutputPolicyResult => {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return { ok: false, issues: [{ path: "", message: "must be an object" }] }
  }
  const patch = input as Record<string, unknown>
  const issues: Array<Issue> = []
  const next: { -readonly [K in keyof OutputPolicy]: OutputPolicy[K] } = { ...base }
  if (patch.enabled !== undefined) {
    if (typeof patch.enabled === "boolean") next.enabled = patch.enabled
    else issues.push({ path: "enabled", message: "must be a boolean" })
  }
  if (patch.mode !== undefined) {
    if (MODES.includes(patch.mode as OutputFilterMode)) next.mode = patch.mode as OutputFilterMode
    else issues.push({ path: "mode", message: "must be one of flag, deny, redact" })
  }
  if (patch.libraries !== undefined) {
    const libraries = patch.libraries
    if (!Array.isArray(libraries) || libraries.length === 0) {
      issues.push({ path: "libraries", message: "must be a non-empty array" })
    } else {
      libraries.forEach((library, index) => {
        if (!AVAILABLE_LIBRARIES.includes(library as Library)) {
          issues.push({ path: `libraries[${index}]`, message: `must be one of ${AVAILABLE_LIBRARIES.join(", ")}` })
        }
      })
      next.libraries = [...new Set(libraries as Array<Library>)]
    }
  }
  for (const key of ["deny_severity_threshold", "redact_severity_threshold"] as const) {
    const value = patch[key]
    if (value === undefined) continue
    if (isSeverity(value)) next[key] = value
    else issues.push({ path: key, message: "must be one of critical, warning, info" })
  }
  return issues.length > 0 ? { ok: false, issues } : { ok: true, policy: next }
}
