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
 * action but prints only counts).
 *
 * Then one compliance bundle over BENCH_BUNDLE_RECEIPTS (default 50,000; 0 skips it) receipts loaded
 * the same way with realistic signed payloads and token sizes: POST /api/v1/compliance/bundles
 * (soc_2_cc7, the framework with the most counts) and GET …/export streamed to the end — wall seconds
 * and the gateway's peak RSS above its RSS before each. Baselines in the same run: a settlement of
 * the same receipts (numbering, tiles, signature, timestamp) against the create, and the same
 * receipts read through GET /api/v1/settlements/{id}/receipts (1,000 a page) against the export.
 * The last output line is one JSON object.
 */
import { readFileSync } from "node:fs"
import { Effect, } from "effect"
import { SqlClient } from "effect/sql"
import { call, registerOrg } from "../test/support/client.js"
import { type GatewayBench, runGatewayBench, START_BUDGET_ARGS } from "./support/harness.js"

const sizes = (process.env.BENCH_SIZES ?? "10000,100000")
  .split(",")
  .map((size) => Number(size.trim()))
  .filter((size) => size > 0)
  .sort((a, b) => a - b)

const bundleSize = Number(process.env.BENCH_BUNDLE_RECEIPTS ?? 50_000)

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
    peak = Math.max(peak, rssOf(pid))
    return { result, seconds: (performance.now() - started) / 1000, extraRssMb: mb(peak - before), peakRssMb: mb(peak) }
  } finally {
    clearInterval(sampler)
  }
}

/** Reads a response body to its end, keeping only its chunks' total (and the chunks when asked). */
const drain = async (response: Response, keep: Array<Uint8Array> | undefined) => {
  let bytes = 0
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length
    keep?.push(chunk)
  }
  return bytes
}

