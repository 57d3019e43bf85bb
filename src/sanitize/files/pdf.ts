/**
 * PDFs: the text layer of each page (characters with boxes) and renderings of pages without one
 * come from the mupdf thread; detected spans become redaction rectangles that mupdf applies (the
 * text is removed from the file, not covered); scanned pages are OCR'd, blacked out and put back
 * as images. One token book for all pages, so one value has one token throughout.
 */
import sharp from "sharp"
import { sanitizeText, type TextSanitized, TokenBook } from "../text.js"
import { reviewed } from "./ai-review.js"
import { coveredWords, type PixelRedaction, redactionOf } from "./image.js"
import { extractPdf, type PageEdit, type Rect, redactPdf, type TextPage } from "./mupdf-thread.js"
import { changesContent, type FileOptions, type FileSanitized, summarize } from "./summary.js"

/** One rectangle per line a span covers: the union of its characters' boxes on that line. */
export const spanRects = (page: TextPage, start: number, end: number): Rect[] => {
  const rects: Rect[] = []
  let current: Rect | undefined
  for (let i = start; i < end && i < page.boxes.length; i++) {
    const box = page.boxes[i]
    if (box === null || box === undefined) {
      if (current) rects.push(current)
      current = undefined
      continue
    }
    current = current === undefined ? [...box] : [Math.min(current[0], box[0]), Math.min(current[1], box[1]), Math.max(current[2], box[2]), Math.max(current[3], box[3])]
  }
  if (current) rects.push(current)
  return rects
}

const blackOutPng = async (png: Uint8Array, boxes: ReadonlyArray<Rect>, width: number, height: number) => {
  const tiles = boxes.flatMap(([x0, y0, x1, y1]) => {
    const left = Math.max(0, Math.floor(x0) - 2)
    const top = Math.max(0, Math.floor(y0) - 2)
    const w = Math.min(width, Math.ceil(x1) + 2) - left
    const h = Math.min(height, Math.ceil(y1) + 2) - top
    return w > 0 && h > 0 ? [{ input: { create: { width: w, height: h, channels: 3 as const, background: { r: 0, g: 0, b: 0 } } }, left, top }] : []
  })
  return new Uint8Array(await sharp(png).composite(tiles).png().toBuffer())
}

export const sanitizePdf = async (bytes: Uint8Array, options: FileOptions): Promise<FileSanitized> => {
  const pages = await extractPdf(bytes)
  const tokens = new TokenBook()
  const results: TextSanitized[] = []
  const edits: PageEdit[] = []
  const pixelRedactions: PixelRedaction[] = []
  const redacting = changesContent(options.mode)
  for (const page of pages) {
    if (page.kind === "text") {
      const result = await reviewed(page.text, sanitizeText(page.text, { policy: options.policy, mode: options.mode, tokens }), options.mode, tokens, options.review)
      results.push(result)
      const rects = redacting ? result.spans.filter((span) => span.replacement !== null).flatMap((span) => spanRects(page, span.start, span.end)) : []
      edits.push({ rects })
      continue
    }
    const read = await options.ocr(page.png)
    const result = await reviewed(read.text, sanitizeText(read.text, { policy: options.policy, mode: options.mode, tokens }), options.mode, tokens, options.review)
    results.push(result)
    const covered = redacting ? coveredWords(read.text, read.words, result.spans) : []
    pixelRedactions.push(...covered.map(redactionOf))
    // Only a page that changes is replaced by its rendering (a replaced page loses its vector content).
    edits.push(covered.length === 0 ? { rects: [] } : { rects: [], png: await blackOutPng(page.png, covered.map((w): Rect => [w.bbox.x0, w.bbox.y0, w.bbox.x1, w.bbox.y1]), page.width, page.height) })
  }
  const summary = summarize(options.mode, results, tokens)
  const changed = edits.some((edit) => edit.rects.length > 0 || edit.png !== undefined)
  const output = summary.blocked || options.mode === "flag" ? null : changed ? await redactPdf(bytes, edits) : bytes
  return { ...summary, bytes: output, dicom_tag_actions: [], pixel_redactions: pixelRedactions }
}
