/**
 * A few worker threads for the decoders (mupdf, sharp, dcmjs), each under V8 resource limits and
 * given one job at a time, so a worker that dies is that job's doing: the job is refused as too
 * complex, the worker is replaced, and the process goes on. Jobs wait in order for a free worker.
 * A worker that reports its WebAssembly memory grew large is retired after its job; one that runs
 * past the job time limit is terminated and the job refused the same way. Worker output
 * (parser warnings that may quote the file) is dropped, not logged.
 */
import { type ResourceLimits, Worker } from "node:worker_threads"
import { logLine } from "../../platform/log.js"
import { CorruptFile, LimitExceeded } from "./errors.js"
import type { FromWorker, WorkerFailure } from "./worker-serve.js"

export interface WorkerPoolOptions {
  /** The worker's script (it calls `serve` from worker-serve.ts). */
  readonly script: URL
  readonly size: number
  readonly resourceLimits: ResourceLimits
  /** A job still running after this long is stopped (a decoder caught in a loop must not hold its worker). */
  readonly jobTimeoutMs: number
}

export interface Job {
  readonly op: string
  readonly payload: unknown
  /** Buffers handed to the worker rather than copied (the caller no longer uses them). */
  readonly transfer?: ReadonlyArray<ArrayBuffer>
  /** Answers what the worker asks during the job (the DICOM worker's OCR requests). */
  readonly onCall?: (payload: unknown) => Promise<unknown>
}

export interface WorkerPool {
  readonly run: <A>(job: Job) => Promise<A>
  /** Terminates every worker (shutdown, tests); the next job starts new ones. */
  readonly stop: () => Promise<void>
  /** Workers alive now. */
  readonly size: () => number
}

const failureOf = (failure: WorkerFailure): Error => {
  if (failure.kind === "limit") return new LimitExceeded(failure.limit, failure.maximum)
  if (failure.kind === "corrupt") return new CorruptFile(failure.message)
  return new Error(failure.message)
}

export const makeWorkerPool = (options: WorkerPoolOptions): WorkerPool => {
  const live = new Set<Worker>()
  /** Workers that came up, with the heap each really has. */
  const heapOf = new WeakMap<Worker, number>()
  const idle: Worker[] = []
  const waiting: Array<(worker: Worker) => void> = []

  const spawn = (): Worker => {
    const worker = new Worker(options.script, { stdout: true, stderr: true, resourceLimits: options.resourceLimits })
    worker.stdout.resume()
    worker.stderr.resume()
    worker.unref()
    worker.on("message", (message: FromWorker) => {
      if (message.kind === "ready") heapOf.set(worker, message.heapMb)
    })
    worker.on("error", (error: Error & { code?: string }) => logLine("warn", "decoder worker failed", { code: error.code ?? null, message: error.message }))
    worker.once("exit", () => {
      live.delete(worker)
      const at = idle.indexOf(worker)
      if (at >= 0) idle.splice(at, 1)
      handOut()
    })
    live.add(worker)
    return worker
  }

  /** Gives free (or new) workers to the jobs waiting, oldest first. */
  const handOut = () => {
    while (waiting.length > 0) {
      const worker = idle.pop() ?? (live.size < options.size ? spawn() : undefined)
      if (worker === undefined) return
      waiting.shift()!(worker)
    }
  }

  const acquire = (): Promise<Worker> =>
    new Promise((resolve) => {
      waiting.push(resolve)
      handOut()
    })

  const run = async <A>(job: Job): Promise<A> => {
    const worker = await acquire()
    return new Promise<A>((resolve, reject) => {
      // The clock runs only while the worker computes: time spent answering its calls (OCR) is not its own.
      let left = options.jobTimeoutMs
      let since = 0
      let timer: ReturnType<typeof setTimeout> | undefined
      const overrun = () => {
        worker.off("message", onMessage)
        worker.off("exit", onExit)
        logLine("warn", "decoder worker ran past its time limit; the file is refused as too complex", { op: job.op, limit_ms: options.jobTimeoutMs })
        // The exit frees its place in the pool (the listener set in spawn).
        void worker.terminate()
        reject(new LimitExceeded("decoder_seconds", Math.round(options.jobTimeoutMs / 1000)))
      }
      const startClock = () => {
        since = Date.now()
        timer = setTimeout(overrun, Math.max(0, left))
      }
      const stopClock = () => {
        clearTimeout(timer)
        left -= Date.now() - since
      }
      const done = (retire: boolean) => {
        clearTimeout(timer)
        worker.off("message", onMessage)
        worker.off("exit", onExit)
        if (retire) void worker.terminate()
        else idle.push(worker)
        handOut()
      }
      const onMessage = (message: FromWorker) => {
        if (message.kind === "call") {
          stopClock()
          const answer = (ok: boolean, result?: unknown) => {
            startClock()
            worker.postMessage({ kind: "answer", call: message.call, ok, result })
          }
          if (job.onCall === undefined) return answer(false)
          job.onCall(message.payload).then(
            (result) => answer(true, result),
            () => answer(false)
          )
          return
        }
        if (message.kind !== "done") return
        done(message.retire)
        if (message.ok) resolve(message.result as A)
        else reject(failureOf(message.failure))
      }
      const onExit = (code: number) => {
        clearTimeout(timer)
        worker.off("message", onMessage)
        handOut()
        // A worker that never came up is our fault, not the file's.
        const heapMb = heapOf.get(worker)
        if (heapMb === undefined) return reject(new Error(`the decoder worker did not start (exit code ${code})`))
        logLine("warn", "decoder worker died during a job; the file is refused as too complex", { op: job.op, exit_code: code })
        reject(new LimitExceeded("decoder_memory_mb", heapMb))
      }
      worker.on("message", onMessage)
      worker.once("exit", onExit)
      startClock()
      try {
        worker.postMessage({ kind: "job", op: job.op, payload: job.payload }, [...(job.transfer ?? [])])
      } catch (error) {
        // A payload that cannot be sent leaves the worker as it was.
        done(false)
        reject(error)
      }
    })
  }

  const stop = async () => {
    const running = [...live]
    idle.length = 0
    await Promise.all(running.map((worker) => worker.terminate()))
  }

  return { run, stop, size: () => live.size }
}
