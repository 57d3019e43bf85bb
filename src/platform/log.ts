/**
 * JSON log lines on stdout. Kept outside Effect's logger so the transport can
 * log after a request's fiber has ended, at the cost of one write per line.
 */
type Level = "debug" | "info" | "warn" | "error"
const order: Record<Level | "silent", number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 }

let threshold = order[(process.env.LOG_LEVEL as Level | "silent") ?? "info"] ?? order.info

export const setLogLevel = (level: Level | "silent") => {
  threshold = order[level]
}

export const logLine = (level: Level, msg: string, fields: Record<string, unknown> = {}) => {
  if (order[level] < threshold) return
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields })}\n`)
}