async function bundleBench(server: GatewayBench["server"], run: GatewayBench["run"], size: number) {
  const org = await registerOrg(server.url, "Bundling")
  const tag = `b${size}_${Date.now().toString(36)}`
  await run(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`
        INSERT INTO actions (action_uuid, org_uuid, agent_id, agent_version, action_type, action_details_hash, model_id, model_version, status,
          receipt_uuid, created_at, updated_at)
        SELECT 'act_' || ${tag} || '_' || g, ${org.orgUuid}, 'agent-' || (g % 50), '1.' || (g % 3), 'payment',
          'sha256:' || encode(sha256(convert_to('d' || g, 'UTF8')), 'hex'), 'model-' || (g % 4), '2026-01', 'notarized',
          'rct_' || ${tag} || '_' || g, now() - interval '1 day' + g * interval '1 millisecond', now()
        FROM generate_series(1, ${size}::bigint) AS g`
      // A receipt payload of the contract's 21 keys (about 900 bytes) and a token of a real one's size.
      yield* sql`
        WITH payloads AS (
          SELECT g, jsonb_build_object(
              'receipt_version', '1.1', 'receipt_uuid', 'rct_' || ${tag} || '_' || g, 'receipt_status', 'notarized',
              'action_uuid', 'act_' || ${tag} || '_' || g, 'org_uuid', ${org.orgUuid}::text, 'agent_id', 'agent-' || (g % 50),
              'agent_version', '1.' || (g % 3), 'action_type', 'payment',
              'action_details_hash', 'sha256:' || encode(sha256(convert_to('d' || g, 'UTF8')), 'hex'), 'instruction_hash', NULL,
              'model_id', 'model-' || (g % 4), 'model_version', '2026-01', 'outcome', 'completed',
              'outcome_hash', 'sha256:' || encode(sha256(convert_to('o' || g, 'UTF8')), 'hex'), 'output_scan_flags', NULL,
              'policy_uuid', NULL, 'approval', NULL, 'parent_payload_hash', NULL, 'agent_sequence', g,
              'previous_payload_hash', 'sha256:' || encode(sha256(convert_to('p' || g, 'UTF8')), 'hex'),
              'created_at', to_char((now() - interval '1 day' + g * interval '1 millisecond') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
            )::text AS payload
          FROM generate_series(1, ${size}::bigint) AS g
        )
        INSERT INTO receipts (receipt_uuid, action_uuid, org_uuid, agent_id, agent_sequence, receipt_status, receipt_version,
          signed_payload, payload_hash, signature, public_key_id, timestamp_token, created_at)
        SELECT 'rct_' || ${tag} || '_' || g, 'act_' || ${tag} || '_' || g, ${org.orgUuid}, 'agent-' || (g % 50), g, 'notarized', '1.1',
          payload, 'sha256:' || encode(sha256(convert_to(payload, 'UTF8')), 'hex'), 'ed25519:' || repeat('s', 86), 'rk_bench',
          repeat('T', 1400), now() - interval '1 day' + g * interval '1 millisecond'
        FROM payloads`
      yield* sql.unsafe("ANALYZE receipts")
      yield* sql.unsafe("ANALYZE actions")
    })
  )
  const body = { framework: "soc_2_cc7", period_start: new Date(Date.now() - 2 * 86_400_000).toISOString(), period_end: new Date(Date.now() + 60_000).toISOString() }
  const created = await measured(server.pid, () => call(server.url, "POST", "/api/v1/compliance/bundles", { token: org.key, body }))
  if (created.result.status !== 201 || created.result.body.receipt_count !== size) {
    throw new Error(`bundle failed: ${created.result.status} ${created.result.text.slice(0, 300)}`)
  }
  const bundleId = created.result.body.id as string
  const settled = await measured(server.pid, () => call(server.url, "POST", "/api/v1/settlements", { token: org.key }))
  if (settled.result.status !== 201 || settled.result.body.receipt_count !== size) throw new Error(`settlement failed: ${settled.result.status}`)

  const chunks: Array<Uint8Array> = []
  const exported = await measured(server.pid, async () => {
    const response = await fetch(`${server.url}/api/v1/compliance/bundles/${bundleId}/export`, { headers: { authorization: `Bearer ${org.key}` } })
    if (response.status !== 200) throw new Error(`export answered ${response.status}`)
    return drain(response, chunks)
  })
  const document = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { receipts: Array<unknown>; merkle_root: string }
  if (document.receipts.length !== size || document.merkle_root !== created.result.body.merkle_root) throw new Error("the export is not the bundle's")
  chunks.length = 0
  const paged = await measured(server.pid, async () => {
    let bytes = 0
    for (let page = 1; (page - 1) * 1000 < size; page++) {
      const response = await fetch(`${server.url}/api/v1/settlements/${settled.result.body.id}/receipts?page=${page}&per_page=1000`, { headers: { authorization: `Bearer ${org.key}` } })
      bytes += await drain(response, undefined)
    }
    return bytes
  })
  const ratio = (value: number, baseline: number) => round(value / baseline)
  console.log(
    `${size.toLocaleString("en")}-receipt bundle: create ${round(created.seconds)} s, +${created.extraRssMb} MB RSS (peak ${created.peakRssMb} MB) vs settlement of the same receipts ` +
      `${round(settled.seconds)} s, +${settled.extraRssMb} MB (${ratio(created.seconds, settled.seconds)}x); export ${mb(exported.result)} MB streamed in ${round(exported.seconds)} s, ` +
      `+${exported.extraRssMb} MB RSS (peak ${exported.peakRssMb} MB) vs the settlement's receipts paged ${mb(paged.result)} MB in ${round(paged.seconds)} s, +${paged.extraRssMb} MB ` +
      `(${ratio(exported.seconds, paged.seconds)}x)`
  )
  return {
    receipts: size,
    create_s: round(created.seconds),
    create_extra_rss_mb: created.extraRssMb,
    create_peak_rss_mb: created.peakRssMb,
    settlement_baseline_s: round(settled.seconds),
    settlement_baseline_extra_rss_mb: settled.extraRssMb,
    export_s: round(exported.seconds),
    export_bytes: exported.result,
    export_extra_rss_mb: exported.extraRssMb,
    export_peak_rss_mb: exported.peakRssMb,
    paged_baseline_s: round(paged.seconds),
    paged_baseline_bytes: paged.result,
    paged_baseline_extra_rss_mb: paged.extraRssMb
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
    const bundle = bundleSize > 0 ? await bundleBench(server, run, bundleSize) : null
    console.log(JSON.stringify({ bench: "compliance", sizes: results, bundle }))
}, { nodeArgs: START_BUDGET_ARGS })
