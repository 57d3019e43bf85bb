/**
 * `npm run bench:scale`: does latency stay flat as an organization's history
 * grows? The real server in its own process (the tsc build with `npm start`'s flags) on Postgres, the
 * `benchOrganization` org (10 active rules policies, 100 agents); for each
 * size the organization's `actions` table is topped up to that many rows
 * straight in Postgres (one INSERT … SELECT over generate_series, rows shaped
 * like notarized or denied actions of the same 100 agents, spread over the
 * past), vacuumed and analysed, then measured:
 *
 * - authorize: POST /api/v1/actions (every policy allows it), p50/p99;
 * - list: GET /api/v1/actions?agent_id=agent-7 (page 1, 20 per page), p50/p99
 *   (wrk when installed).
 *
 * The smallest size is the baseline: every size prints its figures and their
 * ratio to the baseline's; the target is every ratio within 0.8–1.2 (flat
 * within ±20%). Neither path reads `receipts`, so only `actions` is loaded.
 *
 * DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres) names the
 * server; a fresh database is created for the run and dropped after.
 * BENCH_SIZES (default "10000,100000,1000000", ascending), BENCH_SECONDS
 * (default 5) per measurement, BENCH_CONNECTIONS (default 8); BENCH_EXPLAIN=1
 * prints EXPLAIN (ANALYZE, BUFFERS) of the list page and its count at each size.
 * The last output line is one JSON object.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, ManagedRuntime, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { freshDatabaseUrl } from "../test/support/database.js"
import { BUILD_DIRECTORY, compileServer, startFlags } from "./support/build.js"
import { AGENTS, authorizeBody, benchOrganization, POLICIES, startGateway } from "./support/gateway.js"
import { type LoadResult, round3, runLoad, runWrk } from "./support/load.js"

const serverUrl = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres"
const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 8)
const sizes = (process.env.BENCH_SIZES ?? "10000,100000,1000000")
  .split(",")
  .map((size) => Number(size.trim()))
  .filter((size) => size > 0)
  .sort((a, b) => a - b)
const explain = process.env.BENCH_EXPLAIN === "1"
const LIST_AGENT = "agent-7"
const LIST_PATH = `/api/v1/actions?agent_id=${LIST_AGENT}`

interface SizeResult {
  readonly rows: number
  readonly load_s: number
  readonly authorize: LoadResult
  readonly list: LoadResult
}

/**
 * Adds rows `from + 1 … to` to the organization's actions, then VACUUM ANALYZE (the state autovacuum
 * reaches) and a CHECKPOINT, so the bulk load's dirty pages are not flushed during the measurement.
 */
