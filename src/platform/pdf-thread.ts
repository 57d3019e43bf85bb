/**
 * `renderPdf` on a worker thread (pdf-worker.ts), started on first use and kept; calls are matched
 * to answers by id and run one after another there. Same model, same bytes as `renderPdf`.
 */
import { Worker } from "node:worker_threads"
import type { PdfBlock, PdfDocumentModel } from "./pdf.js"

const workerUrl = () => new URL(import.meta.url.endsWith(".ts") ? "./pdf-worker.ts" : "./pdf-worker.js", import.meta.url)

/** Heap of the rendering thread: the rows of a 100k-receipt report and pdfkit's state (the gateway's own heap is 160 MB). */
const WORKER_HEAP_MB = 768

/** Stands for one heading and table per group of rows sent with `addRows` (groups sorted by key). */
export interface CollectedTables {
  readonly kind: "collected"
  readonly columns: ReadonlyArray<string>
  /** `{key}` and `{n}` are replaced; `one` when a group has one row. */
  readonly heading: { readonly one: string; readonly many: string }
}

export interface ThreadDocumentModel extends Omit<PdfDocumentModel, "blocks"> {
  readonly blocks: ReadonlyArray<PdfBlock | CollectedTables>
}

let worker: Worker | undefined
let nextId = 0
const waiting = new Map<number, { resolve: (bytes: Uint8Array) => void; reject: (error: Error) => void }>()

const thread = (): Worker => {
  if (worker !== undefined) return worker
  const started = new Worker(workerUrl(), { resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } })
  started.unref()
  started.on("message", (message: { id: number; ok: boolean; bytes?: Uint8Array; error?: string }) => {
    const call = waiting.get(message.id)
    if (call === undefined) return
    waiting.delete(message.id)
    if (message.ok && message.bytes !== undefined) call.resolve(new Uint8Array(message.bytes))
    else call.reject(new Error(`PDF rendering failed: ${message.error ?? "unknown error"}`))
  })
  const fail = (error: Error) => {
    if (worker === started) worker = undefined
    for (const call of waiting.values()) call.reject(error)
    waiting.clear()
  }
  started.on("error", fail)
  started.on("exit", () => fail(new Error("the PDF thread stopped")))
  worker = started
  return started
}

/** One document rendered on the thread; rows may be sent ahead in batches while the caller reads them. */
export interface PdfJob {
  readonly addRows: (groups: ReadonlyArray<readonly [string, ReadonlyArray<ReadonlyArray<string>>]>) => void
  readonly render: (model: ThreadDocumentModel) => Promise<Uint8Array>
  /** Drops the rows sent so far (the caller gave up before rendering). */
  readonly cancel: () => void
}

export const startPdfJob = (): PdfJob => {
  const id = nextId++
  return {
    addRows: (groups) => thread().postMessage({ op: "rows", id, groups }),
    render: (model) =>
      new Promise((resolve, reject) => {
        waiting.set(id, { resolve, reject })
        thread().postMessage({ op: "render", id, model })
      }),
    cancel: () => worker?.postMessage({ op: "cancel", id })
  }
}

export const renderPdfOffThread = (model: PdfDocumentModel): Promise<Uint8Array> => startPdfJob().render(model)
