/**
 * When a request body is too slow, decided early enough to answer 408 before
 * uWS drops the connection on its own without a response.
 *
 * uWS (20.x) times a body out 8–12 s after it last made progress: its 10 s timer
 * restarts only once 160 KB (16 KB/s over 10 s) arrived since the previous
 * restart, counted across the connection's requests, and is checked on a 4 s
 * tick. A body that trickles is therefore cut at about 10 s whatever our own
 * total limit says. We cannot see uWS's count, so we assume the worst: its last
 * restart was when the most recent 160 KB began to arrive (or at the request
 * for less). A body is refused when less than 160 KB arrived in the last
 * `windowMs` (kept below 8 s), and when it is not complete within `totalMs`.
 */

/** The progress after which uWS restarts its body timer. */
export const UWS_PROGRESS_BYTES = 16 * 1024 * 10

export type BodyTimeout = "stalled" | "total"

export class BodyClock {
  private readonly started = performance.now()
  private readonly totalDue: number
  private received = 0
  /** Arrival times of the chunks that hold the most recent 160 KB, and the byte count at the end of each. */
  private readonly times: number[] = []
  private readonly ends: number[] = []
  private timer: NodeJS.Timeout

  constructor(
    private readonly windowMs: number,
    totalMs: number,
    private readonly onTimeout: (reason: BodyTimeout) => void
  ) {
    this.totalDue = this.started + totalMs
    this.timer = setTimeout(this.check, Math.min(windowMs, totalMs))
  }

  /** Per chunk: bookkeeping only; the timer is re-armed lazily when it fires. */
  add(bytes: number): void {
    this.received += bytes
    this.times.push(performance.now())
    this.ends.push(this.received)
    const floor = this.received - UWS_PROGRESS_BYTES
    while (this.ends.length > 1 && this.ends[0]! <= floor) {
      this.ends.shift()
      this.times.shift()
    }
  }

  stop(): void {
    clearTimeout(this.timer)
  }

  /** Since when the body has not made 160 KB of progress. */
  private progressSince(): number {
    return this.received >= UWS_PROGRESS_BYTES ? this.times[0]! : this.started
  }

  private readonly check = () => {
    const stalledDue = this.progressSince() + this.windowMs
    const due = Math.min(stalledDue, this.totalDue)
    const now = performance.now()
    if (now + 1 >= due) return this.onTimeout(due === this.totalDue ? "total" : "stalled")
    this.timer = setTimeout(this.check, due - now)
  }
}
