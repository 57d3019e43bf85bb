// Compiles protocol/, actors/, src/ and scripts/*.ts to dist/ with tsc, then the dashboard with Vite to dist/dashboard/.
import { execFileSync } from "node:child_process"
import { rmSync } from "node:fs"

rmSync("dist", { recursive: true, force: true })
execFileSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.json"], { stdio: "inherit" })
execFileSync(process.execPath, ["scripts/build-dashboard.mjs"], { stdio: "inherit" })
