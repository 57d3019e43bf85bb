/**
 * `sanitizeDicom` off the request loop (dcmjs parses and writes synchronously: a 40 MB study
 * holds a thread for a third of a second), one file at a time (worker-serve.ts). OCR of burned-in
 * text is asked of the main thread's pool. Plain erasable TypeScript: from the sources it
 * registers tsx first, so the DICOM module and its imports load as TypeScript; compiled, it
 * imports the JavaScript.
 */
const fromSources = import.meta.url.endsWith(".ts")
const sibling = (path: string) => new URL(fromSources ? `${path}.ts` : `${path}.js`, import.meta.url).href

// Below the request loop in the scheduler's eyes (nice.ts).
const nice: typeof import("./nice.js") = await import(sibling("./nice"))
nice.lowerThreadPriority()

if (fromSources) {
  const { register } = await import("tsx/esm/api")
  register()
}
const text: typeof import("../text.js") = await import(sibling("../text"))
const dicom: typeof import("./dicom.js") = await import(sibling("./dicom"))
const { serve }: typeof import("./worker-serve.js") = await import(sibling("./worker-serve"))
const { WORKER_RECYCLE_HEAP_BYTES }: typeof import("./budgets.js") = await import(sibling("./budgets"))

serve(
  {
    "dicom.sanitize": ({ bytes, options }, ask) =>
      dicom.sanitizeDicom(bytes, { ...options, ocr: (image: Uint8Array) => ask(image) as ReturnType<import("./dicom.js").DicomOcr>, tokens: new text.TokenBook() })
  },
  // Anything but a corrupt file or a budget is our failure (a 500 with its cause logged).
  { otherErrors: "failed", retireAboveHeapBytes: WORKER_RECYCLE_HEAP_BYTES }
)
