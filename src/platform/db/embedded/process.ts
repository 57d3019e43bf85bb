/**
 * initdb and the postmaster as child processes of the gateway.
 *
 * The postmaster runs under a small `sh` keeper in its own session (so a
 * terminal's Ctrl-C reaches only the gateway, which then stops it in order).
 * The keeper's stdin is a pipe from the gateway that is never written: a
 * watcher blocks reading it and, at end of file, asks the postmaster for a
 * fast shutdown (SIGINT). The gateway ends the pipe to stop the cluster, and
 * the kernel ends it when the gateway dies, even by SIGKILL.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { closeSync, existsSync, openSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { isAlive, readPid } from "./lock.js"
import { runAs, type ServerUser } from "./user.js"

const KEEPER = [
  "exec 3<&0 </dev/null",
  '"$@" 3<&- &',
  "pg=$!",
  '{ read -r _ <&3; kill -INT "$pg" 2>/dev/null; } &',
  "watcher=$!",
  "exec 3<&-",
  'wait "$pg"',
  "status=$?",
  'kill "$watcher" 2>/dev/null',
  'exit "$status"'
].join("\n")

/** Children see none of the gateway's environment (MASTER_KEY, ADMIN_KEY, ...). */
const childEnv = (): NodeJS.ProcessEnv => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", LC_ALL: "C", TZ: process.env.TZ ?? "UTC" })

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** True when `promise` settles within `ms` (the timer does not outlive it). */
const within = (promise: Promise<unknown>, ms: number): Promise<boolean> => {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)))
  return Promise.race([promise.then(() => true), timeout]).finally(() => clearTimeout(timer))
}

const tailOf = (logFile: string, from: number): string => {
  try {
    return readFileSync(logFile, "utf8").slice(from).trim().split("\n").slice(-15).join("\n")
  } catch {
    return ""
  }
}

const sizeOf = (file: string): number => (existsSync(file) ? statSync(file).size : 0)

export interface InitdbOptions {
  readonly initdb: string
  readonly dataDir: string
  readonly passwordFile: string
  readonly superuser: string
  readonly user: ServerUser
  readonly logFile: string
}

/** Creates a cluster in `dataDir`, which must not exist or be empty; its output goes to the log. */
export const initdb = async (options: InitdbOptions): Promise<void> => {
  const logFd = openSync(options.logFile, "a", 0o600)
  const from = sizeOf(options.logFile)
  try {
    const child = spawn(
      options.initdb,
      [
        `--pgdata=${options.dataDir}`,
        `--username=${options.superuser}`,
        `--pwfile=${options.passwordFile}`,
        "--auth=scram-sha-256",
        "--encoding=UTF8",
        // Collation and character classes from PostgreSQL itself, not the host's locales.
        "--locale=C",
        "--locale-provider=builtin",
        "--builtin-locale=C.UTF-8",
        "--no-instructions"
      ],
      { ...runAs(options.user), env: childEnv(), stdio: ["ignore", logFd, logFd] }
    )
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once("error", reject)
      child.once("exit", (exitCode) => resolve(exitCode))
    })
    if (code !== 0) throw new Error(`initdb failed (exit ${code}):\n${tailOf(options.logFile, from)}`)
  } finally {
    closeSync(logFd)
  }
}

export interface PostmasterOptions {
  readonly postgres: string
  readonly dataDir: string
  readonly port: number
  readonly user: ServerUser
  readonly logFile: string
  /** Extra `-c name=value` settings (tests turn off fsync). */
  readonly settings?: Readonly<Record<string, string>> | undefined
  readonly timeoutMs?: number | undefined
}

export interface Postmaster {
  readonly pid: number
  readonly port: number
  readonly keeper: ChildProcess
  /** Fast shutdown, waited for; SIGQUIT then SIGKILL when it hangs. */
  readonly stop: () => Promise<void>
}

export class PortTaken extends Error {}

const postmasterPidFile = (dataDir: string) => join(dataDir, "postmaster.pid")

/**
 * The postmaster's pid once postmaster.pid names our port (4th line) and says
 * it accepts connections (8th line).
 */
