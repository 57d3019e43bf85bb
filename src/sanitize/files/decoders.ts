/**
 * The process's decoder workers (decoder-worker.ts: PDF and image work) behind the decode
 * semaphore: a job waits until its estimated memory fits, then for a free worker. Started on
 * first use and kept.
 */
import { DECODER_HEAP_MB, DECODER_JOB_MS, DECODER_WORKERS } from "./budgets.js"
import { decodeBudget } from "./decode-budget.js"
import { type Job, makeWorkerPool } from "./worker-pool.js"

const workers = makeWorkerPool({
  script: new URL(import.meta.url.endsWith(".ts") ? "./decoder-worker.ts" : "./decoder-worker.js", import.meta.url),
  size: DECODER_WORKERS,
  resourceLimits: { maxOldGenerationSizeMb: DECODER_HEAP_MB, maxYoungGenerationSizeMb: 16 },
  jobTimeoutMs: DECODER_JOB_MS
})

/** Runs one decoder job with `estimate` bytes of the decode budget held until it ends. */
export const decode = <A>(job: Job, estimate: number): Promise<A> => decodeBudget.run(estimate, () => workers.run<A>(job))

/** Stops the decoder workers (shutdown, tests); the next job starts new ones. */
export const stopDecoders = (): Promise<void> => workers.stop()
