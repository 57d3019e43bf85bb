/**
 * A temporary DATA_DIR for a gateway target on the embedded default: its own
 * PostgreSQL lives in `<dir>/pg`. The targets are SIGKILLed, after which the
 * server stops by itself (its keeper sees the pipe close); `remove` waits for
 * that before deleting the directory.
 */
import { chmodSync, existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

export const benchDataDir = (prefix: string) => {
  const path = mkdtempSync(join(tmpdir(), `${prefix}-`))
  // mkdtemp makes it 0700; the server may run as another user (when we are root).
  chmodSync(path, 0o755)
  return {
    path,
    remove: async () => {
      const deadline = Date.now() + 15_000
      while (existsSync(join(path, "pg", "data", "postmaster.pid")) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      rmSync(path, { recursive: true, force: true })
    }
  }
}
