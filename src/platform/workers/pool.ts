/**
 * The process's worker pools (PDF rendering, DICOM, the decoders) on piscina (docs/decisions.md
 * "One worker pool"). Piscina keeps `size` threads under V8 resource limits, queues jobs in
 * order, replaces a thread that dies and terminates one whose job is aborted. What it has no
 * word for is kept here, on a MessagePort each job gets: the worker saying it started (and the
 * heap it has), its calls back to the main thread (OCR), messages the caller sends while the job
 * runs (a PDF's row batches), and a worker asking to be replaced after its job (WebAssembly
 * memory grown), which the load balancer then passes over until it is terminated. The job clock
 * runs only while the worker computes, not while the main thread answers its calls.
 *
 * piscina is imported on the first job, and the threads start then.
 */
import { fileURLToPath } from "node:url"
import { MessageChannel, type ResourceLimits } from "node:worker_threads"
import type { Piscina } from "piscina"
import { logLine } from "../log.js"
import type { FromWorker, Task, ToWorker, WorkerFailure } from "./serve.js"

export type { WorkerFailure } from "./serve.js"

/** The errors a pool's jobs fail with. */
export interface PoolErrors {
  /** The job's own failure, as the worker reported it. */
  readonly failed: (failure: WorkerFailure) => Error
  /** The worker died during the job (its heap limit reached, most likely). */
  readonly died: (heapMb: number) => Error
  /** The job computed past its time limit; its worker was terminated. */
  readonly timedOut: (limitMs: number) => Error
}

export interface PoolOptions {
  /** Names the pool in logs. */
  readonly name: string
  /** The worker script (it calls `serve` from serve.ts). */
  readonly script: URL
  readonly size: number
  readonly resourceLimits: ResourceLimits
  /** A job still computing after this long is stopped and its worker terminated (none: no limit). */
  readonly jobTimeoutMs?: number
  /** Jobs one worker runs at once (a PDF job mostly waits for its rows); 1 unless said. */
  readonly jobsPerWorker?: number
  readonly errors?: Partial<PoolErrors>
}

export interface Job {
  readonly op: string
  readonly payload: unknown
  /** Buffers handed to the worker rather than copied (the caller no longer uses them). */
  readonly transfer?: ReadonlyArray<ArrayBuffer>
  /** Answers what the worker asks during the job (the DICOM worker's OCR requests). */
  readonly onCall?: (payload: unknown) => Promise<unknown>
}

/** A job under way: the caller may send it messages (the worker's `receive`) until it ends. */
export interface OpenJob<A> {
  readonly send: (message: unknown, transfer?: ReadonlyArray<ArrayBuffer>) => void
  readonly result: Promise<A>
}

export interface WorkerPool {
  readonly open: <A>(job: Job) => OpenJob<A>
  readonly run: <A>(job: Job) => Promise<A>
  /** Terminates every worker and fails the jobs under way (shutdown, tests); the next job starts new ones. */
  readonly stop: () => Promise<void>
  /** Workers alive now. */
  readonly size: () => number
}

const defaultErrors: PoolErrors = {
  failed: (failure) => new Error(failure.kind === "limit" ? `${failure.limit} over ${failure.maximum}` : failure.message),
  died: () => new Error("the worker died during the job"),
  timedOut: (limitMs) => new Error(`the job ran past ${limitMs} ms`)
}

/** Time for the messages a dead worker sent to be read before its job is judged. */
const MESSAGES_DRAINED_MS = 20

const entry = fileURLToPath(new URL(import.meta.url.endsWith(".ts") ? "./entry.ts" : "./entry.js", import.meta.url))

