/**
 * One file through the sanitize pipeline, by type: images are OCR'd and the words of detected
 * spans blacked out; PDFs lose detected text for real (applied redactions) and scanned pages are
 * OCR'd and blacked out; DICOM goes to `sanitizeDicom`. Pure of HTTP and storage.
 */
import { sanitizeText, TokenBook } from "../text.js"
import { reviewed } from "./ai-review.js"
import type { FileType } from "./detect.js"
import { sanitizeDicomInThread } from "./dicom-thread.js"
import { type Box, coveredWords, openImage, redactionOf } from "./image.js"
import { sanitizePdf } from "./pdf.js"
import { changesContent, type DicomTagAction, type FileOptions, type FileSanitized, summarize } from "./summary.js"

export type { DicomTagAction, FileOptions, FileSanitized }

const sanitizeImage = async (bytes: Uint8Array, type: Exclude<FileType, "pdf" | "dicom">, options: FileOptions): Promise<FileSanitized> => {
  const image = await openImage(bytes, type)
  const read = await options.ocr(image.png)
  const tokens = new TokenBook()
  const result = await reviewed(read.text, sanitizeText(read.text, { policy: options.policy, mode: options.mode, tokens }), options.mode, tokens, options.review)
  const summary = summarize(options.mode, [result], tokens)
  const covered = changesContent(options.mode) ? coveredWords(read.text, read.words, result.spans) : []
  // Re-encoded even with nothing to black out: the metadata (EXIF, GPS, comments) goes too.
  const output = summary.blocked || options.mode === "flag" ? null : !changesContent(options.mode) ? bytes : await image.blackOut(covered.map((w): Box => [w.bbox.x0, w.bbox.y0, w.bbox.x1, w.bbox.y1]))
  return { ...summary, bytes: output, dicom_tag_actions: [], pixel_redactions: covered.map(redactionOf) }
}

const sanitizeDicomFile = async (bytes: Uint8Array, options: FileOptions): Promise<FileSanitized> => {
  const result = await sanitizeDicomInThread(bytes, { policy: options.policy, mode: options.mode, includePixelRedaction: options.includePixelRedaction, ocr: options.ocr })
  const handedBack = !result.blocked && options.mode !== "flag"
  return {
    bytes: handedBack ? result.bytes : null,
    blocked: result.blocked,
    findings: result.findings,
    tokenized_text: result.tokenized_text,
    token_mapping: result.token_mapping,
    dicom_tag_actions: result.dicom_tag_actions,
    pixel_redactions: result.pixel_redactions.map((p) => ({ text_found: p.text_found, bounding_box: p.bounding_box, confidence: p.confidence }))
  }
}

export const sanitizeFile = (bytes: Uint8Array, type: FileType, options: FileOptions): Promise<FileSanitized> => {
  if (type === "pdf") return sanitizePdf(bytes, options)
  if (type === "dicom") return sanitizeDicomFile(bytes, options)
  return sanitizeImage(bytes, type, options)
}
