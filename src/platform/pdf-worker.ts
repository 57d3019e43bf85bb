/**
 * `renderPdf` off the request loop, in the PDF pool's worker (pdf-thread.ts). Plain erasable
 * TypeScript that imports only pdf.ts, the pool's `serve` and node built-ins, so Node runs it as
 * is in development and as compiled JS. pdfkit lays text out synchronously (about half a
 * millisecond per table row), so a report of tens of thousands of rows would otherwise stall
 * every other request for as many seconds.
 *
 * A job may first receive table rows in batches (`rows`, grouped by a key) while its caller pages
 * through the database; `render` then replaces each `collected` block of the model with one heading
 * and table per key (keys sorted), so the rows live in this thread's heap, never in the gateway's.
 */
const sibling = (path: string) => new URL(import.meta.url.endsWith(".ts") ? `${path}.ts` : `${path}.js`, import.meta.url).href

const pdf: typeof import("./pdf.js") = await import(sibling("./pdf"))
const { serve }: typeof import("./workers/serve.js") = await import(sibling("./workers/serve"))

type Rows = Array<Array<string>>
interface Collected {
  kind: "collected"
  columns: Array<string>
  /** Heading per group: `{key}` and `{n}` are replaced; `one` when the group has one row. */
  heading: { one: string; many: string }
}
type Message = { op: "rows"; groups: Array<[string, Rows]> } | { op: "render"; model: { blocks: Array<{ kind: string }> } } | { op: "cancel" }

const expand = (blocks: Array<{ kind: string }>, groups: Map<string, Rows>) =>
  blocks.flatMap((block) => {
    if (block.kind !== "collected") return [block]
    const { columns, heading } = block as Collected
    return [...groups.keys()]
      .sort()
      .flatMap((key) => {
        const rows = groups.get(key)!
        const text = (rows.length === 1 ? heading.one : heading.many).replace("{key}", key).replace("{n}", String(rows.length))
        return [
          { kind: "heading", text },
          { kind: "table", columns, rows }
        ]
      })
  })

serve(
  {
    // Rows come in until `render` (the bytes) or `cancel` (nothing).
    "pdf.document": async (_payload, _ask, receive) => {
      const groups = new Map<string, Rows>()
      for (;;) {
        const message = (await receive()) as Message
        if (message.op === "cancel") return null
        if (message.op === "render") return pdf.renderPdf({ ...message.model, blocks: expand(message.model.blocks, groups) } as never)
        for (const [key, rows] of message.groups) {
          const kept = groups.get(key)
          if (kept === undefined) groups.set(key, rows)
          else for (const row of rows) kept.push(row)
        }
      }
    }
  },
  { otherErrors: "failed", keepOutput: true }
)
