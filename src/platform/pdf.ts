/**
 * One home for the PDFs the gateway prints (explanations, compliance reports, DORA incidents).
 *
 * Deterministic: the same document model gives the same bytes. pdfkit derives the trailer's file id
 * from the info dictionary, so pinning `CreationDate`/`ModDate` to a value from the data (never the
 * clock) and using only the built-in Helvetica fonts (no subsetting) leaves nothing random.
 *
 * pdfkit (with fontkit, its font tables and brotli, ~30 MB) loads at the first document, not at start.
 * A plain `import()` (the module cache loads it once), not lazy.ts: pdf-worker.ts runs this file
 * straight from its TypeScript source, where a relative `./lazy.js` does not resolve.
 */

export type PdfBlock =
  | { readonly kind: "heading"; readonly text: string }
  | { readonly kind: "paragraph"; readonly text: string }
  /** Label/value lines; a null or empty value prints as "—". */
  | { readonly kind: "fields"; readonly rows: ReadonlyArray<readonly [string, string | number | boolean | null]> }
  /** A simple table: a header row and data rows, columns of equal width. */
  | { readonly kind: "table"; readonly columns: ReadonlyArray<string>; readonly rows: ReadonlyArray<ReadonlyArray<string>> }
  /** Monospaced text (hashes, signatures) that may break anywhere. */
  | { readonly kind: "code"; readonly text: string }

export interface PdfDocumentModel {
  readonly title: string
  readonly subtitle?: string
  /** Printed in the info dictionary and used as the file id seed: take it from the data, not the clock. */
  readonly createdAt: Date
  /** Goes into the info dictionary (Subject) so two documents with the same title differ in id. */
  readonly documentId: string
  readonly blocks: ReadonlyArray<PdfBlock>
}

const margin = 50
const dash = "—"

const valueText = (value: string | number | boolean | null): string =>
  value === null || value === "" ? dash : typeof value === "boolean" ? (value ? "yes" : "no") : String(value)

/** Renders the model to PDF bytes. */
export const renderPdf = async (model: PdfDocumentModel): Promise<Uint8Array> => {
  const { default: PDFDocument } = await import("pdfkit")
  return new Promise((resolve, reject) => {
    const doc = new PDFDocument({
      size: "A4",
      margin,
      compress: true,
      info: {
        Title: model.title,
        Subject: model.documentId,
        Producer: "agent-accountability-gateway",
        Creator: "agent-accountability-gateway",
        CreationDate: model.createdAt,
        ModDate: model.createdAt
      }
    })
    const chunks: Array<Buffer> = []
    doc.on("data", (chunk: Buffer) => chunks.push(chunk))
    doc.on("end", () => resolve(new Uint8Array(Buffer.concat(chunks))))
    doc.on("error", reject)
    const width = doc.page.width - margin * 2

    doc.font("Helvetica-Bold").fontSize(18).text(model.title, { width })
    if (model.subtitle !== undefined) doc.moveDown(0.3).font("Helvetica").fontSize(11).fillColor("#444").text(model.subtitle, { width })
    doc.fillColor("black").moveDown(1)

    for (const block of model.blocks) {
      switch (block.kind) {
        case "heading":
          doc.moveDown(0.6).font("Helvetica-Bold").fontSize(13).text(block.text, { width }).moveDown(0.3)
          break
        case "paragraph":
          doc.font("Helvetica").fontSize(10).text(block.text, { width }).moveDown(0.4)
          break
        case "fields":
          for (const [label, value] of block.rows) {
            doc.font("Helvetica-Bold").fontSize(10).text(`${label}: `, { continued: true, width })
            doc.font("Helvetica").text(valueText(value), { width })
          }
          doc.moveDown(0.4)
          break
        case "table": {
          const columnWidth = width / Math.max(1, block.columns.length)
          const row = (cells: ReadonlyArray<string>, bold: boolean) => {
            const top = doc.y
            let bottom = top
            cells.forEach((cell, index) => {
              doc.font(bold ? "Helvetica-Bold" : "Helvetica").fontSize(9)
              doc.text(cell === "" ? dash : cell, margin + index * columnWidth, top, { width: columnWidth - 6 })
              bottom = Math.max(bottom, doc.y)
            })
            doc.x = margin
            doc.y = bottom + 2
            if (doc.y > doc.page.height - margin * 2) doc.addPage()
          }
          row(block.columns, true)
          for (const cells of block.rows) row(cells, false)
          doc.moveDown(0.4)
          break
        }
        case "code":
          doc.font("Courier").fontSize(8).text(block.text, { width, lineBreak: true }).moveDown(0.4)
          break
      }
    }
    doc.end()
  })
}
