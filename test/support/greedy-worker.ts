/**
 * A worker for the worker-pool tests (plain erasable TypeScript, loaded as it is): jobs that
 * answer, ask the main thread, fail in each way a decoder can, fill the heap until V8 stops the
 * worker, or never finish.
 */
const source = (path: string) => new URL(`../../src/sanitize/files/${path}.ts`, import.meta.url).href
const { serve }: typeof import("../../src/sanitize/files/worker-serve.js") = await import(source("worker-serve"))
const { CorruptFile, LimitExceeded }: typeof import("../../src/sanitize/files/errors.js") = await import(source("errors"))

interface Held {
  readonly next: Held | null
  readonly data: number[]
}
let held: Held | null = null

serve(
  {
    echo: (payload) => payload,
    ask: async (payload, ask) => ({ asked: payload, answer: await ask(payload) }),
    corrupt: () => {
      throw new CorruptFile("unreadable")
    },
    limit: () => {
      throw new LimitExceeded("pages", 7)
    },
    fail: () => {
      throw new TypeError("a bug of ours")
    },
    // Many separate arrays: the shape V8 stops reliably at a worker's limit (one ever-growing
    // array can abort the whole process instead, nodejs/node#47224).
    hog: () => {
      for (;;) held = { next: held, data: new Array(10_000).fill(1.5) }
    },
    // A decoder caught in a loop.
    spin: () => {
      for (;;) held = null
    }
  },
  { otherErrors: "failed" }
)
