/**
 * Pieces of the embedded PostgreSQL that the process-level tests
 * (embedded-smoke, db) cannot reach: the shared-library links the binaries
 * package's postinstall would have made, and the gateway lock.
 */
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { hydrateSymlinks } from "../src/platform/db/embedded/binaries.js"
import { acquireLock, DirectoryInUse, isAlive } from "../src/platform/db/embedded/lock.js"

const root = mkdtempSync(join(tmpdir(), "gateway-embedded-unit-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))

describe("binaries", () => {
  it("recreates the listed library links, relative to their directory, and leaves existing ones", () => {
    const pkg = join(root, "pkg")
    mkdirSync(join(pkg, "native", "lib"), { recursive: true })
    writeFileSync(join(pkg, "native", "lib", "libpq.so.5.18"), "")
    writeFileSync(
      join(pkg, "native", "pg-symlinks.json"),
      JSON.stringify([
        { source: "native/lib/libpq.so.5.18", target: "native/lib/libpq.so.5" },
        { source: "native/lib/libpq.so.5.18", target: "native/lib/libpq.so" }
      ])
    )
    hydrateSymlinks(pkg)
    expect(readlinkSync(join(pkg, "native", "lib", "libpq.so.5"))).toBe("libpq.so.5.18")
    expect(readlinkSync(join(pkg, "native", "lib", "libpq.so"))).toBe("libpq.so.5.18")
    // Twice is harmless.
    hydrateSymlinks(pkg)
    expect(readlinkSync(join(pkg, "native", "lib", "libpq.so.5"))).toBe("libpq.so.5.18")
  })
})

describe("gateway lock", () => {
  const lockPath = join(root, "gateway.lock")

  it("holds our pid until released, and refuses a second taker in this process", () => {
    const release = acquireLock(lockPath, root)
    expect(readFileSync(lockPath, "utf8").trim()).toBe(String(process.pid))
    expect(() => acquireLock(lockPath, root)).toThrow(DirectoryInUse)
    release()
    expect(existsSync(lockPath)).toBe(false)
  })

  it("refuses while another live process holds it, naming the directory and the pid", async () => {
    const other = spawn(process.execPath, ["-e", "setTimeout(() => {}, 30000)"], { stdio: "ignore" })
    try {
      writeFileSync(lockPath, `${other.pid}\n`)
      expect(() => acquireLock(lockPath, root)).toThrow(`${root} is in use by gateway process ${other.pid} (lock file ${lockPath})`)
    } finally {
      other.kill("SIGKILL")
      await new Promise((resolve) => other.once("exit", resolve))
    }
    // Its owner is gone now: the lock is taken over.
    expect(isAlive(other.pid!)).toBe(false)
    const release = acquireLock(lockPath, root)
    expect(readFileSync(lockPath, "utf8").trim()).toBe(String(process.pid))
    release()
  })

  it("takes over a lock with our own pid that this process does not hold (a restarted container)", () => {
    writeFileSync(lockPath, `${process.pid}\n`)
    const release = acquireLock(lockPath, root)
    release()
    expect(existsSync(lockPath)).toBe(false)
  })
})
