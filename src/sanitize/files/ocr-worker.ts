/** tesseract.js's own worker script, started at a lower priority than the request loop (nice.ts). */
import { createRequire } from "node:module"

const nice = await import(new URL(import.meta.url.endsWith(".ts") ? "./nice.ts" : "./nice.js", import.meta.url).href)
nice.lowerThreadPriority()
createRequire(import.meta.url)("tesseract.js/src/worker-script/node/index.js")
