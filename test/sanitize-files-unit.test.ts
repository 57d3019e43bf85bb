/**
 * The file pipeline's pure parts, with property tests: type by leading bytes, the download file
 * name, OCR text layout and word offsets, spans mapped to OCR words and to PDF rectangles, and
 * findings of several pages merged.
 */
import fc from "fast-check"
import * as mupdf from "mupdf"
import sharp from "sharp"
import { describe, expect, it } from "vitest"
import { stopDecoders } from "../src/sanitize/files/decoders.js"
import { detectFileType, downloadName, type FileType } from "../src/sanitize/files/detect.js"
import { coveredWords, openImage } from "../src/sanitize/files/image.js"
import { extractPdf } from "../src/sanitize/files/mupdf-thread.js"
import { layout, makeOcrPool, type OcrWord, wordOffsets } from "../src/sanitize/files/ocr.js"
import { spanRects } from "../src/sanitize/files/pdf.js"
import { LimitExceeded, MAX_IMAGE_PIXELS, MAX_SCANNED_PAGES, OcrBusy, OcrTimeout } from "../src/sanitize/files/reasons.js"
import { mergeFindings } from "../src/sanitize/files/summary.js"
import type { DetectedSpan, SanitizeFinding } from "../src/sanitize/text.js"
import { textImage } from "./support/sanitize-files.js"

const ascii = (text: string) => Array.from(text, (c) => c.charCodeAt(0))
const MAGIC: Array<[FileType, number[], number]> = [
  ["jpeg", [0xff, 0xd8, 0xff], 0],
  ["png", [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 0],
  ["pdf", ascii("%PDF"), 0],
  ["gif", ascii("GIF87a"), 0],
  ["gif", ascii("GIF89a"), 0],
  ["bmp", ascii("BM"), 0],
  ["tiff", [0x49, 0x49, 0x2a, 0x00], 0],
  ["tiff", [0x4d, 0x4d, 0x00, 0x2a], 0]
]

const withPrefix = (prefix: number[], rest: Uint8Array, at = 0) => {
  const bytes = new Uint8Array(Math.max(at + prefix.length, rest.length))
  bytes.set(rest.subarray(0, bytes.length))
  bytes.set(prefix, at)
  return bytes
}

describe("type by leading bytes", () => {
  it("each magic number names its type whatever follows", () => {
    for (const [type, magic, at] of MAGIC) {
      fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), (rest) => detectFileType(withPrefix(magic, rest, at)) === type))
    }
  })

  it("DICM at offset 128 is DICOM when the preamble starts with none of the others", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 128, maxLength: 128 }), (preamble) => {
        fc.pre(preamble[0] !== 0xff && preamble[0] !== 0x89 && preamble[0] !== 0x25 && preamble[0] !== 0x47 && preamble[0] !== 0x42 && preamble[0] !== 0x49 && preamble[0] !== 0x4d)
        return detectFileType(withPrefix(ascii("DICM"), preamble, 128)) === "dicom"
      })
    )
  })

  it("text, short or empty input is no type", () => {
    expect(detectFileType(new Uint8Array(0))).toBeUndefined()
    expect(detectFileType(new TextEncoder().encode("hello, this is plain text"))).toBeUndefined()
    expect(detectFileType(new Uint8Array([0xff, 0xd8]))).toBeUndefined()
    fc.assert(fc.property(fc.stringMatching(/^[a-z ]{0,200}$/), (text) => detectFileType(new TextEncoder().encode(text)) === undefined))
  })
})

describe("download name", () => {
  it("is sanitized_<name>.<ext> with only header-safe characters", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), fc.constantFrom<FileType>("jpeg", "png", "gif", "bmp", "tiff", "pdf", "dicom"), (name, type) => {
        const result = downloadName(name, type)
        return /^sanitized_[A-Za-z0-9._-]{1,120}\.(jpg|png|gif|bmp|tiff|pdf|dcm)$/.test(result)
      })
    )
    expect(downloadName("scan.png", "png")).toBe("sanitized_scan.png")
    expect(downloadName("C:\\docs\\my report.v2.PDF", "pdf")).toBe("sanitized_my_report.v2.pdf")
    expect(downloadName('evil"\r\nSet-Cookie: x.jpg', "jpeg")).toBe("sanitized_evil_Set-Cookie_x.jpg")
    expect(downloadName("", "gif")).toBe("sanitized_file.gif")
  })
})

const word = (text: string, x = 0): { text: string; confidence: number; bbox: OcrWord["bbox"] } => ({ text, confidence: 90, bbox: { x0: x, y0: 0, x1: x + 10, y1: 10 } })

