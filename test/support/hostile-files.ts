/**
 * Crafted files that declare far more than they carry: decompression bombs, huge declared
 * dimensions, many pages, deep nesting, lying length fields. Built byte by byte here (no decoder
 * runs), so making them costs the test almost nothing.
 */
import { crc32, deflateRawSync, constants as zlib } from "node:zlib"
import {
  MAX_FILE_PIXELS,
  MAX_IMAGE_PIXELS,
  MAX_INFLATED_BYTES,
  MAX_NESTING_DEPTH,
  MAX_PAGE_CHARACTERS,
  MAX_PAGES,
  MAX_TEXT_CHARACTERS,
  WASM_MEMORY_BYTES
} from "../../src/sanitize/files/budgets.js"
import type { Limit } from "../../src/sanitize/files/errors.js"

const ascii = (text: string) => Buffer.from(text, "latin1")

/**
 * A deflate stream that inflates to `size` zero bytes while staying about 1/1000 of it: one
 * compressed 1 MiB block of zeros (dictionary reset after it, so every copy decodes alike)
 * repeated, then the final block. `zlib` wraps it with the zlib header and the Adler-32 of that
 * many zeros (a = 1, b = n mod 65521); raw is the bare deflate stream.
 */
export const zeroDeflate = (size: number, wrapping: "zlib" | "raw" = "zlib"): Buffer => {
  const mib = 1 << 20
  const block = deflateRawSync(Buffer.alloc(mib), { level: 9, finishFlush: zlib.Z_FULL_FLUSH })
  const tail = deflateRawSync(Buffer.alloc(size % mib), { level: 9 })
  const body = [...Array.from({ length: Math.floor(size / mib) }, () => block), tail]
  if (wrapping === "raw") return Buffer.concat(body)
  const adler = Buffer.alloc(4)
  adler.writeUInt32BE((((size % 65521) << 16) | 1) >>> 0)
  return Buffer.concat([Buffer.from([0x78, 0xda]), ...body, adler])
}

// ---------------------------------------------------------------- BMP

/** BITMAPFILEHEADER + BITMAPINFOHEADER + a grey palette for 8-bit images, then `data`. */
const bmp = (width: number, height: number, bits: 8 | 24, compression: 0 | 1, data: Uint8Array): Buffer => {
  const palette = bits === 8 ? Buffer.alloc(1024) : Buffer.alloc(0)
  for (let i = 0; i < palette.length / 4; i++) palette.fill(i, i * 4, i * 4 + 3)
  const header = Buffer.alloc(54)
  header.write("BM", 0, "latin1")
  header.writeUInt32LE(54 + palette.length + data.length, 2)
  header.writeUInt32LE(54 + palette.length, 10)
  header.writeUInt32LE(40, 14)
  header.writeInt32LE(width, 18)
  header.writeInt32LE(height, 22)
  header.writeUInt16LE(1, 26)
  header.writeUInt16LE(bits, 28)
  header.writeUInt32LE(compression, 30)
  header.writeUInt32LE(data.length, 34)
  header.writeUInt32LE(bits === 8 ? 256 : 0, 46)
  return Buffer.concat([header, palette, data])
}

/** RLE8 bitmaps of `size`² that hold four bytes of pixel data: end of bitmap, a delta past everything, one run and stop. */
export const rleBmpBombs = (size = 4000): Buffer[] => [
  bmp(size, size, 8, 1, new Uint8Array([0, 0, 0, 1])),
  bmp(size, size, 8, 1, new Uint8Array([0, 2, 255, 255])),
  bmp(size, size, 8, 1, new Uint8Array([255, 7, 0, 1]))
]

/** An honest uncompressed 8-bit BMP of `size`² (16 MB at 4000). */
export const plainBmp = (size = 4000): Buffer => bmp(size, size, 8, 0, new Uint8Array(size * size))

// ---------------------------------------------------------------- PNG

const chunk = (type: string, data: Uint8Array) => {
  const head = Buffer.alloc(8)
  head.writeUInt32BE(data.length, 0)
  head.write(type, 4, "latin1")
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(Buffer.concat([ascii(type), data])))
  return Buffer.concat([head, data, crc])
}

/** The PNG signature and an IHDR chunk declaring width × height at `depth` bits in colour type `colour` (2: RGB). */
export const pngStart = (width: number, height: number, depth = 8, colour = 2): Buffer => {
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr.set([depth, colour, 0, 0, 0], 8)
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", ihdr)])
}

