/**
 * mupdf off the main thread (a `node:worker_threads` worker). Plain erasable TypeScript that
 * imports only `mupdf` and node built-ins, so Node runs it as is in development and as compiled JS.
 *
 * `extract`: each page's characters with their boxes, or, for a page without a text layer, the page
 * rendered to PNG. `decode`: an image sharp cannot read (BMP) as RGB pixels. `redact`: redaction annotations over the given rectangles, APPLIED (the text
 * under them is removed, not covered), and scanned pages replaced by their blacked-out renderings.
 */
import { parentPort } from "node:worker_threads"
import * as mupdf from "mupdf"

// Below the request loop in the scheduler's eyes (nice.ts).
const nice = await import(new URL(import.meta.url.endsWith(".ts") ? "./nice.ts" : "./nice.js", import.meta.url).href)
nice.lowerThreadPriority()

type Rect = [number, number, number, number]

interface TextPage {
  kind: "text"
  text: string
  /** One box per UTF-16 unit of `text` (null for the separators we insert). */
  boxes: Array<Rect | null>
}
interface ScannedPage {
  kind: "scanned"
  png: Uint8Array
  /** Rendering scale: page points × scale = pixels. */
  scale: number
  width: number
  height: number
}

const RENDER_SCALE = 2

const openPdf = (bytes: Uint8Array) => {
  const document = mupdf.Document.openDocument(bytes, "application/pdf")
  const pdf = document.asPDF()
  if (pdf === null) throw new Error("not a PDF")
  return pdf
}

const extract = (bytes: Uint8Array, limits: { maxScannedPages: number; maxPixels: number }): Array<TextPage | ScannedPage> => {
  const pdf = openPdf(bytes)
  let scanned = 0
  const pages: Array<TextPage | ScannedPage> = []
  for (let i = 0; i < pdf.countPages(); i++) {
    const page = pdf.loadPage(i)
    let text = ""
    const boxes: Array<Rect | null> = []
    page.toStructuredText("preserve-whitespace").walk({
      onChar(c, _origin, _font, _size, quad) {
        const xs = [quad[0], quad[2], quad[4], quad[6]]
        const ys = [quad[1], quad[3], quad[5], quad[7]]
        const box: Rect = [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)]
        text += c
        for (let k = 0; k < c.length; k++) boxes.push(box)
      },
      endLine() {
        text += "\n"
        boxes.push(null)
      }
    })
    if (text.trim() !== "") {
      pages.push({ kind: "text", text, boxes })
      continue
    }
    if (++scanned > limits.maxScannedPages) throw new Error("LIMIT:scanned_pages")
    // 2x for legible OCR, less for a page so large that 2x would pass the pixel limit.
    const [x0, y0, x1, y1] = page.getBounds()
    const scale = Math.min(RENDER_SCALE, Math.sqrt(limits.maxPixels / Math.max(1, (x1 - x0) * (y1 - y0))))
    const pixmap = page.toPixmap(mupdf.Matrix.scale(scale, scale), mupdf.ColorSpace.DeviceRGB, false)
    pages.push({ kind: "scanned", png: pixmap.asPNG(), scale, width: pixmap.getWidth(), height: pixmap.getHeight() })
  }
  return pages
}

interface PageEdit {
  /** Rectangles in page points to redact from the text layer. */
  rects: Rect[]
  /** A scanned page's redacted rendering: it replaces the page's content. */
  png?: Uint8Array
}

const replaceWithImage = (pdf: mupdf.PDFDocument, index: number, png: Uint8Array) => {
  const page = pdf.loadPage(index)
  const [x0, y0, x1, y1] = page.getBounds()
  const width = x1 - x0
  const height = y1 - y0
  const image = pdf.addImage(new mupdf.Image(png))
  const resources = pdf.newDictionary()
  const xobjects = pdf.newDictionary()
  xobjects.put("Im0", image)
  resources.put("XObject", xobjects)
  const contents = `q ${width} 0 0 ${height} 0 0 cm /Im0 Do Q`
  const replacement = pdf.addPage([0, 0, width, height], 0, resources, contents)
  pdf.insertPage(index, replacement)
  pdf.deletePage(index + 1)
}

const redact = (bytes: Uint8Array, edits: PageEdit[]): Uint8Array => {
  const pdf = openPdf(bytes)
  edits.forEach((edit, index) => {
    if (edit.png !== undefined) {
      replaceWithImage(pdf, index, edit.png)
      return
    }
    if (edit.rects.length === 0) return
    const page = pdf.loadPage(index) as mupdf.PDFPage
    for (const rect of edit.rects) {
      const annotation = page.createAnnotation("Redact")
      annotation.setRect(rect)
    }
    // Black boxes where the text was; images under the boxes lose those pixels too.
    page.applyRedactions(true, mupdf.PDFPage.REDACT_IMAGE_PIXELS)
  })
  // Garbage collection drops the objects the redactions orphaned (the removed text included).
  return pdf.saveToBuffer("garbage=compact,compress").asUint8Array()
}

/** An image sharp cannot read (BMP) as raw RGB pixels. */
const decodeImage = (bytes: Uint8Array) => {
  let pixmap = new mupdf.Image(bytes).toPixmap()
  if (pixmap.getColorSpace()?.getName() !== "DeviceRGB") pixmap = pixmap.convertToColorSpace(mupdf.ColorSpace.DeviceRGB, true)
  // Counts the alpha channel too.
  const channels = pixmap.getNumberOfComponents()
  return { width: pixmap.getWidth(), height: pixmap.getHeight(), stride: pixmap.getStride(), channels, pixels: new Uint8Array(pixmap.getPixels()) }
}

const run = (message: { op: string; bytes: Uint8Array; edits?: PageEdit[]; limits?: { maxScannedPages: number; maxPixels: number } }) => {
  if (message.op === "extract") return extract(message.bytes, message.limits ?? { maxScannedPages: 100, maxPixels: 64_000_000 })
  if (message.op === "redact") return redact(message.bytes, message.edits ?? [])
  return decodeImage(message.bytes)
}

parentPort?.on("message", (message: { id: number; op: "extract" | "redact" | "decode"; bytes: Uint8Array; edits?: PageEdit[]; limits?: { maxScannedPages: number; maxPixels: number } }) => {
  try {
    const result = run(message)
    parentPort?.postMessage({ id: message.id, ok: true, result })
  } catch (cause) {
    parentPort?.postMessage({ id: message.id, ok: false, error: String((cause as Error)?.message ?? cause) })
  }
})
