/**
 * The in-process stand-ins' storage: a map whose entries expire, swept at most once per
 * `sweepEveryMs` so memory stays bounded by the keys seen within one lifetime.
 */
export class ExpiringEntries<Entry extends { readonly expiresAt: number }> {
  protected readonly entries = new Map<string, Entry>()
  private nextSweepAt = 0

  constructor(private readonly sweepEveryMs = 1_000) {}

  /** Drops every expired entry. */
  sweep(now: number = Date.now()): void {
    this.nextSweepAt = now + this.sweepEveryMs
    for (const [key, entry] of this.entries) {
      if (entry.expiresAt <= now) this.entries.delete(key)
    }
  }

  protected sweepIfDue(now: number): void {
    if (now >= this.nextSweepAt) this.sweep(now)
  }

  /** Number of keys currently held. */
  get size(): number {
    return this.entries.size
  }
}