export const makeWorkerPool = (options: PoolOptions): WorkerPool => {
  const errors: PoolErrors = { ...defaultErrors, ...options.errors }
  const perWorker = options.jobsPerWorker ?? 1
  /** Threads that asked to be replaced: given no job while they finish theirs. */
  const retiring = new Set<number>()
  /** How each job under way fails if the pool stops, and whether a worker took it. */
  const underWay = new Map<(error: Error) => void, () => boolean>()
  /** Once started (the first job imports piscina and starts the threads). */
  let pool: Piscina | undefined
  let starting: Promise<Piscina> | undefined

  const start = async (): Promise<Piscina> => {
    const { Piscina } = await import("piscina")
    const started = new Piscina({
      filename: entry,
      workerData: { script: options.script.href },
      minThreads: options.size,
      maxThreads: options.size,
      idleTimeout: Number.POSITIVE_INFINITY,
      concurrentTasksPerWorker: perWorker,
      resourceLimits: options.resourceLimits,
      // Jobs talk over their own ports; an idle worker must not sit blocked in Atomics.wait.
      atomics: "disabled",
      recordTiming: false,
      loadBalancer: (_task, workers) => workers.find((worker) => !retiring.has(worker.id) && worker.currentUsage < perWorker) ?? null
    })
    // A worker that fails with no job is logged. Once none is left (the script cannot start),
    // piscina starts no more: the jobs waiting fail, and the next job tries a new pool.
    started.on("error", (error: Error & { code?: string }) => {
      logLine("warn", "worker failed", { pool: options.name, code: error.code ?? null, message: error.message })
      if (started.threads.length > 0 || pool !== started) return
      for (const [fail, taken] of [...underWay]) if (!taken()) fail(new Error(`the ${options.name} worker did not start: ${error.message}`, { cause: error }))
      pool = undefined
      starting = undefined
      void started.destroy()
    })
    pool = started
    return started
  }

  const retire = (id: number) => {
    const worker = pool?.threads.find((thread) => thread.threadId === id)
    if (worker === undefined) return retiring.delete(id)
    worker.once("exit", () => retiring.delete(id))
    void worker.terminate()
  }

  const open = <A>(job: Job): OpenJob<A> => {
    const { port1: port, port2 } = new MessageChannel()
    const abort = new AbortController()
    const result = new Promise<A>((resolve, reject) => {
      let started: (FromWorker & { kind: "started" }) | undefined
      let ended = false
      let retireAfter = false
      /** piscina's task has ended (the job's own last message may come after). */
      let taskOver = false
      const cleanUp = () => {
        port.close()
        // Out of the rotation and done with its task: piscina replaces it quietly.
        if (retireAfter && started !== undefined) retire(started.threadId)
      }
      // The clock runs only while the worker computes: time spent answering its calls (OCR) is not its own.
      let left = options.jobTimeoutMs ?? 0
      let since = 0
      let timer: ReturnType<typeof setTimeout> | undefined
      const end = (settle: () => void) => {
        if (ended) return
        ended = true
        clearTimeout(timer)
        underWay.delete(fail)
        // An open port keeps the process up; a worker being retired still waits to hear so.
        if (!retireAfter) port.close()
        settle()
      }
      const fail = (error: Error) => end(() => reject(error))
      underWay.set(fail, () => started !== undefined)
      const overrun = () => {
        logLine("warn", "worker ran past its time limit; the job is refused", { pool: options.name, op: job.op, limit_ms: options.jobTimeoutMs ?? null })
        fail(errors.timedOut(options.jobTimeoutMs ?? 0))
        // piscina terminates the worker and starts another.
        abort.abort()
        port.close()
      }
      const startClock = () => {
        if (options.jobTimeoutMs === undefined) return
        since = Date.now()
        timer = setTimeout(overrun, Math.max(0, left))
      }
      const stopClock = () => {
        clearTimeout(timer)
        left -= Date.now() - since
      }
      const answer = (message: ToWorker) => {
        if (!ended) port.postMessage(message)
      }
      port.on("message", (message: FromWorker) => {
        if (message.kind === "started") {
          started = message
          return startClock()
        }
        if (message.kind === "call") {
          stopClock()
          const reply = (ok: boolean, value?: unknown) => {
            startClock()
            answer({ kind: "answer", call: message.call, ok, result: value })
          }
          if (job.onCall === undefined) return reply(false)
          job.onCall(message.payload).then(
            (value) => reply(true, value),
            () => reply(false)
          )
          return
        }
        if (message.retire && started !== undefined) {
          retireAfter = true
          retiring.add(started.threadId)
          answer({ kind: "retiring" })
        }
        end(() => (message.ok ? resolve(message.result as A) : reject(errors.failed(message.failure))))
        if (taskOver) cleanUp()
      })
      const task: Task = { op: job.op, payload: job.payload, port: port2 }
      ;(starting ??= start())
        .then((instance) => instance.run(task, {
            transferList: [port2, ...(job.transfer ?? [])],
            // Only a job with a time limit is abortable: piscina runs an abortable job alone on its worker.
            signal: options.jobTimeoutMs === undefined ? null : abort.signal
          }))
        .then(
          () => {
            taskOver = true
            // Else its last message is still on its way (the job's port and piscina's are not ordered).
            if (ended) cleanUp()
          },
          (error: Error & { code?: string }) =>
            // What the worker sent before it died is read first.
            setTimeout(() => {
              taskOver = true
              port.close()
              if (started !== undefined) retiring.delete(started.threadId)
              if (ended) return
              // A worker that never came up, or a job that could not be sent, is our fault, not the file's.
              if (started === undefined) return fail(new Error(`the ${options.name} worker did not take the job: ${error.message}`, { cause: error }))
              logLine("warn", "worker died during a job; the job is refused", { pool: options.name, op: job.op, code: error.code ?? null, message: error.message })
              fail(errors.died(started.heapMb))
            }, MESSAGES_DRAINED_MS)
        )
    })
    return { send: (message, transfer = []) => port.postMessage({ kind: "message", message } satisfies ToWorker, [...transfer]), result }
  }

  const stop = async () => {
    const stopping = await starting?.catch(() => undefined)
    pool = undefined
    starting = undefined
    for (const fail of [...underWay.keys()]) fail(new Error(`the ${options.name} workers stopped`))
    await stopping?.destroy()
  }

  return { open, run: <A>(job: Job) => open<A>(job).result, stop, size: () => pool?.threads.length ?? 0 }
}
