/**
 * `renderPdf` on a worker thread (pdf-worker.ts, a pool of one on platform/workers), started on
 * first use and kept. Each document is one job there, open while its caller sends table rows in
 * batches and done when it renders; many jobs share the thread. Same model, same bytes as `renderPdf`.
 */
import type { PdfBlock, PdfDocumentModel } from "./pdf.js"
import { makeWorkerPool } from "./workers/pool.js"

/** Heap of the rendering thread: the rows of a 100k-receipt report and pdfkit's state (the gateway's own heap is 160 MB). */
const WORKER_HEAP_MB = 768
/** Documents open on the thread at once (most wait for their rows); more wait their turn. */
const OPEN_DOCUMENTS = 64

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

const thread = makeWorkerPool({
  name: "PDF",
  script: new URL(import.meta.url.endsWith(".ts") ? "./pdf-worker.ts" : "./pdf-worker.js", import.meta.url),
  size: 1,
  resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
  jobsPerWorker: OPEN_DOCUMENTS,
  errors: {
    failed: (failure) => new Error(`PDF rendering failed: ${"message" in failure ? failure.message : failure.limit}`),
    died: () => new Error("the PDF thread stopped")
  }
})

/** One document rendered on the thread; rows may be sent ahead in batches while the caller reads them. */
export interface PdfJob {
  readonly addRows: (groups: ReadonlyArray<readonly [string, ReadonlyArray<ReadonlyArray<string>>]>) => void
  readonly render: (model: ThreadDocumentModel) => Promise<Uint8Array>
  /** Drops the rows sent so far (the caller gave up before rendering). */
  readonly cancel: () => void
}

export const startPdfJob = (): PdfJob => {
  const job = thread.open<Uint8Array | null>({ op: "pdf.document", payload: null })
  // A job cancelled, or one whose caller never renders, fails unobserved.
  job.result.catch(() => {})
  return {
    addRows: (groups) => job.send({ op: "rows", groups }),
    render: async (model) => {
      job.send({ op: "render", model })
      return new Uint8Array((await job.result)!)
    },
    cancel: () => job.send({ op: "cancel" })
  }
}

export const renderPdfOffThread = (model: PdfDocumentModel): Promise<Uint8Array> => startPdfJob().render(model)

/** Stops the thread (tests, shutdown); the next document starts a new one. */
export const stopPdfThread = (): Promise<void> => thread.stop()
