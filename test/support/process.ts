/** Runs the service as a separate Node process (the real entry point), for multi-process tests. */
import { type ChildProcess, spawn } from "node:child_process"
import { freePort } from "./server.js"

export interface ServerProcess {
  readonly url: string
  readonly child: ChildProcess
  readonly output: () => string
  readonly stop: () => Promise<void>
}

export const spawnServer = async (env: Record<string, string>): Promise<ServerProcess> => {
  const port = await freePort()
  let output = ""
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    // vitest sets BASE_URL to "/" (Vite's base path); the gateway's is its own address.
    env: { ...process.env, LOG_LEVEL: "warn", HOST: "127.0.0.1", PORT: String(port), BASE_URL: `http://127.0.0.1:${port}`, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  child.stdout!.on("data", (data) => (output += data))
  child.stderr!.on("data", (data) => (output += data))
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 60_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited early (${child.exitCode}):\n${output}`)
    try {
      const reply = await fetch(`${url}/health`)
      if (reply.ok) break
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill("SIGKILL")
      throw new Error(`server did not start:\n${output}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  return {
    url,
    child,
    output: () => output,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve()
        child.once("exit", () => resolve())
        child.kill("SIGTERM")
        setTimeout(() => child.kill("SIGKILL"), 10_000).unref()
      })
  }
}
