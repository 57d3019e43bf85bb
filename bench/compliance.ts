/**
 * `npm run bench:compliance`: Article 12 reports over bulk-loaded periods.
 *
 * The gateway runs in its own process with `npm start`'s memory budget (160 MB old generation,
 * its semi-spaces) on a fresh database of DATABASE_URL (default
 * postgres://postgres@127.0.0.1:5432/postgres), dropped after. For each size in BENCH_SIZES
 * (default "10000,100000") a new organization gets that many actions and receipts straight in
 * Postgres (INSERT … SELECT over generate_series, 50 agents), then one POST
 * /api/v1/compliance/reports (eu_ai_act_art12) over the whole period: wall seconds, the PDF's
 * size and the gateway's peak RSS above its RSS before (read from /proc every 10 ms), then one
 * download. Baseline in the same run: an art9 report over the same period (which reads every
 * action but prints only counts). The last output line is one JSON object.
 */
import { readFileSync } from "node:fs"
import { Effect, } from "effect"
import { SqlClient } from "effect/sql"
import { call, registerOrg } from "../test/support/client.js"
import { runGatewayBench, START_BUDGET_ARGS } from "./support/harness.js"

const sizes = (process.env.BENCH_SIZES ?? "10000,100000")
  .split(",")
  .map((size) => Number(size.trim()))
  .filter((size) => size > 0)
  .sort((a, b) => a - b)

const mb = (bytes: number) => Math.round(bytes / 1048576)
const round = (value: number, digits = 2) => Number(value.toFixed(digits))

const rssOf = (pid: number): number => {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").match(/^VmRSS:\s+(\d+) kB/m)
  return line === null ? 0 : Number(line[1]) * 1024
}

const measured = async <A>(pid: number, work: () => Promise<A>) => {
  const before = rssOf(pid)
  let peak = before
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssOf(pid))
  }, 10)
  const started = performance.now()
  try {
    const result = await work()
    return { result, seconds: (performance.now() - started) / 1000, extraRssMb: mb(Math.max(peak, rssOf(pid)) - before) }
  } finally {
    clearInterval(sampler)
  }
}

runGatewayBench(async ({ server, run }) => {
    const results: Array<Record<string, number | string>> = []
    for (const size of sizes) {
      const org = await registerOrg(server.url, `Reporting ${size}`)
      const tag = `${size}_${Date.now().toString(36)}`
      await run(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          yield* sql`
            INSERT INTO actions (action_uuid, org_uuid, agent_id, agent_version, action_type, action_details_hash, model_id, model_version, status,
              receipt_uuid, created_at, updated_at)
            SELECT 'act_' || ${tag} || '_' || g, ${org.orgUuid}, 'agent-' || (g % 50), '1.' || (g % 3), (ARRAY['payment', 'loan_check', 'face_match', 'lookup'])[1 + g % 4],
              'sha256:' || encode(sha256(convert_to('d' || g, 'UTF8')), 'hex'), 'model-' || (g % 4), '2026-01', 'notarized',
              'rct_' || ${tag} || '_' || g, now() - interval '1 day' + g * interval '1 millisecond', now()
            FROM generate_series(1, ${size}::bigint) AS g`
          yield* sql`
            INSERT INTO receipts (receipt_uuid, action_uuid, org_uuid, agent_id, agent_sequence, receipt_status, receipt_version,
              signed_payload, payload_hash, signature, public_key_id, timestamp_token, created_at)
            SELECT 'rct_' || ${tag} || '_' || g, 'act_' || ${tag} || '_' || g, ${org.orgUuid}, 'agent-' || (g % 50), g, 'notarized', '1.1',
              '{}', 'sha256:' || encode(sha256(convert_to('r' || g, 'UTF8')), 'hex'), 'ed25519:bench', 'rk_bench', NULL,
              now() - interval '1 day' + g * interval '1 millisecond'
            FROM generate_series(1, ${size}::bigint) AS g`
          yield* sql.unsafe("ANALYZE receipts")
          yield* sql.unsafe("ANALYZE actions")
        })
      )
      const body = { period_start: new Date(Date.now() - 2 * 86_400_000).toISOString(), period_end: new Date(Date.now() + 60_000).toISOString() }
      const art12 = await measured(server.pid, () => call(server.url, "POST", "/api/v1/compliance/reports", { token: org.key, body: { framework: "eu_ai_act_art12", ...body } }))
      const report = art12.result.body
      if (art12.result.status !== 201) throw new Error(`art12 failed: ${art12.result.status} ${art12.result.text.slice(0, 300)}`)
      const art9 = await measured(server.pid, () => call(server.url, "POST", "/api/v1/compliance/reports", { token: org.key, body: { framework: "eu_ai_act_art9", ...body } }))
      const downloading = performance.now()
      const pdf = await fetch(`${server.url}/api/v1/compliance/reports/${report.id}/download`, { headers: { authorization: `Bearer ${org.key}` } })
      const bytes = (await pdf.arrayBuffer()).byteLength
      const downloadSeconds = (performance.now() - downloading) / 1000
      console.log(
        `${size.toLocaleString("en")} receipts: art12 ${report.status} in ${round(art12.seconds)} s, PDF ${mb(report.pdf_size_bytes ?? 0)} MB, +${art12.extraRssMb} MB RSS` +
          `${report.error_message === null ? "" : ` (${report.error_message})`}; download ${bytes} bytes in ${round(downloadSeconds)} s; ` +
          `art9 baseline ${art9.result.body.status} in ${round(art9.seconds)} s, +${art9.extraRssMb} MB RSS`
      )
      results.push({
        receipts: size,
        art12_status: report.status,
        art12_s: round(art12.seconds),
        art12_pdf_bytes: report.pdf_size_bytes ?? 0,
        art12_extra_rss_mb: art12.extraRssMb,
        download_s: round(downloadSeconds),
        art9_s: round(art9.seconds),
        art9_extra_rss_mb: art9.extraRssMb
      })
    }
    console.log(JSON.stringify({ bench: "compliance", sizes: results }))
}, { nodeArgs: START_BUDGET_ARGS })
