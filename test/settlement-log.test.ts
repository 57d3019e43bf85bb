/**
 * The tiled settlement log against the in-memory tree and the RFC written out
 * in the test: for random log sizes grown in random batches, every root,
 * inclusion proof and consistency proof read from tiles is the tree's own and
 * verifies; a changed leaf or root does not.
 */
import { randomBytes } from "node:crypto"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { leafHash, MerkleTree } from "../src/receipts/merkle.js"
import {
  consistencyFromTiles,
  edgeTiles,
  inclusionFromTiles,
  LogAppender,
  rootFromTiles,
  type TileKey,
  tileName,
  tilesForConsistency,
  tilesForInclusion,
  tilesForRoot,
  type WrittenTile
} from "../src/settlements/log.js"
import { mth, verifyConsistencyRfc, verifyInclusionRfc } from "./support/rfc9162.js"

/** The tile table, as a map: what the database holds. */
class TileTable {
  readonly tiles = new Map<string, Uint8Array>()
  reads = 0
  write(written: ReadonlyArray<WrittenTile>) {
    for (const tile of written) this.tiles.set(tileName(tile.level, tile.index), tile.hashes)
  }
  read(keys: ReadonlyArray<TileKey>) {
    this.reads += keys.length
    const found = new Map<string, Uint8Array>()
    for (const key of keys) {
      const tile = this.tiles.get(tileName(key.level, key.index))
      if (tile !== undefined) found.set(tileName(key.level, key.index), tile)
    }
    return found
  }
}

/** Appends `leaves` in batches as the service does; answers the size after each batch. */
const grow = (table: TileTable, leaves: ReadonlyArray<Uint8Array>, batches: ReadonlyArray<number>) => {
  const sizes: number[] = []
  let size = 0
  for (const batch of batches) {
    const appender = new LogAppender(size, table.read(edgeTiles(size)))
    for (const leaf of leaves.slice(size, size + batch)) {
      appender.append(leafHash(leaf))
      if (Math.random() < 0.01) table.write(appender.takeWritten())
    }
    table.write(appender.takeWritten())
    table.write(appender.partialTiles())
    size += batch
    sizes.push(size)
  }
  return sizes
}

const leavesOf = (count: number) => Array.from({ length: count }, () => new Uint8Array(randomBytes(32)))
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex")

const batchesArbitrary = fc.array(fc.integer({ min: 1, max: 700 }), { minLength: 1, maxLength: 6 })

describe("the tiled settlement log", () => {
  it("has the RFC's root, inclusion proofs and consistency proofs at every size it grows through", () => {
    fc.assert(
      fc.property(batchesArbitrary, fc.nat(), fc.nat(), (batches, pickA, pickB) => {
        const total = batches.reduce((sum, batch) => sum + batch, 0)
        const leaves = leavesOf(total)
        const table = new TileTable()
        const sizes = grow(table, leaves, batches)
        for (const size of sizes) {
          const root = rootFromTiles(table.read(tilesForRoot(size)), size)
          expect(hex(root)).toBe(hex(mth(leaves.slice(0, size))))
        }
        const size = sizes[pickA % sizes.length]
        const tree = new MerkleTree(leaves.slice(0, size))
        const index = pickB % size
        const { leafHash: leaf, proof } = inclusionFromTiles(table.read(tilesForInclusion(index, size)), index, size)
        expect(proof.map(hex)).toEqual(tree.inclusionProof(index).map(hex))
        expect(verifyInclusionRfc(leaf, index, size, proof, tree.root)).toBe(true)
        const first = sizes[pickB % sizes.length]
        if (first < size) {
          const consistency = consistencyFromTiles(table.read(tilesForConsistency(first, size)), first, size)
          expect(consistency.map(hex)).toEqual(tree.consistencyProof(first).map(hex))
          const firstRoot = mth(leaves.slice(0, first))
          expect(verifyConsistencyRfc(first, size, consistency, firstRoot, tree.root)).toBe(true)
          const forged = mth([...leaves.slice(0, first - 1), randomBytes(32)])
          expect(verifyConsistencyRfc(first, size, consistency, forged, tree.root)).toBe(false)
        }
        // A changed leaf or a changed root fails.
        expect(verifyInclusionRfc(leafHash(randomBytes(32)), index, size, proof, tree.root)).toBe(false)
        expect(verifyInclusionRfc(leaf, index, size, proof, randomBytes(32))).toBe(false)
      }),
      { numRuns: 60 }
    )
  })

  it("reaches the second tile level (65,536 leaves and more) and reads only a few tiles per proof", () => {
    const leaves = leavesOf(70_003)
    const table = new TileTable()
    const sizes = grow(table, leaves, [1, 65_535, 3, 4_464])
    expect(sizes).toEqual([1, 65_536, 65_539, 70_003])
    const tree = new MerkleTree(leaves)
    expect(hex(rootFromTiles(table.read(tilesForRoot(70_003)), 70_003))).toBe(hex(tree.root))
    for (const index of [0, 255, 256, 65_535, 65_536, 70_002]) {
      const keys = tilesForInclusion(index, 70_003)
      expect(keys.length).toBeLessThanOrEqual(8)
      const { proof } = inclusionFromTiles(table.read(keys), index, 70_003)
      expect(proof.map(hex)).toEqual(tree.inclusionProof(index).map(hex))
    }
    for (const first of [1, 65_536, 65_539]) {
      const proof = consistencyFromTiles(table.read(tilesForConsistency(first, 70_003)), first, 70_003)
      expect(proof.map(hex)).toEqual(tree.consistencyProof(first).map(hex))
    }
    // Only the last tile of each level is ever partial; full tiles are 256 hashes.
    for (const [name, tile] of table.tiles) {
      const [level, index] = name.split("/").map(Number)
      const complete = Math.floor(70_003 / 256 ** level)
      const isLast = index === Math.floor(complete / 256)
      if (!isLast) expect(tile.length, name).toBe(256 * 32)
    }
  })

  it("refuses sizes and indexes outside the log", () => {
    expect(() => tilesForRoot(0)).toThrow(RangeError)
    expect(() => tilesForInclusion(5, 5)).toThrow(RangeError)
    expect(() => tilesForConsistency(6, 5)).toThrow(RangeError)
  })
})