/** An RGB PNG of width × height, all black, whose IDAT is a zero bomb (7999² ≈ 190 KB). */
export const blackPng = (width: number, height: number): Buffer =>
  // Each row: filter byte 0 then 3 zero bytes per pixel.
  Buffer.concat([pngStart(width, height), chunk("IDAT", zeroDeflate(height * (1 + width * 3))), chunk("IEND", new Uint8Array(0))])

// ---------------------------------------------------------------- JPEG, GIF, TIFF headers that lie

/** SOI, a baseline SOF0 declaring width × height × 3, EOI: no scan data at all. */
export const hugeJpeg = (width: number, height: number): Buffer => {
  const sof = Buffer.from([0xff, 0xc0, 0, 17, 8, height >> 8, height & 255, width >> 8, width & 255, 3, 1, 0x11, 0, 2, 0x11, 1, 3, 0x11, 1])
  return Buffer.concat([Buffer.from([0xff, 0xd8]), sof, Buffer.from([0xff, 0xd9])])
}

/** A GIF whose screen and first frame declare width × height, with an empty LZW stream. */
export const hugeGif = (width: number, height: number): Buffer => {
  const screen = Buffer.alloc(7)
  screen.writeUInt16LE(width, 0)
  screen.writeUInt16LE(height, 2)
  const frame = Buffer.alloc(10)
  frame[0] = 0x2c
  frame.writeUInt16LE(width, 5)
  frame.writeUInt16LE(height, 7)
  return Buffer.concat([ascii("GIF89a"), screen, frame, Buffer.from([2, 2, 0x4c, 0x01, 0, 0x3b])])
}

/** A little-endian TIFF with one IFD declaring width × height, 8-bit grey, one strip of 16 bytes. */
export const hugeTiff = (width: number, height: number): Buffer => {
  const entries: Array<[number, number, number]> = [
    [256, 4, width],
    [257, 4, height],
    [258, 3, 8],
    [259, 3, 1],
    [262, 3, 1],
    [273, 4, 8 + 2 + 9 * 12 + 4],
    [277, 3, 1],
    [278, 4, height],
    [279, 4, 16]
  ]
  const ifd = Buffer.alloc(2 + entries.length * 12 + 4)
  ifd.writeUInt16LE(entries.length, 0)
  entries.forEach(([tag, type, value], i) => {
    ifd.writeUInt16LE(tag, 2 + i * 12)
    ifd.writeUInt16LE(type, 4 + i * 12)
    ifd.writeUInt32LE(1, 6 + i * 12)
    if (type === 3) ifd.writeUInt16LE(value, 10 + i * 12)
    else ifd.writeUInt32LE(value, 10 + i * 12)
  })
  return Buffer.concat([Buffer.from([0x49, 0x49, 0x2a, 0, 8, 0, 0, 0]), ifd, Buffer.alloc(16)])
}

// ---------------------------------------------------------------- PDF

/** A PDF from object bodies (object i + 1 is `objects[i]`; object 1 must be the catalog), with its xref table. */
export const rawPdf = (objects: ReadonlyArray<string | Buffer>): Buffer => {
  const parts: Buffer[] = [ascii("%PDF-1.7\n")]
  let length = parts[0]!.length
  const offsets: number[] = []
  objects.forEach((body, i) => {
    offsets.push(length)
    const part = Buffer.concat([ascii(`${i + 1} 0 obj\n`), typeof body === "string" ? ascii(body) : body, ascii("\nendobj\n")])
    parts.push(part)
    length += part.length
  })
  const xref = [`xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`, ...offsets.map((offset) => `${String(offset).padStart(10, "0")} 00000 n \n`)].join("")
  parts.push(ascii(`${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${length}\n%%EOF\n`))
  return Buffer.concat(parts)
}

const stream = (dictionary: string, data: Buffer) => Buffer.concat([ascii(`<< ${dictionary} /Length ${data.length} >>\nstream\n`), data, ascii("\nendstream")])

