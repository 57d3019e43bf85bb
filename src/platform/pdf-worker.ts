/**
 * `renderPdf` off the request loop (a `node:worker_threads` worker). Plain erasable TypeScript that
 * imports only pdf.ts and node built-ins, so Node runs it as is in development and as compiled JS.
 * pdfkit lays text out synchronously (about half a millisecond per table row), so a report of tens
 * of thousands of rows would otherwise stall every other request for as many seconds.
 *
 * A job may first receive table rows in batches (`rows`, grouped by a key) while its caller pages
 * through the database; `render` then replaces each `collected` block of the model with one heading
 * and table per key (keys sorted), so the rows live in this thread's heap, never in the gateway's.
 */
import { parentPort } from "node:worker_threads"

const pdf = await import(new URL(import.meta.url.endsWith(".ts") ? "./pdf.ts" : "./pdf.js", import.meta.url).href)

type Rows = Array<Array<string>>
interface Collected {
  kind: "collected"
  columns: Array<string>
  /** Heading per group: `{key}` and `{n}` are replaced; `one` when the group has one row. */
  heading: { one: string; many: string }
}
type Message =
  | { op: "rows"; id: number; groups: Array<[string, Rows]> }
  | { op: "render"; id: number; model: { blocks: Array<{ kind: string }> } }
  | { op: "cancel"; id: number }

const jobs = new Map<number, Map<string, Rows>>()

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

parentPort?.on("message", async (message: Message) => {
  if (message.op === "cancel") {
    jobs.delete(message.id)
    return
  }
  if (message.op === "rows") {
    const groups = jobs.get(message.id) ?? new Map<string, Rows>()
    jobs.set(message.id, groups)
    for (const [key, rows] of message.groups) {
      const kept = groups.get(key)
      if (kept === undefined) groups.set(key, rows)
      else for (const row of rows) kept.push(row)
    }
    return
  }
  const groups = jobs.get(message.id) ?? new Map<string, Rows>()
  jobs.delete(message.id)
  try {
    const bytes: Uint8Array = await pdf.renderPdf({ ...message.model, blocks: expand(message.model.blocks, groups) })
    parentPort?.postMessage({ id: message.id, ok: true, bytes }, [bytes.buffer as ArrayBuffer])
  } catch (error) {
    parentPort?.postMessage({ id: message.id, ok: false, error: error instanceof Error ? error.message : String(error) })
  }
})
