/**
 * Builds the dashboard (dashboard/ → dist/dashboard/) once per run when it is missing or older than
 * its sources, before any test file starts, so the dashboard tests serve the current sources and
 * two test files never build at once.
 */
import { execFileSync } from "node:child_process"
import { resolve } from "node:path"

export default function setup() {
  execFileSync(process.execPath, ["scripts/build-dashboard.mjs", "--if-stale"], { cwd: resolve(import.meta.dirname, "../.."), stdio: "inherit" })
}
