/**
 * PostgreSQL run by the gateway itself when DATABASE_URL is unset. Its
 * directory (DATA_DIR/pg) holds:
 *
 * - `data/`: the cluster, owned by the user PostgreSQL runs as (initdb on
 *   first start, into `data.init`, renamed when complete);
 * - `password`: the superuser's password, generated once (0600, scram-sha-256);
 * - `postgres.log`: initdb's and the server's output;
 * - `gateway.lock`: the pid of the one gateway using it;
 * - `cluster-location`, only when the cluster was staged elsewhere because
 *   the server's user cannot reach DATA_DIR/pg (staging.ts).
 *
 * The server listens on 127.0.0.1 on a port free at start, and stops when the
 * gateway stops or dies (see process.ts).
 */
import { randomBytes } from "node:crypto"
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { dirname, join, resolve } from "node:path"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { logLine } from "../../log.js"
import { findBinaries } from "./binaries.js"
import { acquireLock } from "./lock.js"
import { initdb, PortTaken, type Postmaster, startPostmaster, stopOrphan } from "./process.js"
import { type Layout, planLayout, type Staged } from "./staging.js"
import { checkAccess, type ServerUser, serverUser } from "./user.js"

export { DirectoryInUse, isAlive } from "./lock.js"

export const SUPERUSER = "postgres"

export interface EmbeddedPostgresOptions {
  /** DATA_DIR/pg. */
  readonly directory: string
  /** The database created when missing and named by `url` (default "gateway"). */
  readonly database?: string | undefined
  /** Extra server settings, `-c name=value` (tests turn off fsync). */
  readonly settings?: Readonly<Record<string, string>> | undefined
  /** Called when the server exits without being asked to. */
  readonly onUnexpectedExit?: ((code: number | null, signal: string | null) => void) | undefined
}

export interface EmbeddedPostgres {
  /** URL of `database`, with the password. */
  readonly url: string
  /** URL of the `postgres` maintenance database (to create and drop databases). */
  readonly adminUrl: string
  readonly directory: string
  /** The cluster: `directory/data`, or `data` in the staging directory. */
  readonly dataDir: string
  /** What was staged outside `directory`, and where. */
  readonly staged: Staged | undefined
  readonly logFile: string
  readonly port: number
  readonly pid: number
  readonly user: ServerUser
  /** initdb's duration when this start created the cluster. */
  readonly initMs: number | undefined
  /** From spawning the server to its database accepting queries. */
  readonly startMs: number
  /** Pid of a server left by a dead gateway that this start stopped first. */
  readonly stoppedOrphan: number | undefined
  /** Fast shutdown, waited for, then the lock is released. */
  readonly stop: () => Promise<void>
}

const DATABASE_NAME = /^[a-z_][a-z0-9_]{0,62}$/

const freePort = (): Promise<number> =>
  new Promise((resolvePort, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address ? resolvePort(address.port) : reject(new Error("no free port"))))
    })
  })

/** The password of an existing cluster, or a new one for a cluster about to be created. */
const passwordOf = (file: string, clusterExists: boolean): string => {
  if (existsSync(file)) return readFileSync(file, "utf8").trim()
  if (clusterExists) throw new Error(`${file} is missing, and the cluster next to it cannot be used without it`)
  const password = randomBytes(24).toString("base64url")
  writeFileSync(file, `${password}\n`, { mode: 0o600, flag: "wx" })
  // The creation mode is filtered by the umask; make it exactly 0600.
  chmodSync(file, 0o600)
  return password
}

/** initdb into a sibling of `data`, renamed when complete (its password file beside it: the server's user reads it). */
const createCluster = async (data: string, password: string, user: ServerUser, initdbPath: string, logFile: string) => {
  if (existsSync(data)) throw new Error(`${data} exists but holds no cluster (no PG_VERSION): move it away`)
  const staging = join(dirname(data), "data.init")
  const pwfile = join(dirname(data), "initdb.pw")
  rmSync(staging, { recursive: true, force: true })
  mkdirSync(staging, { mode: 0o700 })
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 })
  try {
    if (user.switched) {
      chownSync(staging, user.uid, user.gid)
      chownSync(pwfile, user.uid, user.gid)
    }
    await initdb({ initdb: initdbPath, dataDir: staging, passwordFile: pwfile, superuser: SUPERUSER, user, logFile })
  } finally {
    rmSync(pwfile, { force: true })
  }
  renameSync(staging, data)
}

