/**
 * The decoder workers' pools (mupdf and sharp, dcmjs) on the process's one worker pool
 * (platform/workers/pool.ts), each worker under V8 resource limits and given one job at a time,
 * so a worker that dies is that job's doing: the job is refused as too complex, the worker is
 * replaced, and the process goes on. A job past its time limit is refused the same way. Worker
 * output (parser warnings that may quote the file) is dropped in the worker (serve.ts).
 */
import type { ResourceLimits } from "node:worker_threads"
import { makeWorkerPool as makePool, type WorkerFailure, type WorkerPool } from "../../platform/workers/pool.js"
import { CorruptFile, type Limit, LimitExceeded } from "./errors.js"

export type { Job, WorkerPool } from "../../platform/workers/pool.js"

export interface WorkerPoolOptions {
  /** The worker's script (it calls `serve` from worker-serve.ts). */
  readonly script: URL
  readonly size: number
  readonly resourceLimits: ResourceLimits
  /** A job still running after this long is stopped (a decoder caught in a loop must not hold its worker). */
  readonly jobTimeoutMs: number
}

const failureOf = (failure: WorkerFailure): Error => {
  if (failure.kind === "limit") return new LimitExceeded(failure.limit as Limit, failure.maximum)
  if (failure.kind === "corrupt") return new CorruptFile(failure.message)
  return new Error(failure.message)
}

export const makeWorkerPool = (options: WorkerPoolOptions): WorkerPool =>
  makePool({
    ...options,
    name: "decoder",
    errors: {
      failed: failureOf,
      died: (heapMb) => new LimitExceeded("decoder_memory_mb", heapMb),
      timedOut: (limitMs) => new LimitExceeded("decoder_seconds", Math.round(limitMs / 1000))
    }
  })