/** `count` pages sharing one content stream of `lines` lines of text: tiny on disk, a lot of text once extracted. */
export const manyPagesPdf = (count: number, lines = 40): Buffer => {
  const text = Array.from({ length: lines }, (_, i) => `BT /F1 9 Tf 36 ${760 - i * 18} Td (Line ${i} of a page that says the same thing on every page of this file) Tj ET`).join("\n")
  const pages = Array.from({ length: count }, () => "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R /Resources << /Font << /F1 4 0 R >> >> >>")
  const kids = pages.map((_, i) => `${i + 5} 0 R`).join(" ")
  return rawPdf(["<< /Type /Catalog /Pages 2 0 R >>", `<< /Type /Pages /Kids [${kids}] /Count ${count} >>`, stream("", ascii(text)), "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>", ...pages])
}

/** One page (no text) showing a grey image XObject that declares width × height, its data a zero bomb. */
export const hugeImagePdf = (width: number, height: number): Buffer =>
  rawPdf([
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /XObject << /Im0 5 0 R >> >> >>",
    stream("", ascii("q 612 0 0 792 0 0 cm /Im0 Do Q")),
    stream(`/Type /XObject /Subtype /Image /Width ${width} /Height ${height} /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode`, zeroDeflate(width * height))
  ])

/** One page (no text) whose content stream holds an inline grey image declaring width × height, its data a zero bomb. */
export const inlineImagePdf = (width: number, height: number): Buffer =>
  rawPdf([
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
    stream("", Buffer.concat([ascii(`q 612 0 0 792 0 0 cm BI /W ${width} /H ${height} /CS /G /BPC 8 /F /Fl ID `), zeroDeflate(width * height), ascii("\nEI Q")]))
  ])

/** `count` blank pages of `points` × `points`: each alone renders within the pixel budget, together they pass the file's. */
export const bigBlankPagesPdf = (count: number, points = 14_400): Buffer => {
  const pages = Array.from({ length: count }, () => `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${points} ${points}] >>`)
  return rawPdf(["<< /Type /Catalog /Pages 2 0 R >>", `<< /Type /Pages /Kids [${pages.map((_, i) => `${i + 3} 0 R`).join(" ")}] /Count ${count} >>`, ...pages])
}

/** One page showing `lines` lines of text. */
export const longPagePdf = (lines: number): Buffer =>
  rawPdf([
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    stream("", ascii(Array.from({ length: lines }, (_, i) => `BT /F1 2 Tf 10 ${780 - (i % 380) * 2} Td (A long line ${i} of a page that holds far more text than any page should) Tj ET`).join("\n"))),
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
  ])

/** One page drawing form XObject 1, which draws form 2, ... down to `depth`; the last one draws the first again (a cycle). */
export const nestedFormsPdf = (depth: number): Buffer => {
  const form = (i: number) => {
    const next = i === depth ? 5 : i + 5
    return stream(`/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /XObject << /Fm0 ${next} 0 R >> >>`, ascii("q 0.99 0 0 0.99 1 1 cm /Fm0 Do Q"))
  }
  return rawPdf([
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /XObject << /Fm0 5 0 R >> >> >>",
    stream("", ascii("/Fm0 Do")),
    ...Array.from({ length: depth }, (_, i) => form(i + 1))
  ])
}

