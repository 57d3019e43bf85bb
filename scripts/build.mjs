// Compiles protocol/, actors/, src/ and scripts/*.ts to dist/ with tsc, then the dashboard with Vite to dist/dashboard/.
import { execFileSync } from "node:child_process"
import { cpSync, existsSync, rmSync } from "node:fs"

rmSync("dist", { recursive: true, force: true })
execFileSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.json"], { stdio: "inherit" })
// Data files the sanitizer reads at run time (name and code lists) sit next to the modules that read them.
if (existsSync("src/sanitize/data")) cpSync("src/sanitize/data", "dist/src/sanitize/data", { recursive: true })
execFileSync(process.execPath, ["scripts/build-dashboard.mjs"], { stdio: "inherit" })
