/**
 * The one place uWebSockets.js is loaded.
 *
 * `@btc-vision/uwebsockets.js` ships one native binary per platform and Node ABI
 * (`uws_<platform>_<arch>_<abi>.node`); we load that file ourselves and refuse to start
 * without one (older uWS builds fell back to a slow JavaScript imitation where
 * `app.publish` throws, and the error must say why nothing loaded).
 *
 * The Linux binaries are linked against glibc 2.38 for three C23 functions only. On an
 * older glibc the loader writes a patched copy once (elf-glibc-patch.ts) into
 * `node_modules/.cache/uws/` (or a private directory under the OS temp dir), named by
 * the original's sha256 so a package update patches again, and loads that copy.
 */
import { createHash, randomBytes } from "node:crypto"
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { basename, dirname, join } from "node:path"
import type * as UwsTypes from "@btc-vision/uwebsockets.js"
import { needsGlibc238, patchedForOldGlibc } from "./elf-glibc-patch.js"

export type Uws = typeof UwsTypes
export type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket, WebSocket } from "@btc-vision/uwebsockets.js"

const PACKAGE = "@btc-vision/uwebsockets.js"
/** process.versions.modules of the Node lines uWS ships for, to name them in the refusal. */
const NODE_OF_ABI: Record<string, string> = { "108": "18", "115": "20", "127": "22", "137": "24", "141": "25" }
const require = createRequire(import.meta.url)

/** What a binary is chosen for. Tests override fields to simulate other hosts. */
export interface UwsTarget {
  readonly node: string
  readonly abi: string
  readonly platform: string
  readonly arch: string
  /** The running glibc ("2.36"), or undefined off glibc Linux. */
  readonly glibc: string | undefined
}

/** Which file was loaded, and how. */
export interface UwsBinary {
  /** The package's binary for this target. */
  readonly original: string
  /** The file actually loaded: `original`, or its patched copy. */
  readonly file: string
  readonly patched: boolean
  /** "written" when this process wrote the patched copy, "cached" when an earlier one had. */
  readonly copy: "written" | "cached" | undefined
  /** Time spent choosing, patching (if needed) and loading, in ms. */
  readonly loadMs: number
}

const runningGlibc = (): string | undefined => {
  if (process.platform !== "linux") return undefined
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined
  return report?.header?.glibcVersionRuntime
}

export const currentTarget = (): UwsTarget => ({
  node: process.version,
  abi: process.versions.modules,
  platform: process.platform,
  arch: process.arch,
  glibc: runningGlibc()
})

/** "2.36" < "2.38"; anything unparseable counts as new enough (the original then loads or fails on its own). */
const olderThan238 = (glibc: string): boolean => {
  const match = /^(\d+)\.(\d+)/.exec(glibc)
  if (!match) return false
  const [major, minor] = [Number(match[1]), Number(match[2])]
  return major < 2 || (major === 2 && minor < 38)
}

const packageDir = (): string => dirname(require.resolve(PACKAGE))

const packageVersion = (dir: string): string => {
  try {
    return (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version?: string }).version ?? "?"
  } catch {
    return "?"
  }
}

/** The cache directories to try, best first: the project's node_modules/.cache, then a private temp dir. */
const cacheDirs = (dir: string): Array<{ path: string; private: boolean }> => {
  const dirs: Array<{ path: string; private: boolean }> = []
  for (let at = dir; dirname(at) !== at; at = dirname(at)) {
    if (basename(at) === "node_modules") {
      dirs.push({ path: join(at, ".cache", "uws"), private: false })
      break
    }
  }
  dirs.push({ path: join(tmpdir(), `uws-cache-${process.getuid?.() ?? "user"}`), private: true })
  return dirs
}

/** Makes `dir`; a shared-temp one must be a real directory only we can write. */
const prepareDir = (dir: { path: string; private: boolean }) => {
  mkdirSync(dir.path, { recursive: true, mode: dir.private ? 0o700 : 0o755 })
  if (!dir.private) return
  const stat = lstatSync(dir.path)
  if (!stat.isDirectory() || stat.isSymbolicLink()) throw new Error(`${dir.path} is not a directory`)
  if (process.getuid && stat.uid !== process.getuid()) throw new Error(`${dir.path} belongs to uid ${stat.uid}`)
  if ((stat.mode & 0o022) !== 0) throw new Error(`${dir.path} is writable by others (mode ${(stat.mode & 0o777).toString(8)})`)
}