/** One page whose dictionary holds an array nested `depth` deep. */
export const nestedArrayPdf = (depth: number): Buffer =>
  rawPdf([
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Deep ${"[".repeat(depth)}${"]".repeat(depth)} >>`,
    stream("", ascii("BT /F1 12 Tf 72 720 Td (nested) Tj ET"))
  ])

// ---------------------------------------------------------------- DICOM

/** One explicit-VR little-endian element; `length` defaults to the value's (a lie when given). */
export const dicomElement = (group: number, element: number, vr: string, value: Uint8Array, length = value.length): Buffer => {
  const long = ["OB", "OW", "OF", "SQ", "UT", "UN", "UC", "UR", "OD", "OL", "OV"].includes(vr)
  const head = Buffer.alloc(long ? 12 : 8)
  head.writeUInt16LE(group, 0)
  head.writeUInt16LE(element, 2)
  head.write(vr, 4, "latin1")
  if (long) head.writeUInt32LE(length >>> 0, 8)
  else head.writeUInt16LE(length, 6)
  return Buffer.concat([head, value])
}

const uid = (text: string) => ascii(text.length % 2 === 0 ? text : `${text}\0`)
const us = (value: number) => {
  const bytes = Buffer.alloc(2)
  bytes.writeUInt16LE(value)
  return bytes
}

/** Preamble, DICM and a file meta group naming `syntax` (explicit VR little endian by default), then `dataset` as given. */
export const dicomFile = (dataset: ReadonlyArray<Buffer>, syntax = "1.2.840.10008.1.2.1"): Buffer => {
  const meta = Buffer.concat([
    dicomElement(2, 1, "OB", Buffer.from([0, 1])),
    dicomElement(2, 2, "UI", uid("1.2.840.10008.5.1.4.1.1.7")),
    dicomElement(2, 3, "UI", uid("1.2.826.0.1.3680043.9999.5")),
    dicomElement(2, 0x10, "UI", uid(syntax))
  ])
  const groupLength = Buffer.alloc(4)
  groupLength.writeUInt32LE(meta.length)
  return Buffer.concat([Buffer.alloc(128), ascii("DICM"), dicomElement(2, 0, "UL", groupLength), meta, ...dataset])
}

/** 8-bit MONOCHROME2 image attributes for rows × columns (× frames). */
export const dicomImage = (rows: number, columns: number, frames = 1): Buffer[] => [
  dicomElement(0x28, 2, "US", us(1)),
  dicomElement(0x28, 4, "CS", ascii("MONOCHROME2 ")),
  ...(frames > 1 ? [dicomElement(0x28, 8, "IS", ascii(String(frames).padEnd(String(frames).length + (String(frames).length % 2), " ")))] : []),
  dicomElement(0x28, 0x10, "US", us(rows)),
  dicomElement(0x28, 0x11, "US", us(columns)),
  dicomElement(0x28, 0x100, "US", us(8)),
  dicomElement(0x28, 0x101, "US", us(8)),
  dicomElement(0x28, 0x102, "US", us(7)),
  dicomElement(0x28, 0x103, "US", us(0))
]

/** Pixel data whose length field says 0xFFFFFFF0 bytes while 16 follow. */
export const lyingPixelDicom = (): Buffer => dicomFile([...dicomImage(64, 64), dicomElement(0x7fe0, 0x10, "OB", Buffer.alloc(16), 0xfffffff0)])

/** A patient name whose length field says more than the file holds. */
export const lyingNameDicom = (): Buffer => dicomFile([dicomElement(0x10, 0x10, "PN", ascii("DOE^JOHN"), 0xfff0)])

/** Sequences of undefined length nested `depth` deep (each item holds the next sequence). */
export const nestedSequenceDicom = (depth: number): Buffer => {
  const sequenceHead = (group: number, element: number) => {
    const head = Buffer.alloc(12)
    head.writeUInt16LE(group, 0)
    head.writeUInt16LE(element, 2)
    head.write("SQ", 4, "latin1")
    head.writeUInt32LE(0xffffffff, 8)
    return head
  }
  const delimiter = (element: number, value = 0) => {
    const bytes = Buffer.alloc(8)
    bytes.writeUInt16LE(0xfffe, 0)
    bytes.writeUInt16LE(element, 2)
    bytes.writeUInt32LE(value, 4)
    return bytes
  }
  // (0008,1115) Referenced Series Sequence, item start (FFFE,E000) of undefined length.
  const open = Buffer.concat([sequenceHead(0x0008, 0x1115), delimiter(0xe000, 0xffffffff)])
  // Item delimitation (FFFE,E00D), sequence delimitation (FFFE,E0DD).
  const close = Buffer.concat([delimiter(0xe00d), delimiter(0xe0dd)])
  return dicomFile([Buffer.concat(Array.from({ length: depth }, () => open)), Buffer.concat(Array.from({ length: depth }, () => close))])
}

/** A frame of pixel data honestly as long as rows × columns say (zeros), with its image attributes. */
export const bigFrameDicom = (rows: number, columns: number): Buffer => dicomFile([...dicomImage(rows, columns), dicomElement(0x7fe0, 0x10, "OB", Buffer.alloc(rows * columns + ((rows * columns) % 2)))])

/** Deflated explicit VR little endian whose dataset inflates to `size` zero bytes. */
export const deflateBombDicom = (size: number): Buffer => dicomFile([zeroDeflate(size, "raw")], "1.2.840.10008.1.2.1.99")

// ---------------------------------------------------------------- the list the tests and the benchmark send

export interface HostileUpload {
  readonly name: string
  readonly file: () => Uint8Array
  readonly fields?: Record<string, string>
  /** The refusal it must get: 422 with this code, and for FILE_TOO_COMPLEX the budget it passed. */
  readonly refusal: { readonly code: "FILE_TOO_COMPLEX"; readonly limit: Limit; readonly maximum: number } | { readonly code: "CORRUPT_FILE" }
}

const tooComplex = (limit: Limit, maximum: number) => ({ code: "FILE_TOO_COMPLEX" as const, limit, maximum })
const corrupt = { code: "CORRUPT_FILE" as const }
const MB = 1024 * 1024

export const hostileUploads = (): HostileUpload[] => [
  ...rleBmpBombs().map((bomb, i) => ({ name: `a ${bomb.length}-byte RLE8 BMP declaring 4000×4000 (variant ${i + 1})`, file: () => bomb, refusal: tooComplex("pixels", MAX_IMAGE_PIXELS) })),
  { name: "a plain 16 MB 4000×4000 BMP", file: () => plainBmp(4000), refusal: tooComplex("pixels", MAX_IMAGE_PIXELS) },
  { name: "a 7999×7999 PNG whose IDAT is a zero bomb", file: () => blackPng(7999, 7999), refusal: tooComplex("pixels", MAX_IMAGE_PIXELS) },
  { name: "a JPEG frame header declaring 65000×65000 and no scan", file: () => hugeJpeg(65_000, 65_000), refusal: tooComplex("pixels", MAX_IMAGE_PIXELS) },
  { name: "a GIF declaring 65000×65000", file: () => hugeGif(65_000, 65_000), refusal: tooComplex("pixels", MAX_IMAGE_PIXELS) },
  { name: "a TIFF declaring 100000×100000", file: () => hugeTiff(100_000, 100_000), refusal: tooComplex("pixels", MAX_IMAGE_PIXELS) },
  { name: "a PDF of 3,000 identical text pages", file: () => manyPagesPdf(3000), refusal: tooComplex("pages", MAX_PAGES) },
  { name: "a PDF within the page budget whose pages hold too much text together", file: () => manyPagesPdf(1200), refusal: tooComplex("text_characters", MAX_TEXT_CHARACTERS) },
  { name: "a one-page PDF holding too much text on that page", file: () => longPagePdf(2000), refusal: tooComplex("page_characters", MAX_PAGE_CHARACTERS) },
  { name: "a one-page PDF whose image XObject declares 20000×20000 (a 400 MB zero bomb)", file: () => hugeImagePdf(20_000, 20_000), refusal: tooComplex("pixels", MAX_IMAGE_PIXELS) },
  {
    name: "a one-page PDF whose inline image declares 20000×20000 (mupdf's heap reaches its ceiling)",
    file: () => inlineImagePdf(20_000, 20_000),
    refusal: tooComplex("decoder_memory_mb", WASM_MEMORY_BYTES / MB)
  },
  { name: "a PDF of 20 blank pages of 200×200 inches (each renders within budget, together not)", file: () => bigBlankPagesPdf(20), refusal: tooComplex("file_pixels", MAX_FILE_PIXELS) },
  { name: "a PDF whose form XObjects nest 3,000 deep and cycle", file: () => nestedFormsPdf(3000), refusal: tooComplex("nesting_depth", MAX_NESTING_DEPTH) },
  { name: "a PDF whose page holds arrays nested 100,000 deep", file: () => nestedArrayPdf(100_000), refusal: tooComplex("nesting_depth", MAX_NESTING_DEPTH) },
  { name: `a ${lyingPixelDicom().length}-byte DICOM whose pixel data claims 0xFFFFFFF0 bytes`, file: () => lyingPixelDicom(), refusal: corrupt },
  { name: "a DICOM whose patient name claims more bytes than the file holds", file: () => lyingNameDicom(), refusal: corrupt },
  { name: "a DICOM whose sequences nest 20,000 deep", file: () => nestedSequenceDicom(20_000), refusal: tooComplex("nesting_depth", MAX_NESTING_DEPTH) },
  { name: "a deflated DICOM whose dataset inflates past the ceiling", file: () => deflateBombDicom(MAX_INFLATED_BYTES + 16 * MB), refusal: tooComplex("decoder_memory_mb", MAX_INFLATED_BYTES / MB) },
  {
    name: "a DICOM frame of 4000×4000 to read for burned-in text",
    file: () => bigFrameDicom(4000, 4000),
    fields: { include_pixel_redaction: "true" },
    refusal: tooComplex("pixels", MAX_IMAGE_PIXELS)
  }
]
