/**
 * The dashboard's Merkle verifier (dashboard/src/areas/ledgers/merkle.ts, no DOM) in Node against the
 * proofs the server's own log code produces: every inclusion and consistency proof of small trees
 * verifies, each altered one does not, and the checks say which step failed. The page that uses it is
 * tested in test/dashboard-ledgers.browser.test.ts.
 */
import { randomBytes } from "node:crypto"
import { describe, expect, it } from "vitest"
import { checkConsistency, checkInclusion, parseHash, tagged, treeSizes, verifyConsistency, verifyInclusion } from "../dashboard/src/areas/ledgers/merkle.js"
import { leafHash } from "../src/receipts/merkle.js"
import { consistencyFromTiles, inclusionFromTiles, LogAppender, rootFromTiles, type Tiles, tileName } from "../src/settlements/log.js"
import { leafHashOf, mth } from "./support/rfc9162.js"

/** A log of `size` random leaves built by the server's own appender, as its tiles. */
const serverLog = (size: number) => {
  const digests = Array.from({ length: size }, () => new Uint8Array(randomBytes(32)))
  const appender = new LogAppender(0, new Map())
  const tiles = new Map<string, Uint8Array>()
  for (const digest of digests) {
    appender.append(leafHash(digest))
    for (const tile of appender.takeWritten()) tiles.set(tileName(tile.level, tile.index), tile.hashes)
  }
  for (const tile of appender.partialTiles()) tiles.set(tileName(tile.level, tile.index), tile.hashes)
  return { digests, tiles: tiles as Tiles }
}

describe("the dashboard's Merkle verifier (merkle.ts) against the server's proofs", () => {
  it("verifies every inclusion proof of trees of 1 to 40 leaves and 300, and refuses each one altered", async () => {
    for (const size of [...Array.from({ length: 40 }, (_, i) => i + 1), 300]) {
      const { digests, tiles } = serverLog(size)
      const root = rootFromTiles(tiles, size)
      // The RFC written out independently agrees on the root.
      expect(Buffer.from(root).equals(mth(digests))).toBe(true)
      const indexes = size <= 40 ? digests.map((_, i) => i) : [0, 1, 127, 255, 256, 298, 299]
      for (const index of indexes) {
        const { leafHash: leaf, proof } = inclusionFromTiles(tiles, index, size)
        expect(Buffer.from(leaf).equals(leafHashOf(digests[index]!))).toBe(true)
        expect(await verifyInclusion(leaf, index, size, proof, root)).toEqual({ ok: true })
        if (proof.length > 0) {
          const bent = proof.map((hash, i) => (i === proof.length - 1 ? Uint8Array.from(hash, (byte, j) => (j === 0 ? byte ^ 1 : byte)) : hash))
          expect((await verifyInclusion(leaf, index, size, bent, root)).ok).toBe(false)
          expect((await verifyInclusion(leaf, index, size, proof.slice(1), root)).ok).toBe(false)
        }
        // The path leads to the root only from this leaf's hash.
        expect((await verifyInclusion(leafHashOf(randomBytes(32)), index, size, proof, root)).ok).toBe(false)
        expect((await verifyInclusion(leaf, size, size, proof, root)).ok).toBe(false)
      }
    }
  })

  it("verifies every consistency proof between trees of up to 33 leaves, and refuses swapped roots or altered hashes", async () => {
    const { digests, tiles } = serverLog(33)
    const rootOf = (n: number) => mth(digests.slice(0, n))
    for (let second = 1; second <= 33; second++) {
      for (let first = 1; first <= second; first++) {
        const proof = consistencyFromTiles(tiles, first, second)
        expect(await verifyConsistency(first, second, proof, rootOf(first), rootOf(second))).toEqual({ ok: true })
        if (first === second) continue
        expect((await verifyConsistency(first, second, proof, rootOf(second), rootOf(first))).ok).toBe(false)
        const bent = proof.map((hash, i) => (i === 0 ? Uint8Array.from(hash, (byte, j) => (j === 31 ? byte ^ 0x80 : byte)) : hash))
        expect((await verifyConsistency(first, second, bent, rootOf(first), rootOf(second))).ok).toBe(false)
        expect((await verifyConsistency(second, first, proof, rootOf(second), rootOf(first))).ok).toBe(false)
      }
    }
  })

  it("checks the wire forms step by step and says why a proof fails", async () => {
    const { digests, tiles } = serverLog(5)
    const root = tagged(rootFromTiles(tiles, 5))
    const { leafHash: leaf, proof } = inclusionFromTiles(tiles, 3, 5)
    const wire = { settlement_uuid: "s", receipt_uuid: "r", merkle_root: root, leaf_hash: tagged(leaf), index: 3, leaf_count: 5, siblings: proof.map(tagged) }
    const receipt = { receipt_uuid: "r", payload_hash: tagged(digests[3]!) }
    expect((await checkInclusion(wire, receipt, root)).verified).toBe(true)
    const otherReceipt = await checkInclusion(wire, { receipt_uuid: "r", payload_hash: tagged(digests[2]!) }, root)
    expect(otherReceipt.verified).toBe(false)
    expect(otherReceipt.steps.find((step) => step.name === "Leaf")?.ok).toBe(false)
    const wrongRoot = await checkInclusion(wire, receipt, tagged(digests[0]!))
    expect(wrongRoot.steps.filter((step) => !step.ok).map((step) => step.name)).toEqual(["Signed root", "Audit path"])
    expect((await checkInclusion({ ...wire, siblings: ["sha256:zz"] }, receipt, root)).steps[0]?.name).toBe("Proof format")

    const older = { settlement_uuid: "a", tree_size: 2, merkle_root: tagged(rootFromTiles(tiles, 2)) }
    const newer = { settlement_uuid: "b", tree_size: 5, merkle_root: root }
    const consistency = { from: older, to: newer, proof: consistencyFromTiles(tiles, 2, 5).map(tagged) }
    expect((await checkConsistency(consistency, older, newer)).verified).toBe(true)
    const lying = await checkConsistency({ ...consistency, from: { ...older, tree_size: 3 } }, older, newer)
    expect(lying.verified).toBe(false)
    expect(lying.steps[0]).toMatchObject({ name: "Older settlement", ok: false })
    expect(parseHash("sha256:00")).toBeUndefined()
    expect(treeSizes([{ receipt_count: 2, sealed_at: "2026-01-02T00:00:00Z" }, { receipt_count: 3, sealed_at: "2026-01-01T00:00:00Z" }], 10).map((s) => s.tree_size)).toEqual([13, 15])
  })
})
