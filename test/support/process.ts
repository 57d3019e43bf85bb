/** Runs the service as a separate Node process (the real entry point), for multi-process and crash tests. */
import { type ChildProcess, spawn } from "node:child_process"
import { freePort } from "./server.js"

export interface ServerProcess {
  readonly url: string
  readonly child: ChildProcess
  readonly output: () => string
  /** Still running (a process killed by a signal has `signalCode` set and `exitCode` null). */
  readonly running: () => boolean
  /** SIGKILL, then wait for the exit. */
  readonly kill: () => Promise<void>
  /** SIGTERM (graceful drain), SIGKILL after 10 s; returns at once for a process already gone. */
  readonly stop: () => Promise<void>
}

const startOnce = async (env: Record<string, string>): Promise<ServerProcess> => {
  const port = await freePort()
  let output = ""
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    // vitest sets BASE_URL to "/" (Vite's base path); the gateway's is its own address.
    env: { ...process.env, LOG_LEVEL: "warn", HOST: "127.0.0.1", PORT: String(port), BASE_URL: `http://127.0.0.1:${port}`, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  child.stdout!.on("data", (data) => (output += data))
  child.stderr!.on("data", (data) => (output += data))
  const running = () => child.exitCode === null && child.signalCode === null
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const url = `http://127.0.0.1:${port}`
  // Generous: a start under tsx on a loaded 2-core machine took up to a minute.
  const deadline = Date.now() + 90_000
  for (;;) {
    if (!running()) throw new Error(`server exited early (${child.exitCode ?? child.signalCode}):\n${output}`)
    try {
      if ((await fetch(`${url}/health`)).ok) break
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
    running,
    kill: async () => {
      if (running()) child.kill("SIGKILL")
      await exited
    },
    stop: async () => {
      if (!running()) return
      child.kill("SIGTERM")
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000)
      await exited
      clearTimeout(timer)
    }
  }
}

/** Starts the server on a free port; retried on another port if the chosen one was taken before it listened. */
export const spawnServer = async (env: Record<string, string>, attempts = 3): Promise<ServerProcess> => {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(env)
    } catch (error) {
      const portTaken = error instanceof Error && error.message.includes("could not listen")
      if (!portTaken || attempt >= attempts) throw error
    }
  }
}
