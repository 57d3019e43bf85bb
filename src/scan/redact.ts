/** Replaces finding spans with `[REDACTED:<ENTITY_TYPE>]` markers. */
import { atLeast, type Finding, type Severity, severityRank } from "./types.js"

export interface RedactOptions {
  /** Lowest severity that is replaced; `info` findings are never replaced whatever this says. */
  readonly minSeverity?: Severity
}

interface Region {
  start: number
  end: number
  entity_type: string
  rank: number
}

export const redactionMarker = (entityType: string): string => `[REDACTED:${entityType.toUpperCase()}]`

/**
 * Overlapping or touching spans are merged into one region (so no fragment of a secret
 * survives between two markers); the merged region is labelled with its most severe
 * entity, the earliest one on ties.
 */
export const redact = (text: string, findings: ReadonlyArray<Finding>, options: RedactOptions = {}): string => {
  const threshold = options.minSeverity ?? "warning"
  const regions: Array<Region> = []
  for (const finding of findings) {
    if (finding.severity === "info" || !atLeast(finding.severity, threshold)) continue
    const rank = severityRank(finding.severity)
    for (const span of finding.matches) {
      if (span.end > span.start) {
        regions.push({ start: span.start, end: span.end, entity_type: finding.entity_type, rank })
      }
    }
  }
  if (regions.length === 0) return text
  regions.sort((a, b) => a.start - b.start || b.end - a.end)
  const merged: Array<Region> = []
  for (const region of regions) {
    const last = merged[merged.length - 1]
    if (last !== undefined && region.start <= last.end) {
      if (region.end > last.end) last.end = region.end
      if (region.rank > last.rank) {
        last.rank = region.rank
        last.entity_type = region.entity_type
      }
    } else {
      merged.push({ ...region })
    }
  }
  let out = ""
  let cursor = 0
  for (const region of merged) {
    out += text.slice(cursor, region.start) + redactionMarker(region.entity_type)
    cursor = region.end
  }
  return out + text.slice(cursor)
}
