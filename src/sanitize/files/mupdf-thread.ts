/**
 * PDF work as decoder jobs (pdf-ops.ts in the decoder workers): extraction, where the budgets are
 * checked before any page is rendered; one scanned page's rendering; the redactions applied. Each
 * job holds decode memory for what it may allocate: mupdf's copy and parse of the file, the text
 * and boxes it hands back, a page's raster and the images the page draws.
 */
import { MAX_TEXT_CHARACTERS, RASTER_COPIES, rasterBytes } from "./budgets.js"
import { decode } from "./decoders.js"
import type { ExtractedPage, PageEdit, ScannedPage } from "./pdf-ops.js"

export type { ExtractedPage, PageEdit, Rect, ScannedPage, TextPage } from "./pdf-ops.js"

/** mupdf's copy of the file, its parsed objects and the structured clone it came in, per byte of file. */
const PARSE_COPIES = 4
/** The text and its boxes (four floats per character) an extraction may hand back. */
const EXTRACTED_TEXT_BYTES = MAX_TEXT_CHARACTERS * (2 + 16)

export const extractPdf = (bytes: Uint8Array) => decode<ExtractedPage[]>({ op: "pdf.extract", payload: { bytes } }, bytes.length * PARSE_COPIES + EXTRACTED_TEXT_BYTES)

export interface RenderedPage {
  readonly png: Uint8Array
  readonly width: number
  readonly height: number
}

export const renderPage = (bytes: Uint8Array, page: ScannedPage) =>
  decode<RenderedPage>(
    { op: "pdf.render", payload: { bytes, index: page.index, scale: page.scale } },
    bytes.length * PARSE_COPIES + rasterBytes(page.width * page.height, 3) * RASTER_COPIES + page.imageBytes
  )

/** `imageBytes`: raster bytes of the images on the pages the edits touch (applying redactions decodes them). */
export const redactPdf = (bytes: Uint8Array, edits: ReadonlyArray<PageEdit>, imageBytes: number) =>
  decode<Uint8Array>(
    { op: "pdf.redact", payload: { bytes, edits } },
    bytes.length * PARSE_COPIES + imageBytes + edits.reduce((sum, edit) => sum + (edit.png?.length ?? 0) * 2, 0)
  )
