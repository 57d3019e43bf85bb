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
 *    request loop). BENCH_SECONDS (default 8) per phase.
 * 3. Hostile files (test/support/hostile-files.ts: bombs, huge declared sizes, too many pages,
 *    deep nesting, lying lengths), sent first, one after another and then all at once, to the
 *    gateway that has served one ordinary page (its OCR pool and a decoder worker started, as on
 *    any gateway in use). Idle RSS is its resident memory then, the median over 3 s; peak RSS the
 *    most it reaches, sampled every 10 ms, while the hostile files are sent. Target: every one
 *    refused with its 422, the gateway alive, the peak below 2× idle. The RSS right after start
 *    (nothing served) is printed too. Phases 1 and 2 follow on the same gateway.
 * The gateway runs compiled (`scripts/build.mjs` into dist/ first) with `npm start`'s memory
 * budget (scripts/start-flags.mjs), as in production.
 */
import { execFileSync } from "node:child_process"
import { availableParallelism } from "node:os"
import { makeOcrPool } from "../src/sanitize/files/ocr.js"
import { hostileUploads } from "../test/support/hostile-files.js"
import { textImage } from "../test/support/sanitize-files.js"
import { benchDataDir } from "./support/data-dir.js"
import { memoryOf, startGateway } from "./support/gateway.js"
import { START_BUDGET_ARGS } from "./support/harness.js"
import { percentile, round3 } from "./support/load.js"

const cores = availableParallelism()
const seconds = Number(process.env.BENCH_SECONDS ?? 8)
const pages = Number(process.env.BENCH_PAGES ?? 4 * cores)
const uploaders = Number(process.env.BENCH_UPLOADERS ?? 2 * cores)
const TARGET_RATIO = 2
const RSS_TARGET_RATIO = 2

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

const mb = (kb: number) => Math.round(kb / 102.4) / 10

/** The gateway's RSS sampled every 10 ms while `work` runs: the highest, in KB. */
const peakRssWhile = async (pid: number, work: () => Promise<unknown>) => {
  let peak = memoryOf(pid).rss_kb
  const sampler = setInterval(() => {
    peak = Math.max(peak, memoryOf(pid).rss_kb)
  }, 10)
  try {
    await work()
  } finally {
    clearInterval(sampler)
  }
  return Math.max(peak, memoryOf(pid).rss_kb)
}

/** Median RSS over `ms` of idleness, in KB. */
const idleRss = async (pid: number, ms: number) => {
  const samples: number[] = []
  for (const until = performance.now() + ms; performance.now() < until; await new Promise((resolve) => setTimeout(resolve, 50))) samples.push(memoryOf(pid).rss_kb)
  return samples.sort((a, b) => a - b)[Math.floor(samples.length / 2)]!
}

type Send = (file: Uint8Array, name: string, fields?: Record<string, string>) => Promise<{ status: number; code: string | undefined }>

/** Phase 3: the hostile files against the idle gateway; its RSS before and at most while they are sent. */
const hostilePhase = async (pid: number, url: string, send: Send, freshKb: number) => {
  const idleKb = await idleRss(pid, 3000)
  const hostile = hostileUploads()
  const answers: Array<{ name: string; status: number; code: string | undefined; expected: string }> = []
  const peakKb = await peakRssWhile(pid, async () => {
    for (const file of hostile) answers.push({ name: file.name, ...(await send(file.file(), "hostile.bin", file.fields)), expected: file.refusal.code })
    const together = await Promise.all(hostile.map((file) => send(file.file(), "hostile.bin", file.fields)))
    answers.push(...together.map((reply, i) => ({ name: `${hostile[i]!.name} (all at once)`, ...reply, expected: hostile[i]!.refusal.code })))
  })
  const alive = (await fetch(`${url}/health`)).status === 200
  const wrong = answers.filter((answer) => answer.status !== 422 || answer.code !== answer.expected)
  const ratio = round3(peakKb / idleKb)
  console.log(`hostile files: ${answers.length - wrong.length} of ${answers.length} refused with their 422; gateway ${alive ? "alive" : "DEAD"}`)
  for (const answer of wrong) console.log(`  not refused as expected: ${answer.name} → ${answer.status} ${answer.code ?? ""}`)
  console.log(`gateway RSS right after start ${mb(freshKb)} MB, idle after one ordinary page ${mb(idleKb)} MB`)
  console.log(`gateway RSS peak while hostile files were sent ${mb(peakKb)} MB: ${ratio}× idle (target < ${RSS_TARGET_RATIO}), ${round3(peakKb / freshKb)}× the RSS after start`)
  return {
    files: hostile.length,
    answers: answers.length,
    refused_as_expected: answers.length - wrong.length,
    gateway_alive: alive,
    rss_after_start_mb: mb(freshKb),
    rss_idle_mb: mb(idleKb),
    rss_peak_mb: mb(peakKb),
    rss_ratio: ratio,
    rss_ratio_to_after_start: round3(peakKb / freshKb),
    target_ratio: RSS_TARGET_RATIO,
    within_target: ratio < RSS_TARGET_RATIO && wrong.length === 0 && alive
  }
}

const main = async () => {
  const ocr = await ocrThroughput()
  console.log(`OCR through the pool (${cores} workers): ${ocr.pages} pages in ${ocr.seconds} s = ${ocr.pages_per_second} pages/s`)
  console.error("building (tsc) into dist/ ...")
  execFileSync(process.execPath, ["scripts/build.mjs"], { stdio: "inherit" })
  const dataDir = benchDataDir("bench-sanitize-files")
  const server = await startGateway({
    dist: "dist",
    env: { DATABASE_URL: "", DATA_DIR: dataDir.path, SANITIZE_OCR_QUEUE: String(uploaders * 2) },
    nodeArgs: START_BUDGET_ARGS,
    timeoutMs: 120_000
  })
  try {
    const registered = (await fetch(`${server.url}/api/v1/auth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "files@example.test", password: "benchmark password", org_name: "Files Bench" })
    }).then((r) => r.json())) as { api_key: { key: string } }
    const token = registered.api_key.key
    const send: Send = async (file, name, fields = {}) => {
      const form = new FormData()
      form.append("file", new Blob([new Uint8Array(file)]), name)
      for (const [key, value] of Object.entries(fields)) form.append(key, value)
      const response = await fetch(`${server.url}/api/v1/sanitize/file`, { method: "POST", headers: { authorization: `Bearer ${token}` }, body: form })
      const body = (await response.json()) as { code?: string }
      return { status: response.status, code: body.code }
    }
    const upload = async () => (await send(page, "page.png")).status
    const freshKb = await idleRss(server.pid, 3000)
    if ((await upload()) !== 200) throw new Error("upload failed")
    const hostile = await hostilePhase(server.pid, server.url, send, freshKb)
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

    const afterRunKb = memoryOf(server.pid).rss_kb
    console.log(`gateway RSS after every phase ${mb(afterRunKb)} MB (OCR, decoder and DICOM workers started and kept)`)
    console.log(
      JSON.stringify({
        bench: "sanitize-files",
        cores,
        ocr_pool: ocr,
        gateway_pages_per_second: gatewayPagesPerSecond,
        uploads_refused_busy: refused,
        light_route: { idle, busy, p99_ratio: ratio, target_ratio: TARGET_RATIO, within_target: ratio <= TARGET_RATIO },
        health: { idle: idleHealth, busy: busyHealth },
        hostile,
        rss_after_run_mb: mb(afterRunKb)
      })
    )
  } finally {
    await server.stop()
    await dataDir.remove()
  }
}

await main()