/**
 * The patched copy of `original` on disk, written if missing or different. Its content is checked
 * against a fresh in-memory patch on every start, so a damaged or replaced copy is rewritten.
 */
const patchedCopy = (original: string, bytes: Uint8Array): { file: string; copy: "written" | "cached" } => {
  const hash = createHash("sha256").update(bytes).digest("hex")
  const patched = patchedForOldGlibc(bytes)
  const name = `${basename(original, ".node")}-${hash}.node`
  const failures: string[] = []
  for (const dir of cacheDirs(dirname(original))) {
    const file = join(dir.path, name)
    try {
      prepareDir(dir)
      if (existsSync(file) && Buffer.from(patched.buffer, patched.byteOffset, patched.byteLength).equals(readFileSync(file))) return { file, copy: "cached" }
      const temp = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`
      try {
        writeFileSync(temp, patched, { mode: 0o644 })
        renameSync(temp, file)
      } finally {
        rmSync(temp, { force: true })
      }
      return { file, copy: "written" }
    } catch (error) {
      failures.push(`${dir.path}: ${(error as Error).message}`)
    }
  }
  throw new Error(`cannot write the patched copy of ${original} (${failures.join("; ")})`)
}

const refusal = (target: UwsTarget, problem: string): Error =>
  new Error(
    [
      "No native uWebSockets.js build loads here, and the JavaScript fallback is refused",
      "(it is several times slower and cannot publish to WebSocket topics).",
      `Node ${target.node} (ABI ${target.abi}), ${target.platform}/${target.arch}, glibc ${target.glibc ?? "none (not a glibc Linux)"}.`,
      problem
    ].join("\n")
  )

/**
 * Loads the native binary for `target` (default: this process), patching a copy for glibc < 2.38.
 * Not cached; `loadUws` is the entry point. A `target` other than this process's can only
 * fail or load a binary this process cannot use: tests use it to see the refusal.
 */
export const loadUwsBinary = (overrides: Partial<UwsTarget> = {}): { readonly uws: Uws; readonly binary: UwsBinary } => {
  const started = performance.now()
  const target = { ...currentTarget(), ...overrides }
  const dir = packageDir()
  const platform = `${target.platform}_${target.arch}`
  const original = join(dir, `uws_${platform}_${target.abi}.node`)
  if (!existsSync(original)) {
    const shipped = readdirSync(dir)
      .map((name) => new RegExp(`^uws_${platform}_(\\d+)\\.node$`).exec(name)?.[1])
      .filter((abi): abi is string => abi !== undefined)
      .sort((a, b) => Number(a) - Number(b))
    const named = shipped.map((abi) => (NODE_OF_ABI[abi] ? `${abi} (Node ${NODE_OF_ABI[abi]})` : abi))
    throw refusal(target, `${PACKAGE} ${packageVersion(dir)} has no ${basename(original)}; for ${platform} it ships ABI ${named.join(", ") || "none"}.`)
  }
  let chosen: { readonly file: string; readonly copy: UwsBinary["copy"] } = { file: original, copy: undefined }
  if (target.platform === "linux" && target.glibc !== undefined && olderThan238(target.glibc)) {
    const bytes = readFileSync(original)
    if (needsGlibc238(bytes)) {
      try {
        chosen = patchedCopy(original, bytes)
      } catch (error) {
        throw refusal(target, `${basename(original)} needs glibc 2.38 and could not be patched for ${target.glibc}: ${(error as Error).message}`)
      }
    }
  }
  const { file, copy } = chosen
  let uws: Uws
  try {
    uws = require(file)
  } catch (error) {
    throw refusal(target, `Loading ${file} failed: ${(error as Error).message.split("\n")[0]}`)
  }
  if (typeof uws?.App !== "function") throw refusal(target, `${file} loaded but has no App export.`)
  return { uws, binary: { original, file, patched: file !== original, copy, loadMs: performance.now() - started } }
}

let loaded: { readonly uws: Uws; readonly binary: UwsBinary } | undefined

/** The native uWS module for this process, loaded once. Throws (with Node, ABI, platform and glibc) when none loads. */
export const loadUws = (): Uws => {
  loaded ??= loadUwsBinary()
  return loaded.uws
}

/** Which binary `loadUws` loaded, once it has. */
export const loadedUwsBinary = (): UwsBinary | undefined => loaded?.binary
