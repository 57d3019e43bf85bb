/**
 * The ELF patch that lets uWS's glibc-2.38 binaries load on an older glibc, on the real
 * `uws_linux_x64_137.node` (Node 24): the three C23 imports become their classic names at
 * GLIBC_2.2.5, the GLIBC_2.38 need becomes weak, no other byte changes, and anything the patch
 * does not understand is refused instead of written.
 */
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { describe, expect, it } from "vitest"
import { ElfPatchError, elfVersions, needsGlibc238, patchedForOldGlibc, patchForOldGlibc } from "../src/gateway/elf-glibc-patch.js"

const packageDir = dirname(createRequire(import.meta.url).resolve("@btc-vision/uwebsockets.js"))
const original = readFileSync(join(packageDir, "uws_linux_x64_137.node"))
const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

const hasReadelf = (() => {
  try {
    execFileSync("readelf", ["--version"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()

const refusal = (bytes: Uint8Array): string => {
  try {
    patchedForOldGlibc(bytes)
  } catch (error) {
    expect(error).toBeInstanceOf(ElfPatchError)
    return (error as Error).message
  }
  throw new Error("the patch accepted input it should refuse")
}

describe("patchForOldGlibc on uws_linux_x64_137.node", () => {
  it("renames the three C23 imports to strtol, strtoul and sscanf at GLIBC_2.2.5 and makes the GLIBC_2.38 need weak", () => {
    expect(needsGlibc238(original)).toBe(true)
    const before = elfVersions(original)
    const c23 = before.imports.filter((symbol) => symbol.name.startsWith("__isoc23_"))
    expect(c23.map((symbol) => `${symbol.name}@${symbol.version}`).sort()).toEqual([
      "__isoc23_sscanf@GLIBC_2.38",
      "__isoc23_strtol@GLIBC_2.38",
      "__isoc23_strtoul@GLIBC_2.38"
    ])
    // Nothing else asks for GLIBC_2.38.
    expect(before.imports.filter((symbol) => symbol.version === "GLIBC_2.38")).toHaveLength(3)

    const patched = patchedForOldGlibc(original)
    const after = elfVersions(patched)
    expect(needsGlibc238(patched)).toBe(false)
    const bySymbol = new Map(after.imports.map((symbol) => [symbol.symbol, symbol]))
    for (const symbol of c23) {
      const now = bySymbol.get(symbol.symbol)!
      expect(now.name).toBe(symbol.name.slice("__isoc23_".length))
      expect(now.version).toBe("GLIBC_2.2.5")
    }
    expect(after.imports.filter((symbol) => symbol.version === "GLIBC_2.38")).toEqual([])
    const libc = after.needs.filter((need) => need.file === "libc.so.6")
    expect(libc.find((need) => need.version === "GLIBC_2.38")?.weak).toBe(true)
    // The GLIBC_2.2.5 the symbols moved to is libc's (libm has its own GLIBC_2.2.5 need).
    const classic = libc.find((need) => need.version === "GLIBC_2.2.5")!
    expect(new DataView(patched.buffer, patched.byteOffset).getUint16(bySymbol.get(c23[0]!.symbol)!.versymOffset, true)).toBe(classic.index)
    // Every other need keeps its flags.
    expect(after.needs.filter((need) => need.weak).map((need) => need.version)).toEqual(["GLIBC_2.38"])
  })

  it("changes nothing else: the file keeps its size and only the seven edited fields differ", () => {
    const { bytes: patched, edits } = patchForOldGlibc(original)
    expect(patched.length).toBe(original.length)
    expect(edits).toHaveLength(7)
    const edited = (offset: number) => edits.some((edit) => offset >= edit.offset && offset < edit.offset + edit.length)
    const differing: number[] = []
    for (let i = 0; i < original.length; i++) if (original[i] !== patched[i]) differing.push(i)
    expect(differing.length).toBeGreaterThan(0)
    expect(differing.filter((offset) => !edited(offset))).toEqual([])
    // Byte ranges between the edits are identical.
    const sorted = [...edits].sort((a, b) => a.offset - b.offset)
    let from = 0
    for (const edit of [...sorted, { offset: original.length, length: 0 }]) {
      expect(Buffer.compare(original.subarray(from, edit.offset), patched.subarray(from, edit.offset))).toBe(0)
      from = edit.offset + edit.length
    }
  })

  it("leaves its input untouched and is idempotent", () => {
    const hash = sha(original)
    const once = patchedForOldGlibc(original)
    expect(sha(original)).toBe(hash)
    expect(sha(patchedForOldGlibc(once))).toBe(sha(once))
  })

  it.skipIf(!hasReadelf)("binutils' readelf reads the patched copy the same way", () => {
    const dir = mkdtempSync(join(tmpdir(), "uws-elf-"))
    try {
      const file = join(dir, "patched.node")
      writeFileSync(file, patchedForOldGlibc(original))
      const symbols = execFileSync("readelf", ["-W", "--dyn-syms", file], { encoding: "utf8" })
      expect(symbols).not.toContain("__isoc23_")
      for (const name of ["strtol", "strtoul", "sscanf"]) expect(symbols).toMatch(new RegExp(` UND ${name}@GLIBC_2\\.2\\.5 \\(2\\)`))
      const versions = execFileSync("readelf", ["-W", "-V", file], { encoding: "utf8" })
      expect(versions).toMatch(/Name: GLIBC_2\.38\s+Flags: WEAK/)
      expect(versions.match(/Flags: WEAK/g)).toHaveLength(1)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe("patchForOldGlibc refuses what it does not understand", () => {
  it("refuses input that is not a 64-bit little-endian ELF", () => {
    expect(refusal(new Uint8Array(0))).toMatch(/shorter than an ELF64 header/)
    expect(refusal(new TextEncoder().encode("#!/bin/sh\n".padEnd(128, "x")))).toMatch(/not an ELF file/)
    const macho = readFileSync(join(packageDir, "uws_darwin_x64_137.node"))
    expect(refusal(macho)).toMatch(/not an ELF file/)
    const elf32 = Uint8Array.from(original.subarray(0, 4096))
    elf32[4] = 1
    expect(refusal(elf32)).toMatch(/not a 64-bit ELF/)
    const bigEndian = Uint8Array.from(original.subarray(0, 4096))
    bigEndian[5] = 2
    expect(refusal(bigEndian)).toMatch(/not a little-endian ELF/)
  })

  it("refuses a truncated binary", () => {
    expect(refusal(original.subarray(0, 40))).toMatch(/shorter than an ELF64 header/)
    for (const length of [64, 4096, 1_000_000, original.length - 1]) {
      expect(refusal(original.subarray(0, length))).toMatch(/runs past the end of the \d+-byte file \(truncated\?\)/)
    }
  })

  it("refuses a binary that asks GLIBC_2.38 for any other symbol", () => {
    const { imports } = elfVersions(original)
    const other = imports.find((symbol) => symbol.name === "memcpy")!
    const c23 = imports.find((symbol) => symbol.name === "__isoc23_strtol")!
    const bytes = Uint8Array.from(original)
    bytes.copyWithin(other.versymOffset, c23.versymOffset, c23.versymOffset + 2)
    expect(refusal(bytes)).toMatch(/GLIBC_2\.38 is also needed for memcpy/)
  })

  it("refuses a binary with no GLIBC_2.2.5 need for libc.so.6", () => {
    const { needs } = elfVersions(original)
    const classic = needs.find((need) => need.file === "libc.so.6" && need.version === "GLIBC_2.2.5")!
    const other = needs.find((need) => need.file === "libc.so.6" && need.version === "GLIBC_2.3.2")!
    // vna_name sits 4 bytes after vna_flags: point libc's GLIBC_2.2.5 entry at another version's name.
    const bytes = Uint8Array.from(original)
    bytes.copyWithin(classic.flagsOffset + 4, other.flagsOffset + 4, other.flagsOffset + 8)
    expect(refusal(bytes)).toMatch(/no GLIBC_2\.2\.5 version need for libc\.so\.6/)
  })
})