const topUp = (orgUuid: string, from: number, to: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      INSERT INTO actions (action_uuid, org_uuid, agent_id, action_type, action_details_hash, status,
        policy_uuid, context, warnings, outcome, outcome_hash, receipt_uuid, receipt_payload_hash, receipt,
        agent_sequence, created_at, updated_at)
      SELECT 'act_bulk' || lpad(g::text, 9, '0'), ${orgUuid}, 'agent-' || (g % ${AGENTS}),
        CASE WHEN g % 3 = 0 THEN 'email.send' ELSE 'payment.transfer' END,
        md5('details' || g), CASE WHEN g % 10 = 0 THEN 'denied_by_policy' ELSE 'notarized' END,
        NULL, jsonb_build_object('amount', g % 500), '[]'::jsonb,
        CASE WHEN g % 10 = 0 THEN NULL ELSE 'completed' END, md5('outcome' || g),
        'rcp_bulk' || lpad(g::text, 9, '0'), md5('payload' || g),
        jsonb_build_object('receipt_uuid', 'rcp_bulk' || lpad(g::text, 9, '0'), 'payload_hash', md5('payload' || g),
          'signature', md5('signature' || g), 'public_key_id', 'key_bench'),
        g / ${AGENTS} + 1, ts, ts
      FROM generate_series(${from + 1}::bigint, ${to}::bigint) AS g,
        LATERAL (SELECT now() - interval '1 day' - (2000000 - g) * interval '1 second' AS ts) AS t`
    yield* sql.unsafe("VACUUM ANALYZE actions")
    yield* sql.unsafe("CHECKPOINT")
  })

/** EXPLAIN (ANALYZE, BUFFERS) of the list route's two statements, as the store sends them. */
const explainList = (orgUuid: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const page = yield* sql`EXPLAIN (ANALYZE, BUFFERS) SELECT action_uuid, action_type, agent_id, status, legal_hold, created_at FROM actions
      WHERE (org_uuid = ${orgUuid} AND agent_id = ${LIST_AGENT}) ORDER BY created_at DESC, action_uuid DESC LIMIT 20 OFFSET 0`
    const total = yield* sql`EXPLAIN (ANALYZE, BUFFERS) SELECT COUNT(*) AS n FROM (SELECT 1 FROM actions WHERE (org_uuid = ${orgUuid} AND agent_id = ${LIST_AGENT}) LIMIT 201) AS upto`
    return [...page, ...total].map((row: any) => row["QUERY PLAN"] as string).join("\n")
  })

const figures = (name: string, r: LoadResult, base?: LoadResult) =>
  `${name.padEnd(10)} ${String(r.rps).padStart(6)} req/s   p50 ${r.p50_ms.toFixed(2).padStart(6)} ms   p99 ${r.p99_ms.toFixed(2).padStart(6)} ms` +
  (base === undefined ? "   (baseline)" : `   ×${(r.p50_ms / base.p50_ms).toFixed(2)} p50  ×${(r.p99_ms / base.p99_ms).toFixed(2)} p99`) +
  (r.errors ? `   errors ${r.errors}` : "")

const flat = (ratio: number) => ratio >= 0.8 && ratio <= 1.2

const main = async () => {
  if (sizes.length === 0) throw new Error("BENCH_SIZES names no size")
  compileServer()
  const database = await freshDatabaseUrl(serverUrl)
  const runtime = ManagedRuntime.make(PgClient.layer({ url: Redacted.make(database.url), maxConnections: 1 }))
  let server: Awaited<ReturnType<typeof startGateway>> | undefined
  try {
    server = await startGateway({ env: { DATABASE_URL: database.url }, dist: BUILD_DIRECTORY, nodeArgs: startFlags() })
    const url = server.url
    const token = await benchOrganization(url)
    const headers = { authorization: `Bearer ${token}` }
    const orgUuid = await runtime.runPromise(
      SqlClient.SqlClient.use((sql) => sql<{ org_uuid: string }>`SELECT org_uuid FROM organizations`).pipe(Effect.map((rows) => rows[0]!.org_uuid))
    )
    const authorizeLoad = (duration: number) =>
      runLoad({ url, path: "/api/v1/actions", method: "POST", headers, body: authorizeBody, connections, seconds: duration, expectStatus: 201 })
    const listLoad = (duration: number) =>
      runWrk({ url, path: LIST_PATH, headers, connections, seconds: duration }) ??
      runLoad({ url, path: LIST_PATH, method: "GET", headers, connections, seconds: duration, expectStatus: 200 })

    // The first size is the baseline: warm the JIT, the pools and the prepared statements before it.
    await authorizeLoad(3)
    await listLoad(3)

    const results: Array<SizeResult> = []
    let loaded = 0
    for (const size of sizes) {
      const started = performance.now()
      await runtime.runPromise(topUp(orgUuid, loaded, size))
      loaded = size
      const loadSeconds = Math.round((performance.now() - started) / 100) / 10
      if (explain) console.error(`--- EXPLAIN at ${size} rows\n${await runtime.runPromise(explainList(orgUuid))}`)
      await authorizeLoad(1)
      const authorize = await authorizeLoad(seconds)
      await listLoad(1)
      const list = await listLoad(seconds)
      results.push({ rows: size, load_s: loadSeconds, authorize, list })
      console.error(`${size} rows loaded in ${loadSeconds} s and measured`)
    }

    const base = results[0]!
    console.log(
      `scale: ${connections} connections, ${AGENTS} agents, ${POLICIES} active rules policies, ${seconds} s per measurement; list = GET ${LIST_PATH}; ratios against ${base.rows} rows`
    )
    for (const r of results) {
      console.log(`${r.rows} stored actions (loaded in ${r.load_s} s)`)
      console.log(`  ${figures("authorize", r.authorize, r === base ? undefined : base.authorize)}`)
      console.log(`  ${figures("list", r.list, r === base ? undefined : base.list)}`)
    }
    const ratios = results.slice(1).flatMap((r) => [
      r.authorize.p50_ms / base.authorize.p50_ms,
      r.authorize.p99_ms / base.authorize.p99_ms,
      r.list.p50_ms / base.list.p50_ms,
      r.list.p99_ms / base.list.p99_ms
    ])
    console.log(`target: p50 and p99 within ±20% of the ${base.rows}-row figures at every size (${ratios.every(flat) ? "met" : "MISSED"})`)
    console.log(
      JSON.stringify({
        connections,
        seconds,
        agents: AGENTS,
        policies: POLICIES,
        ...Object.fromEntries(
          results.map((r) => [
            `rows_${r.rows}`,
            {
              load_s: r.load_s,
              authorize_rps: r.authorize.rps,
              authorize_p50_ms: r.authorize.p50_ms,
              authorize_p99_ms: r.authorize.p99_ms,
              authorize_p50_ratio: round3(r.authorize.p50_ms / base.authorize.p50_ms),
              authorize_p99_ratio: round3(r.authorize.p99_ms / base.authorize.p99_ms),
              authorize_errors: r.authorize.errors,
              list_rps: r.list.rps,
              list_p50_ms: r.list.p50_ms,
              list_p99_ms: r.list.p99_ms,
              list_p50_ratio: round3(r.list.p50_ms / base.list.p50_ms),
              list_p99_ratio: round3(r.list.p99_ms / base.list.p99_ms),
              list_errors: r.list.errors
            }
          ])
        ),
        flat: ratios.every(flat)
      })
    )
  } finally {
    await server?.stop()
    await runtime.dispose()
    await database.drop()
  }
}

await main()
process.exit(0)
