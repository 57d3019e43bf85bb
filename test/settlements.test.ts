/**
 * Settlements end to end: receipts sealed into the organization's log, the
 * signed head, inclusion proofs and consistency proofs checked by the RFC
 * written out in the test, the C2SP checkpoint, the `verify` CLI, concurrent
 * creates, the admin rule and the rate of 5 per minute. Over the typed client
 * (HttpApiClient over GatewayApi); a query outside the contract goes raw.
 */
import { execFile } from "node:child_process"
import { writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { expect } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Layer from "effect/Layer"
import { parseCheckpoint, verifyCheckpoint, verifySettlement, verifySettlementConsistency, verifySettlementInclusion } from "../protocol/verifier/index.js"
import { answer, client, member, raw, register } from "./support/api.js"
import type { Org } from "./support/client.js"
import { liveLayer } from "./support/effect.js"
import { leafHashOf, verifyConsistencyRfc, verifyInclusionRfc } from "./support/rfc9162.js"
import { Gateway } from "./support/server.js"

class Orgs extends Context.Service<Orgs, { readonly org: Org; readonly other: Org }>()("test/settlements/Orgs") {}

const Setup = Layer.effect(Orgs, Effect.all({ org: register("Settling Org"), other: register("Other Org") })).pipe(Layer.provideMerge(Gateway.layer()))

const bytes = (tagged: string) => Buffer.from(tagged.replace(/^sha256:/, ""), "hex")
const settlements = (token: string) => Effect.map(client(token), (api) => api.settlements)

/** Authorizes and notarizes `count` actions; answers their receipts (payload hashes from the public verify route). */
const mintReceipts = (owner: Org, count: number) =>
  Effect.gen(function* () {
    const api = yield* client(owner.key)
    const anonymous = yield* client()
    const minted: Array<{ receipt_uuid: string; action_uuid: string; payload_hash: string }> = []
    for (let i = 0; i < count; i++) {
      const [created, createdReply] = yield* api.actions.authorize({
        headers: {},
        payload: { action_type: "payment", details: `pay ${i}`, agent_id: "settler" },
        responseMode: "decoded-and-response"
      })
      expect(createdReply.status).toBe(201)
      const done = yield* api.actions.notarize({ params: { action_uuid: created.action_uuid }, payload: { outcome: "completed" }, responseMode: "response-only" })
      expect(done.status).toBe(200)
      const verified = yield* anonymous.receiptsPublic.verifyAction({ params: { action_uuid: created.action_uuid } })
      minted.push({ receipt_uuid: verified.receipt_uuid, action_uuid: created.action_uuid, payload_hash: verified.payload_hash })
    }
    return minted
  })

/** A decoded answer with its status and its body as sent (what the verify CLI reads from a file). */
const withSent = <A, E, R>(request: Effect.Effect<readonly [A, HttpClientResponse.HttpClientResponse], E, R>) =>
  Effect.flatMap(request, ([value, reply]) => Effect.map(reply.json, (sent) => ({ value, status: reply.status, sent: sent as any })))
const settle = (owner: Org) => Effect.flatMap(settlements(owner.key), (api) => withSent(api.create({ responseMode: "decoded-and-response" })))

const jwksKey = (kid: string) => Effect.flatMap(client(), (api) => Effect.map(api.receiptsPublic.jwks({}), (jwks) => jwks.keys.find((key) => key.kid === kid)!))

liveLayer(Setup)((it) => {
  it.describe("settlements", () => {
    it.effect(
      "seal receipts into one growing log whose heads, proofs and checkpoints verify offline",
      () =>
        Effect.gen(function* () {
          const server = yield* Gateway
          const { org } = yield* Orgs
          const api = yield* settlements(org.key)
          const first = yield* mintReceipts(org, 5)
          const sealed = yield* settle(org)
          expect(sealed.status).toBe(201)
          const one = sealed.value!
          expect(one).toMatchObject({ org_uuid: org.orgUuid, receipt_count: 5, signing_key_id: expect.stringMatching(/^rk_/) })
          expect(sealed.sent.request_id).toMatch(/^req_/)
          expect(one.merkle_root).toMatch(/^sha256:[0-9a-f]{64}$/)
          expect(typeof one.timestamp_token).toBe("string")
          expect(Date.parse(one.period_start)).toBeLessThanOrEqual(Date.parse(one.period_end))
          const key = yield* jwksKey(one.signing_key_id)
          expect(verifySettlement(one, key)).toEqual({ settlement_hash: true, signature: true })
          expect(verifySettlement({ ...one, receipt_count: 6 }, key).settlement_hash).toBe(false)

          // Nothing new: 200 null.
          const again = yield* settle(org)
          expect(again.status).toBe(200)
          expect(again.value).toBeNull()

          // The receipts, in (created_at, receipt_uuid) order; each one's inclusion proof checks by the RFC.
          const [listed, listedReply] = yield* api.receipts({ params: { settlement_uuid: one.id }, query: {}, responseMode: "decoded-and-response" })
          expect(listedReply.status).toBe(200)
          expect(listed.map((receipt) => receipt.receipt_uuid).sort()).toEqual(first.map((r) => r.receipt_uuid).sort())
          expect(listed[0]).toMatchObject({ action_type: "payment", agent_id: "settler" })
          for (const receipt of first) {
            const [proof, proofReply] = yield* api.inclusionProof({ params: { receipt_uuid: receipt.receipt_uuid }, responseMode: "decoded-and-response" })
            expect(proofReply.status).toBe(200)
            expect(proof).toMatchObject({ settlement_uuid: one.id, receipt_uuid: receipt.receipt_uuid, merkle_root: one.merkle_root, leaf_count: 5 })
            const leaf = leafHashOf(bytes(receipt.payload_hash))
            expect(proof.leaf_hash).toBe(`sha256:${leaf.toString("hex")}`)
            expect(verifyInclusionRfc(leaf, proof.index, proof.leaf_count, proof.siblings.map(bytes), bytes(one.merkle_root))).toBe(true)
            expect(verifySettlementInclusion(proof, receipt.payload_hash)).toBe(true)
            expect(verifySettlementInclusion(proof, first.find((r) => r !== receipt)!.payload_hash)).toBe(false)
          }

          // The log grows: the second head extends the first, provably.
          const second = yield* mintReceipts(org, 4)
          const settledTwo = yield* settle(org)
          const two = settledTwo.value!
          expect(two.receipt_count).toBe(4)
          const consistencyAnswer = yield* withSent(api.consistency({ query: { from: one.id, to: two.id }, responseMode: "decoded-and-response" }))
          const consistency = consistencyAnswer.value
          expect(consistencyAnswer.status).toBe(200)
          expect(consistency.from).toEqual({ settlement_uuid: one.id, tree_size: 5, merkle_root: one.merkle_root })
          expect(consistency.to).toEqual({ settlement_uuid: two.id, tree_size: 9, merkle_root: two.merkle_root })
          expect(verifyConsistencyRfc(5, 9, consistency.proof.map(bytes), bytes(one.merkle_root), bytes(two.merkle_root))).toBe(true)
          expect(verifySettlementConsistency(consistency)).toBe(true)
          expect(verifySettlementConsistency({ ...consistency, from: { ...consistency.from, merkle_root: two.merkle_root } })).toBe(false)
          const backwards = yield* answer(api.consistency({ query: { from: two.id, to: one.id }, responseMode: "response-only" }))
          expect(backwards.status).toBe(422)
          expect(backwards.body.code).toBe("VALIDATION_ERROR")

          // A receipt of the first batch is proven against the head that sealed it; one of the second against its own.
          const late = yield* withSent(api.inclusionProof({ params: { receipt_uuid: second[3]!.receipt_uuid }, responseMode: "decoded-and-response" }))
          expect(late.value).toMatchObject({ settlement_uuid: two.id, index: 8, leaf_count: 9 })
          expect(verifyInclusionRfc(leafHashOf(bytes(second[3]!.payload_hash)), 8, 9, late.value.siblings.map(bytes), bytes(two.merkle_root))).toBe(true)

          // The C2SP checkpoint of each head, signed by the key the JWKS publishes.
          const checkpointAnswer = yield* withSent(api.checkpoint({ params: { settlement_uuid: two.id }, responseMode: "decoded-and-response" }))
          const checkpoint = checkpointAnswer.value
          expect(checkpointAnswer.status).toBe(200)
          const note = parseCheckpoint(checkpoint.checkpoint)
          expect(note.origin).toBe(checkpoint.origin)
          expect(note.treeSize).toBe(9)
          expect(`sha256:${Buffer.from(note.rootHash).toString("hex")}`).toBe(two.merkle_root)
          const rawKey = Buffer.from(key.x, "base64url")
          const name = note.signatures[0]!.name
          expect(verifyCheckpoint(checkpoint.checkpoint, name, rawKey)).toBe(true)
          expect(checkpoint.verifier_key.startsWith(`${name}+`)).toBe(true)
          expect(verifyCheckpoint(checkpoint.checkpoint.replace("\n9\n", "\n10\n"), name, rawKey)).toBe(false)

          // Lists: newest first, `data` and `pagination`.
          const [list, listReply] = yield* api.list({ query: { per_page: 1 }, responseMode: "decoded-and-response" })
          expect(listReply.status).toBe(200)
          expect(list.data).toEqual([{ id: two.id, period_start: two.period_start, period_end: two.period_end, receipt_count: 4, merkle_root: two.merkle_root, sealed_at: two.sealed_at }])
          expect(list.pagination).toEqual({ page: 1, per_page: 1, total: 2, has_more: true })
          // Raw: per_page above the contract's 100 is refused by the typed client before sending.
          expect((yield* raw("GET", "/api/v1/settlements?per_page=101", { token: org.key })).status).toBe(422)
          expect(yield* api.get({ params: { settlement_uuid: one.id } })).toMatchObject({ id: one.id, settlement_hash: one.settlement_hash })

          // The verify CLI checks the same files offline: the answers as sent.
          const dir = tmpdir()
          const file = (name: string, value: unknown) => {
            const path = join(dir, `settlement-${process.pid}-${name}.json`)
            writeFileSync(path, JSON.stringify(value))
            return path
          }
          const jwksUrl = `${server.url}/api/v1/.well-known/jwks.json`
          const cli = (...args: string[]) =>
            promisify(execFile)("npx", ["tsx", "scripts/verify.ts", ...args], { cwd: join(__dirname, "..") }).then(
              ({ stdout }) => ({ code: 0, stdout }),
              (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout })
            )
          const results = yield* Effect.promise(() =>
            Promise.all([
              cli(file("head", sealed.sent), "--jwks", jwksUrl),
              cli(file("proof", late.sent), "--receipt", file("receipt", second[3]), "--settlement", file("two", settledTwo.sent), "--jwks", jwksUrl),
              cli(file("consistency", consistencyAnswer.sent), "--settlement", file("one", sealed.sent), "--settlement", file("two-again", settledTwo.sent), "--jwks", jwksUrl),
              cli(file("checkpoint", checkpointAnswer.sent), "--jwks", jwksUrl),
              cli(file("forged", { ...consistencyAnswer.sent, proof: consistencyAnswer.sent.proof.slice(1) }))
            ])
          )
          expect(results.map((result) => result.code)).toEqual([0, 0, 0, 0, 1])
          expect(results[1].stdout).toContain("ok   inclusion of the receipt's payload_hash")
        }),
      120_000
    )

    it.effect(
      "settle each receipt exactly once when creates run at the same time",
      () =>
        Effect.gen(function* () {
          const owner = yield* register("Concurrent Org")
          const api = yield* settlements(owner.key)
          const minted = yield* mintReceipts(owner, 12)
          const replies = yield* Effect.all(
            Array.from({ length: 5 }, () => settle(owner)),
            { concurrency: "unbounded" }
          )
          expect(replies.every((reply) => reply.status === 201 || (reply.status === 200 && reply.value === null))).toBe(true)
          const made = replies.filter((reply) => reply.status === 201).map((reply) => reply.value!)
          expect(made.reduce((sum, settlement) => sum + settlement.receipt_count, 0)).toBe(12)
          const seen: string[] = []
          for (const settlement of made) {
            const receipts = yield* api.receipts({ params: { settlement_uuid: settlement.id }, query: {} })
            seen.push(...receipts.map((receipt) => receipt.receipt_uuid))
          }
          expect(seen.sort()).toEqual(minted.map((receipt) => receipt.receipt_uuid).sort())
        }),
      60_000
    )

    it.effect(
      "are created by admins only, 5 per minute per organization",
      () =>
        Effect.gen(function* () {
          const owner = yield* register("Busy Org")
          const teammate = yield* member(owner, "member")
          const reader = yield* settlements(teammate.key)
          const refused = yield* answer(reader.create({ responseMode: "response-only" }))
          expect(refused.status).toBe(403)
          expect(refused.body.code).toBe("FORBIDDEN")
          // Members may read.
          expect((yield* reader.list({ query: {}, responseMode: "response-only" })).status).toBe(200)
          const admin = yield* member(owner, "admin")
          const byOwner = yield* settlements(owner.key)
          const byAdmin = yield* settlements(admin.token)
          const statuses: number[] = []
          for (let i = 0; i < 6; i++) statuses.push((yield* (i % 2 === 0 ? byOwner : byAdmin).create({ responseMode: "response-only" })).status)
          expect(statuses).toEqual([200, 200, 200, 200, 200, 429])
          const limited = yield* byOwner.create({ responseMode: "response-only" })
          expect(limited.status).toBe(429)
          expect(((yield* limited.json) as { code: string }).code).toBe("RATE_LIMIT_EXCEEDED")
          expect(Number(limited.headers["retry-after"])).toBeGreaterThan(0)
        }),
      60_000
    )

    it.effect(
      "answer 404 for unknown ids, unsettled receipts and other organizations' settlements",
      () =>
        Effect.gen(function* () {
          const { org, other } = yield* Orgs
          const theirApi = yield* settlements(other.key)
          const [receipt] = yield* mintReceipts(other, 1)
          const receiptParams = { receipt_uuid: receipt!.receipt_uuid }
          expect((yield* theirApi.inclusionProof({ params: receiptParams, responseMode: "response-only" })).status).toBe(404)
          const theirs = (yield* settle(other)).value!
          expect((yield* theirApi.inclusionProof({ params: receiptParams, responseMode: "response-only" })).status).toBe(200)
          const api = yield* settlements(org.key)
          const params = { settlement_uuid: theirs.id }
          for (const [path, request] of [
            [`/api/v1/settlements/${theirs.id}`, api.get({ params, responseMode: "response-only" })],
            [`/api/v1/settlements/${theirs.id}/receipts`, api.receipts({ params, query: {}, responseMode: "response-only" })],
            [`/api/v1/settlements/${theirs.id}/checkpoint`, api.checkpoint({ params, responseMode: "response-only" })],
            [`/api/v1/settlements/inclusion-proof/${receipt!.receipt_uuid}`, api.inclusionProof({ params: receiptParams, responseMode: "response-only" })],
            [`/api/v1/settlements/consistency?from=${theirs.id}&to=${theirs.id}`, api.consistency({ query: { from: theirs.id, to: theirs.id }, responseMode: "response-only" })],
            ["/api/v1/settlements/00000000-0000-0000-0000-000000000000", api.get({ params: { settlement_uuid: "00000000-0000-0000-0000-000000000000" }, responseMode: "response-only" })]
          ] as const) {
            const reply = yield* answer(request)
            expect(reply.status, path).toBe(404)
            expect(reply.body.code, path).toBe("NOT_FOUND")
          }
        }),
      60_000
    )
  })
})
