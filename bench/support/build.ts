/**
 * Benchmarks measure what `npm start` runs: the tsc build in dist/, started with the same memory
 * budget. `compileServer` brings dist/ up to date with the current sources (the dashboard is not
 * needed by the API); `startFlags` are the node flags `npm start` uses.
 */
import { execFileSync } from "node:child_process"
// @ts-expect-error -- a plain ES module shared with scripts/start.mjs; it has no type declarations.
import { startEnv as npmStartEnv, startFlags as npmStartFlags } from "../../scripts/start-flags.mjs"

const root = new URL("../..", import.meta.url).pathname

export const compileServer = (): void => {
  execFileSync(process.execPath, [`${root}node_modules/typescript/bin/tsc`, "-p", "tsconfig.json"], { cwd: root, stdio: "inherit" })
}

export const BUILD_DIRECTORY = `${root}dist`

/** `npm start`'s flags; BENCH_SERVER_FLAGS (space-separated, may be empty) replaces them to measure the budget's cost. */
export const startFlags = (): ReadonlyArray<string> => {
  const override = process.env.BENCH_SERVER_FLAGS
  if (override !== undefined) return override.split(" ").filter((flag) => flag !== "")
  return npmStartFlags(process.env) as ReadonlyArray<string>
}

/** `npm start`'s environment additions (the malloc arena cap). */
export const startEnv = (): Record<string, string> => npmStartEnv(process.env) as Record<string, string>
