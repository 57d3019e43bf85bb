/**
 * The worker side of worker-pool.ts: runs one job at a time from the pool's messages, lets a job
 * ask the main thread something (OCR) and wait for the answer, and reports how the job ended —
 * a result, a budget passed, a file that cannot be read, or a failure of ours. Plain erasable
 * TypeScript importing only node built-ins: the worker threads load it as it is.
 */
import { getHeapStatistics } from "node:v8"
import { parentPort } from "node:worker_threads"
import type { Limit } from "./errors.js"

export type WorkerFailure =
  | { readonly kind: "limit"; readonly limit: Limit; readonly maximum: number }
  | { readonly kind: "corrupt"; readonly message: string }
  | { readonly kind: "failed"; readonly message: string }

export type FromWorker =
  /** The V8 heap the worker really has (a process's --max-old-space-size overrides resource limits). */
  | { readonly kind: "ready"; readonly heapMb: number }
  | { readonly kind: "call"; readonly call: number; readonly payload: unknown }
  | { readonly kind: "done"; readonly ok: true; readonly result: unknown; readonly retire: boolean }
  | { readonly kind: "done"; readonly ok: false; readonly failure: WorkerFailure; readonly retire: boolean }

type ToWorker = { kind: "job"; op: string; payload: unknown } | { kind: "answer"; call: number; ok: boolean; result?: unknown }

/** Asks the main thread during a job; resolves with its answer. */
export type Ask = (payload: unknown, transfer?: ArrayBuffer[]) => Promise<unknown>

export type Handler = (payload: any, ask: Ask) => unknown

export interface ServeOptions {
  /** How an error that is neither a budget nor a corrupt file is reported (mupdf throws plain errors for unreadable files). */
  readonly otherErrors: "corrupt" | "failed"
  /**
   * After each job: whether to replace this worker, and for a job that failed, a cause that
   * overrules its own error (the WebAssembly memory ran out during it).
   */
  readonly afterJob?: (failed: boolean) => { readonly retire: boolean; readonly failure?: WorkerFailure | undefined }
  /**
   * A worker whose V8 heap grew past this during a job is replaced after it: V8 gives memory
   * back to the system slowly, a thread that ends gives it all back at once.
   */
  readonly retireAboveHeapBytes?: number
}

const failureOf = (cause: unknown, options: ServeOptions): WorkerFailure => {
  const error = cause as { message?: string; limit?: unknown; maximum?: unknown; constructor?: { name?: string } }
  if (typeof error?.limit === "string" && typeof error.maximum === "number") return { kind: "limit", limit: error.limit as Limit, maximum: error.maximum }
  const message = String(error?.message ?? cause)
  if (error?.constructor?.name === "CorruptFile") return { kind: "corrupt", message }
  return { kind: options.otherErrors, message }
}

/** Buffers of a result that can be handed over rather than copied (never a view into a WebAssembly heap). */
const transferable = (value: unknown): ArrayBuffer[] => {
  if (value instanceof Uint8Array && value.buffer instanceof ArrayBuffer && value.byteLength === value.buffer.byteLength) return [value.buffer]
  if (Array.isArray(value)) return value.flatMap(transferable)
  if (typeof value === "object" && value !== null && !ArrayBuffer.isView(value)) return Object.values(value).flatMap(transferable)
  return []
}

export const serve = (handlers: Record<string, Handler>, options: ServeOptions): void => {
  const port = parentPort
  if (port === null) throw new Error("worker-serve runs in a worker thread")
  const heapGrew = () => options.retireAboveHeapBytes !== undefined && getHeapStatistics().total_heap_size > options.retireAboveHeapBytes
  let nextCall = 0
  const calls = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>()
  const ask: Ask = (payload, transfer = []) =>
    new Promise((resolve, reject) => {
      const call = nextCall++
      calls.set(call, { resolve, reject })
      port.postMessage({ kind: "call", call, payload }, transfer)
    })

  port.on("message", async (message: ToWorker) => {
    if (message.kind === "answer") {
      const call = calls.get(message.call)
      calls.delete(message.call)
      if (message.ok) call?.resolve(message.result)
      else call?.reject(new Error("the main thread could not answer"))
      return
    }
    const handler = handlers[message.op]
    try {
      if (handler === undefined) throw new Error(`unknown operation ${message.op}`)
      const result = await handler(message.payload, ask)
      const done: FromWorker = { kind: "done", ok: true, result, retire: (options.afterJob?.(false).retire ?? false) || heapGrew() }
      try {
        port.postMessage(done, transferable(result))
      } catch {
        // Buffers libvips allocated cannot be handed over: copy them.
        port.postMessage(done)
      }
    } catch (cause) {
      const after = options.afterJob?.(true)
      const failure = after?.failure ?? failureOf(cause, options)
      // A budget refused is no reason to replace the worker; memory it took is (`afterJob`, `heapGrew`).
      port.postMessage({ kind: "done", ok: false, failure, retire: (after?.retire ?? false) || heapGrew() } satisfies FromWorker)
    }
  })
  port.postMessage({ kind: "ready", heapMb: Math.round(getHeapStatistics().heap_size_limit / 1024 / 1024) } satisfies FromWorker)
}
