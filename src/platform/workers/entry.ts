/**
 * The module piscina loads in each worker of a pool (pool.ts): it imports the pool's own worker
 * script (named in `workerData`), which registers its operations with `serve`, and exports the
 * task function `serve` made of them. The worker scripts stay plain modules calling `serve`.
 */
import { workerData } from "node:worker_threads"

const sibling = (name: string) => new URL(import.meta.url.endsWith(".ts") ? `./${name}.ts` : `./${name}.js`, import.meta.url).href

const { servedTask }: typeof import("./serve.js") = await import(sibling("serve"))
await import((workerData as { script: string }).script)
const task = servedTask()
if (task === undefined) throw new Error(`the worker script ${(workerData as { script: string }).script} did not call serve`)

export default task
