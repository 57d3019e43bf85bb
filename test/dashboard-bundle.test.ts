/**
 * The dashboard's first page stays light: the script index.html loads and every module it imports
 * statically, compressed as the gateway serves them, fit in 100 KB (issue 32), and the chart library
 * and the area pages are chunks of their own, fetched only when a page needs them.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { brotliCompressSync, constants, gzipSync } from "node:zlib"
import { describe, expect, it } from "vitest"

const BUILD = process.env.DASHBOARD_DIR ?? "dist/dashboard"
const BUDGET = 100 * 1024

const read = (asset: string) => readFileSync(join(BUILD, asset.replace(/^\/dashboard\//, "")))

/** The entry script and everything it imports statically (`import … from "./x.js"`, not `import("./x.js")`). */
const firstPageScripts = (): Array<string> => {
  const index = readFileSync(join(BUILD, "index.html"), "utf8")
  const entry = /<script type="module"[^>]*src="([^"]+)"/.exec(index)![1]!
  const seen = new Set<string>()
  const visit = (asset: string) => {
    if (seen.has(asset)) return
    seen.add(asset)
    const code = read(asset).toString("utf8")
    for (const match of code.matchAll(/(?:^|[;}\s])import\s*(?:[\w${}*,\s]+from\s*)?["'](\.\/[^"']+\.js)["']/g)) {
      visit(new URL(match[1]!, `http://x${asset}`).pathname)
    }
  }
  visit(entry)
  return [...seen]
}

describe("dashboard bundle", () => {
  it("loads at most 100 KB of compressed script on the first page", () => {
    const scripts = firstPageScripts()
    const bytes = scripts.map((asset) => read(asset))
    const brotli = bytes.reduce((sum, body) => sum + brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length, 0)
    const gzip = bytes.reduce((sum, body) => sum + gzipSync(body, { level: 9 }).length, 0)
    console.log(`first page script: ${scripts.length} file(s), ${bytes.reduce((sum, body) => sum + body.length, 0)} B, brotli ${brotli} B, gzip ${gzip} B`)
    expect(gzip).toBeLessThanOrEqual(BUDGET)
    expect(brotli).toBeLessThanOrEqual(BUDGET)
  })

  it("keeps the chart library and the area pages out of the first page", () => {
    const first = firstPageScripts().map((asset) => read(asset).toString("utf8")).join("\n")
    // uPlot's own class name and stylesheet class appear only in its chunk.
    expect(first).not.toMatch(/uplot|u-legend/i)
    const index = readFileSync(join(BUILD, "index.html"), "utf8")
    expect(index).not.toMatch(/modulepreload/)
  })
})
