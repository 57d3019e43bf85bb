/**
 * The quick start as a user runs it: the real entry point in its own process,
 * no DATABASE_URL and no REDIS_URL (embedded PGlite on disk, in-process
 * stand-ins), a generated master key — even when CI provides real services.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, registerOrg } from "./support/client.js"
import { type ServerProcess, spawnServer } from "./support/process.js"

let server: ServerProcess
const dataDir = mkdtempSync(join(tmpdir(), "gateway-embedded-"))

beforeAll(async () => {
  server = await spawnServer({ DATABASE_URL: "", REDIS_URL: "", MASTER_KEY: "", DATA_DIR: dataDir, LOG_LEVEL: "info" })
})
afterAll(async () => {
  await server?.stop()
  rmSync(dataDir, { recursive: true, force: true })
})

describe("embedded default", () => {
  it("reports the embedded stores as ready", async () => {
    const ready = await call(server.url, "GET", "/health/ready")
    expect(ready.status).toBe(200)
    expect(ready.body.checks.database.kind).toBe("pglite")
    expect(ready.body.checks.redis.kind).toBe("memory")
  })

  it("generated the master key file with mode 0600 and warned about it", () => {
    const mode = statSync(join(dataDir, "master.key")).mode & 0o777
    expect(mode).toBe(0o600)
    expect(server.output()).toContain("GENERATED A NEW MASTER KEY")
  })

  it("serves a registration and an authenticated call", async () => {
    const org = await registerOrg(server.url)
    const whoami = await call(server.url, "GET", "/api/v1/auth/whoami", { token: org.key })
    expect(whoami.status).toBe(200)
    expect(whoami.body.org_uuid).toBe(org.orgUuid)
  })

  it("logs one JSON line per request with request id, route, status and latency", async () => {
    const reply = await call(server.url, "GET", "/health")
    await new Promise((r) => setTimeout(r, 200))
    const line = server
      .output()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l))
      .find((entry) => entry.request_id === reply.body.request_id)
    expect(line).toMatchObject({ msg: "request", method: "GET", route: "/health", status: 200 })
    expect(typeof line.latency_ms).toBe("number")
  })
})
