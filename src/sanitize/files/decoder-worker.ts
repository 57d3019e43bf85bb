/**
 * The decoder worker thread (worker-pool.ts starts a few): PDF work through mupdf (pdf-ops.ts),
 * image work through sharp (image-ops.ts), one job at a time. Its WebAssembly memory has a ceiling
 * (wasm-cap.ts) and the worker asks to be replaced once that memory grew large. Plain erasable
 * TypeScript importing only packages and its siblings, so Node runs it as it is from the sources
 * and compiled in `dist/`; each part is loaded on first use (a PNG-only worker never loads mupdf).
 */
const sibling = (name: string) => new URL(import.meta.url.endsWith(".ts") ? `./${name}.ts` : `./${name}.js`, import.meta.url).href

// Below the request loop in the scheduler's eyes (nice.ts).
const nice: typeof import("./nice.js") = await import(sibling("nice"))
nice.lowerThreadPriority()

const budgets: typeof import("./budgets.js") = await import(sibling("budgets"))
const wasm: typeof import("./wasm-cap.js") = await import(sibling("wasm-cap"))
// Before mupdf creates its heap.
wasm.capWasmMemory(budgets.WASM_MEMORY_BYTES)
const { serve }: typeof import("./worker-serve.js") = await import(sibling("worker-serve"))

const pdf = (): Promise<typeof import("./pdf-ops.js")> => import(sibling("pdf-ops"))
const images = (): Promise<typeof import("./image-ops.js")> => import(sibling("image-ops"))

serve(
  {
    "pdf.extract": async ({ bytes }) => (await pdf()).extract(bytes),
    "pdf.render": async ({ bytes, index, scale }) => (await pdf()).render(bytes, index, scale),
    "pdf.redact": async ({ bytes, edits }) => (await pdf()).redact(bytes, edits),
    "image.read": async ({ bytes, type }) => (await images()).read(bytes, type),
    "image.paint": async ({ bytes, type, boxes }) => (await images()).paint(bytes, type, boxes)
  },
  {
    // mupdf throws plain errors for files it cannot read.
    otherErrors: "corrupt",
    retireAboveHeapBytes: budgets.WORKER_RECYCLE_HEAP_BYTES,
    afterJob: (failed) => {
      const refused = wasm.takeRefusal()
      const maximum = budgets.WASM_MEMORY_BYTES / 1024 / 1024
      return { retire: refused || wasm.largestMemory() > budgets.WASM_RECYCLE_BYTES, failure: failed && refused ? { kind: "limit", limit: "decoder_memory_mb", maximum } : undefined }
    }
  }
)
