/**
 * Process liveness and the gateway's lock on an embedded cluster directory: a
 * file holding the owner's pid. A lock whose owner is gone (SIGKILL, crash,
 * reboot) is taken over; a live owner is an error naming the directory.
 */
import { linkSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"

/** A zombie counts as gone (a container's pid 1 may never reap it). */
export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z"
  } catch {
    return true
  }
}

export const readPid = (path: string): number | undefined => {
  try {
    const pid = Number.parseInt(readFileSync(path, "utf8"), 10)
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

export class DirectoryInUse extends Error {
  constructor(
    readonly directory: string,
    readonly owner: number,
    readonly lockPath: string
  ) {
    super(
      `${directory} is in use by gateway process ${owner} (lock file ${lockPath}). ` +
        "The embedded PostgreSQL serves one gateway process: stop that one, use another DATA_DIR, " +
        "or set DATABASE_URL to share a PostgreSQL server between processes."
    )
  }
}

/** Locks this process holds: our own pid in a lock is ours only if listed here. */
const held = new Set<string>()

/** Our own pid in a lock we do not hold: a container restarted and we got the old pid. */
const ownedByOther = (owner: number, lockPath: string): boolean =>
  owner === process.pid ? held.has(lockPath) : isAlive(owner)

/**
 * Moves a dead owner's lock aside. Another process may have replaced it since
 * we read it: then the moved file names a live owner, and goes back.
 */
const removeStale = (lockPath: string, directory: string): void => {
  const aside = `${lockPath}.stale.${process.pid}`
  try {
    renameSync(lockPath, aside)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return
    throw error
  }
  const moved = readPid(aside)
  try {
    if (moved !== undefined && ownedByOther(moved, lockPath)) {
      try {
        linkSync(aside, lockPath)
      } catch {
        // Someone else holds it again: either way it is not ours.
      }
      throw new DirectoryInUse(directory, moved, lockPath)
    }
  } finally {
    rmSync(aside, { force: true })
  }
}

/**
 * Takes `lockPath` for this process and returns its release. The pid is
 * written to a private file first and hard-linked into place, so the lock
 * never exists without its pid (link fails if another process holds it).
 */
export const acquireLock = (lockPath: string, directory: string): (() => void) => {
  const staged = `${lockPath}.${process.pid}`
  writeFileSync(staged, `${process.pid}\n`, { mode: 0o644 })
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        linkSync(staged, lockPath)
        held.add(lockPath)
        return () => {
          if (!held.delete(lockPath)) return
          if (readPid(lockPath) === process.pid) rmSync(lockPath, { force: true })
        }
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
      }
      const owner = readPid(lockPath)
      if (owner !== undefined && ownedByOther(owner, lockPath)) throw new DirectoryInUse(directory, owner, lockPath)
      removeStale(lockPath, directory)
    }
    throw new Error(`could not take the lock ${lockPath}`)
  } finally {
    rmSync(staged, { force: true })
  }
}
