/**
 * RFC 9162 (Certificate Transparency v2) Merkle trees on node:crypto.
 *
 *   MTH({})       = SHA-256()
 *   MTH({d0})     = SHA-256(0x00 || d0)
 *   MTH(D[n])     = SHA-256(0x01 || MTH(D[0:k]) || MTH(D[k:n])), k = largest power of two < n
 *
 * Built bottom-up: pairing nodes level by level and carrying an odd last node up
 * unchanged yields exactly that left-balanced tree. Node hashing is the cost
 * (≈2n SHA-256 calls), so each level lives in one buffer laid out as 65-byte
 * records `0x01 || left || right`: a parent is hashed straight from its record
 * and written straight into its slot in the next level, with no copying or
 * per-hash allocation. Verification reuses the portable algorithms of
 * protocol/verifier/merkle.ts with a node:crypto hasher.
 */
import * as nodeCrypto from "node:crypto"
import { verifyConsistencyWith, verifyInclusionWith } from "../../protocol/verifier/merkle.js"

const HASH_SIZE = 32
const RECORD_SIZE = 1 + 2 * HASH_SIZE

type HashFn = (algorithm: string, data: Uint8Array, outputEncoding: "binary") => string
const oneShotHash: HashFn | undefined = (nodeCrypto as unknown as { hash?: HashFn }).hash

/**
 * SHA-256 as a latin1 string: crypto.hash allocates no Buffer for a string
 * result, which makes it ~2.5x cheaper than asking for a Buffer.
 */
const sha256Latin1 = (data: Uint8Array): string =>
  oneShotHash !== undefined
    ? oneShotHash("sha256", data, "binary")
    : nodeCrypto.createHash("sha256").update(data).digest("binary")

const sha256 = (data: Uint8Array): Uint8Array => Buffer.from(sha256Latin1(data), "latin1")

export const EMPTY_ROOT: Uint8Array = sha256(new Uint8Array(0))

export const leafHash = (leaf: Uint8Array): Uint8Array => {
  const input = Buffer.allocUnsafe(leaf.length + 1)
  input[0] = 0x00
  input.set(leaf, 1)
  return sha256(input)
}

const nodeInput = Buffer.alloc(RECORD_SIZE)

export const nodeHash = (left: Uint8Array, right: Uint8Array): Uint8Array => {
  nodeInput[0] = 0x01
  nodeInput.set(left, 1)
  nodeInput.set(right, 1 + HASH_SIZE)
  return sha256(nodeInput)
}

/** One tree level: node i sits in record i>>1, left or right half by i's low bit. */
class Level {
  readonly bytes: Buffer
  /** One 65-byte view per record, made once so hashing a record allocates nothing. */
  readonly records: Buffer[]

  constructor(readonly capacity: number) {
    const recordCount = Math.ceil(capacity / 2)
    this.bytes = Buffer.allocUnsafe(recordCount * RECORD_SIZE)
    this.records = new Array(recordCount)
    for (let r = 0; r < recordCount; r++) {
      const start = r * RECORD_SIZE
      this.bytes[start] = 0x01
      this.records[r] = this.bytes.subarray(start, start + RECORD_SIZE)
    }
  }

  // Node indexes stay far below 2^31 (memory runs out long before), so bit ops are safe.
  offsetOf(i: number): number {
    return (i >> 1) * RECORD_SIZE + 1 + (i & 1) * HASH_SIZE
  }

  node(i: number): Uint8Array {
    const offset = this.offsetOf(i)
    return new Uint8Array(this.bytes.subarray(offset, offset + HASH_SIZE))
  }
}

const leafScratch = Buffer.alloc(1 + HASH_SIZE)

const hashLeavesInto = (leaves: ReadonlyArray<Uint8Array>, level: Level): void => {
  for (let i = 0; i < leaves.length; i++) {
    const leaf = leaves[i]
    let input: Buffer
    if (leaf.length === HASH_SIZE) {
      // The common case (settlement leaves are digests): reuse one buffer.
      input = leafScratch
      input[0] = 0x00
      input.set(leaf, 1)
    } else {
      input = Buffer.allocUnsafe(leaf.length + 1)
      input[0] = 0x00
      input.set(leaf, 1)
    }
    level.bytes.write(sha256Latin1(input), level.offsetOf(i), "latin1")
  }
}

/** Hashes `count` nodes of `from` into the next level; returns the next level's size. */
const hashLevelInto = (from: Level, count: number, to: Level): number => {
  const parents = Math.floor(count / 2)
  for (let p = 0; p < parents; p++) {
    to.bytes.write(sha256Latin1(from.records[p]), to.offsetOf(p), "latin1")
  }
  if (count % 2 === 1) {
    // Odd node out: promoted unchanged (RFC 9162's split puts it in the right subtree alone).
    const source = from.offsetOf(count - 1)
    from.bytes.copy(to.bytes, to.offsetOf(parents), source, source + HASH_SIZE)
  }
  return parents + (count % 2)
}

// Two reusable levels for root-only computation, kept for trees up to this size.
const POOLED_CAPACITY = 1 << 14
let pooled: [Level, Level] | undefined

const scratchLevels = (size: number): [Level, Level] => {
  if (size > POOLED_CAPACITY) return [new Level(size), new Level(Math.ceil(size / 2))]
  if (pooled === undefined || pooled[0].capacity < size) {
    const capacity = Math.min(POOLED_CAPACITY, Math.max(64, 2 ** Math.ceil(Math.log2(size))))
    pooled = [new Level(capacity), new Level(capacity)]
  }
  return pooled
}

