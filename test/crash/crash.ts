/**
 * Crash test: authorize+notarize under load while the server is SIGKILLed
 * several times and restarted on the same storage (same MASTER_KEY). At the
 * end every acknowledged receipt must still be served byte for byte (same
 * payload hash, signature and canonical signed payload) and every agent's
 * chain must run 1..n with each receipt linking to the one before, checked
 * with the portable verifier.
 *
 * Storage: a fresh Postgres database when DATABASE_URL is set, otherwise
 * the embedded default (its own PostgreSQL under a temporary DATA_DIR), so
 * each kill also leaves a cluster for the next start to recover.
 *
 * Run it alone: `npx tsx test/crash/crash.ts` (CRASH_KILLS, CRASH_CLIENTS,
 * CRASH_AGENTS, CRASH_LIFE_MS tune it); `test/crash.test.ts` runs it small.
 */

import { createHash } from "node:crypto"
import { chmodSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  canonicalJson,
  type Ed25519Jwk,
  payloadHash,
  verifyReceipt,
  verifySettlementConsistency,
  verifySettlementInclusion
} from "../../protocol/verifier/index.js"
import { type FreshDatabase, freshDatabaseUrl } from "../support/database.js"
import { startFakeLlm } from "../support/fake-llm.js"
import { type ServerProcess, spawnServer } from "../support/process.js"

export interface CrashOptions {
  /** How many times the server is SIGKILLed (default 5). */
  readonly kills?: number
  /** Concurrent clients each looping authorize → notarize (default 16). */
  readonly clients?: number
  /** Agents the clients pick from at random (default 10). */
  readonly agents?: number
  /** The server lives a random time in [minLifeMs, maxLifeMs] after it answers (default 800..2500). */
  readonly minLifeMs?: number
  readonly maxLifeMs?: number
  /** Each life lasts at least until this many receipts were acknowledged in it (default 3), so a slow machine still kills under load. */
  readonly minAcksPerLife?: number
  /** Load after the last restart, before checking (default 1000 ms). */
  readonly finalLoadMs?: number
  /** Progress lines (default: none). */
  readonly log?: (line: string) => void
}

export interface CrashReport {
  readonly backend: "postgres" | "embedded"
  /** Consensus cases answered 201 (each must be there, receipt intact, after the kills). */
  readonly casesRun: number
  readonly kills: number
  /** Notarize calls answered 200 (the receipts that must survive). */
  readonly acknowledged: number
  /** Acknowledged receipts whose verify document was also read before a kill. */
  readonly documentsRecorded: number
  /** Notarize or authorize calls that got no answer (cut by a kill). */
  readonly interrupted: number
  /** Receipts found walking every agent's chain (acknowledged or not). */
  readonly chainedReceipts: number
  readonly chains: Readonly<Record<string, number>>
  /** Agents registered (201) during the load by the registry client; each must still be there. */
  readonly registeredAgents: number
  /** Settlements answered 201 (during the load and the final one); each must be there and extended by the next. */
  readonly settlements: number
  /** Escrow deposits answered 201 during the load; the balance must hold each. */
  readonly deposits: number
  /** Compliance reports answered 201 during the load; each must be there, verify and download the same bytes. */
  readonly reports: number
  /** DORA incidents answered 201 during the load; each must be there. */
  readonly incidents: number
  /** Empty when every check passed. */
  readonly problems: ReadonlyArray<string>
  readonly seconds: number
}

const REQUEST_TIMEOUT_MS = 20_000

const MASTER_KEY = "c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00"

interface Acknowledged {
  readonly agentId: string
  readonly actionUuid: string
  readonly receiptUuid: string
  readonly payloadHash: string
  readonly signature: string
  /** The verify document read right after the answer, when the server lived that long. */
  document?: VerifyDocument
}

