/**
 * Where the embedded PostgreSQL's files go when the gateway runs as root and
 * keeps them where the `postgres` user cannot reach: a checkout or DATA_DIR
 * under a 0700 home such as /root. The modes of the user's own directories
 * are never changed; what the server needs is staged instead, one directory
 * per DATA_DIR, owned by root and open to others' search:
 *
 *   /var/lib/agent-accountability-gateway/pg-<hash of DATA_DIR/pg>/
 *     owner      the DATA_DIR/pg it serves
 *     postgres/  a copy of the binaries' bin, lib and share, and their `stamp`
 *     data/      the cluster (the server's user, 0700)
 *
 * DATA_DIR/pg keeps the lock, the password, the log and `cluster-location`,
 * the marker naming that directory: once a cluster is staged, every later
 * start uses it, whatever the permissions are then. /var/lib survives
 * reboots; when it cannot be used, the OS temp directory is (with a warning).
 */
import { createHash } from "node:crypto"
import {
  chmodSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { dirname, isAbsolute, join, relative } from "node:path"
import type { PostgresBinaries } from "./binaries.js"
import { canEnter, canRun, ROOT_FALLBACK_USER, type ServerUser } from "./user.js"

/** In DATA_DIR/pg: the staging directory holding its cluster. */
export const MARKER = "cluster-location"

export interface StagingBase {
  readonly path: string
  /** False for the temp directory, which a reboot (tmpfs, tmp cleaners) may empty. */
  readonly persistent: boolean
}

const APP = "agent-accountability-gateway"

/** Best first. */
export const STAGING_BASES: ReadonlyArray<StagingBase> = [
  { path: join("/var/lib", APP), persistent: true },
  { path: join(tmpdir(), APP), persistent: false }
]

export interface Staged {
  /** The staging directory of this DATA_DIR. */
  readonly root: string
  readonly persistent: boolean
  /** The cluster lives in `root/data`. */
  readonly cluster: boolean
  /** The binaries run from `root/postgres`. */
  readonly binaries: boolean
  /** Where a cluster no DATA_DIR named any more was moved (see setAsideOrphan). */
  readonly setAside: string | undefined
}

export interface Layout {
  /** The directory holding `data/`: DATA_DIR/pg, or the staging directory. */
  readonly home: string
  readonly binaries: PostgresBinaries
  readonly staged: Staged | undefined
}

const readTrimmed = (file: string): string | undefined => {
  try {
    return readFileSync(file, "utf8").trim()
  } catch {
    return undefined
  }
}

/** Written aside and renamed, so a reader never sees half of it. */
const writeWhole = (file: string, text: string): void => {
  writeFileSync(`${file}.new`, text, { mode: 0o644 })
  renameSync(`${file}.new`, file)
}

export const readMarker = (directory: string): string | undefined => {
  const file = join(directory, MARKER)
  const root = readTrimmed(file)
  if (root === undefined) return undefined
  if (!isAbsolute(root)) throw new Error(`${file} should hold the absolute path of a staged cluster's directory, not "${root}"`)
  return root
}

const isUnder = (path: string, directory: string): boolean => {
  const rest = relative(directory, path)
  return rest !== "" && !rest.startsWith("..") && !isAbsolute(rest)
}

/** A directory of ours: root's, not a link, writable by root alone, searchable by all. */
const ownDirectory = (path: string): void => {
  mkdirSync(path, { recursive: true, mode: 0o755 })
  const stat = lstatSync(path)
  if (!stat.isDirectory() || stat.uid !== process.getuid?.() || (stat.mode & 0o022) !== 0) {
    throw new Error(`${path} is not a directory that only root can change: remove it, or set DATABASE_URL`)
  }
  // The umask may have taken others' search permission away.
  if ((stat.mode & 0o755) !== 0o755) chmodSync(path, 0o755)
}

/** `directory` is a real path: the key is the same whichever link led to it. */
const chooseRoot = (directory: string, user: ServerUser, bases: ReadonlyArray<StagingBase>) => {
  const key = createHash("sha256").update(directory).digest("hex").slice(0, 16)
  const refused: Array<string> = []
  for (const base of bases) {
    try {
      ownDirectory(base.path)
      if (canEnter(user, base.path)) return { root: join(base.path, `pg-${key}`), persistent: base.persistent }
      refused.push(`${base.path}: user ${user.name} cannot enter it`)
    } catch (error) {
      refused.push((error as Error).message)
    }
  }
  throw new Error(`no directory user ${user.name} can reach to stage PostgreSQL's files in (${refused.join("; ")}); set DATABASE_URL`)
}

/**
 * Makes `root` the staging directory of `directory`. When it serves another
 * DATA_DIR whose marker still names it, `directory` is a copy of that one:
 * refused, as both would share one cluster. When the other no longer names
 * it, the DATA_DIR was moved, and the staged files follow it.
 */
const claim = (root: string, directory: string): void => {
  ownDirectory(root)
  const ownerFile = join(root, "owner")
  const owner = readTrimmed(ownerFile)
  if (owner === directory) return
  if (owner !== undefined && readMarker(owner) === root) {
    throw new Error(
      `${join(directory, MARKER)} names the staged cluster ${root}, which serves ${owner} (is this DATA_DIR a copy of that one?). ` +
        `Use that DATA_DIR, or remove ${join(directory, MARKER)} and ${join(directory, "password")} to start this one with a new cluster.`
    )
  }
  writeWhole(ownerFile, `${directory}\n`)
}

/**
 * A cluster in a staging directory whose DATA_DIR has no marker: that
 * DATA_DIR was removed (with the password and master key) and made again.
 * A new cluster starts; the old one is moved aside, never deleted.
 */
const setAsideOrphan = (root: string): string | undefined => {
  const data = join(root, "data")
  if (!existsSync(data)) return undefined
  const aside = join(root, `data.orphan-${new Date().toISOString().replace(/[:.]/g, "-")}`)
  renameSync(data, aside)
  return aside
}

/** Copies a tree with modes others can use (npm under a 077 umask writes 0600 files); relative links stay links. */
const copyTree = (from: string, to: string): void => {
  mkdirSync(to, { mode: 0o755 })
  chmodSync(to, 0o755)
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, entry.name)
    const target = join(to, entry.name)
    const link = entry.isSymbolicLink() ? readlinkSync(source) : undefined
    if (link !== undefined && !isAbsolute(link)) symlinkSync(link, target)
    else if (statSync(source).isDirectory()) copyTree(source, target)
    else {
      copyFileSync(source, target)
      chmodSync(target, statSync(source).mode & 0o111 ? 0o755 : 0o644)
    }
  }
}

