import { createHash, randomBytes } from "node:crypto"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as portable from "../protocol/verifier/merkle.js"
import {
  consistencyProof,
  EMPTY_ROOT,
  inclusionProof,
  leafHash,
  MerkleTree,
  merkleRoot,
  verifyConsistency,
  verifyInclusion
} from "../src/receipts/merkle.js"

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex")
const unhex = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, "hex"))

// RFC 9162 §2.1.1 written literally (recursive, no shortcuts): the reference the
// fast bottom-up implementation must match.
const sha = (...parts: Uint8Array[]): Uint8Array => {
  const hash = createHash("sha256")
  for (const part of parts) hash.update(part)
  return new Uint8Array(hash.digest())
}
const largestPowerOfTwoBelow = (n: number): number => 2 ** Math.floor(Math.log2(n - 1))
const referenceMth = (leaves: Uint8Array[]): Uint8Array => {
  if (leaves.length === 0) return sha()
  if (leaves.length === 1) return sha(Uint8Array.of(0), leaves[0])
  const k = largestPowerOfTwoBelow(leaves.length)
  return sha(Uint8Array.of(1), referenceMth(leaves.slice(0, k)), referenceMth(leaves.slice(k)))
}
const referencePath = (m: number, leaves: Uint8Array[]): Uint8Array[] => {
  if (leaves.length <= 1) return []
  const k = largestPowerOfTwoBelow(leaves.length)
  return m < k
    ? [...referencePath(m, leaves.slice(0, k)), referenceMth(leaves.slice(k))]
    : [...referencePath(m - k, leaves.slice(k)), referenceMth(leaves.slice(0, k))]
}
const referenceSubproof = (m: number, leaves: Uint8Array[], complete: boolean): Uint8Array[] => {
  const n = leaves.length
  if (m === n) return complete ? [] : [referenceMth(leaves)]
  const k = largestPowerOfTwoBelow(n)
  return m <= k
    ? [...referenceSubproof(m, leaves.slice(0, k), complete), referenceMth(leaves.slice(k))]
    : [...referenceSubproof(m - k, leaves.slice(k), false), referenceMth(leaves.slice(0, k))]
}

const makeLeaves = (n: number, seed: number): Uint8Array[] =>
  Array.from({ length: n }, (_, i) => sha(Buffer.from(`leaf ${seed} ${i}`)))

const flipBit = (bytes: Uint8Array, bit: number): Uint8Array => {
  const copy = new Uint8Array(bytes)
  copy[(bit >> 3) % copy.length] ^= 1 << (bit & 7)
  return copy
}

// Certificate Transparency's reference tree (RFC 6962 test data, same hashing in RFC 9162).
const CT_LEAVES = ["", "00", "10", "2021", "3031", "40414243", "5051525354555657", "606162636465666768696a6b6c6d6e6f"].map(unhex)
const CT_ROOTS = [
  "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
  "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
  "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
  "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
  "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
  "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
  "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
  "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328"
]

