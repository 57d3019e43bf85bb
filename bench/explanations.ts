/**
 * `npm run bench:explanations`: what a signed explanation costs. An organization with 10 active
 * rules policies (`benchOrganization`, none matching, so every action records 10 evaluations)
 * authorizes and notarizes BENCH_ACTIONS (default 200) actions; then, one request at a time
 * (BENCH_READS rounds, default 500), over HTTP:
 *   - GET /api/v1/actions/{id}              (the baseline: the same action's plain detail)
 *   - GET /api/v1/actions/{id}/explanation  (five keys built from the rows, JCS, Ed25519)
 *   - GET /api/v1/actions/{id}/explanation/pdf
 *   - POST /api/v1/verify/explanation       (public; recompute JCS, hash, check the signature)
 * each p50/p99 and its ratio to the baseline; then 16 connections for BENCH_SECONDS (default 5)
 * on explanations and on the baseline: requests per second.
 *
 * The gateway runs in its own process on a fresh database of DATABASE_URL (default
 * postgres://postgres@127.0.0.1:5432/postgres), dropped after. The last output line is one JSON object.
 */

import { benchOrganization, post, } from "./support/gateway.js"
import { runGatewayBench } from "./support/harness.js"
import { latencyPercentiles, runLoad } from "./support/load.js"

const actionCount = Number(process.env.BENCH_ACTIONS ?? 200)
const reads = Number(process.env.BENCH_READS ?? 500)
const seconds = Number(process.env.BENCH_SECONDS ?? 5)

const timed = async (samples: number[], send: () => Promise<Response>) => {
  const started = performance.now()
  const reply = await send()
  await reply.arrayBuffer()
  samples.push(performance.now() - started)
  if (reply.status !== 200) throw new Error(`${reply.url} answered ${reply.status}`)
}

runGatewayBench(async ({ server }) => {
    const key = await benchOrganization(server.url)
    const auth = { authorization: `Bearer ${key}` }
    const ids: string[] = []
    for (let i = 0; i < actionCount; i++) {
      const action = await post(server.url, "/api/v1/actions", key, { action_type: "payment.transfer", details: `transfer ${i}`, agent_id: `agent-${i % 10}` })
      await post(server.url, `/api/v1/actions/${action.action_uuid}/notarize`, key, { outcome: "completed", outcome_details: "sent" })
      ids.push(action.action_uuid)
    }
    const sample = await fetch(`${server.url}/api/v1/actions/${ids[0]}/explanation`, { headers: auth }).then((r) => r.json() as Promise<Record<string, unknown>>)
    const body = JSON.stringify({ explanation: sample })

    const detail: number[] = []
    const explanation: number[] = []
    const pdf: number[] = []
    const verify: number[] = []
    const round = async (record: boolean, index: number) => {
      const id = ids[index % ids.length]!
      const sinks = record ? [detail, explanation, pdf, verify] : [[], [], [], []]
      await timed(sinks[0]!, () => fetch(`${server.url}/api/v1/actions/${id}`, { headers: auth }))
      await timed(sinks[1]!, () => fetch(`${server.url}/api/v1/actions/${id}/explanation`, { headers: auth }))
      await timed(sinks[2]!, () => fetch(`${server.url}/api/v1/actions/${id}/explanation/pdf`, { headers: auth }))
      await timed(sinks[3]!, () => fetch(`${server.url}/api/v1/verify/explanation`, { method: "POST", headers: { "content-type": "application/json" }, body }))
    }
    for (let i = 0; i < 50; i++) await round(false, i) // warm-up: JIT, pools
    for (let i = 0; i < reads; i++) await round(true, i)

    const baseline = latencyPercentiles(detail)
    const rows = { action_detail: baseline, explanation: latencyPercentiles(explanation), explanation_pdf: latencyPercentiles(pdf), verify_explanation: latencyPercentiles(verify) }
    for (const [name, figures] of Object.entries(rows)) {
      console.log(`${name.padEnd(20)} p50 ${figures.p50} ms (${(figures.p50 / baseline.p50).toFixed(2)}× detail), p99 ${figures.p99} ms (${(figures.p99 / baseline.p99).toFixed(2)}× detail)`)
    }

    let cursor = 0
    const nextPath = (suffix: string) => () => ({ path: `/api/v1/actions/${ids[cursor++ % ids.length]}${suffix}` })
    const detailLoad = await runLoad({ url: server.url, next: nextPath(""), headers: auth, connections: 16, seconds, expectStatus: 200 })
    const explanationLoad = await runLoad({ url: server.url, next: nextPath("/explanation"), headers: auth, connections: 16, seconds, expectStatus: 200 })
    console.log(
      `16 connections, ${seconds} s: explanations ${explanationLoad.rps}/s (p99 ${explanationLoad.p99_ms} ms, ${explanationLoad.errors} errors) vs action detail ${detailLoad.rps}/s (p99 ${detailLoad.p99_ms} ms) = ${(explanationLoad.rps / detailLoad.rps).toFixed(2)}×`
    )
    console.log(
      JSON.stringify({
        bench: "explanations",
        actions: actionCount,
        policies: 10,
        reads,
        ...Object.fromEntries(Object.entries(rows).flatMap(([name, f]) => [[`${name}_p50_ms`, f.p50], [`${name}_p99_ms`, f.p99]])),
        explanation_rps_16: explanationLoad.rps,
        detail_rps_16: detailLoad.rps,
        explanation_errors: explanationLoad.errors
      })
    )
})