/** The package's name and version, and the server binary's hash: an upgrade or a rebuilt binary changes it. */
const stampOf = (native: string, postgres: string): string => {
  const pkg = JSON.parse(readFileSync(join(dirname(native), "package.json"), "utf8")) as { name?: string; version?: string }
  return `${pkg.name}@${pkg.version} sha256:${createHash("sha256").update(readFileSync(postgres)).digest("hex")}`
}

/**
 * The binaries run from a copy of `<package>/native`'s bin, lib and share in
 * `target` (the server finds lib and share relative to bin), reused while its
 * stamp matches the installed package. A new copy is made beside the old one
 * and swapped in, so a copy cut short is never used.
 */
export const stageBinaries = (binaries: PostgresBinaries, target: string): PostgresBinaries => {
  const native = dirname(dirname(binaries.postgres))
  const staged = {
    initdb: join(target, relative(native, binaries.initdb)),
    postgres: join(target, relative(native, binaries.postgres))
  }
  const stamp = stampOf(native, binaries.postgres)
  if (readTrimmed(join(target, "stamp")) === stamp) return staged
  const fresh = `${target}.new`
  rmSync(fresh, { recursive: true, force: true })
  mkdirSync(fresh, { mode: 0o755 })
  chmodSync(fresh, 0o755)
  for (const part of ["bin", "lib", "share"]) copyTree(join(native, part), join(fresh, part))
  writeFileSync(join(fresh, "stamp"), `${stamp}\n`, { mode: 0o644 })
  rmSync(target, { recursive: true, force: true })
  renameSync(fresh, target)
  return staged
}

/**
 * Where the cluster lives and which binaries run, for a gateway holding the
 * lock of `directory` (DATA_DIR/pg). Nothing is staged for a server running
 * as ourselves, nor for one that reaches both.
 */
export const planLayout = (
  directory: string,
  user: ServerUser,
  binaries: PostgresBinaries,
  bases: ReadonlyArray<StagingBase> = STAGING_BASES
): Layout => {
  const self = realpathSync(directory)
  const marker = readMarker(self)
  if (!user.switched) {
    if (marker === undefined) return { home: directory, binaries, staged: undefined }
    throw new Error(
      `the cluster of ${directory} was staged in ${marker} for the ${ROOT_FALLBACK_USER} user by a gateway running as root: ` +
        "run the gateway as root, or set DATABASE_URL."
    )
  }
  // A cluster already in DATA_DIR/pg is never moved; if it became unreachable, the access check says so.
  const cluster = marker !== undefined || (!canEnter(user, self) && !existsSync(join(self, "data")))
  const copyBinaries = !canRun(user, binaries.postgres)
  if (!cluster && !copyBinaries) return { home: directory, binaries, staged: undefined }
  const { root, persistent } =
    marker !== undefined ? { root: marker, persistent: !isUnder(marker, tmpdir()) } : chooseRoot(self, user, bases)
  claim(root, self)
  let setAside: string | undefined
  if (cluster && marker === undefined) {
    setAside = setAsideOrphan(root)
    writeWhole(join(self, MARKER), `${root}\n`)
  }
  return {
    home: cluster ? root : self,
    binaries: copyBinaries ? stageBinaries(binaries, join(root, "postgres")) : binaries,
    staged: { root, persistent, cluster, binaries: copyBinaries, setAside }
  }
}
