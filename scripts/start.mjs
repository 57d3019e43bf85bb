// `npm start`: builds when dist/ (server or dashboard) is missing or older than the sources, then runs the service.
import { execFileSync, spawn } from "node:child_process"
import { existsSync, readdirSync, statSync } from "node:fs"
import { join } from "node:path"

const entry = "dist/src/main.js"

const newest = (dir) => {
  let latest = 0
  if (!existsSync(dir)) return latest
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    const stat = statSync(path)
    latest = Math.max(latest, stat.isDirectory() ? newest(path) : stat.mtimeMs)
  }
  return latest
}

const sourcesChanged = () => {
  if (!existsSync(entry)) return true
  const built = statSync(entry).mtimeMs
  return ["src", "protocol", "actors"].some((dir) => newest(dir) > built)
}

if (sourcesChanged()) {
  console.error("building (tsc)...")
  execFileSync(process.execPath, ["scripts/build.mjs"], { stdio: "inherit" })
} else {
  // The dashboard alone (dashboard/ or protocol/ changed since its build).
  execFileSync(process.execPath, ["scripts/build-dashboard.mjs", "--if-stale"], { stdio: "inherit" })
}

// The memory budget (docs/decisions.md "Speed"): a 160 MB old generation and 2 MB semi-spaces keep
// one process near 190 MB RSS with 19k idle sockets after load; GATEWAY_HEAP_MB moves the cap.
const heapMb = process.env.GATEWAY_HEAP_MB || "160"
const budget = [`--max-old-space-size=${heapMb}`, "--max-semi-space-size=2"]
const child = spawn(process.execPath, [...budget, "--enable-source-maps", entry], { stdio: "inherit" })
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal))
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)))
