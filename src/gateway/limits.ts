import { execFileSync } from "node:child_process"

let cached: number | undefined

/** The soft open-file limit of this process (uWS spins at 100 % CPU when it is reached). */
export const openFileLimit = (): number => {
  if (cached !== undefined) return cached
  try {
    const out = execFileSync("sh", ["-c", "ulimit -n"], { encoding: "utf8" }).trim()
    cached = out === "unlimited" ? 65536 : Number(out) || 1024
  } catch {
    cached = 1024
  }
  return cached
}
