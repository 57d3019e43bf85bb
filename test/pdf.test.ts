import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type PdfDocumentModel, renderPdf } from "../src/platform/pdf.js"
import { pdfText, pdftotextPath } from "./support/pdf-text.js"

const model = (title: string, createdAt: Date): PdfDocumentModel => ({
  title,
  subtitle: "Generated for the tests",
  createdAt,
  documentId: "doc-1",
  blocks: [
    { kind: "heading", text: "Incident" },
    { kind: "fields", rows: [["Severity", "high"], ["Major", true], ["Clients", 120_000], ["Root cause", null]] },
    { kind: "paragraph", text: "A long paragraph ".repeat(60) },
    { kind: "table", columns: ["Receipt", "Status"], rows: Array.from({ length: 80 }, (_, i) => [`rct_${i}`, "notarized"]) },
    { kind: "code", text: `sha256:${"ab".repeat(32)}` }
  ]
})

describe("renderPdf", () => {
  it("gives the same bytes for the same model, and different bytes for another date", async () => {
    const at = new Date("2026-04-01T00:00:00Z")
    const first = await renderPdf(model("Report", at))
    const second = await renderPdf(model("Report", at))
    expect(Buffer.from(first).equals(Buffer.from(second))).toBe(true)
    expect(Buffer.from(first).subarray(0, 5).toString()).toBe("%PDF-")
    const later = await renderPdf(model("Report", new Date("2026-04-02T00:00:00Z")))
    expect(Buffer.from(later).equals(Buffer.from(first))).toBe(false)
  })

  it("is deterministic for any title and text", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 60 }), fc.string({ maxLength: 300 }), async (title, text) => {
        const doc: PdfDocumentModel = { title, createdAt: new Date(0), documentId: "x", blocks: [{ kind: "paragraph", text }] }
        const [a, b] = await Promise.all([renderPdf(doc), renderPdf(doc)])
        expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true)
      }),
      { numRuns: 25 }
    )
  })

  it.skipIf(pdftotextPath === undefined)("is readable by pdftotext, tables spanning pages included", async () => {
    const text = pdfText(await renderPdf(model("Quarterly record-keeping file", new Date("2026-04-01T00:00:00Z"))))
    expect(text).toContain("Quarterly record-keeping file")
    expect(text).toContain("Severity")
    expect(text).toContain("rct_79")
    expect(text.replace(/\s/g, "")).toContain(`sha256:${"ab".repeat(32)}`)
  })
})
