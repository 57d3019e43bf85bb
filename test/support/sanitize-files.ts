/** Files for the file-sanitize tests, generated here: text rendered into images, and PDFs built with mupdf. */
import * as mupdf from "mupdf"
import sharp from "sharp"

/** Black text on white, one line per entry, large enough for OCR to read reliably. */
export const textImage = async (lines: ReadonlyArray<string>, width = 1000): Promise<Buffer> => {
  const xmlEscape = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;")
  const rows = lines.map((line, i) => `<text x="30" y="${70 + i * 70}" font-family="DejaVu Sans" font-size="34" fill="black">${xmlEscape(line)}</text>`).join("")
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${60 + lines.length * 70}"><rect width="100%" height="100%" fill="white"/>${rows}</svg>`
  return sharp(Buffer.from(svg)).png().toBuffer()
}

/** A PDF: one page with a real text layer per entry of `textPages`, then one page that is only an image (a scan). */
export const makePdf = (textPages: ReadonlyArray<ReadonlyArray<string>>, scan?: Uint8Array): Uint8Array => {
  const pdf = new mupdf.PDFDocument()
  const font = pdf.addSimpleFont(new mupdf.Font("Helvetica"))
  for (const lines of textPages) {
    const resources = pdf.newDictionary()
    const fonts = pdf.newDictionary()
    fonts.put("F1", font)
    resources.put("Font", fonts)
    const pdfEscape = (text: string) => text.replace(/[\\()]/g, (c) => `\\${c}`)
    const content = lines.map((line, i) => `BT /F1 14 Tf 72 ${740 - i * 24} Td (${pdfEscape(line)}) Tj ET`).join("\n")
    pdf.insertPage(-1, pdf.addPage([0, 0, 612, 792], 0, resources, content))
  }
  if (scan !== undefined) {
    const image = pdf.addImage(new mupdf.Image(scan))
    const resources = pdf.newDictionary()
    const xobjects = pdf.newDictionary()
    xobjects.put("Im0", image)
    resources.put("XObject", xobjects)
    pdf.insertPage(-1, pdf.addPage([0, 0, 612, 792], 0, resources, "q 612 0 0 300 0 492 cm /Im0 Do Q"))
  }
  return pdf.saveToBuffer("compress").asUint8Array().slice()
}

/** Every page's text layer, as mupdf extracts it. */
export const pdfText = (bytes: Uint8Array): string[] => {
  const document = mupdf.Document.openDocument(bytes, "application/pdf")
  const pages: string[] = []
  for (let i = 0; i < document.countPages(); i++) pages.push(document.loadPage(i).toStructuredText("preserve-whitespace").asText())
  return pages
}

/** Page `index` rendered to PNG (to OCR what a reader would see). */
export const renderPage = (bytes: Uint8Array, index: number, scale = 2): Uint8Array => {
  const document = mupdf.Document.openDocument(bytes, "application/pdf")
  return document.loadPage(index).toPixmap(mupdf.Matrix.scale(scale, scale), mupdf.ColorSpace.DeviceRGB, false).asPNG().slice()
}
