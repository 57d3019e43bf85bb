/**
 * PDFs: the text layer of each page (characters with boxes) comes from one extraction job, which
 * checks the budgets first; pages without one are rendered one at a time, each its own job, as
 * their turn comes. Detected spans become redaction rectangles that mupdf applies (the text is
 * removed from the file, not covered); scanned pages are OCR'd, blacked out and put back as
 * images. One token book for all pages, so one value has one token throughout.
 */
import { setImmediate } from "node:timers/promises"
import { sanitizeText, type TextSanitized, TokenBook } from "../text.js"
import { reviewed } from "./ai-review.js"
import { coveredWords, type PixelRedaction, paintImage, redactionOf } from "./image.js"
import { extractPdf, type PageEdit, type Rect, redactPdf, renderPage, type TextPage } from "./mupdf-thread.js"
import { changesContent, type FileOptions, type FileSanitized, summarize } from "./summary.js"

/** One rectangle per line a span covers: the union of its characters' boxes on that line. */
export const spanRects = (page: TextPage, start: number, end: number): Rect[] => {
  const rects: Rect[] = []
  let current: Rect | undefined
  const units = page.boxes.length / 4
  for (let i = start; i < end && i < units; i++) {
    const [x0, y0, x1, y1] = page.boxes.subarray(i * 4, i * 4 + 4)
    if (Number.isNaN(x0)) {
      if (current) rects.push(current)
      current = undefined
      continue
    }
    current = current === undefined ? [x0!, y0!, x1!, y1!] : [Math.min(current[0], x0!), Math.min(current[1], y0!), Math.max(current[2], x1!), Math.max(current[3], y1!)]
  }
  if (current) rects.push(current)
  return rects
}

export const sanitizePdf = async (bytes: Uint8Array, options: FileOptions): Promise<FileSanitized> => {
  const pages = await extractPdf(bytes)
  const tokens = new TokenBook()
  const results: TextSanitized[] = []
  const edits: PageEdit[] = []
  const pixelRedactions: PixelRedaction[] = []
  const redacting = changesContent(options.mode)
  let editedImageBytes = 0
  for (const page of pages) {
    // The text engine runs here, on the request loop: other requests get their turn between pages.
    await setImmediate()
    if (page.kind === "text") {
      const result = await reviewed(page.text, sanitizeText(page.text, { policy: options.policy, mode: options.mode, tokens }), options.mode, tokens, options.review)
      results.push(result)
      const rects = redacting ? result.spans.filter((span) => span.replacement !== null).flatMap((span) => spanRects(page, span.start, span.end)) : []
      if (rects.length > 0) editedImageBytes += page.imageBytes
      edits.push({ rects })
      continue
    }
    const rendered = await renderPage(bytes, page)
    const read = await options.ocr(rendered.png)
    const result = await reviewed(read.text, sanitizeText(read.text, { policy: options.policy, mode: options.mode, tokens }), options.mode, tokens, options.review)
    results.push(result)
    const covered = redacting ? coveredWords(read.text, read.words, result.spans) : []
    pixelRedactions.push(...covered.map(redactionOf))
    // Only a page that changes is replaced by its rendering (a replaced page loses its vector content).
    const boxes = covered.map((w): Rect => [w.bbox.x0, w.bbox.y0, w.bbox.x1, w.bbox.y1])
    edits.push(covered.length === 0 ? { rects: [] } : { rects: [], png: await paintImage(rendered.png, "png", boxes, rendered.width * rendered.height) })
  }
  const summary = summarize(options.mode, results, tokens)
  const changed = edits.some((edit) => edit.rects.length > 0 || edit.png !== undefined)
  const output = summary.blocked || options.mode === "flag" ? null : changed ? await redactPdf(bytes, edits, editedImageBytes) : bytes
  return { ...summary, bytes: output, dicom_tag_actions: [], pixel_redactions: pixelRedactions }
}
