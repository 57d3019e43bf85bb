/**
 * `BENCH_PROFILE`: run the server with `--cpu-prof` and, after it stops, print the frames that
 * spent the most time themselves. `1` (or `true`) profiles into a temporary directory; any other
 * value names the directory, which is kept.
 */
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { basename, join } from "node:path"

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
}
export interface CpuProfile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

export const profileDirectory = (setting = process.env.BENCH_PROFILE): string | undefined => {
  if (!setting) return undefined
  return setting === "1" || setting === "true" ? mkdtempSync(join(tmpdir(), "bench-profile-")) : setting
}

/** Self time per frame (function, file, line), largest first. */
export const selfTimes = (profile: CpuProfile): Array<{ frame: string; ms: number; share: number }> => {
  const frameOf = new Map(profile.nodes.map((node) => [node.id, node.callFrame]))
  const byFrame = new Map<string, number>()
  let total = 0
  profile.samples.forEach((id, index) => {
    const frame = frameOf.get(id)
    const micros = profile.timeDeltas[index] ?? 0
    total += micros
    if (frame === undefined) return
    const name = `${frame.functionName || "(anonymous)"} ${frame.url ? `${basename(frame.url)}:${frame.lineNumber + 1}` : ""}`.trim()
    byFrame.set(name, (byFrame.get(name) ?? 0) + micros)
  })
  return [...byFrame]
    .map(([frame, micros]) => ({ frame, ms: micros / 1000, share: total === 0 ? 0 : micros / total }))
    .sort((a, b) => b.ms - a.ms)
}

/** Prints the top `count` self-time frames of the newest profile in `directory`. */
export const printProfileSummary = (directory: string, count = 15): void => {
  const newest = readdirSync(directory)
    .filter((name) => name.endsWith(".cpuprofile"))
    .map((name) => join(directory, name))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0]
  if (newest === undefined) {
    console.log(`no .cpuprofile in ${directory}`)
    return
  }
  console.log(`CPU profile ${newest}: top ${count} frames by self time`)
  for (const { frame, ms, share } of selfTimes(JSON.parse(readFileSync(newest, "utf8"))).slice(0, count)) {
    console.log(`${(share * 100).toFixed(1).padStart(5)} %  ${ms.toFixed(0).padStart(7)} ms  ${frame}`)
  }
}
