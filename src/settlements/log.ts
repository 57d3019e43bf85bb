/**
 * One organization's settlement log: an append-only RFC 9162 Merkle tree kept
 * as tiles, so neither sealing nor proving ever holds the whole tree.
 *
 * A tile at level L holds up to 256 consecutive hashes of complete subtrees of
 * height 8·L (level 0: the leaf hashes). Only complete subtrees are stored, so a
 * stored hash never changes; the last tile of a level grows until it is full.
 * Any other complete subtree (height 8·L + r) is the root of 2^r neighbours in
 * one tile, and any other range is split as RFC 9162 splits it.
 *
 * Proofs run in two passes over the same code: the first records which tiles
 * the answer reads (`tilesFor…`), the caller loads them, the second computes.
 */
import { nodeHash } from "../receipts/merkle.js"

export const TILE_HEIGHT = 8
export const TILE_WIDTH = 256
const HASH_SIZE = 32

export interface TileKey {
  readonly level: number
  readonly index: number
}

export const tileName = (level: number, index: number): string => `${level}/${index}`

/** Tiles by `tileName`; each is `width × 32` bytes. */
export type Tiles = ReadonlyMap<string, Uint8Array>

/** The hash of the complete subtree of `height` at position `index` (covers leaves index·2^h …). */
type NodeReader = (height: number, index: number) => Uint8Array

const ZERO = new Uint8Array(HASH_SIZE)

const largestPowerOfTwoBelow = (n: number): number => {
  let k = 1
  while (k * 2 < n) k *= 2
  return k
}

const log2 = (n: number): number => Math.round(Math.log2(n))

const isPowerOfTwo = (n: number): boolean => n > 0 && 2 ** log2(n) === n

/** MTH(D[start:end]) for the ranges RFC 9162's recursions produce (start aligned to the split). */
const rangeHash = (node: NodeReader, start: number, end: number): Uint8Array => {
  const width = end - start
  if (isPowerOfTwo(width) && start % width === 0) return node(log2(width), start / width)
  const k = largestPowerOfTwoBelow(width)
  return nodeHash(rangeHash(node, start, start + k), rangeHash(node, start + k, end))
}

/** RFC 9162 §2.1.3.1 PATH(m, D[n]), deepest sibling first. */
const inclusionPath = (node: NodeReader, index: number, size: number): Uint8Array[] => {
  const proof: Uint8Array[] = []
  const walk = (m: number, start: number, end: number): void => {
    const n = end - start
    if (n <= 1) return
    const k = largestPowerOfTwoBelow(n)
    if (m < k) {
      walk(m, start, start + k)
      proof.push(rangeHash(node, start + k, end))
    } else {
      walk(m - k, start + k, end)
      proof.push(rangeHash(node, start, start + k))
    }
  }
  walk(index, 0, size)
  return proof
}

/** RFC 9162 §2.1.4.1 PROOF(m, D[n]) = SUBPROOF(m, D[n], true), 1 ≤ m ≤ n. */
const consistencyPath = (node: NodeReader, first: number, size: number): Uint8Array[] => {
  const proof: Uint8Array[] = []
  const subproof = (m: number, start: number, end: number, complete: boolean): void => {
    const n = end - start
    if (m === n) {
      if (!complete) proof.push(rangeHash(node, start, end))
      return
    }
    const k = largestPowerOfTwoBelow(n)
    if (m <= k) {
      subproof(m, start, start + k, complete)
      proof.push(rangeHash(node, start + k, end))
    } else {
      subproof(m - k, start + k, end, false)
      proof.push(rangeHash(node, start, start + k))
    }
  }
  subproof(first, 0, size, true)
  return proof
}

/** Root of 2^r consecutive same-height hashes starting at `offset` of a tile. */
const perfectRoot = (tile: Uint8Array, offset: number, count: number): Uint8Array => {
  let level: Uint8Array[] = []
  for (let i = 0; i < count; i++) level.push(tile.subarray((offset + i) * HASH_SIZE, (offset + i + 1) * HASH_SIZE))
  while (level.length > 1) {
    const next: Uint8Array[] = []
    for (let i = 0; i < level.length; i += 2) next.push(nodeHash(level[i], level[i + 1]))
    level = next
  }
  return level[0]
}

/** Where the complete subtree (height, index) is read from: one tile and a run in it. */
const locate = (height: number, index: number) => {
  const level = Math.floor(height / TILE_HEIGHT)
  const span = 2 ** (height % TILE_HEIGHT)
  const first = index * span
  return { level, tile: Math.floor(first / TILE_WIDTH), offset: first % TILE_WIDTH, span }
}

const readerOf = (tiles: Tiles): NodeReader => (height, index) => {
  const at = locate(height, index)
  const tile = tiles.get(tileName(at.level, at.tile))
  if (tile === undefined || tile.length < (at.offset + at.span) * HASH_SIZE) {
    throw new RangeError(`tile ${tileName(at.level, at.tile)} is missing or too short`)
  }
  return at.span === 1 ? tile.slice(at.offset * HASH_SIZE, (at.offset + 1) * HASH_SIZE) : perfectRoot(tile, at.offset, at.span)
}