const readyPid = (dataDir: string, port: number): number | undefined => {
  try {
    const lines = readFileSync(postmasterPidFile(dataDir), "utf8").split("\n")
    const pid = Number.parseInt(lines[0], 10)
    return lines[3]?.trim() === String(port) && lines[7]?.trim() === "ready" && isAlive(pid) ? pid : undefined
  } catch {
    return undefined
  }
}

const waitGone = async (pid: number, ms: number): Promise<boolean> => {
  const deadline = Date.now() + ms
  while (isAlive(pid)) {
    if (Date.now() > deadline) return false
    await sleep(25)
  }
  return true
}

/** Stops a postmaster by pid: fast shutdown, then immediate (SIGQUIT), then SIGKILL. */
export const stopPid = async (pid: number, graceMs = 30_000): Promise<void> => {
  for (const [signal, wait] of [
    ["SIGINT", graceMs],
    ["SIGQUIT", 5_000],
    ["SIGKILL", 5_000]
  ] as const) {
    try {
      process.kill(pid, signal)
    } catch {
      return
    }
    if (await waitGone(pid, wait)) return
  }
}

/**
 * A postmaster still running on `dataDir` although no gateway holds its lock
 * (the keeper was killed too, or the machine is slow to stop it): stop it.
 * A live pid that does not look like it (pid reused) is left to PostgreSQL's
 * own check, which refuses to start and says so: removing the file of a
 * server we failed to recognise would let two run on one directory.
 */
export const stopOrphan = async (dataDir: string): Promise<number | undefined> => {
  const file = postmasterPidFile(dataDir)
  const pid = readPid(file)
  if (pid === undefined || !isAlive(pid)) return undefined
  const cmdline = `/proc/${pid}/cmdline`
  if (existsSync(cmdline) && !readFileSync(cmdline, "utf8").includes(dataDir)) return undefined
  await stopPid(pid)
  return pid
}

export const startPostmaster = async (options: PostmasterOptions): Promise<Postmaster> => {
  const settings = {
    listen_addresses: "127.0.0.1",
    port: String(options.port),
    // TCP only: a socket path under DATA_DIR may pass the 107-byte limit, and /tmp is not always ours.
    unix_socket_directories: "",
    ...options.settings
  }
  const args = [options.postgres, "-D", options.dataDir, ...Object.entries(settings).flatMap(([name, value]) => ["-c", `${name}=${value}`])]
  const logFd = openSync(options.logFile, "a", 0o600)
  const from = sizeOf(options.logFile)
  let keeper: ChildProcess
  try {
    keeper = spawn("/bin/sh", ["-c", KEEPER, "postgres-keeper", ...args], {
      ...runAs(options.user),
      env: childEnv(),
      detached: true,
      stdio: ["pipe", logFd, logFd]
    })
  } finally {
    closeSync(logFd)
  }
  // Neither the child nor its pipe keeps the gateway's event loop alive.
  keeper.unref()
  ;(keeper.stdin as unknown as { unref?: () => void }).unref?.()
  let exited = keeper.exitCode !== null || keeper.signalCode !== null
  const exit = new Promise<void>((resolve) => {
    keeper.once("exit", () => {
      exited = true
      resolve()
    })
    keeper.once("error", () => {
      exited = true
      resolve()
    })
  })

  const deadline = Date.now() + (options.timeoutMs ?? 60_000)
  let pid: number | undefined
  while ((pid = readyPid(options.dataDir, options.port)) === undefined) {
    if (exited) {
      const tail = tailOf(options.logFile, from)
      if (/could not bind|Address already in use/i.test(tail)) throw new PortTaken(`port ${options.port} is taken`)
      throw new Error(`PostgreSQL exited at start (see ${options.logFile}):\n${tail}`)
    }
    if (Date.now() > deadline) {
      keeper.stdin?.end()
      await within(exit, 30_000)
      throw new Error(`PostgreSQL did not become ready in time (see ${options.logFile}):\n${tailOf(options.logFile, from)}`)
    }
    await sleep(25)
  }
  const postmasterPid = pid
  return {
    pid: postmasterPid,
    port: options.port,
    keeper,
    stop: async () => {
      keeper.stdin?.end()
      const finished = await within(exit, 30_000)
      if (!finished || isAlive(postmasterPid)) await stopPid(postmasterPid, finished ? 30_000 : 1_000)
    }
  }
}
