/**
 * `npm run bench:authorize`: authorize and notarize over HTTP against the real
 * server (`src/main.ts` in its own process) on Postgres, with 10 active rules
 * policies of 3 conditions each (none matches, so every action is authorized),
 * 100 agents and 64 connections; compared with raw single-row INSERTs through
 * `@effect/sql-pg` at 8 connections, measured in the same run on the same
 * database.
 *
 * DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres) names the
 * server; a fresh database is created for the run and dropped after. Redis is
 * the in-process stand-in. BENCH_SECONDS (default 5), BENCH_CONNECTIONS
 * (default 64); BENCH_PROFILE=1 (or a directory) runs the server with `--cpu-prof` and
 * prints its top 15 frames by self time.
 * The last output line is one JSON object.
 */

import { readFileSync } from "node:fs"
import { PgClient } from "@effect/sql-pg"
import { Redacted } from "effect"
import { freshDatabaseUrl } from "../test/support/database.js"
import { freePort } from "../test/support/server.js"
import { AGENTS, authorizeBody, benchOrganization, POLICIES, startGateway } from "./support/gateway.js"
import { measureInsertRate } from "./support/insert-rate.js"
import { type LoadResult, round3, runLoad } from "./support/load.js"
import { printProfileSummary, profileDirectory } from "./support/profile.js"

/** CPU seconds (user + system) the process `pid` has used so far, from /proc. */
const cpuSeconds = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) / 100
}
/** Runs `phase` and answers its result with the server's CPU time per request in µs. */
const withServerCpu = async (pid: number, phase: () => Promise<LoadResult>) => {
  const before = cpuSeconds(pid)
  const result = await phase()
  const served = result.rps * seconds
  return { result, cpuUs: served > 0 ? Math.round(((cpuSeconds(pid) - before) * 1e6) / served) : 0 }
}

const serverUrl = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres"
const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64)
const profileDir = profileDirectory()

const row = (name: string, r: LoadResult, ratio?: number) =>
  console.log(
    `${name.padEnd(30)} ${String(r.rps).padStart(7)} req/s   p50 ${r.p50_ms.toFixed(2).padStart(6)} ms   p99 ${r.p99_ms
      .toFixed(2)
      .padStart(6)} ms${ratio === undefined ? "" : `   ${ratio.toFixed(2)}× INSERT`}${r.errors ? `   errors ${r.errors}` : ""}`
  )


const main = async () => {
  const database = await freshDatabaseUrl(serverUrl)
  if (!database) throw new Error("no DATABASE_URL")
  let server: Awaited<ReturnType<typeof startGateway>> | undefined
  try {
    const insert = await measureInsertRate(
      PgClient.layer({ url: Redacted.make(database.url), maxConnections: 8, minConnections: 8 }),
      8,
      seconds
    )
    // Metrics have a listener of their own; the batch sizes below are read from it.
    const metricsPort = await freePort()
    server = await startGateway({
      env: { DATABASE_URL: database.url, METRICS_PORT: String(metricsPort) },
      ...(profileDir ? { nodeArgs: ["--cpu-prof", "--cpu-prof-dir", profileDir] } : {})
    })
    const url = server.url
    const token = await benchOrganization(url)
    const auth = { authorization: `Bearer ${token}` }
    const authorizeLoad = (duration: number) =>
      runLoad({ url, path: "/api/v1/actions", method: "POST", headers: auth, body: authorizeBody, connections, seconds: duration, expectStatus: 201 })

    await authorizeLoad(1)
    const { result: authorize, cpuUs: authorizeCpuUs } = await withServerCpu(server.pid, () => authorizeLoad(seconds))

    // Authorized actions to notarize: created up front, more than the notarize phase can use.
    const pending: Array<string> = []
    await runLoad({
      url,
      headers: auth,
      connections,
      seconds: seconds * 1.2,
      next: () => ({ path: "/api/v1/actions", body: authorizeBody() }),
      expectStatus: 201,
      onAnswer: (text) => pending.push(JSON.parse(text).action_uuid)
    })
    let taken = 0
    const { result: notarize, cpuUs: notarizeCpuUs } = await withServerCpu(server.pid, () =>
      runLoad({
        url,
        headers: auth,
        connections,
        seconds,
        next: () => (taken < pending.length ? { path: `/api/v1/actions/${pending[taken++]}/notarize`, body: '{"outcome":"completed"}' } : undefined),
        expectStatus: 200
      })
    )
    if (taken >= pending.length) console.error("note: the notarize phase ran out of authorized actions before its time was up")
    // How the agent entities committed: batch sizes and one-statement notarizations.
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
    const series = (name: string) => Number(metrics.match(new RegExp(`^${name} (\\d+)`, "m"))?.[1] ?? 0)
    const commits = series("agent_commit_batch_size_count")
    const transitions = series("agent_commit_batch_size_sum")

    const authorizeRatio = authorize.rps / insert.rps
    const notarizeRatio = notarize.rps / insert.rps
    console.log(`authorize / notarize over HTTP: ${connections} connections, ${AGENTS} agents, ${POLICIES} active rules policies × 3 conditions, ${seconds} s each`)
    console.log(`${"raw INSERT @effect/sql-pg, 8 conns".padEnd(30)} ${String(insert.rps).padStart(7)} rows/s  p50 ${insert.p50_ms.toFixed(2).padStart(6)} ms   p99 ${insert.p99_ms.toFixed(2).padStart(6)} ms`)
    row("authorize", authorize, authorizeRatio)
    row("notarize", notarize, notarizeRatio)
    console.log(`gateway CPU per request: authorize ${authorizeCpuUs} µs, notarize ${notarizeCpuUs} µs`)
    console.log(`agent commits: ${commits} transactions or statements for ${transitions} transitions`)
    const verdict = (ok: boolean) => (ok ? "met" : "MISSED")
    console.log(
      `targets: authorize >= 0.6× (${verdict(authorizeRatio >= 0.6)}), notarize >= 0.5× (${verdict(notarizeRatio >= 0.5)}), ` +
        `p99 <= 15 ms (authorize ${verdict(authorize.p99_ms <= 15)}, notarize ${verdict(notarize.p99_ms <= 15)})`
    )
    console.log(
      JSON.stringify({
        connections,
        seconds,
        agents: AGENTS,
        policies: POLICIES,
        insert_rps_8conn: insert.rps,
        insert_p99_ms: insert.p99_ms,
        authorize_rps: authorize.rps,
        authorize_ratio: round3(authorizeRatio),
        authorize_p50_ms: authorize.p50_ms,
        authorize_p99_ms: authorize.p99_ms,
        authorize_errors: authorize.errors,
        authorize_cpu_us: authorizeCpuUs,
        notarize_rps: notarize.rps,
        notarize_ratio: round3(notarizeRatio),
        notarize_p50_ms: notarize.p50_ms,
        notarize_p99_ms: notarize.p99_ms,
        notarize_errors: notarize.errors,
        notarize_cpu_us: notarizeCpuUs,
        agent_commits: commits,
        agent_transitions: transitions
      })
    )
  } finally {
    await server?.stop()
    await database.drop()
  }
  if (profileDir) printProfileSummary(profileDir)
}

await main()
process.exit(0)
