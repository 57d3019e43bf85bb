/**
 * `npm run bench:authorize`: authorize and notarize over HTTP against the real
 * server in its own process — what `npm start` runs: the tsc build (compiled at
 * the start) with its memory budget — on Postgres, with 10 active rules
 * policies of 3 conditions each (none matches, so every action is authorized),
 * 100 agents and 64 connections driven by wrk (a C load generator, so the
 * client does not eat the CPU the server needs); compared with raw single-row
 * INSERTs through `@effect/sql-pg` at 8 connections, measured in the same run
 * on the same database. Prints the gateway's CPU per request and the rows each
 * commit of the commit pipeline carried.
 *
 * DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres) names the
 * server; a fresh database is created for the run and dropped after. Redis is
 * the in-process stand-in. BENCH_SECONDS (default 5), BENCH_CONNECTIONS
 * (default 64); BENCH_PROFILE=1 (or a directory) runs the server with `--cpu-prof` and
 * prints its top 15 frames by self time.
 * The last output line is one JSON object.
 */

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PgClient } from "@effect/sql-pg"
import { Redacted } from "effect"
import { freshDatabaseUrl } from "../test/support/database.js"
import { freePort } from "../test/support/server.js"
import { BUILD_DIRECTORY, compileServer, startFlags } from "./support/build.js"
import { AGENTS, authorizeBody, benchOrganization, POLICIES, startGateway } from "./support/gateway.js"
import { measureInsertRate } from "./support/insert-rate.js"
import { hasWrk, type LoadResult, round3, runLoad, runWrk } from "./support/load.js"
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


/** Rows and commits of the commit pipeline so far (its `commit_batch_rows` histogram). */
const pipelineCounts = async (metricsPort: number) => {
  const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
  const series = (name: string) => Number(metrics.match(new RegExp(`^${name} (\\d+)`, "m"))?.[1] ?? 0)
  const sum = (name: string) => Number(metrics.match(new RegExp(`^${name} ([\\d.e+]+)`, "m"))?.[1] ?? 0)
  return { commits: series("commit_batch_rows_count"), rows: series("commit_batch_rows_sum"), conflicts: series("commit_conflicts_total"), ms: sum("commit_batch_ms_sum") }
}

/** Runs `phase` and reports how many rows each commit carried meanwhile. */
const withCommits = async <A>(metricsPort: number, phase: () => Promise<A>) => {
  const before = await pipelineCounts(metricsPort)
  const result = await phase()
  const after = await pipelineCounts(metricsPort)
  const commits = after.commits - before.commits
  return {
    result,
    commits,
    rows: after.rows - before.rows,
    perCommit: commits > 0 ? (after.rows - before.rows) / commits : 0,
    msPerCommit: commits > 0 ? (after.ms - before.ms) / commits : 0,
    conflicts: after.conflicts - before.conflicts
  }
}

// wrk builds each request in Lua: authorize bodies spread over the agents, notarizations of the actions listed in a file.
const authorizeScript = `
local counter = 0
request = function()
  counter = counter + 1
  local body = string.format('{"action_type":"payment.transfer","details":"transfer %d EUR to supplier","agent_id":"agent-%d","context":{"amount":%d}}', counter, math.random(0, ${AGENTS - 1}), counter % 500)
  return wrk.format("POST", "/api/v1/actions", nil, body)
end`
const notarizeScript = (idsFile: string) => `
local ids = {}
for line in io.lines("${idsFile}") do ids[#ids + 1] = line end
local next = 0
request = function()
  next = next + 1
  if next > #ids then next = #ids end
  return wrk.format("POST", "/api/v1/actions/" .. ids[next] .. "/notarize", nil, '{"outcome":"completed"}')
end`

