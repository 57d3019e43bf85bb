/**
 * RFC 9162 (Certificate Transparency v2) Merkle proof verification, portable.
 *
 * leaf hash = SHA-256(0x00 || leaf), node hash = SHA-256(0x01 || left || right).
 * The algorithms are written once over an injected node hasher so the server
 * (node:crypto) and offline auditors (@noble/hashes) run the very same steps.
 */
import { sha256 } from "@noble/hashes/sha2.js"
import { bytesEqual, hexToBytes } from "./encoding.js"

export type NodeHasher = (left: Uint8Array, right: Uint8Array) => Uint8Array

/** A 32-byte hash as bytes, or as hex (optionally prefixed `sha256:`), as in JSON proofs. */
export type HashInput = Uint8Array | string

export const hashBytes = (input: HashInput): Uint8Array => {
  const bytes = typeof input === "string" ? hexToBytes(input.startsWith("sha256:") ? input.slice(7) : input) : input
  if (bytes.length !== 32) throw new RangeError("a SHA-256 hash is 32 bytes")
  return bytes
}

export const leafHash = (leaf: Uint8Array): Uint8Array => {
  const input = new Uint8Array(leaf.length + 1)
  input[0] = 0x00
  input.set(leaf, 1)
  return sha256(input)
}

export const nodeHash: NodeHasher = (left, right) => {
  const input = new Uint8Array(65)
  input[0] = 0x01
  input.set(left, 1)
  input.set(right, 33)
  return sha256(input)
}

const isSize = (n: number): boolean => Number.isSafeInteger(n) && n >= 0
const isOdd = (n: number): boolean => n % 2 === 1
const half = (n: number): number => Math.floor(n / 2)

/**
 * RFC 9162 §2.1.3.2: the root implied by an inclusion proof, or undefined when
 * the proof has the wrong shape for (index, treeSize). Sizes are plain numbers
 * (safe integers), so shifts are written as divisions.
 */
export const rootFromInclusionProof = (
  hashNode: NodeHasher,
  leaf: Uint8Array,
  index: number,
  treeSize: number,
  proof: ReadonlyArray<Uint8Array>
): Uint8Array | undefined => {
  if (!isSize(index) || !isSize(treeSize) || index >= treeSize) return undefined
  let fn = index
  let sn = treeSize - 1
  let r = leaf
  for (const p of proof) {
    if (p.length !== 32) return undefined
    if (sn === 0) return undefined
    if (isOdd(fn) || fn === sn) {
      r = hashNode(p, r)
      while (!isOdd(fn) && fn !== 0) {
        fn = half(fn)
        sn = half(sn)
      }
    } else {
      r = hashNode(r, p)
    }
    fn = half(fn)
    sn = half(sn)
  }
  return sn === 0 ? r : undefined
}

export const verifyInclusionWith = (
  hashNode: NodeHasher,
  leaf: Uint8Array,
  index: number,
  treeSize: number,
  proof: ReadonlyArray<Uint8Array>,
  root: Uint8Array
): boolean => {
  if (leaf.length !== 32 || root.length !== 32) return false
  const computed = rootFromInclusionProof(hashNode, leaf, index, treeSize, proof)
  return computed !== undefined && bytesEqual(computed, root)
}

/**
 * RFC 9162 §2.1.4.2. Equal sizes are consistent only with an empty proof and
 * equal roots (the RFC's SUBPROOF yields an empty proof there); size 0 is
 * rejected, as the RFC defines proofs for 0 < first.
 */
export const verifyConsistencyWith = (
  hashNode: NodeHasher,
  firstSize: number,
  secondSize: number,
  proof: ReadonlyArray<Uint8Array>,
  firstRoot: Uint8Array,
  secondRoot: Uint8Array
): boolean => {
  if (!isSize(firstSize) || !isSize(secondSize) || firstSize < 1 || firstSize > secondSize) return false
  if (firstRoot.length !== 32 || secondRoot.length !== 32) return false
  if (proof.some((p) => p.length !== 32)) return false
  if (firstSize === secondSize) return proof.length === 0 && bytesEqual(firstRoot, secondRoot)
  if (proof.length === 0) return false

  // Step 2: when first is a power of two, its root is itself the starting node.
  const path = isPowerOfTwo(firstSize) ? [firstRoot, ...proof] : proof
  let fn = firstSize - 1
  let sn = secondSize - 1
  while (isOdd(fn)) {
    fn = half(fn)
    sn = half(sn)
  }
  let fr = path[0]
  let sr = path[0]
  for (let i = 1; i < path.length; i++) {
    const c = path[i]
    if (sn === 0) return false
    if (isOdd(fn) || fn === sn) {
      fr = hashNode(c, fr)
      sr = hashNode(c, sr)
      while (!isOdd(fn) && fn !== 0) {
        fn = half(fn)
        sn = half(sn)
      }
    } else {
      sr = hashNode(sr, c)
    }
    fn = half(fn)
    sn = half(sn)
  }
  return sn === 0 && bytesEqual(fr, firstRoot) && bytesEqual(sr, secondRoot)
}

const isPowerOfTwo = (n: number): boolean => {
  let value = n
  while (value > 1) {
    if (isOdd(value)) return false
    value = half(value)
  }
  return value === 1
}

/** Inclusion check for auditors: hashes as bytes or hex, as a settlement proof serves them. */
export const verifyInclusion = (
  leaf: HashInput,
  index: number,
  treeSize: number,
  proof: ReadonlyArray<HashInput>,
  root: HashInput
): boolean => {
  try {
    return verifyInclusionWith(nodeHash, hashBytes(leaf), index, treeSize, proof.map(hashBytes), hashBytes(root))
  } catch {
    return false
  }
}

export const verifyConsistency = (
  firstSize: number,
  secondSize: number,
  proof: ReadonlyArray<HashInput>,
  firstRoot: HashInput,
  secondRoot: HashInput
): boolean => {
  try {
    return verifyConsistencyWith(nodeHash, firstSize, secondSize, proof.map(hashBytes), hashBytes(firstRoot), hashBytes(secondRoot))
  } catch {
    return false
  }
}

/**
 * The RFC 9162 root of leaves given one at a time (leaf hashes, in order), holding only the
 * perfect subtrees of the right edge (log2 n hashes), so a large tree needs no array of leaves.
 * No leaves: SHA-256 of the empty string.
 */
export class MerkleRootBuilder {
  private readonly stack: Array<{ hash: Uint8Array; size: number }> = []
  private count = 0

  constructor(private readonly hashNode: NodeHasher = nodeHash) {}

  get size(): number {
    return this.count
  }

  append(leafHashValue: Uint8Array): void {
    let node = { hash: leafHashValue, size: 1 }
    // Equal neighbours merge: the stack stays strictly decreasing powers of two.
    while (this.stack.length > 0 && this.stack[this.stack.length - 1].size === node.size) {
      const left = this.stack.pop()!
      node = { hash: this.hashNode(left.hash, node.hash), size: left.size * 2 }
    }
    this.stack.push(node)
    this.count++
  }

  /** MTH splits at the largest power of two below n, so the right edge folds from the right. */
  root(): Uint8Array {
    if (this.stack.length === 0) return sha256(new Uint8Array(0))
    let hash = this.stack[this.stack.length - 1].hash
    for (let i = this.stack.length - 2; i >= 0; i--) hash = this.hashNode(this.stack[i].hash, hash)
    return hash
  }
}
