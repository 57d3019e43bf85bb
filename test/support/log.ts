/** Captures the JSON log lines the in-process server writes (log.ts batches them onto stdout). */
import * as Effect from "effect/Effect"
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

/**
 * Everything written to stdout while the scope is open, at the most talkative level (for checks that
 * no secret is ever logged); stdout and the quiet level come back when the scope closes. Open it
 * after the server started: starting sets the level again.
 */
export const captureDebugOutput: Effect.Effect<Array<string>, never, import("effect/Scope").Scope> = Effect.map(
  Effect.acquireRelease(
    Effect.sync(() => {
      const logged: Array<string> = []
      const realWrite = process.stdout.write.bind(process.stdout)
      setLogLevel("debug")
      process.stdout.write = ((chunk: string | Uint8Array) => {
        logged.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"))
        return true
      }) as typeof process.stdout.write
      return { logged, realWrite }
    }),
    ({ realWrite }) =>
      Effect.sync(() => {
        process.stdout.write = realWrite
        setLogLevel("silent")
      })
  ),
  ({ logged }) => logged
)
