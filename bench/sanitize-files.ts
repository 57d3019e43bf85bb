/**
 * `node --import ./scripts/check-node.mjs --import tsx bench/sanitize-files.ts`: file sanitize.
 *
 * 1. OCR pages per second through the pool (`makeOcrPool`, one worker per core) in this process:
 *    a generated page of text (PNG), read BENCH_PAGES (default 4 × cores) times at once.
 * 2. The gateway (src/main.ts in its own process, embedded PostgreSQL in a temporary DATA_DIR):
 *    p50/p99 of a light authenticated route (GET /api/v1/api-keys) and of GET /health, idle, then
 *    while BENCH_UPLOADERS (default 2 × cores) clients upload pages to POST /api/v1/sanitize/file
 *    without pause; also the pages per second the gateway sanitized meanwhile. Target: the light
 *    route's p99 while OCR runs stays within 2× of idle (OCR, image work and mupdf run off the
 *    request loop). BENCH_SECONDS (default 8) per phase. The last output line is one JSON object.
 */
import { availableParallelism } from "node:os"
import { makeOcrPool } from "../src/sanitize/files/ocr.js"
import { textImage } from "../test/support/sanitize-files.js"
import { benchDataDir } from "./support/data-dir.js"
import { startGateway } from "./support/gateway.js"
import { percentile, round3 } from "./support/load.js"

const cores = availableParallelism()
const seconds = Number(process.env.BENCH_SECONDS ?? 8)
const pages = Number(process.env.BENCH_PAGES ?? 4 * cores)
const uploaders = Number(process.env.BENCH_UPLOADERS ?? 2 * cores)
const TARGET_RATIO = 2

const page = await textImage([
  "Patient intake summary, page one",
  "Contact john.doe@example.com or call 555-867-5309",
  "SSN 123-45-6789 card 4111 1111 1111 1111",
  "Visit notes follow; nothing else sensitive here",
  "Quarterly figures were reviewed and approved"
])

const ocrThroughput = async () => {
  const pool = makeOcrPool({ workers: cores, queueLimit: pages })
  try {
    await pool.ocr(page) // start the workers
    const started = performance.now()
    await Promise.all(Array.from({ length: pages }, () => pool.ocr(page)))
    const elapsed = (performance.now() - started) / 1000
    return { pages, seconds: round3(elapsed), pages_per_second: round3(pages / elapsed) }
  } finally {
    await pool.close()
  }
}

/** Sequential GETs for `ms`; latencies in milliseconds, sorted. */
const probe = async (url: string, token: string | undefined, ms: number) => {
  const latencies: number[] = []
  const until = performance.now() + ms
  while (performance.now() < until) {
    const started = performance.now()
    const response = await fetch(url, token ? { headers: { authorization: `Bearer ${token}` } } : {})
    await response.arrayBuffer()
    if (response.status !== 200) throw new Error(`${url} answered ${response.status}`)
    latencies.push(performance.now() - started)
  }
  return latencies.sort((a, b) => a - b)
}

const summary = (sorted: number[]) => ({ requests: sorted.length, p50_ms: round3(percentile(sorted, 50)), p99_ms: round3(percentile(sorted, 99)) })

const main = async () => {
  const ocr = await ocrThroughput()
  console.log(`OCR through the pool (${cores} workers): ${ocr.pages} pages in ${ocr.seconds} s = ${ocr.pages_per_second} pages/s`)
  const dataDir = benchDataDir("bench-sanitize-files")
  const server = await startGateway({ env: { DATABASE_URL: "", DATA_DIR: dataDir.path, SANITIZE_OCR_QUEUE: String(uploaders * 2) }, timeoutMs: 120_000 })
  try {
    const registered = (await fetch(`${server.url}/api/v1/auth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "files@example.test", password: "benchmark password", org_name: "Files Bench" })
    }).then((r) => r.json())) as { api_key: { key: string } }
    const token = registered.api_key.key
    const upload = async () => {
      const form = new FormData()
      form.append("file", new Blob([new Uint8Array(page)]), "page.png")
      const response = await fetch(`${server.url}/api/v1/sanitize/file`, { method: "POST", headers: { authorization: `Bearer ${token}` }, body: form })
      await response.arrayBuffer()
      return response.status
    }
    if ((await upload()) !== 200) throw new Error("upload failed")
    const light = `${server.url}/api/v1/api-keys`
    await probe(light, token, 500)
    const idle = summary(await probe(light, token, seconds * 1000))
    const idleHealth = summary(await probe(`${server.url}/health`, undefined, 2000))
    let running = true
    let sanitized = 0
    let refused = 0
    const load = Array.from({ length: uploaders }, async () => {
      while (running) {
        const status = await upload()
        if (status === 200) sanitized++
        else refused++
      }
    })
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const busyStart = performance.now()
    const startCount = sanitized
    const busy = summary(await probe(light, token, seconds * 1000))
    const busyHealth = summary(await probe(`${server.url}/health`, undefined, 2000))
    const gatewayPagesPerSecond = round3((sanitized - startCount) / ((performance.now() - busyStart) / 1000))
    running = false
    await Promise.all(load)
    const ratio = round3(busy.p99_ms / idle.p99_ms)
    console.log(`light route GET /api/v1/api-keys idle: p50 ${idle.p50_ms} ms, p99 ${idle.p99_ms} ms (${idle.requests} requests)`)
    console.log(`light route while ${uploaders} clients upload pages: p50 ${busy.p50_ms} ms, p99 ${busy.p99_ms} ms (${busy.requests} requests); p99 ratio ${ratio} (target <= ${TARGET_RATIO})`)
    console.log(`GET /health idle p99 ${idleHealth.p99_ms} ms, busy p99 ${busyHealth.p99_ms} ms`)
    console.log(`gateway sanitized ${gatewayPagesPerSecond} pages/s while measured (${refused} uploads refused busy)`)
    console.log(
      JSON.stringify({
        bench: "sanitize-files",
        cores,
        ocr_pool: ocr,
        gateway_pages_per_second: gatewayPagesPerSecond,
        uploads_refused_busy: refused,
        light_route: { idle, busy, p99_ratio: ratio, target_ratio: TARGET_RATIO, within_target: ratio <= TARGET_RATIO },
        health: { idle: idleHealth, busy: busyHealth }
      })
    )
  } finally {
    await server.stop()
    await dataDir.remove()
  }
}

await main()
