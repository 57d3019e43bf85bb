/**
 * Consensus cases (spec 000) against a local OpenAI-compatible server: agreement, disagreement
 * above the threshold with human review, one model failing, all failing (503), idempotent replay
 * without asking the models again, validation, the plan quota, the SSE stream read by a real SSE
 * client, the same case watched on the WebSocket, cancellation when the client goes away, and the
 * receipt verified offline by the portable verifier. Over the typed client (HttpApiClient over
 * GatewayApi), except the streams, read by an SSE client and a fetch that goes away.
 */
import { expect } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql"
import { EventSource } from "eventsource"
import type { NewCase } from "../protocol/cases.js"
import { verifyReceipt } from "../protocol/verifier/index.js"
import { answer, client, member, register } from "./support/api.js"
import type { Org } from "./support/client.js"
import { liveLayer } from "./support/effect.js"
import { eventuallyEffect } from "./support/eventually.js"
import { type FakeLlm, startFakeLlm } from "./support/fake-llm.js"
import { Gateway } from "./support/server.js"
import { connected, subscribed } from "./support/socket-client.js"

const SECRET = "Bearer sk-case-model-secret-987"
const PATHS = ["approve", "deny", "review", "error", "garbage", "lower", "slow/600/approve", "slow/900/deny", "slow/8000/approve", "slow/8000/deny"]

type ModelOrg = Org & { readonly ids: Record<string, string> }

class Llm extends Context.Service<Llm, FakeLlm>()("test/cases/Llm") {}
class CasesOrg extends Context.Service<CasesOrg, ModelOrg>()("test/cases/CasesOrg") {}

const LlmLayer = Layer.effect(
  Llm,
  Effect.acquireRelease(
    Effect.promise(startFakeLlm),
    (fake) => Effect.promise(() => fake.close())
  )
)

/** An organization with one custom model per fake path, named `custom:<path-with-dashes>`. */
const withModels = (name: string, paths: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const llm = yield* Llm
    const org = yield* register(name)
    const api = yield* client(org.key)
    const ids: Record<string, string> = {}
    for (const path of paths) {
      const modelId = path.replace(/\//g, "-")
      const [, reply] = yield* api.customModels.create({
        payload: { name: path, model_id: modelId, endpoint_url: `${llm.url}/${path}/v1`, auth_header: SECRET, timeout_ms: 10_000 },
        responseMode: "decoded-and-response"
      })
      expect(reply.status).toBe(201)
      ids[path] = `custom:${modelId}`
    }
    return { ...org, ids }
  })

