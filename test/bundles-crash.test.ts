/**
 * Compliance bundles across SIGKILL: the server is killed while bundles are being sealed (each
 * seal is one transaction after its key's claim), restarted on the same store, and then every
 * bundle it lists is whole — its export holds exactly `receipt_count` receipts in leaf order whose
 * RFC 9162 root, recomputed here, is the bundle's `merkle_root` — and a key whose seal the kill
 * cut short is never answered with a half-made bundle: it replays a sealed one or is refused
 * (409 while its claim holds). New keys seal as usual after the restart.
 */
import { createHash } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, type Org, registerOrg } from "./support/client.js"
import { type FreshDatabase, freshDatabaseUrl, UNUSED_DATA_DIR } from "./support/database.js"
import { type ServerProcess, spawnServer } from "./support/process.js"
import { leafHashOf, mth } from "./support/rfc9162.js"

let database: FreshDatabase | undefined
let server: ServerProcess | undefined
let env: Record<string, string>

beforeAll(async () => {
  database = await freshDatabaseUrl()
  env = {
    DATABASE_URL: database.url,
    DATA_DIR: UNUSED_DATA_DIR,
    REDIS_URL: "",
    // Receipts' keys are sealed under the master key: every restart must use the same one.
    MASTER_KEY: "b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0",
    RATE_LIMIT_PER_MINUTE: "100000",
    LOG_LEVEL: "error"
  }
})

afterAll(async () => {
  await server?.stop()
  await database?.drop()
})

// A bundle spans at most 366 days.
const period = { period_start: new Date(Date.now() - 100 * 86_400_000).toISOString(), period_end: new Date(Date.now() + 100 * 86_400_000).toISOString() }

const notarizeMany = async (base: string, org: Org, count: number) => {
  for (let start = 0; start < count; start += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, count - start) }, async (_, index) => {
        const authorized = await call(base, "POST", "/api/v1/actions", {
          token: org.key,
          body: { action_type: "bundle.crash", details: `receipt ${start + index}`, agent_id: "sealed-agent" }
        })
        expect(authorized.status).toBe(201)
        const notarized = await call(base, "POST", `/api/v1/actions/${authorized.body.action_uuid}/notarize`, { token: org.key, body: { outcome: "completed" } })
        expect(notarized.status).toBe(200)
      })
    )
  }
}

/** The bundle's export agrees with the bundle: its receipts, in leaf order, hash to the sealed root. */
const expectWhole = async (base: string, org: Org, bundle: { id: string; receipt_count: number; merkle_root: string }) => {
  const exported = await call(base, "GET", `/api/v1/compliance/bundles/${bundle.id}/export`, { token: org.key })
  expect(exported.status).toBe(200)
  const receipts = exported.body.receipts as Array<{ index: number; payload_hash: string }>
  expect(receipts.map((receipt) => receipt.index)).toEqual(receipts.map((_, index) => index))
  expect(receipts).toHaveLength(bundle.receipt_count)
  const leaves = receipts.map((receipt) => Buffer.from(receipt.payload_hash.replace(/^sha256:/, ""), "hex"))
  const root = leaves.length === 0 ? createHash("sha256").digest() : mth(leaves)
  expect(bundle.merkle_root.replace(/^sha256:/, "")).toBe(root.toString("hex"))
  // The leaf hash is what the proof route answers for the first receipt.
  if (receipts.length > 0) {
    const first = exported.body.receipts[0]
    const proof = await call(base, "GET", `/api/v1/compliance/bundles/${bundle.id}/inclusion-proof/${first.receipt_uuid}`, { token: org.key })
    expect(proof.body.leaf_hash.replace(/^sha256:/, "")).toBe(leafHashOf(leaves[0]!).toString("hex"))
  }
}

describe("compliance bundles across SIGKILL", () => {
  it("lists only whole bundles after kills mid-seal, and a cut-short key never answers a half-made one", async () => {
    server = await spawnServer(env)
    const org = await registerOrg(server.url, "Bundles Crash")
    await notarizeMany(server.url, org, 400)

    const keys: Array<string> = []
    const outcomes: Array<number | "cut"> = []
    const cutKeys = new Set<string>()
    for (let kill = 0; kill < 3; kill += 1) {
      // Several seals in flight; the kill lands while some are sealing.
      const sent = Array.from({ length: 4 }, (_, index) => {
        const key = `crash-${kill}-${index}`
        keys.push(key)
        return call(server!.url, "POST", "/api/v1/compliance/bundles", { token: org.key, body: { framework: "soc_2_cc7", ...period, idempotency_key: key } }).then(
          (reply) => void outcomes.push(reply.status),
          () => {
            outcomes.push("cut")
            cutKeys.add(key)
          }
        )
      })
      await new Promise((resolve) => setTimeout(resolve, 40 + kill * 60))
      await server.kill()
      await Promise.all(sent)
      server = await spawnServer(env)
    }

    // Only seals or cut connections: nothing was refused for its body.
    expect(outcomes.every((outcome) => outcome === 201 || outcome === "cut")).toBe(true)
    expect(outcomes).toContain("cut")
    const listed = await call(server.url, "GET", "/api/v1/compliance/bundles?per_page=100", { token: org.key })
    expect(listed.status).toBe(200)
    for (const bundle of listed.body.data) {
      expect(bundle.status).toBe("sealed")
      await expectWhole(server.url, org, bundle)
    }

    // Each key replays its sealed bundle, or is refused while its cut-short claim holds; a key whose request was
    // cut before the server claimed it has left nothing, so it seals anew — whole.
    const sealedIds = new Set(listed.body.data.map((bundle: { id: string }) => bundle.id))
    for (const key of keys) {
      const again = await call(server.url, "POST", "/api/v1/compliance/bundles", { token: org.key, body: { framework: "soc_2_cc7", ...period, idempotency_key: key } })
      if (again.status === 200) expect(sealedIds.has(again.body.id)).toBe(true)
      else if (again.status === 201) {
        expect(cutKeys.has(key)).toBe(true)
        await expectWhole(server.url, org, again.body)
      } else expect({ status: again.status, code: again.body.code }).toEqual({ status: 409, code: "DUPLICATE_REQUEST" })
    }

    const fresh = await call(server.url, "POST", "/api/v1/compliance/bundles", { token: org.key, body: { framework: "raw", ...period } })
    expect(fresh.status).toBe(201)
    expect(fresh.body.receipt_count).toBe(400)
    await expectWhole(server.url, org, fresh.body)
  }, 240_000)
})
