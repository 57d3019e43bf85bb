/**
 * Without DATABASE_URL, one embedded PostgreSQL serves the whole run: started
 * here in a temporary directory, handed to the workers as `databaseServerUrl`
 * (test/support/setup.ts), and stopped when the run ends. Each test file
 * still gets a database of its own (freshDatabaseUrl).
 */
import { chmodSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { TestProject } from "vitest/node"
import { startEmbeddedPostgres } from "../../src/platform/db/embedded/index.js"

declare module "vitest" {
  export interface ProvidedContext {
    /** Admin URL of the run's embedded PostgreSQL; empty when DATABASE_URL is set. */
    databaseServerUrl: string
  }
}

export default async function setup(project: TestProject) {
  if (process.env.DATABASE_URL) {
    project.provide("databaseServerUrl", "")
    return
  }
  const root = mkdtempSync(join(tmpdir(), "gateway-test-pg-"))
  // mkdtemp makes it 0700; the server may run as another user (we may be root).
  chmodSync(root, 0o755)
  const cluster = await startEmbeddedPostgres({
    directory: join(root, "pg"),
    database: "postgres",
    // Throwaway data: durability costs time and nothing here needs it.
    settings: { fsync: "off", synchronous_commit: "off", full_page_writes: "off", max_connections: "300" }
  })
  project.provide("databaseServerUrl", cluster.adminUrl)
  return async () => {
    await cluster.stop()
    rmSync(root, { recursive: true, force: true })
  }
}