describe("OCR layout", () => {
  it("word offsets point at each word in the laid-out text", () => {
    const wordText = fc.stringMatching(/^[A-Za-z0-9@.-]{1,12}$/)
    fc.assert(
      fc.property(fc.array(fc.array(wordText, { minLength: 1, maxLength: 6 }), { maxLength: 6 }), (lines) => {
        const read = layout(lines.map((texts) => ({ words: texts.map((t) => word(t)) })))
        const offsets = wordOffsets(read.text, read.words)
        return read.words.every((w, i) => read.text.slice(offsets[i]!.start, offsets[i]!.end) === w.text) && read.words.every((w) => w.confidence >= 0 && w.confidence <= 1)
      })
    )
  })

  it("a span covers exactly the words it overlaps; kept spans cover none", () => {
    const read = layout([{ words: [word("Mail"), word("john@x.io", 20), word("now", 40)] }, { words: [word("SSN"), word("123-45-6789", 20)] }])
    const span = (text: string, replacement: string | null): DetectedSpan => {
      const start = read.text.indexOf(text)
      return { start, end: start + text.length, entity_type: "x", severity: "critical", library: "pii", replacement }
    }
    expect(coveredWords(read.text, read.words, [span("john@x.io", "[R]")]).map((w) => w.text)).toEqual(["john@x.io"])
    expect(coveredWords(read.text, read.words, [span("45-6789", "[R]")]).map((w) => w.text)).toEqual(["123-45-6789"])
    expect(coveredWords(read.text, read.words, [span("now\nSSN", "[R]")]).map((w) => w.text)).toEqual(["now", "SSN"])
    expect(coveredWords(read.text, read.words, [span("john@x.io", null)])).toEqual([])
    expect(coveredWords(read.text, read.words, [span("SSN", "[A]"), span("SSN 123", "[B]")]).map((w) => w.replacement)).toEqual(["[A] [B]", "[B]"])
  })
})

describe("PDF rectangles", () => {
  it("a span becomes one rectangle per line, each the union of its characters' boxes", () => {
    // Four numbers per character, NaN for the line break.
    const boxes = new Float32Array([0, 0, 5, 10, 5, 0, 10, 10, Number.NaN, Number.NaN, Number.NaN, Number.NaN, 0, 20, 5, 30, 5, 21, 12, 31])
    const page = { kind: "text" as const, text: "ab\ncd", boxes, imageBytes: 0 }
    expect(spanRects(page, 0, 5)).toEqual([
      [0, 0, 10, 10],
      [0, 20, 12, 31]
    ])
    expect(spanRects(page, 1, 2)).toEqual([[5, 0, 10, 10]])
    expect(spanRects(page, 2, 3)).toEqual([])
  })
})

describe("findings of several pages", () => {
  it("add up per entity, action and library, and keep the total count", () => {
    const finding = fc.record({
      entity_type: fc.constantFrom("email_address", "us_ssn", "ner_person"),
      severity: fc.constant("critical" as const),
      action_taken: fc.constantFrom("redacted" as const, "tokenized" as const),
      library: fc.constantFrom("pii" as const, "pii_ner" as const),
      description: fc.constant("d"),
      count: fc.integer({ min: 1, max: 9 })
    })
    fc.assert(
      fc.property(fc.array(fc.array(finding, { maxLength: 5 }), { maxLength: 5 }), (pages: SanitizeFinding[][]) => {
        const merged = mergeFindings(pages)
        const total = (list: ReadonlyArray<SanitizeFinding>) => list.reduce((sum, f) => sum + f.count, 0)
        const keys = merged.map((f) => `${f.entity_type}/${f.action_taken}/${f.library}`)
        return total(merged) === total(pages.flat()) && new Set(keys).size === keys.length
      })
    )
  })
})

describe("the OCR pool", () => {
  it("refuses beyond its queue limit, times an image out, and counts it until its worker is free", async () => {
    const pool = makeOcrPool({ workers: 1, queueLimit: 1, timeoutMs: 60_000 })
    try {
      const page = await textImage(["queue limit check"])
      const results = await Promise.allSettled([pool.ocr(page), pool.ocr(page), pool.ocr(page)])
      expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "rejected"])
      expect((results[2] as PromiseRejectedResult).reason).toBeInstanceOf(OcrBusy)
      expect(pool.pending()).toBe(0)
      const hurried = makeOcrPool({ workers: 1, queueLimit: 4, timeoutMs: 1 })
      try {
        await expect(hurried.ocr(page)).rejects.toBeInstanceOf(OcrTimeout)
        // The timed-out image still occupies the worker until tesseract finishes it.
        expect(hurried.pending()).toBe(1)
        for (let i = 0; i < 100 && hurried.pending() > 0; i++) await new Promise((r) => setTimeout(r, 50))
        expect(hurried.pending()).toBe(0)
      } finally {
        await hurried.close()
      }
    } finally {
      await pool.close()
    }
  }, 60_000)
})

describe("limits before work", () => {
  it("an image over the pixel limit is refused before it is decoded; a PDF with too many pages to OCR before they are all rendered", async () => {
    const bmp = new Uint8Array(54)
    bmp.set([0x42, 0x4d])
    const header = new DataView(bmp.buffer)
    header.setInt32(18, 10_000, true)
    header.setInt32(22, -10_000, true)
    await expect(openImage(bmp, "bmp")).rejects.toBeInstanceOf(LimitExceeded)
    const png = await sharp({ create: { width: 8_001, height: 8_001, channels: 3, background: "white" } })
      .png({ compressionLevel: 1 })
      .toBuffer()
    await expect(openImage(png, "png")).rejects.toMatchObject({ limit: "pixels", maximum: MAX_IMAGE_PIXELS })
    const pdf = new mupdf.PDFDocument()
    for (let i = 0; i <= MAX_SCANNED_PAGES; i++) pdf.insertPage(-1, pdf.addPage([0, 0, 20, 20], 0, pdf.newDictionary(), ""))
    const bytes = pdf.saveToBuffer("compress").asUint8Array().slice()
    await expect(extractPdf(bytes)).rejects.toMatchObject({ limit: "scanned_pages" })
    await stopDecoders()
  }, 60_000)
})