const Setup = Layer.effect(CasesOrg, withModels("Cases Org", PATHS)).pipe(
  Layer.provideMerge(Gateway.layer({ OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8", OUTBOUND_ALLOW_HTTP: "true" })),
  Layer.provideMerge(LlmLayer)
)

/** An answer as sent: status, text and JSON body (for request_id, keys outside the contract, and the text itself). */
const asSent = <E, R>(response: Effect.Effect<HttpClientResponse.HttpClientResponse, E, R>) =>
  Effect.flatMap(response, (reply) => Effect.map(reply.text, (text) => ({ status: reply.status, text, body: JSON.parse(text) })))

/** A case run, decoded; answered 201. */
const runCase = (token: string, payload: NewCase, headers: { readonly "idempotency-key"?: string } = {}) =>
  Effect.gen(function* () {
    const [created, reply] = yield* (yield* client(token)).cases.create({ headers, payload, responseMode: "decoded-and-response" })
    expect(reply.status).toBe(201)
    return created
  })
/** A case run expected to be refused, as answered. */
const refusedCase = (token: string, payload: NewCase, headers: { readonly "idempotency-key"?: string } = {}) =>
  Effect.flatMap(client(token), (api) => answer(api.cases.create({ headers, payload, responseMode: "response-only" })))

/** Reads an SSE stream with the `eventsource` client (POST through its fetch hook) until `done` or `error`: a real SSE client, not the typed one. */
const streamCase = (token: string, body: unknown, onEvent: (name: string, data: any) => void = () => {}) =>
  Effect.flatMap(Gateway, (server) =>
    Effect.promise(
      () =>
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
    )
  )

liveLayer(Setup)((it) => {
  it.describe("cases", () => {
    it.effect("agreeing models: APPROVE, no disagreement, a receipt that verifies offline and publicly", () =>
      Effect.gen(function* () {
        const org = yield* CasesOrg
        const api = yield* client(org.key)
        const anonymous = yield* client()
        // Read as sent: request_id, the text (no secret in it) and the whole body compared with the stored case.
        const reply = yield* asSent(
          api.cases.create({
            headers: {},
            payload: { details: "Refund order #1234 (19.99 EUR) to the original card", context: { customer_tier: "gold" }, models: [org.ids.approve!, org.ids.lower!] },
            responseMode: "response-only"
          })
        )
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
        const key = (yield* anonymous.receiptsPublic.jwks({})).keys.find((jwk) => jwk.kid === body.receipt.public_key_id)!
        const signedPayload = JSON.parse(body.receipt.signed_payload)
        expect(signedPayload).toMatchObject({ receipt_version: "1.0", case_id: body.case_id, details_hash: body.details_hash })
        const offline = verifyReceipt({ signed_payload: signedPayload, payload_hash: body.receipt.payload_hash, signature: body.receipt.signature, public_key: key, timestamp_token: body.receipt.timestamp_token })
        expect(offline.errors).toEqual([])
        expect(offline.valid).toBe(true)
        const tampered = verifyReceipt({ signed_payload: { ...signedPayload, consensus: { ...signedPayload.consensus, decision: "DENY" } }, payload_hash: body.receipt.payload_hash, signature: body.receipt.signature, public_key: key })
        expect(tampered.valid).toBe(false)

        // The verify_url names the public case verification.
        expect(new URL(body.receipt.verify_url).pathname).toBe(`/api/v1/verify/case/${body.case_id}`)
        const [verified, verifiedReply] = yield* anonymous.casesPublic.verify({ params: { case_id: body.case_id }, responseMode: "decoded-and-response" })
        expect(verifiedReply.status).toBe(200)
        expect(verified).toMatchObject({ valid: true, case_id: body.case_id, receipt_uuid: body.receipt.receipt_uuid, checks: { payload_hash: true, signature: true } })
        // The public verify by receipt id answers for any receipt, a case's included (not chained: chain null).
        const [byId, byIdReply] = yield* anonymous.receiptsPublic.verifyReceipt({ params: { receipt_uuid: body.receipt.receipt_uuid }, responseMode: "decoded-and-response" })
        expect(byIdReply.status).toBe(200)
        expect(byId).toMatchObject({
          valid: true,
          receipt_uuid: body.receipt.receipt_uuid,
          action_uuid: null,
          case_id: body.case_id,
          payload_hash: body.receipt.payload_hash,
          algorithm: "Ed25519",
          checks: { payload_hash: true, signature: true, chain: null }
        })
        expect((yield* anonymous.receiptsPublic.verifyReceipt({ params: { receipt_uuid: "rct_does_not_exist" }, responseMode: "response-only" })).status).toBe(404)

        const fetched = yield* answer(api.cases.get({ params: { case_id: body.case_id }, responseMode: "response-only" }))
        expect(fetched.status).toBe(200)
        const { request_id: _a, ...stored } = fetched.body
        const { request_id: _b, ...created } = body
        expect(stored).toEqual(created)
      })
    )

    it.effect("disagreement above the threshold: MIXED, human review, webhook events, a notification, resolved by a human", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const org = yield* CasesOrg
        const owner = yield* client(org.token)
        const watcher = yield* Effect.promise(() => connected(`ws://127.0.0.1:${server.config.port}/api/v1/ws`, org.token))
        yield* Effect.promise(() => subscribed(watcher, "notifications"))
        const created = yield* runCase(org.key, { details: "Wire 40,000 EUR to a new supplier", models: [org.ids.approve!, org.ids.deny!], options: { store_details: true } })
        const caseId = created.case_id
        expect(created.details).toBe("Wire 40,000 EUR to a new supplier")
        expect(created.consensus!.decision).toBe("MIXED")
        expect(created.consensus!.requires_human_review).toBe(true)
        expect(created.consensus!.disagreement_score).toBeGreaterThan(0.4)
        expect(created.consensus!.human_review_reason).toMatch(/threshold 0.4/)
        expect(created.review).toMatchObject({ status: "pending", reviewed_by: null })

        const recorded = yield* Effect.promise(() =>
          server.run(
            Effect.gen(function* () {
              const sql = yield* SqlClient.SqlClient
              return yield* sql<{ type: string; data: any }>`SELECT type, data FROM events WHERE org_uuid = ${org.orgUuid} AND data->>'case_id' = ${caseId} ORDER BY type`
            })
          )
        )
        expect(recorded.map((event) => event.type)).toEqual(["case.complete", "case.requires_human_review"])
        // Spec part 1: both payloads carry `timestamp` (when the case completed).
        for (const event of recorded) {
          const data = typeof event.data === "string" ? JSON.parse(event.data) : event.data
          expect(data).toMatchObject({ case_id: caseId, decision: "MIXED", receipt_uuid: created.receipt!.receipt_uuid })
          expect(Date.parse(data.timestamp)).not.toBeNaN()
        }

        // Pushed on the notifications channel as it appears (and below, as it resolves).
        const pushed = yield* Effect.promise(() => watcher.next((frame) => frame.type === "event" && frame.data.notification_key === `case:${caseId}`))
        expect(pushed.data).toMatchObject({ type: "notification.created", event: "case.requires_human_review", notification_type: "case_review" })

        const pending = yield* owner.notifications.pending({})
        const item = pending.items.find((entry) => entry.notification_key === `case:${caseId}`)
        expect(item).toMatchObject({ id: caseId, type: "case_review", href: `/dashboard/cases/${caseId}`, read: false })

        // API keys never resolve a review; members outside the approvers cannot; an admin can, once.
        const params = { case_id: caseId }
        expect((yield* (yield* client(org.key)).cases.approve({ params, payload: {}, responseMode: "response-only" })).status).toBe(401)
        const teammate = yield* client((yield* member(org, "member")).token)
        expect((yield* teammate.cases.approve({ params, payload: {}, responseMode: "response-only" })).status).toBe(403)
        const [approved, approvedReply] = yield* owner.cases.approve({ params, payload: { reason: "supplier verified by phone" }, responseMode: "decoded-and-response" })
        expect(approvedReply.status).toBe(200)
        expect(approved.review).toMatchObject({ status: "approved", reason: "supplier verified by phone" })
        expect(approved.review!.reviewed_at).not.toBeNull()
        const again = yield* answer(owner.cases.deny({ params, payload: {}, responseMode: "response-only" }))
        expect(again.status).toBe(409)
        expect(again.body.code).toBe("ALREADY_RESOLVED")
        yield* Effect.promise(() =>
          watcher.next((frame) => frame.type === "event" && frame.data.type === "notification.resolved" && frame.data.notification_key === `case:${caseId}`)
        )
        watcher.close()
        const after = yield* owner.notifications.pending({})
        expect(after.items.some((entry) => entry.notification_key === `case:${caseId}`)).toBe(false)
        const resolved = yield* Effect.promise(() =>
          server.run(
            Effect.gen(function* () {
              const sql = yield* SqlClient.SqlClient
              return yield* sql<{ type: string }>`SELECT type FROM events WHERE data->>'case_id' = ${caseId} AND type = 'case.approved'`
            })
          )
        )
        expect(resolved).toHaveLength(1)

        const calm = yield* runCase(org.key, { details: "x", models: [org.ids.approve!, org.ids.lower!] })
        const notNeeded = yield* answer(owner.cases.approve({ params: { case_id: calm.case_id }, payload: {}, responseMode: "response-only" }))
        expect(notNeeded.status).toBe(409)
        expect(notNeeded.body.code).toBe("REVIEW_NOT_REQUIRED")
      })
    )

    it.effect("a failing model: the case completes with the others; its entry carries model_error", () =>
      Effect.gen(function* () {
        const org = yield* CasesOrg
        const created = yield* runCase(org.key, { details: "Archive last year's logs", models: [org.ids.approve!, org.ids.error!, org.ids.lower!] })
        const failed = created.case_results.find((result) => result.model === org.ids.error)
        expect(failed).toMatchObject({ confidence: 0, key_factors: ["model_error"], decision: "ERROR" })
        expect(failed!.error).toMatch(/500/)
        expect(failed!.error).not.toContain("sk-case")
        expect(created.consensus!.decision).toBe("APPROVE")
      })
    )

    it.effect("every model failing: 503 MODEL_UNAVAILABLE, and the idempotency key is free again", () =>
      Effect.gen(function* () {
        const org = yield* CasesOrg
        const api = yield* client(org.key)
        const payload = { details: "anything", models: [org.ids.error!, org.ids.garbage!], options: { idempotency_key: "all-fail-1" } }
        // Read as sent: the text must not carry the models' secret.
        const reply = yield* asSent(api.cases.create({ headers: {}, payload, responseMode: "response-only" }))
        expect(reply.status).toBe(503)
        expect(reply.body.code).toBe("MODEL_UNAVAILABLE")
        expect(reply.body.details.errors).toHaveLength(2)
        expect(reply.text).not.toContain("sk-case")
        const retry = yield* refusedCase(org.key, payload)
        expect(retry.status).toBe(503)
      })
    )

    it.effect("replays an idempotent case without asking the models again; another body is a 409", () =>
      Effect.gen(function* () {
        const llm = yield* Llm
        const org = yield* CasesOrg
        const key = `idem-${Date.now()}`
        const payload = { details: "Rotate the staging database password", models: [org.ids.approve!, org.ids.review!], options: { idempotency_key: key } }
        const first = yield* runCase(org.key, payload)
        const callsBefore = llm.calls.length
        const replay = yield* runCase(org.key, payload)
        expect(replay.case_id).toBe(first.case_id)
        expect(replay.receipt).toEqual(first.receipt)
        expect(llm.calls.length).toBe(callsBefore)
        // The header names the same key.
        const byHeader = yield* runCase(org.key, { details: payload.details, models: payload.models }, { "idempotency-key": key })
        expect(byHeader.case_id).toBe(first.case_id)
        const different = yield* refusedCase(org.key, { ...payload, details: "Something else" })
        expect(different.status).toBe(409)
        expect(different.body.code).toBe("DUPLICATE_REQUEST")
        const mismatch = yield* refusedCase(org.key, payload, { "idempotency-key": "another" })
        expect(mismatch.status).toBe(422)
      })
    )

    it.effect("answers 409 to the same key while the first run is under way", () =>
      Effect.gen(function* () {
        const llm = yield* Llm
        const org = yield* CasesOrg
        const payload = { details: "slow one", models: [org.ids["slow/600/approve"]!, org.ids.approve!], options: { idempotency_key: `inflight-${Date.now()}` } }
        const asked = llm.calls.length
        const first = yield* Effect.forkChild(refusedCase(org.key, payload))
        // Under way once the models are being asked (the slow one answers after 600 ms).
        yield* eventuallyEffect(
          Effect.sync(() => llm.calls.length > asked),
          { timeoutMs: 5_000, intervalMs: 10 }
        )
        const second = yield* refusedCase(org.key, payload)
        expect(second.status).toBe(409)
        expect((yield* Fiber.join(first)).status).toBe(201)
      })
    )

    it.effect("validates models, details, options; other organizations see nothing", () =>
      Effect.gen(function* () {
        const org = yield* CasesOrg
        const ids = org.ids
        const bad: ReadonlyArray<NewCase> = [
          { details: "x", models: [ids.approve!] },
          { details: "x", models: [ids.approve!, ids.deny!, ids.review!, ids.lower!] },
          { details: "x", models: [ids.approve!, "no-such-model"] },
          { details: "x", models: [ids.approve!, ids.approve!] },
          { details: "", models: [ids.approve!, ids.deny!] },
          { details: "x".repeat(50_001), models: [ids.approve!, ids.deny!] },
          { details: "x", models: [ids.approve!, ids.deny!], options: { human_review_threshold: 1.5 } }
        ]
        for (const payload of bad) {
          const reply = yield* refusedCase(org.key, payload)
          expect(reply.status).toBe(422)
          expect(reply.body.code).toBe("VALIDATION_ERROR")
        }
        yield* runCase(org.key, { details: "x".repeat(50_000), models: [ids.approve!, ids.lower!] })

        const fresh = yield* withModels("Disabling Org", ["approve", "deny"])
        yield* (yield* client(fresh.key)).modelPreferences.putCases({ payload: { disabled_models: [fresh.ids.deny!] } })
        expect((yield* refusedCase(fresh.key, { details: "x", models: [fresh.ids.approve!, fresh.ids.deny!] })).status).toBe(422)

        const other = yield* register("Cases Intruder")
        const stranger = yield* client(other.key)
        const mine = yield* runCase(org.key, { details: "private", models: [ids.approve!, ids.lower!] })
        expect((yield* stranger.cases.get({ params: { case_id: mine.case_id }, responseMode: "response-only" })).status).toBe(404)
        expect((yield* stranger.cases.list({ query: {} })).cases).toEqual([])
        // Another organization cannot use these custom models either.
        expect((yield* refusedCase(other.key, { details: "x", models: [ids.approve!, ids.lower!] })).status).toBe(422)

        const [list, listReply] = yield* (yield* client(org.key)).cases.list({ query: { per_page: 2 }, responseMode: "decoded-and-response" })
        expect(listReply.status).toBe(200)
        expect(list.cases).toHaveLength(2)
        expect(list.data).toEqual(list.cases)
        expect(list.pagination).toMatchObject({ page: 1, per_page: 2, has_more: true })
        expect(list.cases[0]).toHaveProperty("decision")
      })
    )

    it.effect("feeds the model-agreement analytics", () =>
      Effect.gen(function* () {
        const fresh = yield* withModels("Agreement Org", ["approve", "lower", "deny"])
        yield* runCase(fresh.key, { details: "a", models: [fresh.ids.approve!, fresh.ids.lower!] })
        yield* runCase(fresh.key, { details: "b", models: [fresh.ids.approve!, fresh.ids.deny!] })
        // Read as sent: by_decision is compared whole, so a bucket outside the contract (MIXED) would show.
        const reply = yield* answer((yield* client(fresh.key)).analytics.modelAgreement({ query: {}, responseMode: "response-only" }))
        expect(reply.status).toBe(200)
        expect(reply.body.total_cases).toBe(2)
        expect(reply.body.by_decision).toEqual({ APPROVE: 1, DENY: 0, REVIEW: 0 })
        expect(reply.body.avg_disagreement).toBeGreaterThan(0.2)
      })
    )

    it.effect("stops at the plan's monthly quota with 429 PLAN_LIMIT_EXCEEDED and Retry-After", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const starter = yield* withModels("Starter Org", ["approve", "lower"])
        yield* Effect.promise(() =>
          server.run(
            Effect.gen(function* () {
              const sql = yield* SqlClient.SqlClient
              yield* sql`UPDATE organizations SET plan = 'starter' WHERE org_uuid = ${starter.orgUuid}`
              yield* sql`INSERT INTO cases (case_id, org_uuid, status, request_hash, details_hash, models, review_threshold)
                         SELECT 'case_quota_' || n, ${starter.orgUuid}, 'complete', 'h', 'h', '[]', 0.4 FROM generate_series(1, 25) n`
            })
          )
        )
        const reply = yield* (yield* client(starter.key)).cases.create({
          headers: {},
          payload: { details: "one too many", models: [starter.ids.approve!, starter.ids.lower!] },
          responseMode: "response-only"
        })
        expect(reply.status).toBe(429)
        expect(((yield* reply.json) as any).code).toBe("PLAN_LIMIT_EXCEEDED")
        expect(Number(reply.headers["retry-after"])).toBeGreaterThan(0)
        expect(reply.headers["ratelimit-policy"]).toContain("q=25")
      })
    )
  })

  it.describe("case streams", () => {
    it.effect("streams the six events in order to a real SSE client, models in completion order", () =>
      Effect.gen(function* () {
        const org = yield* CasesOrg
        const events = yield* streamCase(org.key, { details: "Delete the test tenant", models: [org.ids["slow/900/deny"], org.ids["slow/600/approve"]] })
        expect(events.map((event) => event.name)).toEqual(["started", "model_complete", "model_complete", "consensus", "receipt", "done"])
        expect(events[0]!.data).toMatchObject({ models: [org.ids["slow/900/deny"], org.ids["slow/600/approve"]] })
        expect(typeof events[0]!.data.request_id).toBe("string")
        expect(events[1]!.data.model).toBe(org.ids["slow/600/approve"])
        expect(events[2]!.data.model).toBe(org.ids["slow/900/deny"])
        for (const key of ["model", "provider", "decision", "confidence", "key_factors", "reasoning", "latency_ms"]) expect(events[1]!.data).toHaveProperty(key)
        expect(events[3]!.data).toMatchObject({ decision: "MIXED", requires_human_review: true })
        expect(Object.keys(events[4]!.data).sort()).toEqual(["payload_hash", "public_key_id", "receipt_uuid", "signature"])
        expect(events[5]!.data.case_id).toBe(events[0]!.data.case_id)
        const stored = yield* (yield* client(org.key)).cases.get({ params: { case_id: events[0]!.data.case_id } })
        expect(stored.receipt!.receipt_uuid).toBe(events[4]!.data.receipt_uuid)
      })
    )

    it.effect("refuses before streaming (422 as JSON), and streams `error` when every model fails", () =>
      Effect.gen(function* () {
        const org = yield* CasesOrg
        const refused = yield* answer(
          (yield* client(org.key)).cases.stream({ headers: {}, payload: { details: "x", models: [org.ids.approve!] }, responseMode: "response-only" })
        )
        expect(refused.status).toBe(422)
        const events = yield* streamCase(org.key, { details: "x", models: [org.ids.error, org.ids.garbage] })
        expect(events.map((event) => event.name)).toEqual(["started", "model_complete", "model_complete", "error"])
        expect(events[3]!.data).toMatchObject({ case_id: events[0]!.data.case_id })
        expect(typeof events[3]!.data.message).toBe("string")
      })
    )

    it.effect("shows the same case live on the WebSocket channel case:<id>", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const org = yield* CasesOrg
        const url = `ws://127.0.0.1:${server.config.port}/api/v1/ws`
        const socket = yield* Effect.promise(() => connected(url, org.key))
        yield* Effect.gen(function* () {
          let subscribedTo: Promise<void> | undefined
          const events = yield* streamCase(org.key, { details: "Watch me", models: [org.ids["slow/600/approve"], org.ids["slow/900/deny"]] }, (name, data) => {
            if (name === "started") subscribedTo = subscribed(socket, `case:${data.case_id}`)
          })
          yield* Effect.promise(async () => subscribedTo)
          const caseId = events[0]!.data.case_id
          const done = yield* Effect.promise(() => socket.next((frame) => frame.type === "event" && frame.channel === `case:${caseId}` && frame.data.event === "done", 3_000))
          expect(done.data.latency_ms).toBe(events.at(-1)!.data.latency_ms)
          const names = socket.frames.filter((frame) => frame.type === "event" && frame.channel === `case:${caseId}`).map((frame) => frame.data.event)
          // `started` is published as the stream sends it: a subscriber that joined on reading it may or may not see it too.
          expect(names.filter((name) => name !== "started")).toEqual(["model_complete", "model_complete", "consensus", "receipt", "done"])
          expect(names.indexOf("started")).toBeLessThanOrEqual(0)

          // Another organization cannot watch it: to it the case does not exist.
          const intruder = yield* register("Case Watcher")
          const other = yield* Effect.promise(() => connected(url, intruder.key))
          other.send({ type: "subscribe", channel: `case:${caseId}` })
          expect(yield* Effect.promise(() => other.next((frame) => frame.type === "error"))).toMatchObject({ code: "NOT_FOUND", channel: `case:${caseId}` })
          other.close()
        }).pipe(Effect.ensuring(Effect.sync(() => socket.close())))
      })
    )

    it.effect("cancels the model calls when the client disconnects mid-stream", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const llm = yield* Llm
        const org = yield* CasesOrg
        // Raw fetch: the client reads the first event, then goes away mid-stream.
        const controller = new AbortController()
        const response = yield* Effect.promise(() =>
          fetch(`${server.url}/api/v1/cases/stream`, {
            method: "POST",
            headers: { authorization: `Bearer ${org.key}`, "content-type": "application/json" },
            body: JSON.stringify({ details: "Slow case", models: [org.ids["slow/8000/approve"], org.ids["slow/8000/deny"]] }),
            signal: controller.signal
          })
        )
        expect(response.status).toBe(200)
        expect(response.headers.get("content-type")).toContain("text/event-stream")
        const reader = response.body!.getReader()
        const first = new TextDecoder().decode((yield* Effect.promise(() => reader.read())).value)
        expect(first).toContain("event: started")
        const caseId = JSON.parse(first.split("data: ")[1]!.split("\n")[0]!).case_id
        const abortedBefore = llm.aborted.length
        // Both model calls must be under way at the fake before the client goes.
        yield* eventuallyEffect(
          Effect.sync(() => llm.inFlight >= 2),
          { timeoutMs: 3_000, intervalMs: 10 }
        )
        expect(llm.inFlight).toBe(2)
        controller.abort()
        yield* eventuallyEffect(
          Effect.sync(() => llm.aborted.length >= abortedBefore + 2),
          { timeoutMs: 3_000, intervalMs: 50 }
        )
        expect(llm.aborted.slice(abortedBefore).sort()).toEqual(["/slow/8000/approve/v1/chat/completions", "/slow/8000/deny/v1/chat/completions"])
        // The case is kept as failed (404 until it is stored).
        const api = yield* client(org.key)
        const stored = yield* eventuallyEffect(api.cases.get({ params: { case_id: caseId } }), { timeoutMs: 5_000, intervalMs: 50 })
        expect(stored.status).toBe("failed")
      })
    )
  })
})