describe("RFC 9162 known vectors", () => {
  it("root of zero leaves is SHA-256 of the empty string", () => {
    const empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    expect(hex(merkleRoot([]))).toBe(empty)
    expect(hex(EMPTY_ROOT)).toBe(empty)
    expect(hex(new MerkleTree([]).root)).toBe(empty)
  })

  it("matches the CT reference roots for sizes 1..8", () => {
    for (let n = 1; n <= 8; n++) {
      expect(hex(merkleRoot(CT_LEAVES.slice(0, n))), `size ${n}`).toBe(CT_ROOTS[n - 1])
      expect(hex(new MerkleTree(CT_LEAVES.slice(0, n)).root)).toBe(CT_ROOTS[n - 1])
    }
    expect(hex(leafHash(new Uint8Array(0)))).toBe(CT_ROOTS[0])
    expect(hex(portable.leafHash(new Uint8Array(0)))).toBe(CT_ROOTS[0])
  })

  it("produces the CT reference inclusion and consistency proofs", () => {
    expect(inclusionProof(CT_LEAVES, 0).map(hex)).toEqual([
      "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
      "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
      "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"
    ])
    const proof5 = [
      "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
      "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
      "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"
    ]
    expect(inclusionProof(CT_LEAVES, 5).map(hex)).toEqual(proof5)
    expect(portable.verifyInclusion(hex(leafHash(CT_LEAVES[5])), 5, 8, proof5, "sha256:" + CT_ROOTS[7])).toBe(true)

    const consistency6 = [
      "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
      "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
      "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"
    ]
    expect(consistencyProof(CT_LEAVES, 6).map(hex)).toEqual(consistency6)
    expect(consistencyProof(CT_LEAVES, 2).map(hex)).toEqual([
      "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
      "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"
    ])
    expect(portable.verifyConsistency(6, 8, consistency6, CT_ROOTS[5], CT_ROOTS[7])).toBe(true)
    expect(verifyConsistency(6, 8, consistency6.map(unhex), unhex(CT_ROOTS[5]), unhex(CT_ROOTS[7]))).toBe(true)
  })
})

describe("merkle trees against the literal RFC definition", () => {
  it("roots, inclusion paths and consistency proofs equal the recursive reference (sizes 1..70)", () => {
    for (let n = 1; n <= 70; n++) {
      const leaves = makeLeaves(n, n)
      const tree = new MerkleTree(leaves)
      expect(hex(merkleRoot(leaves))).toBe(hex(referenceMth(leaves)))
      expect(hex(tree.root)).toBe(hex(referenceMth(leaves)))
      for (let i = 0; i < n; i++) expect(tree.inclusionProof(i).map(hex)).toEqual(referencePath(i, leaves).map(hex))
      for (let m = 1; m <= n; m++) expect(tree.consistencyProof(m).map(hex)).toEqual(referenceSubproof(m, leaves, true).map(hex))
    }
  })

  it("leaves of any length hash like the reference", () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 80 }), { minLength: 1, maxLength: 40 }), (leaves) => {
        expect(hex(merkleRoot(leaves))).toBe(hex(referenceMth(leaves)))
      })
    )
  })

  it("root computation reuses buffers without leaking state between trees", () => {
    const big = makeLeaves(300, 1)
    const small = makeLeaves(5, 2)
    const expectedSmall = hex(referenceMth(small))
    merkleRoot(big)
    expect(hex(merkleRoot(small))).toBe(expectedSmall)
    expect(hex(merkleRoot(makeLeaves(20_000, 3)))).toBe(hex(new MerkleTree(makeLeaves(20_000, 3)).root))
  })
})

