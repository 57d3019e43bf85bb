/** Captures the JSON log lines the in-process server writes (log.ts batches them onto stdout). */
import { vi } from "vitest"
import { setLogLevel } from "../../src/platform/log.js"

export type LogLine = Record<string, unknown> & { level: string; msg: string }

export const captureLog = async <A>(run: () => Promise<A>): Promise<{ result: A; lines: LogLine[] }> => {
  let text = ""
  const spy = vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
    text += typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8")
    return true
  })
  setLogLevel("info")
  try {
    const result = await run()
    // Lines are flushed once per event-loop turn.
    await new Promise((resolve) => setImmediate(resolve))
    await new Promise((resolve) => setImmediate(resolve))
    const lines = text
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as LogLine)
    return { result, lines }
  } finally {
    spy.mockRestore()
    setLogLevel((process.env.TEST_LOG_LEVEL as "info" | undefined) ?? "silent")
  }
}
