/**
 * A small closed-loop HTTP load generator: `connections` keep-alive sockets,
 * each sending the next request as soon as the previous answer arrives, for
 * `seconds`. Prints nothing; returns throughput and latency percentiles.
 * (node:http client: undici 8 does not run on Node 20.)
 */
import { execFileSync } from "node:child_process"
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { Agent, request } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"

export interface LoadResult {
  readonly requests: number
  readonly errors: number
  readonly rps: number
  readonly p50_ms: number
  readonly p99_ms: number
}

export const percentile = (sorted: Float64Array | number[], p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

export const runLoad = async (options: {
  url: string
  /** Fixed path; or give `next` for requests that differ (a path per action), ending when it returns undefined. */
  path?: string
  next?: () => { path: string; body?: string } | undefined
  method?: "GET" | "POST"
  headers?: Record<string, string>
  body?: string | (() => string)
  connections: number
  seconds: number
  expectStatus?: number
  /** Called with each expected answer's body (collected only when given). */
  onAnswer?: (body: string) => void
}): Promise<LoadResult> => {
  const target = new URL(options.url)
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections })
  const latencies: number[] = []
  let errors = 0
  const deadline = performance.now() + options.seconds * 1000
  const keepBody = options.onAnswer !== undefined
  const once = (path: string, body: string | undefined) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(
        {
          agent,
          host: target.hostname,
          port: target.port,
          path,
          method: options.method ?? (body === undefined ? "GET" : "POST"),
          headers: body ? { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...options.headers } : options.headers
        },
        (res) => {
          let text = ""
          if (keepBody) res.setEncoding("utf8")
          res.on("data", (chunk) => {
            if (keepBody) text += chunk
          })
          res.on("end", () => resolve({ status: res.statusCode ?? 0, text }))
          res.on("error", reject)
        }
      )
      req.on("error", reject)
      req.end(body)
    })
  const nextRequest = (): { path: string; body?: string } | undefined =>
    options.next?.() ?? (options.next ? undefined : { path: options.path ?? "/", body: typeof options.body === "function" ? options.body() : options.body })
  const worker = async () => {
    while (performance.now() < deadline) {
      const next = nextRequest()
      if (next === undefined) return
      const started = performance.now()
      try {
        const answer = await once(next.path, next.body)
        if (answer.status !== (options.expectStatus ?? 200)) errors++
        else options.onAnswer?.(answer.text)
        latencies.push(performance.now() - started)
      } catch {
        errors++
      }
    }
  }
  const started = performance.now()
  await Promise.all(Array.from({ length: options.connections }, worker))
  const elapsed = (performance.now() - started) / 1000
  agent.destroy()
  const sorted = Float64Array.from(latencies).sort()
  return {
    requests: latencies.length,
    errors,
    rps: Math.round(latencies.length / elapsed),
    p50_ms: Math.round(percentile(sorted, 50) * 1000) / 1000,
    p99_ms: Math.round(percentile(sorted, 99) * 1000) / 1000
  }
}

const wrkPath = (): string | undefined => {
  for (const candidate of ["/usr/bin/wrk", "/usr/local/bin/wrk"]) if (existsSync(candidate)) return candidate
  return undefined
}

export const hasWrk = (): boolean => wrkPath() !== undefined

const toMs = (text: string): number => {
  const value = Number.parseFloat(text)
  if (text.endsWith("us")) return value / 1000
  if (text.endsWith("ms")) return value
  if (text.endsWith("s")) return value * 1000
  return value
}

/**
 * GET load with wrk (Debian package `wrk`) when it is installed: a C load generator
 * measures uWS's own speed, where the Node client above saturates first. Undefined
 * when wrk is absent (callers fall back to `runLoad`).
 */
export const runWrk = (options: {
  url: string
  path: string
  headers?: Record<string, string>
  connections: number
  seconds: number
  /** A wrk Lua script (its `request` function builds each request: POST bodies, varying paths). */
  script?: string
}): LoadResult | undefined => {
  const wrk = wrkPath()
  if (wrk === undefined) return undefined
  const headerArgs = Object.entries(options.headers ?? {}).flatMap(([name, value]) => ["-H", `${name}: ${value}`])
  let scriptArgs: Array<string> = []
  let scriptDir: string | undefined
  if (options.script !== undefined) {
    scriptDir = mkdtempSync(join(tmpdir(), "wrk-"))
    writeFileSync(join(scriptDir, "load.lua"), options.script)
    scriptArgs = ["-s", join(scriptDir, "load.lua")]
  }
  let out: string
  try {
    out = execFileSync(wrk, ["-t1", `-c${options.connections}`, `-d${options.seconds}s`, "--latency", ...headerArgs, ...scriptArgs, options.url + options.path], {
      encoding: "utf8"
    })
  } finally {
    if (scriptDir !== undefined) rmSync(scriptDir, { recursive: true, force: true })
  }
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0)
  const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0)
  const errors = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0)
  return {
    requests,
    errors,
    rps: Math.round(rps),
    p50_ms: toMs(/\s50%\s+([\d.]+\w+)/.exec(out)?.[1] ?? "0"),
    p99_ms: toMs(/\s99%\s+([\d.]+\w+)/.exec(out)?.[1] ?? "0")
  }
}

/** A ratio or figure to three decimals, for the JSON line. */
export const round3 = (value: number) => Math.round(value * 1000) / 1000

/** p50 and p99 of latency samples in ms (any order), to the microsecond. */
export const latencyPercentiles = (samples: ReadonlyArray<number>) => {
  const sorted = Float64Array.from(samples).sort()
  return { p50: round3(percentile(sorted, 50)), p99: round3(percentile(sorted, 99)) }
}
