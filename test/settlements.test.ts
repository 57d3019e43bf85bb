/**
 * Settlements end to end: receipts sealed into the organization's log, the
 * signed head, inclusion proofs and consistency proofs checked by the RFC
 * written out in the test, the C2SP checkpoint, the `verify` CLI, concurrent
 * creates, the admin rule and the rate of 5 per minute.
 */
import { execFile } from "node:child_process"
import { writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"
import { parseCheckpoint, verifyCheckpoint, verifySettlement, verifySettlementConsistency, verifySettlementInclusion } from "../protocol/verifier/index.js"
import { addMember, call, type Org, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { leafHashOf, verifyConsistencyRfc, verifyInclusionRfc } from "./support/rfc9162.js"
import { useServer } from "./support/server.js"

const server = useServer()
const org = useFixture(() => registerOrg(server.url, "Settling Org"))
const other = useFixture(() => registerOrg(server.url, "Other Org"))

const bytes = (tagged: string) => Buffer.from(tagged.replace(/^sha256:/, ""), "hex")

/** Authorizes and notarizes `count` actions; answers their receipts (payload hashes from the public verify route). */
const mintReceipts = async (owner: Org, count: number) => {
  const minted: Array<{ receipt_uuid: string; action_uuid: string; payload_hash: string }> = []
  for (let i = 0; i < count; i++) {
    const created = await call(server.url, "POST", "/api/v1/actions", { token: owner.key, body: { action_type: "payment", details: `pay ${i}`, agent_id: "settler" } })
    expect(created.status).toBe(201)
    const done = await call(server.url, "POST", `/api/v1/actions/${created.body.action_uuid}/notarize`, { token: owner.key, body: { outcome: "completed" } })
    expect(done.status).toBe(200)
    const verified = await call(server.url, "GET", `/api/v1/verify/action/${created.body.action_uuid}`)
    minted.push({ receipt_uuid: verified.body.receipt_uuid, action_uuid: created.body.action_uuid, payload_hash: verified.body.payload_hash })
  }
  return minted
}

const settle = (owner: Org) => call(server.url, "POST", "/api/v1/settlements", { token: owner.key })

const jwksKey = async (kid: string) => {
  const jwks = await call(server.url, "GET", "/api/v1/.well-known/jwks.json")
  return jwks.body.keys.find((key: { kid: string }) => key.kid === kid)
}

describe("settlements", () => {
  it("seal receipts into one growing log whose heads, proofs and checkpoints verify offline", async () => {
    const first = await mintReceipts(org, 5)
    const sealed = await settle(org)
    expect(sealed.status).toBe(201)
    const one = sealed.body
    expect(one).toMatchObject({ org_uuid: org.orgUuid, receipt_count: 5, signing_key_id: expect.stringMatching(/^rk_/) })
    expect(one.request_id).toMatch(/^req_/)
    expect(one.merkle_root).toMatch(/^sha256:[0-9a-f]{64}$/)
    expect(typeof one.timestamp_token).toBe("string")
    expect(Date.parse(one.period_start)).toBeLessThanOrEqual(Date.parse(one.period_end))
    const key = await jwksKey(one.signing_key_id)
    expect(verifySettlement(one, key)).toEqual({ settlement_hash: true, signature: true })
    expect(verifySettlement({ ...one, receipt_count: 6 }, key).settlement_hash).toBe(false)

    // Nothing new: 200 null.
    const again = await settle(org)
    expect(again.status).toBe(200)
    expect(again.body).toBeNull()

    // The receipts, in (created_at, receipt_uuid) order; each one's inclusion proof checks by the RFC.
    const listed = await call(server.url, "GET", `/api/v1/settlements/${one.id}/receipts`, { token: org.key })
    expect(listed.status).toBe(200)
    expect(listed.body.map((receipt: { receipt_uuid: string }) => receipt.receipt_uuid).sort()).toEqual(first.map((r) => r.receipt_uuid).sort())
    expect(listed.body[0]).toMatchObject({ action_type: "payment", agent_id: "settler" })
    for (const receipt of first) {
      const proof = await call(server.url, "GET", `/api/v1/settlements/inclusion-proof/${receipt.receipt_uuid}`, { token: org.key })
      expect(proof.status).toBe(200)
      expect(proof.body).toMatchObject({ settlement_uuid: one.id, receipt_uuid: receipt.receipt_uuid, merkle_root: one.merkle_root, leaf_count: 5 })
      const leaf = leafHashOf(bytes(receipt.payload_hash))
      expect(proof.body.leaf_hash).toBe(`sha256:${leaf.toString("hex")}`)
      expect(verifyInclusionRfc(leaf, proof.body.index, proof.body.leaf_count, proof.body.siblings.map(bytes), bytes(one.merkle_root))).toBe(true)
      expect(verifySettlementInclusion(proof.body, receipt.payload_hash)).toBe(true)
      expect(verifySettlementInclusion(proof.body, first.find((r) => r !== receipt)!.payload_hash)).toBe(false)
    }

    // The log grows: the second head extends the first, provably.
    const second = await mintReceipts(org, 4)
    const two = (await settle(org)).body
    expect(two.receipt_count).toBe(4)
    const consistency = await call(server.url, "GET", `/api/v1/settlements/consistency?from=${one.id}&to=${two.id}`, { token: org.key })
    expect(consistency.status).toBe(200)
    expect(consistency.body.from).toEqual({ settlement_uuid: one.id, tree_size: 5, merkle_root: one.merkle_root })
    expect(consistency.body.to).toEqual({ settlement_uuid: two.id, tree_size: 9, merkle_root: two.merkle_root })
    expect(verifyConsistencyRfc(5, 9, consistency.body.proof.map(bytes), bytes(one.merkle_root), bytes(two.merkle_root))).toBe(true)
    expect(verifySettlementConsistency(consistency.body)).toBe(true)
    expect(verifySettlementConsistency({ ...consistency.body, from: { ...consistency.body.from, merkle_root: two.merkle_root } })).toBe(false)
    const backwards = await call(server.url, "GET", `/api/v1/settlements/consistency?from=${two.id}&to=${one.id}`, { token: org.key })
    expect(backwards.status).toBe(422)
    expect(backwards.body.code).toBe("VALIDATION_ERROR")

    // A receipt of the first batch is proven against the head that sealed it; one of the second against its own.
    const late = await call(server.url, "GET", `/api/v1/settlements/inclusion-proof/${second[3].receipt_uuid}`, { token: org.key })
    expect(late.body).toMatchObject({ settlement_uuid: two.id, index: 8, leaf_count: 9 })
    expect(verifyInclusionRfc(leafHashOf(bytes(second[3].payload_hash)), 8, 9, late.body.siblings.map(bytes), bytes(two.merkle_root))).toBe(true)

    // The C2SP checkpoint of each head, signed by the key the JWKS publishes.
    const checkpoint = await call(server.url, "GET", `/api/v1/settlements/${two.id}/checkpoint`, { token: org.key })
    expect(checkpoint.status).toBe(200)
    const note = parseCheckpoint(checkpoint.body.checkpoint)
    expect(note.origin).toBe(checkpoint.body.origin)
    expect(note.treeSize).toBe(9)
    expect(`sha256:${Buffer.from(note.rootHash).toString("hex")}`).toBe(two.merkle_root)
    const raw = Buffer.from(key.x, "base64url")
    const name = note.signatures[0].name
    expect(verifyCheckpoint(checkpoint.body.checkpoint, name, raw)).toBe(true)
    expect(checkpoint.body.verifier_key.startsWith(`${name}+`)).toBe(true)
    expect(verifyCheckpoint(checkpoint.body.checkpoint.replace("\n9\n", "\n10\n"), name, raw)).toBe(false)

    // Lists: newest first, `data` and `pagination`.
    const list = await call(server.url, "GET", "/api/v1/settlements?per_page=1", { token: org.key })
    expect(list.status).toBe(200)
    expect(list.body.data).toEqual([{ id: two.id, period_start: two.period_start, period_end: two.period_end, receipt_count: 4, merkle_root: two.merkle_root, sealed_at: two.sealed_at }])
    expect(list.body.pagination).toEqual({ page: 1, per_page: 1, total: 2, has_more: true })
    expect((await call(server.url, "GET", "/api/v1/settlements?per_page=101", { token: org.key })).status).toBe(422)
    expect((await call(server.url, "GET", `/api/v1/settlements/${one.id}`, { token: org.key })).body).toMatchObject({ id: one.id, settlement_hash: one.settlement_hash })

    // The verify CLI checks the same files offline.
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
    const results = await Promise.all([
      cli(file("head", one), "--jwks", jwksUrl),
      cli(file("proof", late.body), "--receipt", file("receipt", second[3]), "--settlement", file("two", two), "--jwks", jwksUrl),
      cli(file("consistency", consistency.body), "--settlement", file("one", one), "--settlement", file("two-again", two), "--jwks", jwksUrl),
      cli(file("checkpoint", checkpoint.body), "--jwks", jwksUrl),
      cli(file("forged", { ...consistency.body, proof: consistency.body.proof.slice(1) }))
    ])
    expect(results.map((result) => result.code)).toEqual([0, 0, 0, 0, 1])
    expect(results[1].stdout).toContain("ok   inclusion of the receipt's payload_hash")
  }, 120_000)

  it("settle each receipt exactly once when creates run at the same time", async () => {
    const owner = await registerOrg(server.url, "Concurrent Org")
    const minted = await mintReceipts(owner, 12)
    const replies = await Promise.all(Array.from({ length: 5 }, () => settle(owner)))
    expect(replies.every((reply) => reply.status === 201 || (reply.status === 200 && reply.body === null))).toBe(true)
    const made = replies.filter((reply) => reply.status === 201).map((reply) => reply.body)
    expect(made.reduce((sum, settlement) => sum + settlement.receipt_count, 0)).toBe(12)
    const seen: string[] = []
    for (const settlement of made) {
      const receipts = await call(server.url, "GET", `/api/v1/settlements/${settlement.id}/receipts`, { token: owner.key })
      seen.push(...receipts.body.map((receipt: { receipt_uuid: string }) => receipt.receipt_uuid))
    }
    expect(seen.sort()).toEqual(minted.map((receipt) => receipt.receipt_uuid).sort())
  }, 60_000)

  it("are created by admins only, 5 per minute per organization", async () => {
    const owner = await registerOrg(server.url, "Busy Org")
    const member = await addMember(server.url, owner, "member")
    const refused = await call(server.url, "POST", "/api/v1/settlements", { token: member.key })
    expect(refused.status).toBe(403)
    expect(refused.body.code).toBe("FORBIDDEN")
    // Members may read.
    expect((await call(server.url, "GET", "/api/v1/settlements", { token: member.key })).status).toBe(200)
    const admin = await addMember(server.url, owner, "admin")
    const statuses: number[] = []
    for (let i = 0; i < 6; i++) statuses.push((await call(server.url, "POST", "/api/v1/settlements", { token: i % 2 === 0 ? owner.key : admin.token })).status)
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429])
    const limited = await settle(owner)
    expect(limited.status).toBe(429)
    expect(limited.body.code).toBe("RATE_LIMIT_EXCEEDED")
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0)
  }, 60_000)

  it("answer 404 for unknown ids, unsettled receipts and other organizations' settlements", async () => {
    const [receipt] = await mintReceipts(other, 1)
    expect((await call(server.url, "GET", `/api/v1/settlements/inclusion-proof/${receipt.receipt_uuid}`, { token: other.key })).status).toBe(404)
    const theirs = (await settle(other)).body
    expect((await call(server.url, "GET", `/api/v1/settlements/inclusion-proof/${receipt.receipt_uuid}`, { token: other.key })).status).toBe(200)
    for (const path of [
      `/api/v1/settlements/${theirs.id}`,
      `/api/v1/settlements/${theirs.id}/receipts`,
      `/api/v1/settlements/${theirs.id}/checkpoint`,
      `/api/v1/settlements/inclusion-proof/${receipt.receipt_uuid}`,
      `/api/v1/settlements/consistency?from=${theirs.id}&to=${theirs.id}`,
      "/api/v1/settlements/00000000-0000-0000-0000-000000000000"
    ]) {
      const reply = await call(server.url, "GET", path, { token: org.key })
      expect(reply.status, path).toBe(404)
      expect(reply.body.code, path).toBe("NOT_FOUND")
    }
  }, 60_000)
})