const main = async () => {
  if (!hasWrk()) throw new Error("bench:authorize needs wrk (apt-get install wrk)")
  compileServer()
  const database = await freshDatabaseUrl(serverUrl)
  if (!database) throw new Error("no DATABASE_URL")
  let server: Awaited<ReturnType<typeof startGateway>> | undefined
  const scratch = mkdtempSync(join(tmpdir(), "bench-authorize-"))
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
      dist: BUILD_DIRECTORY,
      nodeArgs: [...startFlags(), ...(profileDir ? ["--cpu-prof", "--cpu-prof-dir", profileDir] : [])]
    })
    const url = server.url
    const token = await benchOrganization(url)
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" }
    const authorizeLoad = (duration: number) => runWrk({ url, path: "/api/v1/actions", headers, connections, seconds: duration, script: authorizeScript })!

    authorizeLoad(1)
    const authorizePhase = await withCommits(metricsPort, () => withServerCpu(server!.pid, async () => authorizeLoad(seconds)))
    const { result: authorize, cpuUs: authorizeCpuUs } = authorizePhase.result

    // Authorized actions to notarize, created up front: as many as the authorize phase managed, which notarize cannot outrun.
    const pending: Array<string> = []
    const wanted = Math.min(200_000, Math.max(5_000, authorize.rps * seconds))
    await runLoad({
      url,
      headers: { authorization: headers.authorization },
      connections,
      seconds: 600,
      next: () => (pending.length + connections <= wanted ? { path: "/api/v1/actions", body: authorizeBody() } : undefined),
      expectStatus: 201,
      onAnswer: (text) => pending.push(JSON.parse(text).action_uuid)
    })
    const idsFile = join(scratch, "pending.txt")
    writeFileSync(idsFile, pending.join("\n"))
    const notarizePhase = await withCommits(metricsPort, () =>
      withServerCpu(server!.pid, async () => runWrk({ url, path: "/", headers, connections, seconds, script: notarizeScript(idsFile) })!)
    )
    const { result: notarize, cpuUs: notarizeCpuUs } = notarizePhase.result
    if (notarize.requests >= pending.length) console.error("note: the notarize phase ran out of authorized actions before its time was up (the last ones answer 409)")

    const authorizeRatio = authorize.rps / insert.rps
    const notarizeRatio = notarize.rps / insert.rps
    console.log(
      `authorize / notarize over HTTP (wrk, the built server with npm start's flags): ${connections} connections, ${AGENTS} agents, ${POLICIES} active rules policies × 3 conditions, ${seconds} s each`
    )
    console.log(`${"raw INSERT @effect/sql-pg, 8 conns".padEnd(30)} ${String(insert.rps).padStart(7)} rows/s  p50 ${insert.p50_ms.toFixed(2).padStart(6)} ms   p99 ${insert.p99_ms.toFixed(2).padStart(6)} ms`)
    row("authorize", authorize, authorizeRatio)
    row("notarize", notarize, notarizeRatio)
    console.log(`gateway CPU per request: authorize ${authorizeCpuUs} µs, notarize ${notarizeCpuUs} µs`)
    console.log(
      `commit pipeline: authorize ${authorizePhase.rows} rows in ${authorizePhase.commits} commits (${authorizePhase.perCommit.toFixed(1)} per commit, ${authorizePhase.msPerCommit.toFixed(1)} ms each), ` +
        `notarize ${notarizePhase.rows} in ${notarizePhase.commits} (${notarizePhase.perCommit.toFixed(1)} per commit, ${notarizePhase.msPerCommit.toFixed(1)} ms each); guard conflicts ${authorizePhase.conflicts + notarizePhase.conflicts}`
    )
    const verdict = (ok: boolean) => (ok ? "met" : "MISSED")
    console.log(
      `targets: authorize >= 1.0× (${verdict(authorizeRatio >= 1)}), notarize >= 0.5× (${verdict(notarizeRatio >= 0.5)}), ` +
        `p99 <= 15 ms (authorize ${verdict(authorize.p99_ms <= 15)}, notarize ${verdict(notarize.p99_ms <= 15)}), ` +
        `CPU authorize <= 120 µs (${verdict(authorizeCpuUs <= 120)}), notarize <= 250 µs (${verdict(notarizeCpuUs <= 250)}), ` +
        `transitions per commit >= 10 (authorize ${verdict(authorizePhase.perCommit >= 10)}, notarize ${verdict(notarizePhase.perCommit >= 10)})`
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
        authorize_rows_per_commit: round3(authorizePhase.perCommit),
        notarize_rps: notarize.rps,
        notarize_ratio: round3(notarizeRatio),
        notarize_p50_ms: notarize.p50_ms,
        notarize_p99_ms: notarize.p99_ms,
        notarize_errors: notarize.errors,
        notarize_cpu_us: notarizeCpuUs,
        notarize_rows_per_commit: round3(notarizePhase.perCommit),
        guard_conflicts: authorizePhase.conflicts + notarizePhase.conflicts
      })
    )
  } finally {
    await server?.stop()
    await database.drop()
    rmSync(scratch, { recursive: true, force: true })
  }
  if (profileDir) printProfileSummary(profileDir)
}

await main()
process.exit(0)