interface VerifyDocument {
  readonly receipt_uuid: string
  readonly action_uuid: string
  readonly payload_hash: string
  readonly signature: string
  readonly public_key_id: string
  readonly public_key: Ed25519Jwk | null
  readonly signed_payload: Record<string, unknown>
  readonly timestamp_token: string | null
  readonly valid: boolean
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const randomBetween = (min: number, max: number) => min + Math.floor(Math.random() * (max - min + 1))

/** A network failure (server killed mid-request) as opposed to an answer. */
class NoAnswer extends Error {}

const request = async (base: string, method: string, path: string, token?: string, body?: unknown) => {
  const headers: Record<string, string> = {}
  if (token) headers.authorization = `Bearer ${token}`
  if (body !== undefined) headers["content-type"] = "application/json"
  let response: Response
  let text: string
  try {
    response = await fetch(base + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      // A live server answers in milliseconds; a request the kill cut off must not hang the run.
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS)
    })
    text = await response.text()
  } catch (cause) {
    throw new NoAnswer(String(cause))
  }
  return { status: response.status, body: text ? JSON.parse(text) : undefined, text }
}

/** Runs `work` over `items` with at most `limit` in flight. */
const forEachLimited = async <A>(items: ReadonlyArray<A>, limit: number, work: (item: A) => Promise<void>) => {
  let next = 0
  const lane = async () => {
    while (next < items.length) await work(items[next++]!)
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane))
}

