/**
 * DICOM files through their worker thread (dicom-worker.ts), one at a time, with decode memory
 * held for dcmjs' copy of the file and the frames it renders, once the structure check passed. The OCR calls a job makes come back
 * to the main thread's pool; an OCR refusal (busy, too slow) fails the job with the same error the
 * image path would raise.
 */
import type { SanitizeFinding, SanitizeMode, SanitizePolicy } from "../text.js"
import { DECODER_JOB_MS, MAX_IMAGE_PIXELS, MAX_INFLATED_BYTES, RASTER_COPIES, rasterBytes } from "./budgets.js"
import { decodeBudget } from "./decode-budget.js"
import type { DicomTagAction, PixelRedaction } from "./dicom.js"
import { checkDicom, DEFLATED, transferSyntaxOf } from "./dicom-scan.js"
import type { Ocr } from "./ocr.js"
import { makeWorkerPool } from "./worker-pool.js"

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

/** V8 heap of the DICOM worker: dcmjs' dataset, the tag text and the text engine's work on it. */
export const DICOM_HEAP_MB = 256
/** dcmjs' copy of the dataset, the pixel data copied for redaction, the file written back, per byte. */
const DATASET_COPIES = 4

const workers = makeWorkerPool({
  script: new URL(import.meta.url.endsWith(".ts") ? "./dicom-worker.ts" : "./dicom-worker.js", import.meta.url),
  size: 1,
  resourceLimits: { maxOldGenerationSizeMb: DICOM_HEAP_MB, maxYoungGenerationSizeMb: 16 },
  jobTimeoutMs: DECODER_JOB_MS
})

/** Decode memory of one DICOM job: the dataset (inflated, at most the ceiling), and one frame rendered for OCR. */
const dicomJobBytes = (bytes: Uint8Array, includePixelRedaction: boolean) => {
  const dataset = transferSyntaxOf(bytes) === DEFLATED ? MAX_INFLATED_BYTES : bytes.length
  return dataset * DATASET_COPIES + (includePixelRedaction ? rasterBytes(MAX_IMAGE_PIXELS, 3) * RASTER_COPIES : 0)
}

export const sanitizeDicomInThread = async (
  bytes: Uint8Array,
  options: { policy: SanitizePolicy; mode: SanitizeMode; includePixelRedaction: boolean; ocr: Ocr }
): Promise<DicomThreadResult> => {
  let ocrError: Error | undefined
  const ocr = (image: unknown) =>
    options.ocr(image as Uint8Array).catch((error: Error) => {
      // The first refusal is what the job fails with.
      ocrError ??= error
      throw error
    })
  // Checked here first as well (a deflated dataset only measured): a file refused costs no copy
  // to the worker, nor starting it.
  await checkDicom(bytes, options.includePixelRedaction, false)
  const job = { op: "dicom.sanitize", payload: { bytes, options: { policy: options.policy, mode: options.mode, includePixelRedaction: options.includePixelRedaction } }, onCall: ocr }
  try {
    return await decodeBudget.run(dicomJobBytes(bytes, options.includePixelRedaction), () => workers.run<DicomThreadResult>(job))
  } catch (error) {
    throw ocrError ?? error
  }
}

/** Stops the thread (tests, shutdown); the next job starts a new one. */
export const stopDicomThread = (): Promise<void> => workers.stop()