/** MTH over the leaves (raw leaf data, hashed with the 0x00 prefix here). */
export const merkleRoot = (leaves: ReadonlyArray<Uint8Array>): Uint8Array => {
  const size = leaves.length
  if (size === 0) return new Uint8Array(EMPTY_ROOT)
  let [current, next] = scratchLevels(size)
  hashLeavesInto(leaves, current)
  let count = size
  while (count > 1) {
    count = hashLevelInto(current, count, next)
    ;[current, next] = [next, current]
  }
  return current.node(0)
}

/**
 * A tree with every level kept, for serving many proofs over the same leaves.
 * levels[h] holds the hashes of the subtrees of height h; node j of level h
 * covers leaves [j·2^h, min((j+1)·2^h, size)).
 */
export class MerkleTree {
  readonly size: number
  readonly root: Uint8Array
  private readonly levels: Level[]
  private readonly counts: number[]

  constructor(leaves: ReadonlyArray<Uint8Array>) {
    this.size = leaves.length
    this.levels = []
    this.counts = []
    if (this.size === 0) {
      this.root = new Uint8Array(EMPTY_ROOT)
      return
    }
    let level = new Level(this.size)
    hashLeavesInto(leaves, level)
    let count = this.size
    this.levels.push(level)
    this.counts.push(count)
    while (count > 1) {
      const next = new Level(Math.ceil(count / 2))
      count = hashLevelInto(level, count, next)
      level = next
      this.levels.push(level)
      this.counts.push(count)
    }
    this.root = level.node(0)
  }

  leafHash(index: number): Uint8Array {
    this.checkIndex(index)
    return this.levels[0].node(index)
  }

  /** MTH(D[start:end]) for the ranges RFC 9162's recursions produce, read from the levels. */
  private rangeHash(start: number, end: number): Uint8Array {
    const width = end - start
    let height = 0
    while (2 ** height < width) height++
    const span = 2 ** height
    // Aligned and either full or running to the end of the tree: one stored node.
    if (start % span === 0 && (width === span || end === this.size)) {
      return this.levels[height].node(start / span)
    }
    const k = largestPowerOfTwoBelow(width)
    return nodeHash(this.rangeHash(start, start + k), this.rangeHash(start + k, end))
  }

  /** RFC 9162 §2.1.3.1 PATH(m, D[n]), deepest sibling first. */
  inclusionProof(index: number): Uint8Array[] {
    this.checkIndex(index)
    const proof: Uint8Array[] = []
    const walk = (m: number, start: number, end: number): void => {
      const n = end - start
      if (n <= 1) return
      const k = largestPowerOfTwoBelow(n)
      if (m < k) {
        walk(m, start, start + k)
        proof.push(this.rangeHash(start + k, end))
      } else {
        walk(m - k, start + k, end)
        proof.push(this.rangeHash(start, start + k))
      }
    }
    walk(index, 0, this.size)
    return proof
  }

  /** RFC 9162 §2.1.4.1 PROOF(m, D[n]) = SUBPROOF(m, D[n], true), for 1 ≤ m ≤ n. */
  consistencyProof(firstSize: number): Uint8Array[] {
    if (!Number.isSafeInteger(firstSize) || firstSize < 1 || firstSize > this.size) {
      throw new RangeError(`first tree size must be in 1..${this.size}`)
    }
    const proof: Uint8Array[] = []
    const subproof = (m: number, start: number, end: number, complete: boolean): void => {
      const n = end - start
      if (m === n) {
        if (!complete) proof.push(this.rangeHash(start, end))
        return
      }
      const k = largestPowerOfTwoBelow(n)
      if (m <= k) {
        subproof(m, start, start + k, complete)
        proof.push(this.rangeHash(start + k, end))
      } else {
        subproof(m - k, start + k, end, false)
        proof.push(this.rangeHash(start, start + k))
      }
    }
    subproof(firstSize, 0, this.size, true)
    return proof
  }

  private checkIndex(index: number): void {
    if (!Number.isSafeInteger(index) || index < 0 || index >= this.size) {
      throw new RangeError(`leaf index must be in 0..${this.size - 1}`)
    }
  }
}

/** Largest power of two strictly smaller than n (n ≥ 2). */
const largestPowerOfTwoBelow = (n: number): number => {
  let k = 1
  while (k * 2 < n) k *= 2
  return k
}

export const inclusionProof = (leaves: ReadonlyArray<Uint8Array>, index: number): Uint8Array[] =>
  new MerkleTree(leaves).inclusionProof(index)

export const consistencyProof = (leaves: ReadonlyArray<Uint8Array>, firstSize: number): Uint8Array[] =>
  new MerkleTree(leaves).consistencyProof(firstSize)

/** RFC 9162 §2.1.3.2, with node:crypto hashing. `leafHash` is the 0x00-prefixed hash. */
export const verifyInclusion = (
  leafHashValue: Uint8Array,
  index: number,
  treeSize: number,
  proof: ReadonlyArray<Uint8Array>,
  root: Uint8Array
): boolean => verifyInclusionWith(nodeHash, leafHashValue, index, treeSize, proof, root)

/** RFC 9162 §2.1.4.2, with node:crypto hashing. */
export const verifyConsistency = (
  firstSize: number,
  secondSize: number,
  proof: ReadonlyArray<Uint8Array>,
  firstRoot: Uint8Array,
  secondRoot: Uint8Array
): boolean => verifyConsistencyWith(nodeHash, firstSize, secondSize, proof, firstRoot, secondRoot)
