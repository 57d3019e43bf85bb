/**
 * The DICOM worker thread (dicom-worker.ts), started on first use and kept. Jobs and the OCR
 * calls they make are matched by id; an OCR refusal (busy, too slow) fails the job with the same
 * error the image path would raise.
 */
import { Worker } from "node:worker_threads"
import type { SanitizeFinding, SanitizeMode, SanitizePolicy } from "../text.js"
import type { DicomTagAction, PixelRedaction } from "./dicom.js"
import { CorruptFile } from "./errors.js"
import type { Ocr } from "./ocr.js"

export interface DicomThreadResult {
  readonly bytes: Uint8Array
  readonly text: string
  readonly findings: SanitizeFinding[]
  readonly token_mapping: Record<string, string> | null
  readonly tokenized_text: string | null
  readonly blocked: boolean
  readonly dicom_tag_actions: DicomTagAction[]
  readonly pixel_redactions: PixelRedaction[]
}

interface Pending {
  readonly ocr: Ocr
  readonly resolve: (value: DicomThreadResult) => void
  readonly reject: (error: Error) => void
  /** The first OCR refusal of this job: the job fails with it. */
  ocrError?: Error
}

const workerUrl = () => new URL(import.meta.url.endsWith(".ts") ? "./dicom-worker.ts" : "./dicom-worker.js", import.meta.url)

let worker: Worker | undefined
let nextId = 0
const jobs = new Map<number, Pending>()

type Message =
  | { kind: "ready" }
  | { kind: "ocr"; job: number; call: number; image: Uint8Array }
  | { kind: "done"; id: number; ok: boolean; result?: DicomThreadResult; corrupt?: boolean; message?: string }

const thread = (): Worker => {
  if (worker !== undefined) return worker
  // dcmjs prints parser warnings that may quote the file; they are dropped, not logged.
  const started = new Worker(workerUrl(), { stdout: true, stderr: true })
  started.stdout.resume()
  started.stderr.resume()
  started.unref()
  started.on("message", (message: Message) => {
    if (message.kind === "ready") return
    if (message.kind === "ocr") {
      const job = jobs.get(message.job)
      const answer = (ok: boolean, result?: unknown) => started.postMessage({ kind: "ocr", call: message.call, ok, result })
      if (job === undefined) return answer(false)
      job.ocr(message.image).then(
        (result) => answer(true, result),
        (error: Error) => {
          job.ocrError ??= error
          answer(false)
        }
      )
      return
    }
    const job = jobs.get(message.id)
    if (job === undefined) return
    jobs.delete(message.id)
    if (message.ok) job.resolve(message.result!)
    else job.reject(job.ocrError ?? (message.corrupt ? new CorruptFile(message.message) : new Error(message.message)))
  })
  const fail = (error: Error) => {
    worker = undefined
    for (const job of jobs.values()) job.reject(error)
    jobs.clear()
  }
  started.on("error", fail)
  started.on("exit", () => fail(new Error("the DICOM worker stopped")))
  worker = started
  return started
}

export const sanitizeDicomInThread = (
  bytes: Uint8Array,
  options: { policy: SanitizePolicy; mode: SanitizeMode; includePixelRedaction: boolean; ocr: Ocr }
): Promise<DicomThreadResult> =>
  new Promise((resolve, reject) => {
    const id = nextId++
    jobs.set(id, { ocr: options.ocr, resolve, reject })
    thread().postMessage({ kind: "job", id, bytes, options: { policy: options.policy, mode: options.mode, includePixelRedaction: options.includePixelRedaction } })
  })

/** Stops the thread (tests, shutdown); the next job starts a new one. */
export const stopDicomThread = async () => {
  const running = worker
  worker = undefined
  if (running) await running.terminate()
}
