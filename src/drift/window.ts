/**
 * One agent's action-type counts over the last MAX_HOURS hours, in per-hour buckets, so a
 * read for any lookback sums at most that many buckets of counts per type: its cost depends
 * on the number of hours and action types, never on the number of actions.
 */

export const HOUR_MS = 3_600_000
export const MAX_HOURS = 720

export const hourOf = (ms: number): number => Math.floor(ms / HOUR_MS)

export class AgentWindow {
  /** Action type → column in every bucket. */
  private readonly columns = new Map<string, number>()
  private readonly types: Array<string> = []
  /** Hour number → counts per column (grown as types appear). */
  private readonly buckets = new Map<number, Array<number>>()

  add(actionType: string, atMs: number, count = 1): void {
    const hour = hourOf(atMs)
    let column = this.columns.get(actionType)
    if (column === undefined) {
      column = this.types.length
      this.columns.set(actionType, column)
      this.types.push(actionType)
    }
    let bucket = this.buckets.get(hour)
    if (bucket === undefined) {
      bucket = []
      this.buckets.set(hour, bucket)
    }
    bucket[column] = (bucket[column] ?? 0) + count
  }

  /** Drops buckets older than MAX_HOURS before `nowMs`. */
  prune(nowMs: number): void {
    const oldest = hourOf(nowMs) - MAX_HOURS
    for (const hour of this.buckets.keys()) if (hour < oldest) this.buckets.delete(hour)
  }

  /** Counts per type over the buckets of the last `hours` hours (the current, partial hour included). */
  counts(nowMs: number, hours: number): { readonly byType: Record<string, number>; readonly total: number } {
    const last = hourOf(nowMs)
    const first = last - hours + 1
    const sums = new Array<number>(this.types.length).fill(0)
    let total = 0
    for (const [hour, bucket] of this.buckets) {
      if (hour < first || hour > last) continue
      for (let column = 0; column < bucket.length; column++) {
        const value = bucket[column]
        if (value !== undefined) {
          sums[column]! += value
          total += value
        }
      }
    }
    const byType: Record<string, number> = {}
    for (let column = 0; column < sums.length; column++) if (sums[column]! > 0) byType[this.types[column]!] = sums[column]!
    return { byType, total }
  }

  get bucketCount(): number {
    return this.buckets.size
  }
}
