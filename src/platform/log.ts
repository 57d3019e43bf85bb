/**
 * One JSON line shape on stdout for everything the service logs:
 * `{"time":…,"level":…,"msg":…,...fields}`.
 *
 * Effect's logs (`Effect.logInfo(…)`, with `Effect.annotateLogs` fields and a
 * cause) reach stdout through `gatewayLogger`, an Effect `Logger`; code that runs
 * outside a fiber (the transport logs after a request's fiber has ended, process
 * signal handlers) calls `logLine`, which is that logger's own line writer. Both
 * share one level threshold (`setLogLevel`).
 *
 * Lines are gathered and written once per event-loop turn: stdout to a file or
 * pipe is a blocking write on Linux, and one write per request would cost a
 * system call each.
 */
import * as Cause from "effect/Cause"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import type * as LogLevel from "effect/LogLevel"
import * as References from "effect/References"

export type Level = "debug" | "info" | "warn" | "error"
export type LogThreshold = Level | "silent"

/** Effect's levels by severity; a line is written when its level's rank reaches the threshold's. */
const rank: Record<LogLevel.LogLevel, number> = { All: 0, Trace: 5, Debug: 10, Info: 20, Warn: 30, Error: 40, Fatal: 50, None: 100 }
const levelName: Record<LogLevel.LogLevel, string> = {
  All: "all",
  Trace: "trace",
  Debug: "debug",
  Info: "info",
  Warn: "warn",
  Error: "error",
  Fatal: "fatal",
  None: "none"
}
const thresholdRank: Record<LogThreshold, number> = { debug: rank.Debug, info: rank.Info, warn: rank.Warn, error: rank.Error, silent: rank.None }
const lineRank: Record<Level, number> = { debug: rank.Debug, info: rank.Info, warn: rank.Warn, error: rank.Error }

// Info until the configuration is read (`setLogLevel` from main and the test support).
let threshold: number = rank.Info
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

/** The one level control: `gatewayLogger` and `logLine` both read it, so it also applies to a running server. */
export const setLogLevel = (level: LogThreshold) => {
  threshold = thresholdRank[level]
}

/** For values JSON has no form for (Effect's fields may hold any value): bigints as digits, errors as their text. */
const lenient = (_key: string, value: unknown) =>
  typeof value === "bigint" ? value.toString() : value instanceof Error ? `${value.name}: ${value.message}` : value

const write = (date: Date, level: string, msg: string, fields: Record<string, unknown>, replacer?: typeof lenient) => {
  pending += `${JSON.stringify({ time: date.toISOString(), level, msg, ...fields }, replacer)}\n`
  if (pending.length > 64 * 1024) return flush()
  if (!scheduled) {
    scheduled = true
    setImmediate(flush)
  }
}

/** Whether a line at `level` would be written now (lets hot paths skip building its fields). */
export const logs = (level: Level): boolean => lineRank[level] >= threshold

/** A line from outside a fiber, in the shape `gatewayLogger` writes. */
export const logLine = (level: Level, msg: string, fields: Record<string, unknown> = {}) => {
  if (lineRank[level] < threshold) return
  write(new Date(), level, msg, fields)
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value) && !Cause.isCause(value)

/**
 * Effect's logger in the line shape: the first message part is `msg`, a record
 * after it and the fiber's log annotations become fields, any other parts
 * `details`, log spans `spans` (milliseconds), and a non-empty cause `cause`
 * (rendered with `Cause.pretty`).
 */
export const gatewayLogger = Logger.make<unknown, void>(({ cause, date, fiber, logLevel, message }) => {
  if (rank[logLevel] < threshold) return
  const parts = Array.isArray(message) ? message : [message]
  const first = parts[0]
  const fields: Record<string, unknown> = { ...fiber.getRef(References.CurrentLogAnnotations) }
  const details: Array<unknown> = []
  for (let i = 1; i < parts.length; i++) {
    const part = parts[i]
    if (isRecord(part)) Object.assign(fields, part)
    else details.push(part)
  }
  if (details.length > 0) fields.details = details.length === 1 ? details[0] : details
  const spans = fiber.getRef(References.CurrentLogSpans)
  if (spans.length > 0) {
    const now = date.getTime()
    fields.spans = Object.fromEntries(spans.map(([label, started]) => [label, now - started]))
  }
  if (cause.reasons.length > 0) fields.cause = Cause.pretty(cause)
  write(date, levelName[logLevel], typeof first === "string" ? first : (JSON.stringify(first, lenient) ?? String(first)), fields, lenient)
})

/**
 * `gatewayLogger` as the only logger. Effect's own minimum level is lowered to
 * Debug so that `setLogLevel` alone decides (tests raise and lower it on a
 * running server); Trace stays below every threshold.
 */
export const loggerLayer = Layer.mergeAll(Logger.layer([gatewayLogger]), Layer.succeed(References.MinimumLogLevel, "Debug"))
