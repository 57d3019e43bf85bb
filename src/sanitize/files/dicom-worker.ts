/**
 * `sanitizeDicom` off the request loop (dcmjs parses and writes synchronously: a 40 MB study
 * holds a thread for a third of a second). OCR of burned-in text is asked of the main thread's
 * pool by message. Plain erasable TypeScript: from the sources it registers tsx first, so the
 * DICOM module and its imports load as TypeScript; compiled, it imports the JavaScript.
 */
import { parentPort } from "node:worker_threads"

// Below the request loop in the scheduler's eyes (nice.ts).
const nice = await import(new URL(import.meta.url.endsWith(".ts") ? "./nice.ts" : "./nice.js", import.meta.url).href)
nice.lowerThreadPriority()

interface Job {
  kind: "job"
  id: number
  bytes: Uint8Array
  options: { policy: string; mode: string; includePixelRedaction: boolean }
}
interface OcrAnswer {
  kind: "ocr"
  call: number
  ok: boolean
  result?: unknown
}

const fromSources = import.meta.url.endsWith(".ts")
if (fromSources) {
  const { register } = await import("tsx/esm/api")
  register()
}
const text = await import(new URL(fromSources ? "../text.ts" : "../text.js", import.meta.url).href)
const dicom = await import(new URL(fromSources ? "./dicom.ts" : "./dicom.js", import.meta.url).href)
const errors = await import(new URL(fromSources ? "./errors.ts" : "./errors.js", import.meta.url).href)

let nextCall = 0
const ocrCalls = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>()

const ocr = (job: number) => (image: Uint8Array) =>
  new Promise((resolve, reject) => {
    const call = nextCall++
    ocrCalls.set(call, { resolve, reject })
    parentPort?.postMessage({ kind: "ocr", job, call, image })
  })

parentPort?.on("message", async (message: Job | OcrAnswer) => {
  if (message.kind === "ocr") {
    const call = ocrCalls.get(message.call)
    ocrCalls.delete(message.call)
    if (message.ok) call?.resolve(message.result)
    else call?.reject(new Error("OCR failed"))
    return
  }
  try {
    const result = await dicom.sanitizeDicom(message.bytes, { ...message.options, ocr: ocr(message.id), tokens: new text.TokenBook() })
    parentPort?.postMessage({ kind: "done", id: message.id, ok: true, result })
  } catch (cause) {
    const corrupt = cause instanceof errors.CorruptFile
    parentPort?.postMessage({ kind: "done", id: message.id, ok: false, corrupt, message: String((cause as Error)?.message ?? cause) })
  }
})
parentPort?.postMessage({ kind: "ready" })
