/**
 * `npm run bench:embedded`: the embedded default (no DATABASE_URL: the gateway
 * starts its own PostgreSQL under DATA_DIR) against an external Postgres, in
 * one run. For each: the gateway process's memory after start and after
 * BENCH_AUTHORIZES (default 10,000) authorizes, its Postgres's memory (the
 * postmaster and every backend; PSS counts shared buffers once), and the
 * authorize rate over HTTP with 64 connections.
 *
 * The gateway runs compiled (`npm run build` is run first into dist/), as in
 * production, so tsx's compiler is not counted in its memory. External:
 * DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres), a fresh
 * database per run. The last output line is one JSON object.
 */
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { freshDatabaseUrl } from "../test/support/database.js"
import { benchDataDir } from "./support/data-dir.js"
import { authorizeBody, benchOrganization, type GatewayProcess, memoryOf, processTree, startGateway } from "./support/gateway.js"
import { runLoad } from "./support/load.js"

const serverUrl = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres"
const authorizes = Number(process.env.BENCH_AUTHORIZES ?? 10_000)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64)

const mb = (kb: number) => Math.round(kb / 102.4) / 10

/** The embedded cluster's postmaster pid (first line of postmaster.pid) and its backends' memory. */
const postgresMemory = (dataDir: string) => {
  const pid = Number(readFileSync(join(dataDir, "pg", "data", "postmaster.pid"), "utf8").split("\n")[0])
  const tree = processTree(pid)
  return tree.map(memoryOf).reduce((sum, m) => ({ rss_kb: sum.rss_kb + m.rss_kb, pss_kb: sum.pss_kb + m.pss_kb }), { rss_kb: 0, pss_kb: 0 })
}

interface Phase {
  readonly started: { gateway_kb: number; postgres_pss_kb: number | null }
  readonly loaded: { gateway_kb: number; postgres_pss_kb: number | null }
  readonly rps: number
  readonly p99_ms: number
  readonly errors: number
}

const measure = async (gateway: GatewayProcess, postgres: (() => { pss_kb: number }) | undefined): Promise<Phase> => {
  await new Promise((resolve) => setTimeout(resolve, 1000))
  const started = { gateway_kb: memoryOf(gateway.pid).rss_kb, postgres_pss_kb: postgres?.().pss_kb ?? null }
  const token = await benchOrganization(gateway.url)
  let sent = 0
  const load = await runLoad({
    url: gateway.url,
    headers: { authorization: `Bearer ${token}` },
    connections,
    seconds: 600,
    next: () => (sent++ < authorizes ? { path: "/api/v1/actions", body: authorizeBody() } : undefined),
    expectStatus: 201
  })
  const loaded = { gateway_kb: memoryOf(gateway.pid).rss_kb, postgres_pss_kb: postgres?.().pss_kb ?? null }
  return { started, loaded, rps: load.rps, p99_ms: load.p99_ms, errors: load.errors }
}

const main = async () => {
  console.error("building (tsc) into dist/ ...")
  execFileSync(process.execPath, ["scripts/build.mjs"], { stdio: "inherit" })

  const dataDir = benchDataDir("bench-embedded")
  let embedded: Phase
  const first = Date.now()
  const gateway = await startGateway({ dist: "dist", env: { DATABASE_URL: "", DATA_DIR: dataDir.path }, timeoutMs: 120_000 })
  const startMs = Date.now() - first
  try {
    embedded = await measure(gateway, () => postgresMemory(dataDir.path))
  } finally {
    await gateway.stop()
    await dataDir.remove()
  }

  const database = await freshDatabaseUrl(serverUrl)
  if (!database) throw new Error("no DATABASE_URL")
  let external: Phase
  const outside = await startGateway({ dist: "dist", env: { DATABASE_URL: database.url } })
  try {
    external = await measure(outside, undefined)
  } finally {
    await outside.stop()
    await database.drop()
  }

  const ratio = embedded.rps / external.rps
  const line = (name: string, p: Phase) =>
    console.log(
      `${name.padEnd(10)} gateway ${String(mb(p.started.gateway_kb)).padStart(6)} MB at start, ${String(mb(p.loaded.gateway_kb)).padStart(6)} MB after ${authorizes} authorizes` +
        (p.loaded.postgres_pss_kb === null ? "" : `   + its Postgres ${mb(p.started.postgres_pss_kb!)} → ${mb(p.loaded.postgres_pss_kb)} MB (PSS)`) +
        `   ${p.rps} authorize/s, p99 ${p.p99_ms.toFixed(1)} ms${p.errors ? `, ${p.errors} errors` : ""}`
    )
  console.log(`embedded default vs external Postgres (Node ${process.version}, ${connections} connections, compiled gateway)`)
  line("embedded", embedded)
  line("external", external)
  const total = mb(embedded.loaded.gateway_kb + (embedded.loaded.postgres_pss_kb ?? 0))
  const verdict = (ok: boolean) => (ok ? "met" : "MISSED")
  console.log(
    `targets: gateway <= 200 MB (${verdict(mb(embedded.loaded.gateway_kb) <= 200)}), with its Postgres <= 350 MB (${total} MB, ${verdict(total <= 350)}), ` +
      `embedded/external authorize >= 0.8× (${ratio.toFixed(2)}×, ${verdict(ratio >= 0.8)}); first start with initdb ${startMs} ms`
  )
  console.log(
    JSON.stringify({
      node: process.version,
      authorizes,
      connections,
      embedded_first_start_ms: startMs,
      embedded_gateway_start_mb: mb(embedded.started.gateway_kb),
      embedded_gateway_loaded_mb: mb(embedded.loaded.gateway_kb),
      embedded_postgres_start_pss_mb: mb(embedded.started.postgres_pss_kb ?? 0),
      embedded_postgres_loaded_pss_mb: mb(embedded.loaded.postgres_pss_kb ?? 0),
      embedded_total_loaded_mb: total,
      embedded_authorize_rps: embedded.rps,
      embedded_authorize_p99_ms: embedded.p99_ms,
      external_gateway_start_mb: mb(external.started.gateway_kb),
      external_gateway_loaded_mb: mb(external.loaded.gateway_kb),
      external_authorize_rps: external.rps,
      external_authorize_p99_ms: external.p99_ms,
      embedded_over_external: Math.round(ratio * 1000) / 1000
    })
  )
}

await main()
process.exit(0)
