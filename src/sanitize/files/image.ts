/**
 * Images: the declared size is read from the header and checked against the pixel budget before
 * anything is decoded; decoding and re-encoding run as decoder jobs (image-ops.ts: sharp, BMP
 * through mupdf) holding decode memory for their raster; the OCR runs through the pool; the boxes
 * of the words a detected span covers are painted black.
 */

import type { DetectedSpan } from "../text.js"
import { MAX_IMAGE_PIXELS, RASTER_COPIES, rasterBytes } from "./budgets.js"
import { decode } from "./decoders.js"
import type { FileType } from "./detect.js"
import { LimitExceeded } from "./errors.js"
import { declaredImage } from "./headers.js"
import type { ImageType } from "./image-ops.js"
import { type OcrWord, wordOffsets } from "./ocr.js"

export type Box = [number, number, number, number]

export interface PixelRedaction {
  readonly text_found: string
  readonly bounding_box: Box
  readonly confidence: number
}

/** An OCR word to black out, and what replaced it in the text (marker or token). */
export interface CoveredWord extends OcrWord {
  readonly replacement: string
}

/** The words a replaced span overlaps (kept spans, `replacement: null`, are left alone). */
export const coveredWords = (text: string, words: ReadonlyArray<OcrWord>, spans: ReadonlyArray<DetectedSpan>): CoveredWord[] => {
  const replaced = spans.filter((span) => span.replacement !== null)
  if (replaced.length === 0) return []
  const offsets = wordOffsets(text, words)
  return words.flatMap((word, i) => {
    const { start, end } = offsets[i]!
    if (start < 0) return []
    const hits = replaced.filter((span) => span.start < end && start < span.end)
    return hits.length === 0 ? [] : [{ ...word, replacement: [...new Set(hits.map((span) => span.replacement!))].join(" ") }]
  })
}

/**
 * `text_found` names what was found by its marker or token, never the original (as the DICOM
 * path does): a redact answer carries no sensitive text, and tokenize's mapping holds the originals.
 */
export const redactionOf = (word: CoveredWord): PixelRedaction => ({
  text_found: word.replacement,
  bounding_box: [word.bbox.x0, word.bbox.y0, word.bbox.x1, word.bbox.y1],
  confidence: Math.round(word.confidence * 1000) / 1000
})

export interface DecodedImage {
  readonly width: number
  readonly height: number
  /** Lossless PNG for the OCR. */
  readonly png: Uint8Array
  /** Blacks out the boxes and encodes the result in the original format. */
  readonly blackOut: (boxes: ReadonlyArray<Box>) => Promise<Uint8Array>
}

/** Decode memory of one job on an image of `pixels` (its raster, a working copy, the encoding) plus the file. */
const imageJobBytes = (pixels: number, channels: number, bytesPerSample: number, fileBytes: number) =>
  rasterBytes(pixels, channels, bytesPerSample) * RASTER_COPIES + fileBytes

/** Paints the boxes black in an image of a known size; answers it encoded in its own format. */
export const paintImage = (bytes: Uint8Array, type: ImageType, boxes: ReadonlyArray<Box>, pixels: number, channels = 3, bytesPerSample = 1) =>
  decode<Uint8Array>({ op: "image.paint", payload: { bytes, type, boxes } }, imageJobBytes(pixels, channels, bytesPerSample, bytes.length))

export const openImage = async (bytes: Uint8Array, type: Exclude<FileType, "pdf" | "dicom">): Promise<DecodedImage> => {
  const declared = await declaredImage(bytes, type)
  const pixels = declared.width * declared.height
  if (pixels > MAX_IMAGE_PIXELS) throw new LimitExceeded("pixels", MAX_IMAGE_PIXELS)
  const estimate = imageJobBytes(pixels, declared.channels, declared.bytesPerSample, bytes.length)
  const read = await decode<{ width: number; height: number; png: Uint8Array }>({ op: "image.read", payload: { bytes, type } }, estimate)
  return { ...read, blackOut: (boxes) => paintImage(bytes, type, boxes, pixels, declared.channels, declared.bytesPerSample) }
}
