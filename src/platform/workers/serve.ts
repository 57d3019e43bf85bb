/**
 * The worker side of the pool (pool.ts): a worker script calls `serve` with its operations, and
 * the pool's entry (entry.ts) hands what `serve` registered to piscina as the task function. Each
 * job comes with a MessagePort of its own, over which the worker says it started (and the heap it
 * really has), asks the main thread things (OCR) and takes messages the caller sends while the
 * job runs (a PDF's row batches), and reports how the job ended: a result, a budget passed, a
 * file that cannot be read, or a failure of ours, and whether this worker should be replaced.
 * Plain erasable TypeScript importing only node built-ins: worker threads load it as it is.
 */
import { getHeapStatistics } from "node:v8"
import { type MessagePort, threadId } from "node:worker_threads"

export type WorkerFailure =
  | { readonly kind: "limit"; readonly limit: string; readonly maximum: number }
  | { readonly kind: "corrupt"; readonly message: string }
  | { readonly kind: "failed"; readonly message: string }

export type FromWorker =
  /** The V8 heap the worker really has (a process's --max-old-space-size overrides resource limits). */
  | { readonly kind: "started"; readonly threadId: number; readonly heapMb: number }
  | { readonly kind: "call"; readonly call: number; readonly payload: unknown }
  | { readonly kind: "done"; readonly ok: true; readonly result: unknown; readonly retire: boolean }
  | { readonly kind: "done"; readonly ok: false; readonly failure: WorkerFailure; readonly retire: boolean }

export type ToWorker =
  | { readonly kind: "answer"; readonly call: number; readonly ok: boolean; readonly result?: unknown }
  | { readonly kind: "message"; readonly message: unknown }
  /** The pool will give this worker no other job: the job may end. */
  | { readonly kind: "retiring" }

/** One job as piscina hands it to the worker. */
export interface Task {
  readonly op: string
  readonly payload: unknown
  readonly port: MessagePort
}

/** Asks the main thread during a job; resolves with its answer. */
export type Ask = (payload: unknown, transfer?: ArrayBuffer[]) => Promise<unknown>

/** The next message the caller sent to this job (`send` of an open job). */
export type Receive = () => Promise<unknown>

export type Handler = (payload: any, ask: Ask, receive: Receive) => unknown

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
  /** Keep what the worker prints (by default dropped: parser warnings may quote the file). */
  readonly keepOutput?: boolean
}

const failureOf = (cause: unknown, options: ServeOptions): WorkerFailure => {
  const error = cause as { message?: string; limit?: unknown; maximum?: unknown; constructor?: { name?: string } }
  if (typeof error?.limit === "string" && typeof error.maximum === "number") return { kind: "limit", limit: error.limit, maximum: error.maximum }
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

let served: ((task: Task) => Promise<void>) | undefined

/** What `serve` registered (entry.ts exports it to piscina). */
export const servedTask = (): ((task: Task) => Promise<void>) | undefined => served

export const serve = (handlers: Record<string, Handler>, options: ServeOptions): void => {
  if (options.keepOutput !== true) {
    const drop = (() => true) as typeof process.stdout.write
    process.stdout.write = drop
    process.stderr.write = drop
  }
  const heapGrew = () => options.retireAboveHeapBytes !== undefined && getHeapStatistics().total_heap_size > options.retireAboveHeapBytes

  served = async ({ op, payload, port }) => {
    let nextCall = 0
    const calls = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>()
    const inbox: unknown[] = []
    let takeMessage: ((message: unknown) => void) | undefined
    let retiring: (() => void) | undefined
    port.on("message", (message: ToWorker) => {
      if (message.kind === "answer") {
        const call = calls.get(message.call)
        calls.delete(message.call)
        if (message.ok) call?.resolve(message.result)
        else call?.reject(new Error("the main thread could not answer"))
      } else if (message.kind === "message") {
        if (takeMessage === undefined) inbox.push(message.message)
        else takeMessage(message.message)
        takeMessage = undefined
      } else retiring?.()
    })
    port.once("close", () => retiring?.())
    const ask: Ask = (question, transfer = []) =>
      new Promise((resolve, reject) => {
        const call = nextCall++
        calls.set(call, { resolve, reject })
        port.postMessage({ kind: "call", call, payload: question } satisfies FromWorker, transfer)
      })
    const receive: Receive = () => (inbox.length > 0 ? Promise.resolve(inbox.shift()) : new Promise((resolve) => (takeMessage = resolve)))
    port.postMessage({ kind: "started", threadId, heapMb: Math.round(getHeapStatistics().heap_size_limit / 1024 / 1024) } satisfies FromWorker)

    let done: FromWorker & { kind: "done" }
    try {
      const handler = handlers[op]
      if (handler === undefined) throw new Error(`unknown operation ${op}`)
      const result = await handler(payload, ask, receive)
      done = { kind: "done", ok: true, result, retire: (options.afterJob?.(false).retire ?? false) || heapGrew() }
    } catch (cause) {
      const after = options.afterJob?.(true)
      // A budget refused is no reason to replace the worker; memory it took is (`afterJob`, `heapGrew`).
      done = { kind: "done", ok: false, failure: after?.failure ?? failureOf(cause, options), retire: (after?.retire ?? false) || heapGrew() }
    }
    // A worker to be replaced waits until the pool has taken it out of the rotation.
    const retired = done.retire ? new Promise<void>((resolve) => (retiring = resolve)) : undefined
    try {
      port.postMessage(done, done.ok ? transferable(done.result) : [])
    } catch {
      // Buffers libvips allocated cannot be handed over: copy them.
      port.postMessage(done)
    }
    await retired
    port.removeAllListeners()
  }
}
