/**
 * Images: decoded and re-encoded by sharp (async, libvips threads), BMP through mupdf's decoder in
 * the PDF thread; OCR'd through the pool; the boxes of the words a detected span covers are
 * painted black.
 */
import sharp from "sharp"
import type { DetectedSpan } from "../text.js"
import { encodeBmp } from "./bmp.js"
import type { FileType } from "./detect.js"
import { CorruptFile } from "./errors.js"
import { decodeWithMupdf } from "./mupdf-thread.js"
import { type OcrWord, wordOffsets } from "./ocr.js"
import { LimitExceeded, MAX_IMAGE_PIXELS } from "./reasons.js"

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

const PAD = 2

/** Raw RGB of any supported image (the first frame of an animation). */
const decode = async (bytes: Uint8Array, type: FileType): Promise<{ width: number; height: number; channels: number; pixels: Uint8Array }> => {
  if (type === "bmp" && bytes.length >= 26) {
    // BITMAPINFOHEADER width and height (height is negative for top-down rows).
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    if (Math.abs(view.getInt32(18, true) * view.getInt32(22, true)) > MAX_IMAGE_PIXELS) throw new LimitExceeded("pixels", MAX_IMAGE_PIXELS)
  }
  try {
    if (type === "bmp") {
      const image = await decodeWithMupdf(bytes)
      const row = image.width * image.channels
      const pixels = new Uint8Array(row * image.height)
      for (let y = 0; y < image.height; y++) pixels.set(image.pixels.subarray(y * image.stride, y * image.stride + row), y * row)
      return { width: image.width, height: image.height, channels: image.channels, pixels }
    }
    const { data, info } = await sharp(bytes, { failOn: "error", limitInputPixels: MAX_IMAGE_PIXELS }).removeAlpha().raw().toBuffer({ resolveWithObject: true })
    return { width: info.width, height: info.height, channels: info.channels, pixels: data }
  } catch (cause) {
    if (/pixel limit/i.test(String((cause as Error)?.message))) throw new LimitExceeded("pixels", MAX_IMAGE_PIXELS)
    throw new CorruptFile(`the ${type} image cannot be decoded: ${(cause as Error).message}`)
  }
}

export interface DecodedImage {
  readonly width: number
  readonly height: number
  /** Lossless PNG for the OCR. */
  readonly png: Uint8Array
  /** Blacks out the boxes and encodes the result in the original format. */
  readonly blackOut: (boxes: ReadonlyArray<Box>) => Promise<Uint8Array>
}

const rawInput = (width: number, height: number, channels: number) => ({ raw: { width, height, channels: channels as 3 | 4 } })

export const openImage = async (bytes: Uint8Array, type: FileType): Promise<DecodedImage> => {
  const { width, height, channels, pixels } = await decode(bytes, type)
  const png = await sharp(pixels, rawInput(width, height, channels)).png().toBuffer()
  const blackOut = async (boxes: ReadonlyArray<Box>) => {
    const tiles = boxes.flatMap(([x0, y0, x1, y1]) => {
      const left = Math.max(0, Math.floor(x0) - PAD)
      const top = Math.max(0, Math.floor(y0) - PAD)
      const w = Math.min(width, Math.ceil(x1) + PAD) - left
      const h = Math.min(height, Math.ceil(y1) + PAD) - top
      return w > 0 && h > 0 ? [{ input: { create: { width: w, height: h, channels: 3 as const, background: { r: 0, g: 0, b: 0 } } }, left, top }] : []
    })
    const painted = sharp(pixels, rawInput(width, height, channels)).composite(tiles)
    if (type === "bmp") {
      const { data, info } = await painted.removeAlpha().raw().toBuffer({ resolveWithObject: true })
      return encodeBmp(info.width, info.height, data, info.channels)
    }
    if (type === "jpeg") return painted.jpeg({ quality: 92 }).toBuffer()
    if (type === "gif") return painted.gif().toBuffer()
    if (type === "tiff") return painted.tiff().toBuffer()
    return painted.png().toBuffer()
  }
  return { width, height, png, blackOut }
}