const ensureDatabase = (adminUrl: string, name: string): Promise<void> =>
  Effect.runPromise(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const found = yield* sql`SELECT 1 FROM pg_database WHERE datname = ${name}`
      // The name matched DATABASE_NAME, so quoting it is enough.
      if (found.length === 0) yield* sql.unsafe(`CREATE DATABASE "${name}"`)
    }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(adminUrl), maxConnections: 1 })))
  )

const startOnFreePort = async (run: (port: number) => Promise<Postmaster>): Promise<Postmaster> => {
  // The port is free when chosen but may be taken before the server binds it.
  for (let attempt = 1; ; attempt++) {
    try {
      return await run(await freePort())
    } catch (error) {
      if (!(error instanceof PortTaken) || attempt >= 5) throw error
    }
  }
}

/** Says where the cluster and binaries went; a warning when a reboot may lose them or an old cluster was set aside. */
const logStaged = (directory: string, user: ServerUser, { home, binaries, staged }: Layout): void => {
  if (!staged) return
  logLine(staged.persistent && !staged.setAside ? "info" : "warn", "embedded postgres staged", {
    directory,
    staged_in: staged.root,
    cluster: staged.cluster ? join(home, "data") : undefined,
    binaries: staged.binaries ? dirname(binaries.postgres) : undefined,
    persistent: staged.persistent,
    set_aside: staged.setAside,
    why:
      `PostgreSQL runs as ${user.name}, which could not reach DATA_DIR/pg or the binaries where they are ` +
      "(a 0700 directory above them?): their files are staged instead of changing the modes of your directories"
  })
}

export const startEmbeddedPostgres = async (options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> => {
  const database = options.database ?? "gateway"
  if (!DATABASE_NAME.test(database)) throw new Error(`invalid database name "${database}"`)
  const directory = resolve(options.directory)
  mkdirSync(directory, { recursive: true, mode: 0o755 })
  const release = acquireLock(join(directory, "gateway.lock"), directory)
  try {
    const user = serverUser()
    // The server's user enters this directory (its data/ and initdb's password file are inside).
    if (user.switched) chmodSync(directory, 0o711)
    const layout = planLayout(directory, user, await findBinaries())
    logStaged(directory, user, layout)
    const binaries = layout.binaries
    checkAccess(user, layout.home, binaries.postgres)
    const data = join(layout.home, "data")
    const logFile = join(directory, "postgres.log")
    const clusterExists = existsSync(join(data, "PG_VERSION"))
    const password = passwordOf(join(directory, "password"), clusterExists)
    const stoppedOrphan = await stopOrphan(data)

    let initMs: number | undefined
    if (!clusterExists) {
      const began = performance.now()
      await createCluster(data, password, user, binaries.initdb, logFile)
      initMs = Math.round(performance.now() - began)
    }
    const began = performance.now()
    let stopping = false
    const postmaster = await startOnFreePort((port) =>
      startPostmaster({ postgres: binaries.postgres, dataDir: data, port, user, logFile, settings: options.settings })
    )
    const port = postmaster.port
    const base = `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${port}`
    try {
      await ensureDatabase(`${base}/postgres`, database)
    } catch (error) {
      await postmaster.stop()
      throw error
    }
    postmaster.keeper.once("exit", (code, signal) => {
      if (!stopping) options.onUnexpectedExit?.(code, signal)
    })
    return {
      url: `${base}/${database}`,
      adminUrl: `${base}/postgres`,
      directory,
      dataDir: data,
      staged: layout.staged,
      logFile,
      port,
      pid: postmaster.pid,
      user,
      initMs,
      startMs: Math.round(performance.now() - began),
      stoppedOrphan,
      stop: async () => {
        if (stopping) return
        stopping = true
        try {
          await postmaster.stop()
        } finally {
          release()
        }
      }
    }
  } catch (error) {
    release()
    throw error
  }
}
