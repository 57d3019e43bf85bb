/**
 * The mupdf worker thread (pdf-worker.ts), started on first use and kept: PDF parsing, rendering
 * and redaction never run on the request loop. Calls are matched to answers by id.
 */
import { Worker } from "node:worker_threads"
import { CorruptFile } from "./errors.js"
import { LimitExceeded, MAX_IMAGE_PIXELS, MAX_SCANNED_PAGES } from "./reasons.js"

export type Rect = [number, number, number, number]
export interface TextPage {
  readonly kind: "text"
  readonly text: string
  readonly boxes: ReadonlyArray<Rect | null>
}
export interface ScannedPage {
  readonly kind: "scanned"
  readonly png: Uint8Array
  readonly scale: number
  readonly width: number
  readonly height: number
}
export type ExtractedPage = TextPage | ScannedPage
export interface PageEdit {
  readonly rects: Rect[]
  readonly png?: Uint8Array
}

const workerUrl = () => new URL(import.meta.url.endsWith(".ts") ? "./pdf-worker.ts" : "./pdf-worker.js", import.meta.url)

let worker: Worker | undefined
let nextId = 0
const waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>()

const thread = (): Worker => {
  if (worker !== undefined) return worker
  // mupdf prints parser warnings that may quote the file; they are dropped, not logged.
  const started = new Worker(workerUrl(), { stdout: true, stderr: true })
  started.stdout.resume()
  started.stderr.resume()
  started.unref()
  started.on("message", (message: { id: number; ok: boolean; result?: unknown; error?: string }) => {
    const call = waiting.get(message.id)
    if (call === undefined) return
    waiting.delete(message.id)
    if (message.ok) call.resolve(message.result)
    else if (message.error === "LIMIT:scanned_pages") call.reject(new LimitExceeded("scanned_pages", MAX_SCANNED_PAGES))
    else call.reject(new CorruptFile(message.error ?? "unreadable PDF"))
  })
  const fail = (error: Error) => {
    worker = undefined
    for (const call of waiting.values()) call.reject(error)
    waiting.clear()
  }
  started.on("error", fail)
  started.on("exit", () => fail(new Error("the PDF worker stopped")))
  worker = started
  return started
}

const send = <A>(op: "extract" | "redact" | "decode", bytes: Uint8Array, edits?: ReadonlyArray<PageEdit>): Promise<A> =>
  new Promise((resolve, reject) => {
    const id = nextId++
    waiting.set(id, { resolve: resolve as (value: unknown) => void, reject })
    thread().postMessage({ id, op, bytes, edits, limits: { maxScannedPages: MAX_SCANNED_PAGES, maxPixels: MAX_IMAGE_PIXELS } })
  })

export const extractPdf = (bytes: Uint8Array) => send<ExtractedPage[]>("extract", bytes)
export const redactPdf = (bytes: Uint8Array, edits: ReadonlyArray<PageEdit>) => send<Uint8Array>("redact", bytes, edits)

export interface RgbImage {
  readonly width: number
  readonly height: number
  readonly stride: number
  readonly channels: number
  readonly pixels: Uint8Array
}
export const decodeWithMupdf = (bytes: Uint8Array) => send<RgbImage>("decode", bytes)

/** Stops the thread (tests, shutdown); the next call starts a new one. */
export const stopPdfThread = async () => {
  const running = worker
  worker = undefined
  if (running) await running.terminate()
}
