/**
 * How a window is scored against a baseline (thresholds in docs/decisions.md "Drift"):
 * symmetric KL divergence of the two action-type distributions with additive smoothing,
 * the volume ratio, the action types new since the baseline, and the severity they give.
 */
import type { Severity } from "../../protocol/drift.js"

/** Added to every proportion before renormalizing, so a type missing on one side stays finite. */
export const SMOOTHING = 0.01

/** Proportions of counts (or of weights); empty when nothing was counted. */
export const proportions = (counts: Readonly<Record<string, number>>): Record<string, number> => {
  let total = 0
  for (const value of Object.values(counts)) total += value
  const out: Record<string, number> = {}
  if (total <= 0) return out
  for (const [key, value] of Object.entries(counts)) if (value > 0) out[key] = value / total
  return out
}

/**
 * KL(P‖Q) + KL(Q‖P) in nats over the union of both key sets, each proportion first raised by
 * SMOOTHING and the distribution renormalized. Two empty distributions, or one empty, give 0:
 * there is no mix to compare.
 */
export const symmetricKl = (p: Readonly<Record<string, number>>, q: Readonly<Record<string, number>>, smoothing = SMOOTHING): number => {
  const keys = new Set([...Object.keys(p), ...Object.keys(q)])
  const sumP = Object.values(p).reduce((a, b) => a + b, 0)
  const sumQ = Object.values(q).reduce((a, b) => a + b, 0)
  if (keys.size === 0 || sumP <= 0 || sumQ <= 0) return 0
  const k = keys.size
  let total = 0
  for (const key of keys) {
    const ps = ((p[key] ?? 0) / sumP + smoothing) / (1 + smoothing * k)
    const qs = ((q[key] ?? 0) / sumQ + smoothing) / (1 + smoothing * k)
    total += (ps - qs) * Math.log(ps / qs)
  }
  // Rounding can leave a hair below zero for identical inputs.
  return Math.max(0, total)
}

/** Current volume over the baseline's; a baseline of zero actions a day counts as one a day. */
export const volumeRatio = (currentPerDay: number, baselinePerDay: number): number => {
  if (baselinePerDay > 0) return currentPerDay / baselinePerDay
  return currentPerDay > 0 ? currentPerDay : 1
}

export interface Thresholds {
  readonly kl: number
  readonly volumeHigh: number
  readonly volumeLow: number
}

/** Most severe first: the first row whose limits the window reaches gives the severity. */
export const THRESHOLDS: ReadonlyArray<readonly [Severity, Thresholds]> = [
  ["critical", { kl: 2, volumeHigh: 10, volumeLow: 0.1 }],
  ["high", { kl: 1, volumeHigh: 5, volumeLow: 0.2 }],
  ["medium", { kl: 0.5, volumeHigh: 3, volumeLow: 1 / 3 }],
  ["low", { kl: 0.2, volumeHigh: 2, volumeLow: 0.5 }]
]

export const severityOf = (kl: number, ratio: number, newTypes: number): Severity => {
  for (const [severity, limit] of THRESHOLDS) {
    if (kl >= limit.kl || ratio >= limit.volumeHigh || ratio <= limit.volumeLow) return severity
  }
  // A type never seen before is drift on its own, however small its share.
  return newTypes > 0 ? "low" : "info"
}

export const isDrifting = (severity: Severity): boolean => severity !== "info"

export interface Score {
  readonly kl_divergence: number
  readonly volume_ratio: number
  readonly new_action_types: Array<string> | null
  readonly severity: Severity
  readonly is_drifting: boolean
}

export const score = (
  current: { readonly dist: Readonly<Record<string, number>>; readonly perDay: number },
  baseline: { readonly dist: Readonly<Record<string, number>>; readonly perDay: number }
): Score => {
  const kl = symmetricKl(current.dist, baseline.dist)
  const ratio = volumeRatio(current.perDay, baseline.perDay)
  const fresh = Object.keys(current.dist)
    .filter((type) => (current.dist[type] ?? 0) > 0 && !((baseline.dist[type] ?? 0) > 0))
    .sort()
  const severity = severityOf(kl, ratio, fresh.length)
  return { kl_divergence: kl, volume_ratio: ratio, new_action_types: fresh.length > 0 ? fresh : null, severity, is_drifting: isDrifting(severity) }
}