describe("inclusion proofs", () => {
  it("every proof verifies with the server and the portable verifier; a flipped bit fails", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 300 }), fc.nat(), fc.nat(), fc.integer({ min: 0, max: 255 }), (n, rawIndex, seed, bit) => {
        const leaves = makeLeaves(n, seed)
        const tree = new MerkleTree(leaves)
        const index = rawIndex % n
        const leaf = leafHash(leaves[index])
        const proof = tree.inclusionProof(index)
        expect(hex(leaf)).toBe(hex(tree.leafHash(index)))
        expect(verifyInclusion(leaf, index, n, proof, tree.root)).toBe(true)
        expect(portable.verifyInclusion(leaf, index, n, proof, tree.root)).toBe(true)
        expect(portable.verifyInclusion(hex(leaf), index, n, proof.map(hex), hex(tree.root))).toBe(true)

        expect(verifyInclusion(flipBit(leaf, bit), index, n, proof, tree.root)).toBe(false)
        expect(portable.verifyInclusion(leaf, index, n, proof, flipBit(tree.root, bit))).toBe(false)
        if (proof.length > 0) {
          const tampered = proof.map((p, i) => (i === bit % proof.length ? flipBit(p, bit) : p))
          expect(verifyInclusion(leaf, index, n, tampered, tree.root)).toBe(false)
          expect(portable.verifyInclusion(leaf, index, n, tampered, tree.root)).toBe(false)
          expect(verifyInclusion(leaf, index, n, proof.slice(0, -1), tree.root)).toBe(false)
        }
        expect(verifyInclusion(leaf, index, n, [...proof, new Uint8Array(32)], tree.root)).toBe(false)
        expect(portable.verifyInclusion(leaf, index + n, n, proof, tree.root)).toBe(false)
      }),
      { numRuns: 200 }
    )
  })

  it("rejects malformed input instead of throwing", () => {
    const leaves = makeLeaves(8, 0)
    const tree = new MerkleTree(leaves)
    const leaf = leafHash(leaves[3])
    const proof = tree.inclusionProof(3)
    expect(verifyInclusion(leaf, -1, 8, proof, tree.root)).toBe(false)
    expect(verifyInclusion(leaf, 3, 8, proof, tree.root.subarray(0, 31))).toBe(false)
    expect(verifyInclusion(leaf, 3, 8, [proof[0].subarray(1), ...proof.slice(1)], tree.root)).toBe(false)
    expect(portable.verifyInclusion("zz", 3, 8, proof, tree.root)).toBe(false)
    expect(() => tree.inclusionProof(8)).toThrow(RangeError)
  })
})

describe("consistency proofs", () => {
  it("verify for random m ≤ n with both verifiers; a flipped bit fails", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 300 }), fc.nat(), fc.nat(), fc.integer({ min: 0, max: 255 }), (n, rawM, seed, bit) => {
        const leaves = makeLeaves(n, seed)
        const m = 1 + (rawM % n)
        const first = merkleRoot(leaves.slice(0, m))
        const tree = new MerkleTree(leaves)
        const proof = tree.consistencyProof(m)
        expect(verifyConsistency(m, n, proof, first, tree.root)).toBe(true)
        expect(portable.verifyConsistency(m, n, proof, first, tree.root)).toBe(true)
        expect(portable.verifyConsistency(m, n, proof.map(hex), hex(first), hex(tree.root))).toBe(true)

        expect(verifyConsistency(m, n, proof, flipBit(first, bit), tree.root)).toBe(false)
        expect(portable.verifyConsistency(m, n, proof, first, flipBit(tree.root, bit))).toBe(false)
        if (proof.length > 0) {
          const tampered = proof.map((p, i) => (i === bit % proof.length ? flipBit(p, bit) : p))
          expect(verifyConsistency(m, n, tampered, first, tree.root)).toBe(false)
          expect(portable.verifyConsistency(m, n, tampered, first, tree.root)).toBe(false)
        }
        if (m < n) {
          // A different history of the first m leaves is not consistent with this tree.
          const forged = merkleRoot([...leaves.slice(0, m - 1), randomBytes(32)])
          expect(verifyConsistency(m, n, proof, forged, tree.root)).toBe(false)
        }
      }),
      { numRuns: 200 }
    )
  })

  it("handles the degenerate sizes", () => {
    const leaves = makeLeaves(6, 9)
    const root = merkleRoot(leaves)
    expect(verifyConsistency(6, 6, [], root, root)).toBe(true)
    expect(verifyConsistency(6, 6, [], root, merkleRoot(leaves.slice(0, 5)))).toBe(false)
    expect(verifyConsistency(6, 6, [root], root, root)).toBe(false)
    expect(verifyConsistency(7, 6, [], root, root)).toBe(false)
    expect(verifyConsistency(0, 6, [], EMPTY_ROOT, root)).toBe(false)
    expect(verifyConsistency(3, 6, [], merkleRoot(leaves.slice(0, 3)), root)).toBe(false)
    expect(() => consistencyProof(leaves, 0)).toThrow(RangeError)
    expect(() => consistencyProof(leaves, 7)).toThrow(RangeError)
  })
})
