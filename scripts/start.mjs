// `npm start`: builds when dist/ (server or dashboard) is missing or older than the sources, then runs the service.
import { execFileSync, spawn } from "node:child_process"
import { existsSync, readdirSync, statSync } from "node:fs"
import { join } from "node:path"
import { startEnv, startFlags } from "./start-flags.mjs"

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

const child = spawn(process.execPath, [...startFlags(), entry], { stdio: "inherit", env: { ...process.env, ...startEnv() } })
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal))
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)))
