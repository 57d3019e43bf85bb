/**
 * The decode semaphore: bytes of decoder memory in flight in the whole process, each job counted
 * by its estimate (from the declared pixel counts and the file's size) until it ends. Jobs are
 * let in first come, first served, so a large one is not overtaken forever by small ones; a job
 * estimated above the whole budget is counted as the whole budget (it runs alone). The decoders'
 * native memory (libvips, mupdf's WebAssembly heap) is outside V8's limits: this is what bounds it.
 */
import { DECODE_MEMORY_BYTES, DECODE_QUEUE } from "./budgets.js"
import { DecodeBusy } from "./reasons.js"

export interface DecodeBudget {
  /** Runs `task` once `estimate` bytes fit; `DecodeBusy` when `maxWaiting` jobs already wait. */
  readonly run: <A>(estimate: number, task: () => Promise<A>) => Promise<A>
  readonly inFlight: () => number
  readonly waiting: () => number
}

export const makeDecodeBudget = (capacity: number, maxWaiting: number): DecodeBudget => {
  let used = 0
  const queue: Array<{ readonly bytes: number; readonly enter: () => void }> = []
  const admit = () => {
    while (queue.length > 0 && used + queue[0]!.bytes <= capacity) {
      const next = queue.shift()!
      used += next.bytes
      next.enter()
    }
  }
  const run = async <A>(estimate: number, task: () => Promise<A>): Promise<A> => {
    const bytes = Math.min(capacity, Math.max(1, Math.ceil(estimate)))
    if (queue.length >= maxWaiting) throw new DecodeBusy(queue.length)
    await new Promise<void>((enter) => {
      queue.push({ bytes, enter })
      admit()
    })
    try {
      return await task()
    } finally {
      used -= bytes
      admit()
    }
  }
  return { run, inFlight: () => used, waiting: () => queue.length }
}

/** The process's one budget, shared by every decode job. */
export const decodeBudget = makeDecodeBudget(DECODE_MEMORY_BYTES, DECODE_QUEUE)
