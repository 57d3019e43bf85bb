// Builds dashboard/ with Vite into dist/dashboard/ (hashed file names under assets/).
// `--if-stale`: only when the build is missing or older than its sources (npm start, the test setup).
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { extname, join } from "node:path"
import { brotliCompressSync, constants, gzipSync } from "node:zlib"

const OUT = join(process.env.DASHBOARD_DIR ?? "dist/dashboard", "index.html")
const SOURCES = ["dashboard", "protocol"]

const newest = (path) => {
  if (!existsSync(path)) return 0
  const stat = statSync(path)
  if (!stat.isDirectory()) return stat.mtimeMs
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))))
}

export const dashboardStale = () => !existsSync(OUT) || Math.max(...SOURCES.map(newest), newest("package-lock.json")) > statSync(OUT).mtimeMs

export const buildDashboard = async () => {
  let vite
  try {
    vite = await import("vite")
  } catch {
    // Installed without devDependencies: the gateway still runs, /dashboard answers 503.
    console.error("vite is not installed (npm ci without dev dependencies?): the dashboard was not built")
    return false
  }
  // Always the production build: under vitest NODE_ENV is "test", which would ship Preact's debug paths.
  process.env.NODE_ENV = "production"
  await vite.build({ configFile: "dashboard/vite.config.ts", logLevel: "warn", mode: "production" })
  compressBuild(process.env.DASHBOARD_DIR ?? "dist/dashboard")
  return true
}

const COMPRESSIBLE = new Set([".html", ".js", ".css", ".svg", ".json", ".txt"])

/**
 * Next to each text file, its brotli (quality 11) and gzip (level 9) forms, made once here so the
 * gateway serves them without compressing per request or at start (src/dashboard/site.ts).
 */
const compressBuild = (dir) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) compressBuild(path)
    else if (entry.isFile() && COMPRESSIBLE.has(extname(path))) {
      const body = readFileSync(path)
      writeFileSync(`${path}.br`, brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } }))
      writeFileSync(`${path}.gz`, gzipSync(body, { level: 9 }))
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (!process.argv.includes("--if-stale") || dashboardStale()) {
    console.error("building the dashboard (vite)...")
    await buildDashboard()
  }
}
