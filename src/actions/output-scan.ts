/**
 * The output scan of notarize as the SDKs read it (CONTRACT-sdk-beyond §8, `output_scan_flags` of the
 * 200): entity types become `hits` with their description and a redacted sample. The receipt keeps
 * its own form of the flags (part of the signed bytes); this one is never signed.
 */
import type { OutputScanReport } from "../../protocol/actions.js"
import type { OutputPolicy, OutputScanFlag } from "../scan/output-filter.js"
import { BUILTIN_RECOGNIZERS } from "../scan/recognizers.js"
import { type Severity, severityRank } from "../scan/types.js"

/** The first built-in recognizer of an entity type describes it (the scanner's order). */
const builtinDescriptions = new Map<string, string>()
for (const recognizer of BUILTIN_RECOGNIZERS) {
  if (!builtinDescriptions.has(recognizer.entity_type)) builtinDescriptions.set(recognizer.entity_type, recognizer.description)
}

const descriptionOf = (flag: OutputScanFlag, policy: OutputPolicy): string =>
  (flag.library === "custom"
    ? policy.customPatterns?.find((pattern) => pattern.name === flag.entity_type)?.description
    : builtinDescriptions.get(flag.entity_type)) ?? flag.entity_type

/** The report of a scan that let the outcome through (a refused one answers 422 instead). */
export const outputScanReport = (policy: OutputPolicy, flags: ReadonlyArray<OutputScanFlag>, scannedAt: string): OutputScanReport => {
  let worst: Severity | null = null
  for (const flag of flags) if (worst === null || severityRank(flag.severity) > severityRank(worst)) worst = flag.severity
  return {
    scanned_at: scannedAt,
    libraries: [...policy.libraries],
    mode: policy.mode,
    decision: "allow",
    worst_severity: worst,
    hits: flags.map((flag) => ({
      name: flag.entity_type,
      library: flag.library,
      severity: flag.severity,
      description: descriptionOf(flag, policy),
      matches: flag.count,
      sample: "[REDACTED]"
    }))
  }
}
