/**
 * `npm run bench:settlement`: sealing bulk-loaded receipts into an
 * organization's settlement log, and inclusion proofs out of it.
 *
 * The gateway runs in its own process (`src/main.ts` with `npm start`'s memory
 * budget: scripts/start-flags.mjs) on a fresh database of
 * DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres), dropped
 * after. For each size in BENCH_SIZES (default "100000,1000000") a new
 * organization gets that many receipts straight in Postgres (one INSERT …
 * SELECT over generate_series), then one POST /api/v1/settlements seals them
 * all: wall seconds, and the gateway's peak RSS above its RSS before (read
 * from /proc every 10 ms).
 * At the largest size, BENCH_PROOFS (default 2000) GET
 * /api/v1/settlements/inclusion-proof/{id} of random receipts, one at a time:
 * p50/p99, each proof verified.
 *
 * Baselines in the same run: sealing — the naive way, in this process: every
 * payload hash read in leaf order and the tree built in memory
 * (src/receipts/merkle.ts), seconds and extra RSS of this process; proofs —
 * GET /health on the same server, p50/p99.
 * Targets: 1M sealed in ≤ 10 s with ≤ 200 MB extra RSS; proof p99 ≤ 5 ms.
 * The last output line is one JSON object.
 */
import { randomUUID } from "node:crypto"
import { readFileSync } from "node:fs"
import { Effect, } from "effect"
import { SqlClient } from "effect/sql"
import { verifySettlementInclusion } from "../protocol/verifier/index.js"
import { MerkleTree } from "../src/receipts/merkle.js"
import { call, registerOrg } from "../test/support/client.js"
import { runGatewayBench, START_BUDGET_ARGS } from "./support/harness.js"
import { latencyPercentiles } from "./support/load.js"

const sizes = (process.env.BENCH_SIZES ?? "100000,1000000")
  .split(",")
  .map((size) => Number(size.trim()))
  .filter((size) => size > 0)
  .sort((a, b) => a - b)
const proofCount = Number(process.env.BENCH_PROOFS ?? 2000)
const TARGET_SEAL_S = 10
const TARGET_EXTRA_RSS_MB = 200
const TARGET_PROOF_P99_MS = 5

const mb = (bytes: number) => Math.round(bytes / 1048576)
const round = (value: number, digits = 2) => Number(value.toFixed(digits))

/** The resident set of a process, from /proc (bytes). */
const rssOf = (pid: number): number => {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").match(/^VmRSS:\s+(\d+) kB/m)
  return line === null ? 0 : Number(line[1]) * 1024
}

/** Runs `work` while sampling the RSS of `pid`; answers its seconds and the peak RSS above the RSS before it. */
const measured = async <A>(pid: number, work: () => Promise<A>) => {
  global.gc?.()
  const before = rssOf(pid)
  let peak = before
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssOf(pid))
  }, 10)
  const started = performance.now()
  try {
    const result = await work()
    peak = Math.max(peak, rssOf(pid))
    return { result, seconds: (performance.now() - started) / 1000, extraRssMb: mb(peak - before) }
  } finally {
    clearInterval(sampler)
  }
}


