// Builds dashboard/ with Vite into dist/dashboard/ (hashed file names under assets/).
// `--if-stale`: only when the build is missing or older than its sources (npm start, the test setup).
import { existsSync, readdirSync, statSync } from "node:fs"
import { join } from "node:path"

const OUT = "dist/dashboard/index.html"
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
  await vite.build({ configFile: "dashboard/vite.config.ts", logLevel: "warn" })
  return true
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (!process.argv.includes("--if-stale") || dashboardStale()) {
    console.error("building the dashboard (vite)...")
    await buildDashboard()
  }
}
