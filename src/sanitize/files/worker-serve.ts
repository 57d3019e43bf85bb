/**
 * `serve` for the decoder worker scripts (decoder-worker.ts, dicom-worker.ts): the worker side
 * of the process's one worker pool (platform/workers/serve.ts), loaded by URL so Node runs it as
 * it is from the sources and compiled.
 */
const serveModule: typeof import("../../platform/workers/serve.js") = await import(
  new URL(import.meta.url.endsWith(".ts") ? "../../platform/workers/serve.ts" : "../../platform/workers/serve.js", import.meta.url).href
)

export type { Ask, Handler, Receive, ServeOptions, WorkerFailure } from "../../platform/workers/serve.js"
export const serve = serveModule.serve