runGatewayBench(async ({ server, run }) => {
    const results: Array<Record<string, number>> = []
    let largest: { key: string; orgUuid: string; size: number } | undefined
    for (const size of sizes) {
      const org = await registerOrg(server.url, `Settling ${size}`)
      const prefix = `rct_${randomUUID().slice(0, 8)}_`
      const loading = performance.now()
      await run(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          yield* sql`
            INSERT INTO receipts (receipt_uuid, action_uuid, org_uuid, agent_id, agent_sequence, receipt_status, receipt_version,
              signed_payload, payload_hash, signature, public_key_id, timestamp_token, created_at)
            SELECT ${prefix} || lpad(g::text, 9, '0'), 'act_bulk' || g, ${org.orgUuid}, 'agent-' || (g % 100), g, 'notarized', '1.1',
              '{}', 'sha256:' || encode(sha256(convert_to(${prefix} || g, 'UTF8')), 'hex'), 'ed25519:bench', 'rk_bench', NULL,
              now() - interval '1 day' + g * interval '1 millisecond'
            FROM generate_series(1, ${size}::bigint) AS g`
          yield* sql.unsafe("ANALYZE receipts")
        })
      )
      const loadSeconds = (performance.now() - loading) / 1000

      // Baseline: the naive seal, every hash in memory at once.
      const naive = await measured(process.pid, async () => {
        const hashes = await run(
          Effect.gen(function* () {
            const sql = yield* SqlClient.SqlClient
            return yield* sql<{ payload_hash: string }>`SELECT payload_hash FROM receipts WHERE org_uuid = ${org.orgUuid} ORDER BY created_at, receipt_uuid`
          })
        )
        return new MerkleTree(hashes.map((row) => Buffer.from(row.payload_hash.slice(7), "hex"))).root
      })

      const sealed = await measured(server.pid, () => call(server.url, "POST", "/api/v1/settlements", { token: org.key }))
      if (sealed.result.status !== 201 || sealed.result.body.receipt_count !== size) {
        throw new Error(`settlement failed: ${sealed.result.status} ${sealed.result.text.slice(0, 300)}`)
      }
      if (sealed.result.body.merkle_root !== `sha256:${Buffer.from(naive.result).toString("hex")}`) throw new Error("the log's root is not the naive tree's root")
      console.log(
        `${size.toLocaleString("en")} receipts: loaded in ${round(loadSeconds)} s; sealed in ${round(sealed.seconds)} s, +${sealed.extraRssMb} MB RSS ` +
          `(naive in-memory seal: ${round(naive.seconds)} s, +${naive.extraRssMb} MB; ratio ${round(sealed.seconds / naive.seconds)}× time)`
      )
      results.push({ receipts: size, seal_s: round(sealed.seconds), seal_extra_rss_mb: sealed.extraRssMb, naive_s: round(naive.seconds), naive_extra_rss_mb: naive.extraRssMb })
      largest = { key: org.key, orgUuid: org.orgUuid, size }
    }

    let proofs = { p50: 0, p99: 0 }
    let health = { p50: 0, p99: 0 }
    if (largest !== undefined && proofCount > 0) {
      const target = largest
      const ids = await run(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          return yield* sql<{ receipt_uuid: string; payload_hash: string }>`
            SELECT receipt_uuid, payload_hash FROM receipts WHERE org_uuid = ${target.orgUuid} ORDER BY random() LIMIT ${proofCount}`
        })
      )
      const proofSamples: number[] = []
      const healthSamples: number[] = []
      for (const { receipt_uuid, payload_hash } of ids) {
        let started = performance.now()
        const reply = await call(server.url, "GET", `/api/v1/settlements/inclusion-proof/${receipt_uuid}`, { token: target.key })
        proofSamples.push(performance.now() - started)
        if (reply.status !== 200 || !verifySettlementInclusion(reply.body, payload_hash)) throw new Error(`proof of ${receipt_uuid} failed: ${reply.text.slice(0, 200)}`)
        started = performance.now()
        await call(server.url, "GET", "/health")
        healthSamples.push(performance.now() - started)
      }
      proofs = latencyPercentiles(proofSamples)
      health = latencyPercentiles(healthSamples)
      console.log(
        `inclusion proofs at ${target.size.toLocaleString("en")} leaves over HTTP, one at a time: p50 ${proofs.p50} ms, p99 ${proofs.p99} ms ` +
          `(GET /health baseline p50 ${health.p50} ms, p99 ${health.p99} ms)`
      )
    }
    const million = results.find((result) => result.receipts === 1_000_000)
    if (million !== undefined) {
      const verdict = (met: boolean) => (met ? "met" : "MISSED")
      console.log(
        `targets: 1M sealed in ≤ ${TARGET_SEAL_S} s (${verdict(million.seal_s <= TARGET_SEAL_S)}), ≤ ${TARGET_EXTRA_RSS_MB} MB extra RSS (${verdict(million.seal_extra_rss_mb <= TARGET_EXTRA_RSS_MB)}), ` +
          `proof p99 ≤ ${TARGET_PROOF_P99_MS} ms (${verdict(proofs.p99 <= TARGET_PROOF_P99_MS)})`
      )
    }
    console.log(JSON.stringify({ bench: "settlement", sizes: results, proof_p50_ms: proofs.p50, proof_p99_ms: proofs.p99, health_p50_ms: health.p50, health_p99_ms: health.p99 }))
}, { nodeArgs: START_BUDGET_ARGS })