/** Runs `compute` with a reader that only records the tiles it would read. */
const plan = (compute: (node: NodeReader) => unknown): TileKey[] => {
  const needed = new Map<string, TileKey>()
  compute((height, index) => {
    const at = locate(height, index)
    needed.set(tileName(at.level, at.tile), { level: at.level, index: at.tile })
    return ZERO
  })
  return [...needed.values()]
}

const checkSize = (size: number): void => {
  if (!Number.isSafeInteger(size) || size < 1) throw new RangeError("a tree size is a positive integer")
}

export const tilesForRoot = (size: number): TileKey[] => {
  checkSize(size)
  return plan((node) => rangeHash(node, 0, size))
}

export const rootFromTiles = (tiles: Tiles, size: number): Uint8Array => {
  checkSize(size)
  return rangeHash(readerOf(tiles), 0, size)
}

export const tilesForInclusion = (index: number, size: number): TileKey[] => {
  checkSize(size)
  if (!Number.isSafeInteger(index) || index < 0 || index >= size) throw new RangeError("leaf index out of range")
  return plan((node) => {
    node(0, index)
    inclusionPath(node, index, size)
  })
}

export const inclusionFromTiles = (tiles: Tiles, index: number, size: number) => {
  const node = readerOf(tiles)
  return { leafHash: node(0, index), proof: inclusionPath(node, index, size) }
}

export const tilesForConsistency = (first: number, size: number): TileKey[] => {
  checkSize(first)
  if (first > size) throw new RangeError("the first size is larger than the second")
  return plan((node) => consistencyPath(node, first, size))
}

export const consistencyFromTiles = (tiles: Tiles, first: number, size: number): Uint8Array[] =>
  consistencyPath(readerOf(tiles), first, size)

/** Complete subtrees at height 8·level in a tree of `size` leaves. */
const completeAt = (level: number, size: number): number => Math.floor(size / TILE_WIDTH ** level)

/** The last, partly filled tile of each level: all an append needs to read. */
export const edgeTiles = (size: number): TileKey[] => {
  const keys: TileKey[] = []
  for (let level = 0; completeAt(level, size) > 0; level++) {
    const count = completeAt(level, size)
    if (count % TILE_WIDTH !== 0) keys.push({ level, index: Math.floor(count / TILE_WIDTH) })
  }
  return keys
}

export interface WrittenTile extends TileKey {
  readonly hashes: Uint8Array
}

/**
 * Appends leaf hashes to a log of `size` leaves whose edge tiles are given.
 * Full tiles are handed out by `takeWritten` as they fill (write them and
 * forget them); `finish` hands out the partly filled ones.
 */
export class LogAppender {
  private readonly open: Array<{ index: number; bytes: Uint8Array; width: number }> = []
  private written: WrittenTile[] = []
  private count: number

  constructor(size: number, edge: Tiles) {
    this.count = size
    for (let level = 0; completeAt(level, size) > 0 || level === 0; level++) {
      const complete = completeAt(level, size)
      const index = Math.floor(complete / TILE_WIDTH)
      const width = complete % TILE_WIDTH
      const bytes = new Uint8Array(TILE_WIDTH * HASH_SIZE)
      if (width > 0) {
        const stored = edge.get(tileName(level, index))
        if (stored === undefined || stored.length < width * HASH_SIZE) throw new RangeError(`edge tile ${tileName(level, index)} is missing`)
        bytes.set(stored.subarray(0, width * HASH_SIZE))
      }
      this.open.push({ index, bytes, width })
      if (complete === 0) break
    }
  }

  get size(): number {
    return this.count
  }

  append(leafHash: Uint8Array): void {
    this.count++
    this.push(0, leafHash)
  }

  private push(level: number, hash: Uint8Array): void {
    if (this.open[level] === undefined) this.open[level] = { index: 0, bytes: new Uint8Array(TILE_WIDTH * HASH_SIZE), width: 0 }
    const tile = this.open[level]
    tile.bytes.set(hash, tile.width * HASH_SIZE)
    tile.width++
    if (tile.width < TILE_WIDTH) return
    this.written.push({ level, index: tile.index, hashes: tile.bytes })
    const parent = perfectRoot(tile.bytes, 0, TILE_WIDTH)
    this.open[level] = { index: tile.index + 1, bytes: new Uint8Array(TILE_WIDTH * HASH_SIZE), width: 0 }
    this.push(level + 1, parent)
  }

  /** Full tiles completed since the last call. */
  takeWritten(): WrittenTile[] {
    const full = this.written
    this.written = []
    return full
  }

  /** The partly filled tiles (each level's last), to be stored as they are now. */
  partialTiles(): WrittenTile[] {
    return this.open
      .map((tile, level) => ({ level, index: tile.index, hashes: tile.bytes.slice(0, tile.width * HASH_SIZE) }))
      .filter((tile) => tile.hashes.length > 0)
  }
}
