/**
 * JSON log lines on stdout. Kept outside Effect's logger so the transport can
 * log after a request's fiber has ended. Lines are gathered and written once
 * per event-loop turn: stdout to a file or pipe is a blocking write on Linux,
 * and one write per request would cost a system call each.
 */
type Level = "debug" | "info" | "warn" | "error"
const order: Record<Level | "silent", number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 }

let threshold = order[(process.env.LOG_LEVEL as Level | "silent") ?? "info"] ?? order.info
let pending = ""
let scheduled = false

const flush = () => {
  scheduled = false
  if (pending === "") return
  const text = pending
  pending = ""
  process.stdout.write(text)
}

process.on("exit", flush)

export const setLogLevel = (level: Level | "silent") => {
  threshold = order[level]
}

export const logLine = (level: Level, msg: string, fields: Record<string, unknown> = {}) => {
  if (order[level] < threshold) return
  pending += `${JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields })}\n`
  if (pending.length > 64 * 1024) return flush()
  if (!scheduled) {
    scheduled = true
    setImmediate(flush)
  }
}
