/**
 * The quick start as a user runs it: the real entry point in its own process,
 * no DATABASE_URL and no REDIS_URL (its own PostgreSQL under DATA_DIR/pg,
 * in-process stand-ins), a generated master key — even when CI provides real
 * services. Then the embedded cluster's life: restart, a second process on the
 * same DATA_DIR, and a SIGKILLed gateway.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir, userInfo } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { isAlive } from "../src/platform/db/embedded/index.js"
import { call, type Org, registerOrg } from "./support/client.js"
import { eventually } from "./support/eventually.js"
import { type ServerProcess, spawnServer } from "./support/process.js"

const dataDir = mkdtempSync(join(tmpdir(), "gateway-embedded-"))
// mkdtemp makes it 0700; as root, PostgreSQL runs as the postgres user, which must enter it.
chmodSync(dataDir, 0o755)
const pgDir = join(dataDir, "pg")
const env = { DATABASE_URL: "", REDIS_URL: "", MASTER_KEY: "", DATA_DIR: dataDir, LOG_LEVEL: "info" }

let server: ServerProcess | undefined
let org: Org

/** The postmaster's pid from its lock file, while it has one. */
const postmasterPid = (): number | undefined => {
  const file = join(pgDir, "data", "postmaster.pid")
  return existsSync(file) ? Number.parseInt(readFileSync(file, "utf8"), 10) : undefined
}

const gone = async (pid: number, ms = 15_000): Promise<boolean> => {
  const deadline = Date.now() + ms
  while (isAlive(pid)) {
    if (Date.now() > deadline) return false
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return true
}

const logLines = (output: string) =>
  output
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line))

beforeAll(async () => {
  server = await spawnServer(env)
})
afterAll(async () => {
  await server?.stop()
  rmSync(dataDir, { recursive: true, force: true })
})

describe("embedded default", () => {
  it("reports the embedded stores as ready", async () => {
    const ready = await call(server!.url, "GET", "/health/ready")
    expect(ready.status).toBe(200)
    expect(ready.body.checks.database.kind).toBe("embedded")
    expect(ready.body.checks.redis.kind).toBe("memory")
  })

  it("runs PostgreSQL under DATA_DIR/pg as an unprivileged user, logging to its own file", () => {
    const started = logLines(server!.output()).find((line) => line.msg === "embedded postgres ready")
    const expectedUser = userInfo().uid === 0 ? "postgres" : userInfo().username
    expect(started).toMatchObject({ directory: pgDir, user: expectedUser, log: join(pgDir, "postgres.log") })
    expect(typeof started.initdb_ms).toBe("number")
    expect(started.pid).toBe(postmasterPid())
    expect(statSync(join(pgDir, "data")).uid).toBe(started.uid)
    expect(statSync(join(pgDir, "password")).mode & 0o777).toBe(0o600)
    expect(readFileSync(join(pgDir, "postgres.log"), "utf8")).toContain("database system is ready to accept connections")
    expect(server!.output()).not.toContain("database system is ready")
    expect(readFileSync(join(pgDir, "gateway.lock"), "utf8").trim()).toBe(String(server!.child.pid))
  })

  it("generated the master key file with mode 0600 and warned about it", () => {
    const mode = statSync(join(dataDir, "master.key")).mode & 0o777
    expect(mode).toBe(0o600)
    expect(server!.output()).toContain("GENERATED A NEW MASTER KEY")
  })

  it("serves a registration and an authenticated call", async () => {
    org = await registerOrg(server!.url)
    const whoami = await call(server!.url, "GET", "/api/v1/auth/whoami", { token: org.key })
    expect(whoami.status).toBe(200)
    expect(whoami.body.org_uuid).toBe(org.orgUuid)
  })

  it("logs one JSON line per request with request id, route, status and latency", async () => {
    const reply = await call(server!.url, "GET", "/health")
    // Until the process has written the line out.
    const line = await eventually(() => logLines(server!.output()).find((entry) => entry.request_id === reply.body.request_id) ?? false, {
      timeoutMs: 5_000,
      intervalMs: 10
    })
    expect(line).toMatchObject({ msg: "request", method: "GET", route: "/health", status: 200 })
    expect(typeof line.latency_ms).toBe("number")
  })

  it("refuses a second gateway process on the same DATA_DIR, naming the directory and the owner", async () => {
    const second = spawnServer(env, 1)
    await expect(second).rejects.toThrow(`${pgDir} is in use by gateway process ${server!.child.pid}`)
    // The first one is untouched.
    expect((await call(server!.url, "GET", "/health/ready")).status).toBe(200)
  })

  it("stops PostgreSQL with the gateway and keeps the data across a restart", async () => {
    const pid = postmasterPid()!
    await server!.stop()
    expect(isAlive(pid)).toBe(false)
    expect(postmasterPid()).toBeUndefined()
    expect(existsSync(join(pgDir, "gateway.lock"))).toBe(false)

    server = await spawnServer(env)
    const started = logLines(server.output()).find((line) => line.msg === "embedded postgres ready")
    expect(started.initdb_ms).toBeUndefined()
    const whoami = await call(server.url, "GET", "/api/v1/auth/whoami", { token: org.key })
    expect(whoami.status).toBe(200)
    expect(whoami.body.org_uuid).toBe(org.orgUuid)
  })

  it("leaves no PostgreSQL running when the gateway is SIGKILLed, and the next start works", async () => {
    const pid = postmasterPid()!
    expect(isAlive(pid)).toBe(true)
    await server!.kill()
    // Nobody stops it but the keeper, which sees the gateway's pipe close.
    expect(await gone(pid)).toBe(true)
    // The lock names a dead process: the next start takes it over.
    expect(existsSync(join(pgDir, "gateway.lock"))).toBe(true)

    server = await spawnServer(env)
    expect(postmasterPid()).not.toBe(pid)
    const whoami = await call(server.url, "GET", "/api/v1/auth/whoami", { token: org.key })
    expect(whoami.status).toBe(200)
    expect(readFileSync(join(pgDir, "gateway.lock"), "utf8").trim()).toBe(String(server.child.pid))
  })
})
