/**
 * RFC 9162 §2.1 written out again from the RFC's text, for tests only: it
 * shares no code with the service or the portable verifier, so a mistake
 * there cannot hide by being repeated here.
 */
import { createHash } from "node:crypto"

const hash = (...parts: Uint8Array[]): Buffer => {
  const digest = createHash("sha256")
  for (const part of parts) digest.update(part)
  return digest.digest()
}

/** MTH of a list of leaves (the leaf inputs, not their hashes), by the recursive definition. */
export const mth = (leaves: ReadonlyArray<Uint8Array>): Buffer => {
  if (leaves.length === 0) return hash()
  if (leaves.length === 1) return hash(Buffer.from([0]), leaves[0])
  let k = 1
  while (k * 2 < leaves.length) k *= 2
  return hash(Buffer.from([1]), mth(leaves.slice(0, k)), mth(leaves.slice(k)))
}

export const leafHashOf = (leaf: Uint8Array): Buffer => hash(Buffer.from([0]), leaf)

const lsb = (n: number) => n % 2 === 1
const shift = (n: number) => Math.floor(n / 2)
const equal = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b))

/** §2.1.3.2, step by step. `leafHash` is the hash of the leaf (0x00-prefixed). */
export const verifyInclusionRfc = (leafHash: Uint8Array, leafIndex: number, treeSize: number, path: ReadonlyArray<Uint8Array>, root: Uint8Array): boolean => {
  if (leafIndex >= treeSize) return false
  let fn = leafIndex
  let sn = treeSize - 1
  let r: Uint8Array = leafHash
  for (const p of path) {
    if (sn === 0) return false
    if (lsb(fn) || fn === sn) {
      r = hash(Buffer.from([1]), p, r)
      if (!lsb(fn)) {
        while (!lsb(fn) && fn !== 0) {
          fn = shift(fn)
          sn = shift(sn)
        }
      }
    } else {
      r = hash(Buffer.from([1]), r, p)
    }
    fn = shift(fn)
    sn = shift(sn)
  }
  return sn === 0 && equal(r, root)
}

/** §2.1.4.2, step by step, for first < second. */
export const verifyConsistencyRfc = (first: number, second: number, path: ReadonlyArray<Uint8Array>, firstHash: Uint8Array, secondHash: Uint8Array): boolean => {
  if (path.length === 0) return false
  let steps = [...path]
  if ((first & (first - 1)) === 0) steps = [firstHash, ...steps]
  let fn = first - 1
  let sn = second - 1
  while (lsb(fn)) {
    fn = shift(fn)
    sn = shift(sn)
  }
  let fr: Uint8Array = steps[0]
  let sr: Uint8Array = steps[0]
  for (const c of steps.slice(1)) {
    if (sn === 0) return false
    if (lsb(fn) || fn === sn) {
      fr = hash(Buffer.from([1]), c, fr)
      sr = hash(Buffer.from([1]), c, sr)
      if (!lsb(fn)) {
        while (!lsb(fn) && fn !== 0) {
          fn = shift(fn)
          sn = shift(sn)
        }
      }
    } else {
      sr = hash(Buffer.from([1]), sr, c)
    }
    fn = shift(fn)
    sn = shift(sn)
  }
  return equal(fr, firstHash) && equal(sr, secondHash) && sn === 0
}
