/**
 * The per-agent receipt chain under load: 200 concurrent authorize+notarize
 * pairs for one agent give agent_sequence 1..200 with no gap and no repeat,
 * each receipt linking to the previous one; other agents keep their own chains.
 */
import { expect } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { verifyReceipt } from "../protocol/verifier/index.js"
import { client, register } from "./support/api.js"
import { call, type Org } from "./support/client.js"
import { liveLayer } from "./support/effect.js"
import { scrape } from "./support/metrics.js"
import { Gateway } from "./support/server.js"

class ChainOrg extends Context.Service<ChainOrg, Org>()("test/actions-chain/ChainOrg") {}

const Setup = Layer.effect(ChainOrg, register("Chain Org")).pipe(Layer.provideMerge(Gateway.layer({ METRICS_PORT: "0" })))

/** The receipt as served, verified on its wire form (the signature covers the payload exactly as sent). */
const receiptOf = (actionUuid: string) =>
  Effect.gen(function* () {
    const server = yield* Gateway
    const reply = yield* Effect.promise(() => call(server.url, "GET", `/api/v1/verify/action/${actionUuid}`))
    expect(reply.status).toBe(200)
    const signed = typeof reply.body.signed_payload === "string" ? JSON.parse(reply.body.signed_payload) : reply.body.signed_payload
    const check = verifyReceipt({ signed_payload: signed, payload_hash: reply.body.payload_hash, signature: reply.body.signature, public_key: reply.body.public_key })
    expect(check.errors).toEqual([])
    return { payloadHash: reply.body.payload_hash as string, payload: signed as Record<string, any> }
  })

const runOne = (agentId: string | undefined, index: number) =>
  Effect.gen(function* () {
    const api = yield* client((yield* ChainOrg).key)
    const [created, createdReply] = yield* api.actions.authorize({
      headers: {},
      payload: { action_type: "tick", details: `step ${index}`, instruction_hash: "sha256:00", ...(agentId ? { agent_id: agentId } : {}) },
      responseMode: "decoded-and-response"
    })
    expect(createdReply.status).toBe(201)
    const done = yield* api.actions.notarize({
      params: { action_uuid: created.action_uuid },
      payload: { outcome: index % 7 === 0 ? "failed" : "completed" },
      responseMode: "response-only"
    })
    expect(done.status).toBe(200)
    return created.action_uuid
  })

const runMany = (agentId: string | undefined, count: number) =>
  Effect.all(
    Array.from({ length: count }, (_, i) => runOne(agentId, i)),
    { concurrency: "unbounded" }
  )

const expectUnbrokenChain = (actionUuids: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const receipts = yield* Effect.all(actionUuids.map(receiptOf), { concurrency: "unbounded" })
    receipts.sort((a, b) => a.payload.agent_sequence - b.payload.agent_sequence)
    expect(receipts.map((r) => r.payload.agent_sequence)).toEqual(actionUuids.map((_, i) => i + 1))
    expect(receipts[0]!.payload.previous_payload_hash).toBeNull()
    for (let i = 1; i < receipts.length; i++) {
      expect(receipts[i]!.payload.previous_payload_hash).toBe(receipts[i - 1]!.payloadHash)
    }
  })

const metricsText = Effect.gen(function* () {
  const server = yield* Gateway
  return yield* Effect.promise(() => scrape(server))
})
const metric = (text: string, pattern: RegExp) => Number(text.match(pattern)?.[1] ?? 0)

liveLayer(Setup)("per-agent hash chain", (it) => {
  it.effect(
    "keeps 200 concurrent notarizations of one agent gap-free and linked",
    () =>
      Effect.gen(function* () {
        const ids = yield* runMany("busy-agent", 200)
        expect(new Set(ids).size).toBe(200)
        yield* expectUnbrokenChain(ids)
      }),
    120_000
  )

  it.effect(
    "gives other agents, and actions without an agent, chains of their own",
    () =>
      Effect.gen(function* () {
        const [a, b, none] = yield* Effect.all([runMany("agent-a", 15), runMany("agent-b", 15), runMany(undefined, 10)], { concurrency: "unbounded" })
        yield* expectUnbrokenChain(a)
        yield* expectUnbrokenChain(b)
        yield* expectUnbrokenChain(none)
      }),
    120_000
  )

  it.effect(
    "answers a repeated notarization 409 while the rest of its agent's queue commits, gap-free",
    () =>
      Effect.gen(function* () {
        const api = yield* client((yield* ChainOrg).key)
        const ids = yield* Effect.forEach(Array.from({ length: 30 }, (_, i) => i), (i) =>
          Effect.map(api.actions.authorize({ headers: {}, payload: { action_type: "tick", details: `queued ${i}`, instruction_hash: "sha256:00", agent_id: "queued-agent" } }), (created) => created.action_uuid)
        )
        // Every action notarized, the first ten twice, all at once: the agent's entity commits them in batches.
        const attempts = [...ids, ...ids.slice(0, 10)]
        const statuses = yield* Effect.forEach(
          attempts,
          (actionUuid) => Effect.map(api.actions.notarize({ params: { action_uuid: actionUuid }, payload: { outcome: "completed" }, responseMode: "response-only" }), (reply) => reply.status),
          { concurrency: "unbounded" }
        )
        expect(statuses.filter((status) => status === 200)).toHaveLength(30)
        expect(statuses.filter((status) => status === 409)).toHaveLength(10)
        yield* expectUnbrokenChain(ids)
        // Some of them shared a commit (the pipeline's batches), as the metric reports.
        const metrics = yield* metricsText
        expect(metric(metrics, /^commit_batch_rows_count (\d+)/m)).toBeGreaterThan(metric(metrics, /^commit_batch_rows_bucket\{le="1"\} (\d+)/m))
      }),
    120_000
  )
})
