/**
 * A small closed-loop HTTP load generator: `connections` keep-alive sockets,
 * each sending the next request as soon as the previous answer arrives, for
 * `seconds`. Prints nothing; returns throughput and latency percentiles.
 * (node:http client: undici 8 does not run on Node 20.)
 */
import { Agent, request } from "node:http"

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
  path: string
  method?: "GET" | "POST"
  headers?: Record<string, string>
  body?: string | (() => string)
  connections: number
  seconds: number
  expectStatus?: number
}): Promise<LoadResult> => {
  const target = new URL(options.url)
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections })
  const latencies: number[] = []
  let errors = 0
  const deadline = performance.now() + options.seconds * 1000
  const once = (body: string | undefined) =>
    new Promise<number>((resolve, reject) => {
      const req = request(
        {
          agent,
          host: target.hostname,
          port: target.port,
          path: options.path,
          method: options.method ?? "GET",
          headers: body ? { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...options.headers } : options.headers
        },
        (res) => {
          res.on("data", () => {})
          res.on("end", () => resolve(res.statusCode ?? 0))
          res.on("error", reject)
        }
      )
      req.on("error", reject)
      req.end(body)
    })
  const worker = async () => {
    while (performance.now() < deadline) {
      const started = performance.now()
      try {
        const status = await once(typeof options.body === "function" ? options.body() : options.body)
        if (status !== (options.expectStatus ?? 200)) errors++
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