export const runCrashTest = async (options: CrashOptions = {}): Promise<CrashReport> => {
  const kills = options.kills ?? 5
  const clients = options.clients ?? 16
  const agentCount = options.agents ?? 10
  const minLife = options.minLifeMs ?? 800
  const maxLife = options.maxLifeMs ?? 2500
  const log = options.log ?? (() => {})
  const started = performance.now()
  const startedAt = Date.now()

  const database: FreshDatabase | undefined = process.env.DATABASE_URL ? await freshDatabaseUrl() : undefined
  const dataDir = mkdtempSync(join(tmpdir(), "crash-test-"))
  // mkdtemp makes it 0700; the embedded server may run as another user.
  chmodSync(dataDir, 0o755)
  const env: Record<string, string> = {
    DATABASE_URL: database?.url ?? "",
    DATA_DIR: dataDir,
    REDIS_URL: "",
    MASTER_KEY,
    ADMIN_KEY: "crash-admin-key",
    RATE_LIMIT_PER_MINUTE: "100000000",
    PUBLIC_RATE_LIMIT_PER_MINUTE: "100000000",
    LOG_LEVEL: "error",
    // Cases call a local model server.
    OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8",
    OUTBOUND_ALLOW_HTTP: "true"
  }
  const llm = await startFakeLlm()

  let server: ServerProcess | undefined
  /** Resolves with the base URL of the live server; replaced while one restarts. */
  let live: Promise<string>
  const problems: Array<string> = []
  const acknowledged: Array<Acknowledged> = []
  let interrupted = 0

  const boot = async () => {
    server = await spawnServer(env)
    return server.url
  }

  try {
    live = boot()
    let base = await live
    const registered = await request(base, "POST", "/api/v1/auth/register", undefined, {
      email: "crash@example.test",
      password: "crash test password",
      org_name: "Crash"
    })
    if (registered.status !== 201) throw new Error(`register failed: ${registered.status} ${registered.text}`)
    const key: string = registered.body.api_key.key
    // The chains' agents are registered, so every notarize also reads its agent row (decommission check).
    for (let agent = 1; agent <= agentCount; agent++) {
      const reply = await request(base, "POST", "/api/v1/agents", key, { agent_slug: `agent-${agent}`, name: `Agent ${agent}` })
      if (reply.status !== 201) throw new Error(`agent registration failed: ${reply.status} ${reply.text}`)
    }
    for (const path of ["approve", "slow/50/approve"]) {
      const reply = await request(base, "POST", "/api/v1/models/custom", key, { name: path, model_id: path.replace(/\//g, "-"), endpoint_url: `${llm.url}/${path}/v1` })
      if (reply.status !== 201) throw new Error(`custom model failed: ${reply.status} ${reply.text}`)
    }
    log(`server up (${database ? "postgres" : "embedded postgres"}), org, ${agentCount} agents and 2 custom models registered`)

    let stopping = false
    let counter = 0
    const client = async () => {
      while (!stopping) {
        const at = await live
        const agentId = `agent-${randomBetween(1, agentCount)}`
        try {
          const created = await request(at, "POST", "/api/v1/actions", key, {
            action_type: "crash.step",
            details: `step ${++counter} at ${Date.now()}`,
            agent_id: agentId
          })
          if (created.status !== 201) {
            problems.push(`authorize answered ${created.status}: ${created.text}`)
            continue
          }
          const done = await request(at, "POST", `/api/v1/actions/${created.body.action_uuid}/notarize`, key, { outcome: "completed" })
          if (done.status !== 200) {
            problems.push(`notarize answered ${done.status}: ${done.text}`)
            continue
          }
          const ack: Acknowledged = {
            agentId,
            actionUuid: created.body.action_uuid,
            receiptUuid: done.body.receipt_uuid,
            payloadHash: done.body.payload_hash,
            signature: done.body.signature
          }
          acknowledged.push(ack)
          const verify = await request(at, "GET", `/api/v1/verify/${ack.receiptUuid}`)
          if (verify.status === 200) ack.document = verify.body
          else problems.push(`verify right after notarize answered ${verify.status}: ${verify.text}`)
        } catch (error) {
          if (!(error instanceof NoAnswer)) throw error
          interrupted++
          // The server is gone: wait for the restart (the killer swaps `live`).
          await sleep(20)
        }
      }
    }
    // One client registers agents and publishes a version of each while the kills land.
    const registeredAgents: Array<{ slug: string; versioned: boolean }> = []
    const registrar = async () => {
      for (let n = 1; !stopping; n++) {
        const at = await live
        const slug = `registered-${n}`
        try {
          const reply = await request(at, "POST", "/api/v1/agents", key, { agent_slug: slug, name: `Registered ${n}`, metadata: { n } })
          if (reply.status === 409) continue // registered before a kill cut the answer
          if (reply.status !== 201) {
            problems.push(`agent registration answered ${reply.status}: ${reply.text}`)
            continue
          }
          const entry = { slug, versioned: false }
          registeredAgents.push(entry)
          const version = await request(at, "POST", `/api/v1/agents/${slug}/versions`, key, { version: "1.0.0", instruction_hash: `sha256:${"0".repeat(64)}` })
          if (version.status === 201) entry.versioned = true
          else problems.push(`version publishing answered ${version.status}: ${version.text}`)
        } catch (error) {
          if (!(error instanceof NoAnswer)) throw error
          interrupted++
          await sleep(20)
        }
        await sleep(10)
      }
    }
    // One client runs consensus cases with idempotency keys, retrying each key until it is answered.
    const casesRun: Array<{ key: string; caseId: string; receiptUuid: string; payloadHash: string }> = []
    const caseRunner = async () => {
      for (let n = 1; !stopping; n++) {
        const body = { details: `case ${n}`, models: ["custom:approve", "custom:slow-50-approve"], options: { idempotency_key: `crash-case-${n}` } }
        for (;;) {
          const at = await live
          try {
            const reply = await request(at, "POST", "/api/v1/cases", key, body)
            if (reply.status === 201) {
              casesRun.push({ key: body.options.idempotency_key, caseId: reply.body.case_id, receiptUuid: reply.body.receipt.receipt_uuid, payloadHash: reply.body.receipt.payload_hash })
              break
            }
            // A run the kill cut off is failed at start-up, and its key freed; anything else is a problem.
            problems.push(`case ${n} answered ${reply.status}: ${reply.text}`)
            break
          } catch (error) {
            if (!(error instanceof NoAnswer)) throw error
            interrupted++
            await sleep(20)
          }
        }
        await sleep(10)
      }
    }
    // One client keeps an escrow account and settles the organization's receipts through the kills.
    const account = (await request(await live, "POST", "/api/v1/escrow/accounts", key, { purpose: "crash" })).body.account_uuid as string
    const settlements: Array<{ id: string; merkleRoot: string }> = []
    let deposits = 0
    let depositsCutOff = 0
    // Three settlements at most during the load, the first as soon as the ledger runs: with the final
    // one they stay within 5 per minute (an attempt a kill cut off may have counted too).
    let settleAttempts = 0
    const ledger = async () => {
      for (let n = 1; !stopping; n++) {
        const at = await live
        try {
          const deposit = await request(at, "POST", `/api/v1/escrow/accounts/${account}/deposit`, key, { amount: "1.00", reference: `crash-${n}` })
          if (deposit.status === 201) deposits++
          else problems.push(`deposit ${n} answered ${deposit.status}: ${deposit.text}`)
        } catch (error) {
          if (!(error instanceof NoAnswer)) throw error
          depositsCutOff++
          interrupted++
          await sleep(20)
          continue
        }
        if ((n === 2 || n % 15 === 0) && settleAttempts < 3) {
          settleAttempts++
          try {
            const settled = await request(at, "POST", "/api/v1/settlements", key)
            if (settled.status === 201) settlements.push({ id: settled.body.id, merkleRoot: settled.body.merkle_root })
            else if (settled.status !== 429 && !(settled.status === 200 && settled.body === null)) problems.push(`settlement answered ${settled.status}: ${settled.text}`)
          } catch (error) {
            if (!(error instanceof NoAnswer)) throw error
            interrupted++
          }
        }
        await sleep(10)
      }
    }
    // One client files DORA incidents and generates compliance reports (each in one transaction with
    // its PDF bytes) through the kills.
    const reports: Array<{ id: string; contentHash: string }> = []
    const incidents: Array<string> = []
    const reporter = async () => {
      for (let n = 1; !stopping && reports.length < 6; n++) {
        const at = await live
        try {
          const incident = await request(at, "POST", "/api/v1/dora/incidents", key, { title: `crash ${n}`, description: "cut by a kill", detected_at: new Date().toISOString() })
          if (incident.status === 201) incidents.push(incident.body.uuid)
          else problems.push(`incident ${n} answered ${incident.status}: ${incident.text}`)
          const period = { period_start: new Date(startedAt - 60_000).toISOString(), period_end: new Date(Date.now() + 60_000).toISOString() }
          const report = await request(at, "POST", "/api/v1/compliance/reports", key, { framework: n % 2 === 0 ? "eu_ai_act_art12" : "eu_ai_act_art9", ...period })
          if (report.status === 201 && report.body.status === "ready") reports.push({ id: report.body.id, contentHash: report.body.content_hash })
          else problems.push(`report ${n} answered ${report.status}: ${report.text.slice(0, 300)}`)
        } catch (error) {
          if (!(error instanceof NoAnswer)) throw error
          interrupted++
          await sleep(20)
          continue
        }
        await sleep(100)
      }
    }
    const running = Promise.all([...Array.from({ length: clients }, client), registrar(), caseRunner(), ledger(), reporter()])

    const minAcks = options.minAcksPerLife ?? 3
    for (let kill = 1; kill <= kills; kill++) {
      const before = acknowledged.length
      for (const giveUp = Date.now() + 60_000; acknowledged.length < before + minAcks && Date.now() < giveUp; ) await sleep(20)
      await sleep(randomBetween(minLife, maxLife))
      const victim = server!
      if (!victim.running()) {
        // It died without our signal: that is a failure in itself, and there is no exit left to wait for.
        problems.push(`server stopped on its own before kill ${kill}:\n${victim.output().slice(-4000)}`)
        live = boot()
        await live
        continue
      }
      let restarted!: (url: string) => void
      live = new Promise((resolve) => (restarted = resolve))
      await victim.kill()
      log(`kill ${kill}: SIGKILL after ${acknowledged.length} acknowledged receipts`)
      restarted(await boot())
    }
    await sleep(options.finalLoadMs ?? 1000)
    stopping = true
    await running
    base = await live
    log(`load stopped: ${acknowledged.length} acknowledged, ${interrupted} interrupted; checking`)

    // 1. Every acknowledged receipt, byte for byte.
    await forEachLimited(acknowledged, 16, async (ack) => {
      const reply = await request(base, "GET", `/api/v1/verify/${ack.receiptUuid}`)
      if (reply.status !== 200) return void problems.push(`acknowledged ${ack.receiptUuid} answers ${reply.status}`)
      const doc: VerifyDocument = reply.body
      if (doc.payload_hash !== ack.payloadHash) problems.push(`${ack.receiptUuid}: payload_hash ${doc.payload_hash} != acknowledged ${ack.payloadHash}`)
      if (doc.signature !== ack.signature) problems.push(`${ack.receiptUuid}: signature differs from the acknowledged one`)
      if (payloadHash(doc.signed_payload) !== ack.payloadHash) problems.push(`${ack.receiptUuid}: signed payload does not hash to the acknowledged payload_hash`)
      if (doc.action_uuid !== ack.actionUuid) problems.push(`${ack.receiptUuid}: action ${doc.action_uuid} != ${ack.actionUuid}`)
      if (!doc.valid) problems.push(`${ack.receiptUuid}: server says invalid`)
      if (ack.document) {
        const before = ack.document
        if (canonicalJson(before.signed_payload) !== canonicalJson(doc.signed_payload)) problems.push(`${ack.receiptUuid}: signed payload changed across restarts`)
        if (before.public_key_id !== doc.public_key_id || before.timestamp_token !== doc.timestamp_token) {
          problems.push(`${ack.receiptUuid}: key id or timestamp token changed across restarts`)
        }
      }
    })

    // 2. Every agent's chain: sequence 1..n, each link to the previous payload hash, all signatures valid.
    const chains: Record<string, number> = {}
    let chainedReceipts = 0
    const ackedByAgent = new Map<string, Set<string>>()
    for (const ack of acknowledged) {
      const set = ackedByAgent.get(ack.agentId) ?? new Set<string>()
      set.add(ack.receiptUuid)
      ackedByAgent.set(ack.agentId, set)
    }
    for (let agent = 1; agent <= agentCount; agent++) {
      const agentId = `agent-${agent}`
      const actionUuids: Array<string> = []
      for (let page = 1; ; page++) {
        const listed = await request(base, "GET", `/api/v1/actions?agent_id=${agentId}&status=notarized&per_page=100&page=${page}`, key)
        if (listed.status !== 200) throw new Error(`listing ${agentId} answered ${listed.status}: ${listed.text}`)
        for (const item of listed.body.data) actionUuids.push(item.action_uuid)
        if (!listed.body.pagination.has_more) break
      }
      const receipts: Array<VerifyDocument> = []
      await forEachLimited(actionUuids, 16, async (actionUuid) => {
        const reply = await request(base, "GET", `/api/v1/verify/action/${actionUuid}`)
        if (reply.status !== 200) problems.push(`notarized action ${actionUuid} has no receipt (${reply.status})`)
        else receipts.push(reply.body)
      })
      receipts.sort((a, b) => Number(a.signed_payload.agent_sequence) - Number(b.signed_payload.agent_sequence))
      receipts.forEach((receipt, index) => {
        const previous = index === 0 ? null : receipts[index - 1]!
        const sequence = receipt.signed_payload.agent_sequence
        if (sequence !== index + 1) problems.push(`${agentId}: receipt ${index + 1} has agent_sequence ${String(sequence)}`)
        if (index === 0 && receipt.signed_payload.previous_payload_hash !== null) problems.push(`${agentId}: first receipt links to something`)
        const check = verifyReceipt({
          signed_payload: receipt.signed_payload,
          payload_hash: receipt.payload_hash,
          signature: receipt.signature,
          public_key: receipt.public_key!,
          previous: previous && { payload_hash: previous.payload_hash, signed_payload: previous.signed_payload }
        })
        if (!check.valid) problems.push(`${agentId} #${String(sequence)}: ${check.errors.join("; ")}`)
      })
      const inChain = new Set(receipts.map((receipt) => receipt.receipt_uuid))
      for (const receiptUuid of ackedByAgent.get(agentId) ?? []) {
        if (!inChain.has(receiptUuid)) problems.push(`${agentId}: acknowledged ${receiptUuid} is missing from the chain`)
      }
      chains[agentId] = receipts.length
      chainedReceipts += receipts.length
    }

    // 3. Every acknowledged registration and version.
    await forEachLimited(registeredAgents, 16, async ({ slug, versioned }) => {
      const reply = await request(base, "GET", `/api/v1/agents/${slug}`, key)
      if (reply.status !== 200) return void problems.push(`registered agent ${slug} answers ${reply.status}`)
      if (versioned && reply.body.current_version !== "1.0.0") problems.push(`${slug}: acknowledged version 1.0.0, current_version is ${reply.body.current_version}`)
      // Its key and credential were written in the same transaction as the agent.
      if ((await request(base, "GET", `/agents/${slug}/did.json`)).status !== 200) problems.push(`${slug}: registered without its DID document`)
      const credential = await request(base, "GET", `/api/v1/agents/${slug}/credential`)
      if (credential.body?.credential == null) problems.push(`${slug}: registered without a current credential`)
    })

    // 4. Every acknowledged case, with its receipt, and its key replays the same case.
    await forEachLimited(casesRun, 8, async (run) => {
      const reply = await request(base, "GET", `/api/v1/cases/${run.caseId}`, key)
      if (reply.status !== 200) return void problems.push(`case ${run.caseId} answers ${reply.status}`)
      if (reply.body.receipt?.payload_hash !== run.payloadHash) problems.push(`case ${run.caseId}: receipt changed across restarts`)
      const verified = await request(base, "GET", `/api/v1/verify/case/${run.caseId}`)
      if (verified.body?.valid !== true) problems.push(`case ${run.caseId}: receipt does not verify`)
    })
    if (casesRun.length === 0) problems.push("no case completed during the run")

    // 5. The escrow balance holds every acknowledged deposit (and at most the cut-off ones besides),
    // and equals the sum of its transactions.
    const escrow = await request(base, "GET", `/api/v1/escrow/accounts/${account}`, key)
    const cents = (amount: string) => Math.round(Number(amount) * 100)
    const balance = cents(escrow.body.balance)
    if (balance < deposits * 100 || balance > (deposits + depositsCutOff) * 100) {
      problems.push(`escrow balance ${escrow.body.balance} for ${deposits} acknowledged and ${depositsCutOff} cut-off deposits of 1.00`)
    }
    if (escrow.body.transaction_count * 100 !== balance) problems.push(`escrow balance ${escrow.body.balance} is not its ${escrow.body.transaction_count} deposits`)

    // 6. Every acknowledged settlement is there, unchanged, each later head extends the earlier one,
    // and a final settlement seals the rest: every acknowledged receipt is then provably in the log.
    for (const settlement of settlements) {
      const reply = await request(base, "GET", `/api/v1/settlements/${settlement.id}`, key)
      if (reply.body?.merkle_root !== settlement.merkleRoot) problems.push(`settlement ${settlement.id} changed or vanished (${reply.status})`)
    }
    const final = await request(base, "POST", "/api/v1/settlements", key)
    const heads = final.status === 201 ? [...settlements, { id: final.body.id as string, merkleRoot: final.body.merkle_root as string }] : settlements
    for (let i = 1; i < heads.length; i++) {
      const proof = await request(base, "GET", `/api/v1/settlements/consistency?from=${heads[i - 1].id}&to=${heads[i].id}`, key)
      if (proof.status !== 200 || !verifySettlementConsistency(proof.body)) problems.push(`settlement ${heads[i].id} does not extend ${heads[i - 1].id}`)
    }
    if (final.status === 201 || (final.status === 200 && final.body === null)) {
      await forEachLimited(acknowledged.filter((_, index) => index % 7 === 0), 8, async (ack) => {
        const proof = await request(base, "GET", `/api/v1/settlements/inclusion-proof/${ack.receiptUuid}`, key)
        if (proof.status !== 200 || !verifySettlementInclusion(proof.body, ack.payloadHash)) problems.push(`receipt ${ack.receiptUuid} has no valid inclusion proof (${proof.status})`)
      })
    } else if (final.status !== 429) {
      problems.push(`final settlement answered ${final.status}: ${final.text}`)
    }

    // 7. Every acknowledged report is there and verifies, its download hashes to its content_hash; no
    // report a kill cut off is left half made (every listed one is ready and verifies); every
    // acknowledged incident is there.
    for (const report of reports) {
      const download = await fetch(`${base}/api/v1/compliance/reports/${report.id}/download`, { headers: { authorization: `Bearer ${key}` } })
      const bytes = Buffer.from(await download.arrayBuffer())
      const hash = `sha256:${createHash("sha256").update(bytes).digest("hex")}`
      if (download.status !== 200 || hash !== report.contentHash) problems.push(`report ${report.id} download ${download.status} hashes to ${hash}, acknowledged ${report.contentHash}`)
    }
    const listed = await request(base, "GET", "/api/v1/compliance/reports?limit=100", key)
    for (const item of listed.body.items as Array<{ id: string; status: string }>) {
      if (item.status !== "ready") problems.push(`report ${item.id} is ${item.status} after the kills`)
      const verified = await request(base, "GET", `/api/v1/compliance/reports/${item.id}/verify`, key)
      if (verified.body?.valid !== true) problems.push(`report ${item.id} does not verify: ${verified.text.slice(0, 300)}`)
    }
    const acknowledgedReports = new Set(reports.map((report) => report.id))
    const listedIds = new Set((listed.body.items as Array<{ id: string }>).map((item) => item.id))
    for (const id of acknowledgedReports) if (!listedIds.has(id)) problems.push(`acknowledged report ${id} is not listed`)
    for (const uuid of incidents) {
      const reply = await request(base, "GET", `/api/v1/dora/incidents/${uuid}`, key)
      if (reply.status !== 200 || reply.body.status !== "detected") problems.push(`incident ${uuid} answers ${reply.status} ${reply.body?.status}`)
    }

    return {
      backend: database ? "postgres" : "embedded",
      reports: reports.length,
      incidents: incidents.length,
      casesRun: casesRun.length,
      registeredAgents: registeredAgents.length,
      settlements: heads.length,
      deposits,
      kills,
      acknowledged: acknowledged.length,
      documentsRecorded: acknowledged.filter((ack) => ack.document !== undefined).length,
      interrupted,
      chainedReceipts,
      chains,
      problems,
      seconds: Math.round((performance.now() - started) / 100) / 10
    }
  } finally {
    if (server && problems.length > 0) log(`last server output:\n${server.output().slice(-4000)}`)
    await server?.stop()
    await llm.close()
    await database?.drop()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

const runDirectly = process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href
if (runDirectly) {
  const number = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback)
  const report = await runCrashTest({
    kills: number("CRASH_KILLS", 5),
    clients: number("CRASH_CLIENTS", 16),
    agents: number("CRASH_AGENTS", 10),
    minLifeMs: number("CRASH_MIN_LIFE_MS", 800),
    maxLifeMs: number("CRASH_LIFE_MS", 2500),
    log: (line) => console.error(line)
  })
  console.log(
    `${report.backend}: ${report.kills} SIGKILLs, ${report.acknowledged} acknowledged receipts (${report.documentsRecorded} with their verify document), ` +
      `${report.interrupted} calls cut off, ${report.chainedReceipts} receipts in ${Object.keys(report.chains).length} chains, ${report.seconds} s`
  )
  for (const problem of report.problems.slice(0, 50)) console.log(`PROBLEM ${problem}`)
  console.log(report.problems.length === 0 ? "OK: every acknowledged receipt survived and every chain verifies" : `FAILED: ${report.problems.length} problems`)
  process.exit(report.problems.length === 0 ? 0 : 1)
}
