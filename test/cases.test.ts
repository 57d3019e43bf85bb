/**
 * Consensus cases (spec 000) against a local OpenAI-compatible server: agreement, disagreement
 * above the threshold with human review, one model failing, all failing (503), idempotent replay
 * without asking the models again, validation, the plan quota, the SSE stream read by a real SSE
 * client, the same case watched on the WebSocket, cancellation when the client goes away, and the
 * receipt verified offline by the portable verifier.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { EventSource } from "eventsource"
import { describe, expect, it } from "vitest"
import { verifyReceipt } from "../protocol/verifier/index.js"
import { addMember, call, registerOrg } from "./support/client.js"
import { eventually } from "./support/eventually.js"
import { startFakeLlm } from "./support/fake-llm.js"
import { useFixture } from "./support/fixture.js"
import { useServer } from "./support/server.js"
import { connected, subscribed } from "./support/socket-client.js"

const llm = useFixture(startFakeLlm, (fake) => fake.close())
const server = useServer({ OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8", OUTBOUND_ALLOW_HTTP: "true" })
const SECRET = "Bearer sk-case-model-secret-987"

/** An organization with one custom model per fake path, named `custom:<path-with-dashes>`. */
const withModels = async (name: string, paths: ReadonlyArray<string>) => {
  const org = await registerOrg(server.url, name)
  const ids: Record<string, string> = {}
  for (const path of paths) {
    const modelId = path.replace(/\//g, "-")
    const reply = await call(server.url, "POST", "/api/v1/models/custom", {
      token: org.key,
      body: { name: path, model_id: modelId, endpoint_url: `${llm.url}/${path}/v1`, auth_header: SECRET, timeout_ms: 10_000 }
    })
    expect(reply.status).toBe(201)
    ids[path] = `custom:${modelId}`
  }
  return { ...org, ids }
}

const PATHS = ["approve", "deny", "review", "error", "garbage", "lower", "slow/600/approve", "slow/900/deny", "slow/8000/approve", "slow/8000/deny"]
const org = useFixture(() => withModels("Cases Org", PATHS))

const runCase = (token: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  call(server.url, "POST", "/api/v1/cases", { token, body, headers } as any)

const jwks = async () => (await call(server.url, "GET", "/api/v1/.well-known/jwks.json")).body.keys as Array<any>

describe("cases", () => {
  it("agreeing models: APPROVE, no disagreement, a receipt that verifies offline and publicly", async () => {
    const reply = await runCase(org.key, { details: "Refund order #1234 (19.99 EUR) to the original card", context: { customer_tier: "gold" }, models: [org.ids.approve, org.ids.lower] })
    expect(reply.status).toBe(201)
    const body = reply.body
    expect(body.status).toBe("complete")
    expect(body.consensus).toMatchObject({ decision: "APPROVE", disagreement_score: 0, requires_human_review: false, human_review_reason: null })
    expect(body.consensus.confidence_score).toBeCloseTo(0.8, 4)
    expect(body.case_results.map((result: any) => result.model)).toEqual([org.ids.approve, org.ids.lower])
    expect(body.case_results[0]).toMatchObject({ provider: "custom", decision: "APPROVE", confidence: 0.9, key_factors: ["low risk", "reversible"], error: null })
    expect(body.case_results[0].model_version).toBe("approve-2026-01")
    expect(body.details).toBeNull()
    expect(body.details_hash).toMatch(/^sha256:[0-9a-f]{64}$/)
    expect(body.review).toBeNull()
    expect(typeof body.request_id).toBe("string")
    expect(body.receipt).toMatchObject({ receipt_version: "1.0" })
    for (const key of ["receipt_uuid", "payload_hash", "signature", "public_key_id", "timestamp", "timestamp_authority", "verify_url"]) expect(typeof body.receipt[key]).toBe("string")
    expect(reply.text).not.toContain("sk-case-model-secret")

    // Offline: the portable verifier with the published key only.
    const key = (await jwks()).find((jwk) => jwk.kid === body.receipt.public_key_id)
    const signedPayload = JSON.parse(body.receipt.signed_payload)
    expect(signedPayload).toMatchObject({ receipt_version: "1.0", case_id: body.case_id, details_hash: body.details_hash })
    const offline = verifyReceipt({ signed_payload: signedPayload, payload_hash: body.receipt.payload_hash, signature: body.receipt.signature, public_key: key, timestamp_token: body.receipt.timestamp_token })
    expect(offline.errors).toEqual([])
    expect(offline.valid).toBe(true)
    const tampered = verifyReceipt({ signed_payload: { ...signedPayload, consensus: { ...signedPayload.consensus, decision: "DENY" } }, payload_hash: body.receipt.payload_hash, signature: body.receipt.signature, public_key: key })
    expect(tampered.valid).toBe(false)

    const verified = await call(server.url, "GET", new URL(body.receipt.verify_url).pathname)
    expect(verified.status).toBe(200)
    expect(verified.body).toMatchObject({ valid: true, case_id: body.case_id, receipt_uuid: body.receipt.receipt_uuid, checks: { payload_hash: true, signature: true } })
    // The public verify by receipt id answers for any receipt, a case's included (not chained: chain null).
    const byId = await call(server.url, "GET", `/api/v1/verify/${body.receipt.receipt_uuid}`)
    expect(byId.status, byId.text).toBe(200)
    expect(byId.body).toMatchObject({
      valid: true,
      receipt_uuid: body.receipt.receipt_uuid,
      action_uuid: null,
      case_id: body.case_id,
      payload_hash: body.receipt.payload_hash,
      algorithm: "Ed25519",
      checks: { payload_hash: true, signature: true, chain: null }
    })
    expect((await call(server.url, "GET", "/api/v1/verify/rct_does_not_exist")).status).toBe(404)

    const fetched = await call(server.url, "GET", `/api/v1/cases/${body.case_id}`, { token: org.key })
    expect(fetched.status).toBe(200)
    const { request_id: _a, ...stored } = fetched.body
    const { request_id: _b, ...created } = body
    expect(stored).toEqual(created)
  })

  it("disagreement above the threshold: MIXED, human review, webhook events, a notification, resolved by a human", async () => {
    const watcher = await connected(`ws://127.0.0.1:${server.config.port}/api/v1/ws`, org.token)
    await subscribed(watcher, "notifications")
    const reply = await runCase(org.key, { details: "Wire 40,000 EUR to a new supplier", models: [org.ids.approve, org.ids.deny], options: { store_details: true } })
    expect(reply.status).toBe(201)
    const caseId = reply.body.case_id
    expect(reply.body.details).toBe("Wire 40,000 EUR to a new supplier")
    expect(reply.body.consensus.decision).toBe("MIXED")
    expect(reply.body.consensus.requires_human_review).toBe(true)
    expect(reply.body.consensus.disagreement_score).toBeGreaterThan(0.4)
    expect(reply.body.consensus.human_review_reason).toMatch(/threshold 0.4/)
    expect(reply.body.review).toMatchObject({ status: "pending", reviewed_by: null })

    const events = await server.run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ type: string; data: any }>`SELECT type, data FROM events WHERE org_uuid = ${org.orgUuid} AND data->>'case_id' = ${caseId} ORDER BY type`
      })
    )
    expect(events.map((event) => event.type)).toEqual(["case.complete", "case.requires_human_review"])
    // Spec part 1: both payloads carry `timestamp` (when the case completed).
    for (const event of events) {
      const data = typeof event.data === "string" ? JSON.parse(event.data) : event.data
      expect(data).toMatchObject({ case_id: caseId, decision: "MIXED", receipt_uuid: reply.body.receipt.receipt_uuid })
      expect(Date.parse(data.timestamp)).not.toBeNaN()
    }

    // Pushed on the notifications channel as it appears (and below, as it resolves).
    const pushed = await watcher.next((frame) => frame.type === "event" && frame.data.notification_key === `case:${caseId}`)
    expect(pushed.data).toMatchObject({ type: "notification.created", event: "case.requires_human_review", notification_type: "case_review" })

    const pending = await call(server.url, "GET", "/api/v1/notifications/pending", { token: org.token })
    const item = pending.body.items.find((entry: any) => entry.notification_key === `case:${caseId}`)
    expect(item).toMatchObject({ id: caseId, type: "case_review", href: `/dashboard/cases/${caseId}`, read: false })

    // API keys never resolve a review; members outside the approvers cannot; an admin can, once.
    expect((await call(server.url, "POST", `/api/v1/cases/${caseId}/approve`, { token: org.key, body: {} })).status).toBe(401)
    const member = await addMember(server.url, org, "member")
    expect((await call(server.url, "POST", `/api/v1/cases/${caseId}/approve`, { token: member.token, body: {} })).status).toBe(403)
    const approved = await call(server.url, "POST", `/api/v1/cases/${caseId}/approve`, { token: org.token, body: { reason: "supplier verified by phone" } })
    expect(approved.status).toBe(200)
    expect(approved.body.review).toMatchObject({ status: "approved", reason: "supplier verified by phone" })
    expect(approved.body.review.reviewed_at).not.toBeNull()
    const again = await call(server.url, "POST", `/api/v1/cases/${caseId}/deny`, { token: org.token, body: {} })
    expect(again.status).toBe(409)
    expect(again.body.code).toBe("ALREADY_RESOLVED")
    await watcher.next((frame) => frame.type === "event" && frame.data.type === "notification.resolved" && frame.data.notification_key === `case:${caseId}`)
    watcher.close()
    const after = await call(server.url, "GET", "/api/v1/notifications/pending", { token: org.token })
    expect(after.body.items.some((entry: any) => entry.notification_key === `case:${caseId}`)).toBe(false)
    const resolved = await server.run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ type: string }>`SELECT type FROM events WHERE data->>'case_id' = ${caseId} AND type = 'case.approved'`
      })
    )
    expect(resolved).toHaveLength(1)

    const calm = await runCase(org.key, { details: "x", models: [org.ids.approve, org.ids.lower] })
    const notNeeded = await call(server.url, "POST", `/api/v1/cases/${calm.body.case_id}/approve`, { token: org.token, body: {} })
    expect(notNeeded.status).toBe(409)
    expect(notNeeded.body.code).toBe("REVIEW_NOT_REQUIRED")
  })

  it("a failing model: the case completes with the others; its entry carries model_error", async () => {
    const reply = await runCase(org.key, { details: "Archive last year's logs", models: [org.ids.approve, org.ids.error, org.ids.lower] })
    expect(reply.status).toBe(201)
    const failed = reply.body.case_results.find((result: any) => result.model === org.ids.error)
    expect(failed).toMatchObject({ confidence: 0, key_factors: ["model_error"], decision: "ERROR" })
    expect(failed.error).toMatch(/500/)
    expect(failed.error).not.toContain("sk-case")
    expect(reply.body.consensus.decision).toBe("APPROVE")
  })

  it("every model failing: 503 MODEL_UNAVAILABLE, and the idempotency key is free again", async () => {
    const reply = await runCase(org.key, { details: "anything", models: [org.ids.error, org.ids.garbage], options: { idempotency_key: "all-fail-1" } })
    expect(reply.status).toBe(503)
    expect(reply.body.code).toBe("MODEL_UNAVAILABLE")
    expect(reply.body.details.errors).toHaveLength(2)
    expect(reply.text).not.toContain("sk-case")
    const retry = await runCase(org.key, { details: "anything", models: [org.ids.error, org.ids.garbage], options: { idempotency_key: "all-fail-1" } })
    expect(retry.status).toBe(503)
  })

  it("replays an idempotent case without asking the models again; another body is a 409", async () => {
    const body = { details: "Rotate the staging database password", models: [org.ids.approve, org.ids.review], options: { idempotency_key: `idem-${Date.now()}` } }
    const first = await runCase(org.key, body)
    expect(first.status).toBe(201)
    const callsBefore = llm.calls.length
    const replay = await runCase(org.key, body)
    expect(replay.status).toBe(201)
    expect(replay.body.case_id).toBe(first.body.case_id)
    expect(replay.body.receipt).toEqual(first.body.receipt)
    expect(llm.calls.length).toBe(callsBefore)
    // The header names the same key.
    const byHeader = await runCase(org.key, { details: body.details, models: body.models }, { "Idempotency-Key": body.options.idempotency_key })
    expect(byHeader.body.case_id).toBe(first.body.case_id)
    const different = await runCase(org.key, { ...body, details: "Something else" })
    expect(different.status).toBe(409)
    expect(different.body.code).toBe("DUPLICATE_REQUEST")
    const mismatch = await runCase(org.key, body, { "Idempotency-Key": "another" })
    expect(mismatch.status).toBe(422)
  })

  it("answers 409 to the same key while the first run is under way", async () => {
    const body = { details: "slow one", models: [org.ids["slow/600/approve"], org.ids.approve], options: { idempotency_key: `inflight-${Date.now()}` } }
    const asked = llm.calls.length
    const first = runCase(org.key, body)
    // Under way once the models are being asked (the slow one answers after 600 ms).
    await eventually(() => llm.calls.length > asked, { timeoutMs: 5_000, intervalMs: 10 })
    const second = await runCase(org.key, body)
    expect(second.status).toBe(409)
    expect((await first).status).toBe(201)
  })

  it("validates models, details, options; other organizations see nothing", async () => {
    const bad = [
      { details: "x", models: [org.ids.approve] },
      { details: "x", models: [org.ids.approve, org.ids.deny, org.ids.review, org.ids.lower] },
      { details: "x", models: [org.ids.approve, "no-such-model"] },
      { details: "x", models: [org.ids.approve, org.ids.approve] },
      { details: "", models: [org.ids.approve, org.ids.deny] },
      { details: "x".repeat(50_001), models: [org.ids.approve, org.ids.deny] },
      { details: "x", models: [org.ids.approve, org.ids.deny], options: { human_review_threshold: 1.5 } }
    ]
    for (const body of bad) {
      const reply = await runCase(org.key, body)
      expect(reply.status).toBe(422)
      expect(reply.body.code).toBe("VALIDATION_ERROR")
    }
    expect((await runCase(org.key, { details: "x".repeat(50_000), models: [org.ids.approve, org.ids.lower] })).status).toBe(201)

    const fresh = await withModels("Disabling Org", ["approve", "deny"])
    await call(server.url, "PUT", "/api/v1/models/preferences", { token: fresh.key, body: { disabled_models: [fresh.ids.deny] } })
    expect((await runCase(fresh.key, { details: "x", models: [fresh.ids.approve, fresh.ids.deny] })).status).toBe(422)

    const other = await registerOrg(server.url, "Cases Intruder")
    const mine = await runCase(org.key, { details: "private", models: [org.ids.approve, org.ids.lower] })
    expect((await call(server.url, "GET", `/api/v1/cases/${mine.body.case_id}`, { token: other.key })).status).toBe(404)
    expect((await call(server.url, "GET", "/api/v1/cases", { token: other.key })).body.cases).toEqual([])
    // Another organization cannot use these custom models either.
    expect((await runCase(other.key, { details: "x", models: [org.ids.approve, org.ids.lower] })).status).toBe(422)

    const list = await call(server.url, "GET", "/api/v1/cases?per_page=2", { token: org.key })
    expect(list.status).toBe(200)
    expect(list.body.cases).toHaveLength(2)
    expect(list.body.data).toEqual(list.body.cases)
    expect(list.body.pagination).toMatchObject({ page: 1, per_page: 2, has_more: true })
    expect(list.body.cases[0]).toHaveProperty("decision")
  })

  it("feeds the model-agreement analytics", async () => {
    const fresh = await withModels("Agreement Org", ["approve", "lower", "deny"])
    await runCase(fresh.key, { details: "a", models: [fresh.ids.approve, fresh.ids.lower] })
    await runCase(fresh.key, { details: "b", models: [fresh.ids.approve, fresh.ids.deny] })
    const reply = await call(server.url, "GET", "/api/v1/analytics/model-agreement", { token: fresh.key })
    expect(reply.status).toBe(200)
    expect(reply.body.total_cases).toBe(2)
    expect(reply.body.by_decision).toEqual({ APPROVE: 1, DENY: 0, REVIEW: 0 })
    expect(reply.body.avg_disagreement).toBeGreaterThan(0.2)
  })

  it("stops at the plan's monthly quota with 429 PLAN_LIMIT_EXCEEDED and Retry-After", async () => {
    const starter = await withModels("Starter Org", ["approve", "lower"])
    await server.run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE organizations SET plan = 'starter' WHERE org_uuid = ${starter.orgUuid}`
        yield* sql`INSERT INTO cases (case_id, org_uuid, status, request_hash, details_hash, models, review_threshold)
                   SELECT 'case_quota_' || n, ${starter.orgUuid}, 'complete', 'h', 'h', '[]', 0.4 FROM generate_series(1, 25) n`
      })
    )
    const reply = await runCase(starter.key, { details: "one too many", models: [starter.ids.approve, starter.ids.lower] })
    expect(reply.status).toBe(429)
    expect(reply.body.code).toBe("PLAN_LIMIT_EXCEEDED")
    expect(Number(reply.headers.get("retry-after"))).toBeGreaterThan(0)
    expect(reply.headers.get("ratelimit-policy")).toContain("q=25")
  })
})

/** Reads an SSE stream with the `eventsource` client (POST through its fetch hook) until `done` or `error`. */
const streamCase = (token: string, body: unknown, onEvent: (name: string, data: any) => void = () => {}) =>
  new Promise<Array<{ name: string; data: any }>>((resolve, reject) => {
    const seen: Array<{ name: string; data: any }> = []
    const source = new EventSource(`${server.url}/api/v1/cases/stream`, {
      fetch: (url, init) =>
        fetch(url, { ...init, method: "POST", body: JSON.stringify(body), headers: { ...init.headers, authorization: `Bearer ${token}`, "content-type": "application/json" } })
    })
    for (const name of ["started", "model_complete", "consensus", "receipt", "done", "error"]) {
      source.addEventListener(name, (event) => {
        const data = JSON.parse((event as MessageEvent).data)
        seen.push({ name, data })
        onEvent(name, data)
        if (name === "done" || name === "error") {
          source.close()
          resolve(seen)
        }
      })
    }
    source.onerror = (error) => {
      source.close()
      reject(new Error(`stream failed: ${(error as any).message ?? "unknown"} after ${seen.map((event) => event.name).join(",")}`))
    }
  })

describe("case streams", () => {
  it("streams the six events in order to a real SSE client, models in completion order", async () => {
    const events = await streamCase(org.key, { details: "Delete the test tenant", models: [org.ids["slow/900/deny"], org.ids["slow/600/approve"]] })
    expect(events.map((event) => event.name)).toEqual(["started", "model_complete", "model_complete", "consensus", "receipt", "done"])
    expect(events[0]!.data).toMatchObject({ models: [org.ids["slow/900/deny"], org.ids["slow/600/approve"]] })
    expect(typeof events[0]!.data.request_id).toBe("string")
    expect(events[1]!.data.model).toBe(org.ids["slow/600/approve"])
    expect(events[2]!.data.model).toBe(org.ids["slow/900/deny"])
    for (const key of ["model", "provider", "decision", "confidence", "key_factors", "reasoning", "latency_ms"]) expect(events[1]!.data).toHaveProperty(key)
    expect(events[3]!.data).toMatchObject({ decision: "MIXED", requires_human_review: true })
    expect(Object.keys(events[4]!.data).sort()).toEqual(["payload_hash", "public_key_id", "receipt_uuid", "signature"])
    expect(events[5]!.data.case_id).toBe(events[0]!.data.case_id)
    const stored = await call(server.url, "GET", `/api/v1/cases/${events[0]!.data.case_id}`, { token: org.key })
    expect(stored.body.receipt.receipt_uuid).toBe(events[4]!.data.receipt_uuid)
  })

  it("refuses before streaming (422 as JSON), and streams `error` when every model fails", async () => {
    const refused = await call(server.url, "POST", "/api/v1/cases/stream", { token: org.key, body: { details: "x", models: [org.ids.approve] } })
    expect(refused.status).toBe(422)
    const events = await streamCase(org.key, { details: "x", models: [org.ids.error, org.ids.garbage] })
    expect(events.map((event) => event.name)).toEqual(["started", "model_complete", "model_complete", "error"])
    expect(events[3]!.data).toMatchObject({ case_id: events[0]!.data.case_id })
    expect(typeof events[3]!.data.message).toBe("string")
  })

  it("shows the same case live on the WebSocket channel case:<id>", async () => {
    const socket = await connected(`ws://127.0.0.1:${server.config.port}/api/v1/ws`, org.key)
    try {
      let subscribedTo: Promise<void> | undefined
      const events = await streamCase(org.key, { details: "Watch me", models: [org.ids["slow/600/approve"], org.ids["slow/900/deny"]] }, (name, data) => {
        if (name === "started") subscribedTo = subscribed(socket, `case:${data.case_id}`)
      })
      await subscribedTo
      const caseId = events[0]!.data.case_id
      const done = await socket.next((frame) => frame.type === "event" && frame.channel === `case:${caseId}` && frame.data.event === "done", 3_000)
      expect(done.data.latency_ms).toBe(events.at(-1)!.data.latency_ms)
      const names = socket.frames.filter((frame) => frame.type === "event" && frame.channel === `case:${caseId}`).map((frame) => frame.data.event)
      // `started` is published as the stream sends it: a subscriber that joined on reading it may or may not see it too.
      expect(names.filter((name) => name !== "started")).toEqual(["model_complete", "model_complete", "consensus", "receipt", "done"])
      expect(names.indexOf("started")).toBeLessThanOrEqual(0)

      // Another organization cannot watch it: to it the case does not exist.
      const intruder = await registerOrg(server.url, "Case Watcher")
      const other = await connected(`ws://127.0.0.1:${server.config.port}/api/v1/ws`, intruder.key)
      other.send({ type: "subscribe", channel: `case:${caseId}` })
      expect(await other.next((frame) => frame.type === "error")).toMatchObject({ code: "NOT_FOUND", channel: `case:${caseId}` })
      other.close()
    } finally {
      socket.close()
    }
  })

  it("cancels the model calls when the client disconnects mid-stream", async () => {
    const controller = new AbortController()
    const response = await fetch(`${server.url}/api/v1/cases/stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${org.key}`, "content-type": "application/json" },
      body: JSON.stringify({ details: "Slow case", models: [org.ids["slow/8000/approve"], org.ids["slow/8000/deny"]] }),
      signal: controller.signal
    })
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toContain("text/event-stream")
    const reader = response.body!.getReader()
    const first = new TextDecoder().decode((await reader.read()).value)
    expect(first).toContain("event: started")
    const caseId = JSON.parse(first.split("data: ")[1]!.split("\n")[0]!).case_id
    const abortedBefore = llm.aborted.length
    // Both model calls must be under way at the fake before the client goes.
    for (const until = Date.now() + 3_000; llm.inFlight < 2 && Date.now() < until; ) await new Promise((resolve) => setTimeout(resolve, 10))
    expect(llm.inFlight).toBe(2)
    controller.abort()
    const deadline = Date.now() + 3_000
    while (llm.aborted.length < abortedBefore + 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
    expect(llm.aborted.slice(abortedBefore).sort()).toEqual(["/slow/8000/approve/v1/chat/completions", "/slow/8000/deny/v1/chat/completions"])
    // The case is kept as failed.
    let stored: any
    while (Date.now() < deadline + 2_000) {
      stored = await call(server.url, "GET", `/api/v1/cases/${caseId}`, { token: org.key })
      if (stored.status === 200) break
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(stored.body.status).toBe("failed")
  })
})
