/**
 * RFC 9162 (Certificate Transparency v2) Merkle proofs checked in the browser, with SHA-256 from
 * WebCrypto (`crypto.subtle`, also in Node). No DOM: every function takes bytes or wire strings
 * and answers a verdict with its reasons, so this file can be read and tested on its own.
 *
 * How the gateway builds its log (src/settlements/): leaf i is the 32-byte digest of a receipt's
 * `payload_hash` ("sha256:<hex>"), leaves in settlement order; the leaf hash is
 * SHA-256(0x00 || digest), an inner node SHA-256(0x01 || left || right), and the tree is RFC 9162's
 * left-balanced one. One log per organization: a settlement's `merkle_root` is the head of the whole
 * log after it, and its tree size is the sum of the receipt counts of it and every earlier one.
 */

export type Bytes = Uint8Array

export const HASH_SIZE = 32

const toArrayBuffer = (bytes: Bytes): ArrayBuffer => {
  const copy = new Uint8Array(bytes.length)
  copy.set(bytes)
  return copy.buffer
}

export const sha256 = async (data: Bytes): Promise<Bytes> => new Uint8Array(await crypto.subtle.digest("SHA-256", toArrayBuffer(data)))

const joined = (...parts: ReadonlyArray<Bytes>): Bytes => {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0))
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}

const LEAF_PREFIX = Uint8Array.of(0x00)
const NODE_PREFIX = Uint8Array.of(0x01)

/** RFC 9162 §2.1.1: the hash of a leaf is SHA-256(0x00 || leaf). */
export const leafHash = (leaf: Bytes): Promise<Bytes> => sha256(joined(LEAF_PREFIX, leaf))

/** RFC 9162 §2.1.1: an inner node is SHA-256(0x01 || left || right). */
export const nodeHash = (left: Bytes, right: Bytes): Promise<Bytes> => sha256(joined(NODE_PREFIX, left, right))

export const toHex = (bytes: Bytes): string => Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("")

/** "sha256:<64 hex>" (or the bare hex) as 32 bytes; undefined when it is not one. */
export const parseHash = (text: string): Bytes | undefined => {
  const hex = text.startsWith("sha256:") ? text.slice(7) : text
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) return undefined
  const bytes = new Uint8Array(HASH_SIZE)
  for (let i = 0; i < HASH_SIZE; i++) bytes[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16)
  return bytes
}

export const tagged = (bytes: Bytes): string => `sha256:${toHex(bytes)}`

export const sameBytes = (a: Bytes, b: Bytes): boolean => a.length === b.length && a.every((byte, i) => byte === b[i])

const isOdd = (n: number) => n % 2 === 1
const half = (n: number) => Math.floor(n / 2)
const isPowerOfTwo = (n: number) => {
  let power = 1
  while (power < n) power *= 2
  return n > 0 && power === n
}

export type Outcome = { readonly ok: true } | { readonly ok: false; readonly reason: string }

const fail = (reason: string): Outcome => ({ ok: false, reason })

/**
 * The root an inclusion path leads to (RFC 9162 §2.1.3.2), or why the path cannot belong to a
 * tree of this size.
 */
export const rootFromInclusionPath = async (
  leaf: Bytes,
  index: number,
  size: number,
  path: ReadonlyArray<Bytes>
): Promise<{ readonly root: Bytes } | { readonly reason: string }> => {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || size < 1) return { reason: "the leaf index or tree size is not a valid number" }
  if (index >= size) return { reason: `leaf index ${index} is outside a tree of ${size} leaves` }
  let fn = index
  let sn = size - 1
  let hash = leaf
  for (const sibling of path) {
    if (sn === 0) return { reason: `the path has ${path.length} hashes, more than a tree of ${size} leaves needs for leaf ${index}` }
    if (isOdd(fn) || fn === sn) {
      hash = await nodeHash(sibling, hash)
      if (!isOdd(fn)) {
        while (!isOdd(fn) && fn !== 0) {
          fn = half(fn)
          sn = half(sn)
        }
      }
    } else {
      hash = await nodeHash(hash, sibling)
    }
    fn = half(fn)
    sn = half(sn)
  }
  if (sn !== 0) return { reason: `the path has ${path.length} hashes, fewer than a tree of ${size} leaves needs for leaf ${index}` }
  return { root: hash }
}

/** Whether `path` proves that `leaf` (already a leaf hash) is leaf `index` of the tree of `size` leaves with `root`. */
export const verifyInclusion = async (leaf: Bytes, index: number, size: number, path: ReadonlyArray<Bytes>, root: Bytes): Promise<Outcome> => {
  const result = await rootFromInclusionPath(leaf, index, size, path)
  if ("reason" in result) return fail(result.reason)
  if (!sameBytes(result.root, root)) return fail(`the path leads to the root ${tagged(result.root)}, not to ${tagged(root)}`)
  return { ok: true }
}

/**
 * Whether `proof` shows that the tree of `firstSize` leaves with `firstRoot` is a prefix of the tree
 * of `secondSize` leaves with `secondRoot` (RFC 9162 §2.1.4.2): the log only grew.
 */
export const verifyConsistency = async (
  firstSize: number,
  secondSize: number,
  proof: ReadonlyArray<Bytes>,
  firstRoot: Bytes,
  secondRoot: Bytes
): Promise<Outcome> => {
  if (!Number.isSafeInteger(firstSize) || !Number.isSafeInteger(secondSize) || firstSize < 0) return fail("a tree size is not a valid number")
  if (firstSize > secondSize) return fail(`the older tree (${firstSize} leaves) is larger than the newer one (${secondSize})`)
  if (firstSize === secondSize) {
    if (proof.length !== 0) return fail("trees of the same size need an empty proof")
    return sameBytes(firstRoot, secondRoot) ? { ok: true } : fail("two trees of the same size have different roots: the log was rewritten")
  }
  if (firstSize === 0) return proof.length === 0 ? { ok: true } : fail("an empty tree needs an empty proof")
  if (proof.length === 0) return fail("the proof is empty")
  // When the older tree is a complete subtree, its root is the proof's implied first node.
  const nodes = isPowerOfTwo(firstSize) ? [firstRoot, ...proof] : [...proof]
  let fn = firstSize - 1
  let sn = secondSize - 1
  while (isOdd(fn)) {
    fn = half(fn)
    sn = half(sn)
  }
  let older = nodes[0]!
  let newer = nodes[0]!
  for (const node of nodes.slice(1)) {
    if (sn === 0) return fail(`the proof has ${proof.length} hashes, more than growing from ${firstSize} to ${secondSize} leaves needs`)
    if (isOdd(fn) || fn === sn) {
      older = await nodeHash(node, older)
      newer = await nodeHash(node, newer)
      if (!isOdd(fn)) {
        while (!isOdd(fn) && fn !== 0) {
          fn = half(fn)
          sn = half(sn)
        }
      }
    } else {
      newer = await nodeHash(newer, node)
    }
    fn = half(fn)
    sn = half(sn)
  }
  if (sn !== 0) return fail(`the proof has ${proof.length} hashes, fewer than growing from ${firstSize} to ${secondSize} leaves needs`)
  if (!sameBytes(older, firstRoot)) return fail(`the proof rebuilds the older root as ${tagged(older)}, not the signed ${tagged(firstRoot)}`)
  if (!sameBytes(newer, secondRoot)) return fail(`the proof rebuilds the newer root as ${tagged(newer)}, not the signed ${tagged(secondRoot)}`)
  return { ok: true }
}

/* The gateway's wire forms, checked step by step (each step a line the page shows). */

export interface Step {
  readonly name: string
  readonly ok: boolean
  readonly detail: string
}

export interface Report {
  readonly verified: boolean
  readonly steps: ReadonlyArray<Step>
}

const report = (steps: ReadonlyArray<Step>): Report => ({ verified: steps.length > 0 && steps.every((step) => step.ok), steps })

/** `GET /api/v1/settlements/inclusion-proof/{receipt_uuid}` as answered. */
export interface InclusionProofWire {
  readonly settlement_uuid: string
  readonly receipt_uuid: string
  readonly merkle_root: string
  readonly leaf_hash: string
  readonly index: number
  readonly leaf_count: number
  readonly siblings: ReadonlyArray<string>
}

const parseAll = (hashes: ReadonlyArray<string>): Bytes[] | undefined => {
  const parsed: Bytes[] = []
  for (const hash of hashes) {
    const bytes = parseHash(hash)
    if (bytes === undefined) return undefined
    parsed.push(bytes)
  }
  return parsed
}

/**
 * Checks an inclusion proof from what the page knows independently: the receipt's own
 * `payload_hash` (its leaf is recomputed here, not taken from the proof) and the root of the
 * settlement as signed (`signedRoot`, from the settlement record).
 */
export const checkInclusion = async (
  proof: InclusionProofWire,
  receipt: { readonly receipt_uuid: string; readonly payload_hash: string },
  signedRoot: string
): Promise<Report> => {
  const steps: Step[] = []
  if (proof.receipt_uuid !== receipt.receipt_uuid) {
    steps.push({ name: "Receipt", ok: false, detail: `the proof is for receipt ${proof.receipt_uuid}, not ${receipt.receipt_uuid}` })
    return report(steps)
  }
  const digest = parseHash(receipt.payload_hash)
  const claimedLeaf = parseHash(proof.leaf_hash)
  const root = parseHash(signedRoot)
  const siblings = parseAll(proof.siblings)
  if (digest === undefined || claimedLeaf === undefined || root === undefined || siblings === undefined) {
    steps.push({ name: "Proof format", ok: false, detail: "a hash is not of the form sha256:<64 hex digits>" })
    return report(steps)
  }
  const leaf = await leafHash(digest)
  steps.push(
    sameBytes(leaf, claimedLeaf)
      ? { name: "Leaf", ok: true, detail: `SHA-256(0x00 ‖ payload hash) = ${tagged(leaf)}, as the proof states` }
      : { name: "Leaf", ok: false, detail: `SHA-256(0x00 ‖ payload hash) = ${tagged(leaf)}, but the proof states ${proof.leaf_hash}` }
  )
  steps.push(
    proof.merkle_root === signedRoot
      ? { name: "Signed root", ok: true, detail: `the proof's root is the settlement's signed root ${signedRoot}` }
      : { name: "Signed root", ok: false, detail: `the proof's root ${proof.merkle_root} is not the settlement's signed root ${signedRoot}` }
  )
  const path = await rootFromInclusionPath(leaf, proof.index, proof.leaf_count, siblings)
  if ("reason" in path) steps.push({ name: "Audit path", ok: false, detail: path.reason })
  else if (!sameBytes(path.root, root))
    steps.push({ name: "Audit path", ok: false, detail: `leaf ${proof.index} of ${proof.leaf_count} with ${siblings.length} sibling hashes leads to ${tagged(path.root)}, not to the signed root` })
  else steps.push({ name: "Audit path", ok: true, detail: `leaf ${proof.index} of ${proof.leaf_count} with ${siblings.length} sibling hashes leads to the signed root` })
  return report(steps)
}

/** `GET /api/v1/settlements/consistency?from&to` as answered. */
export interface ConsistencyProofWire {
  readonly from: { readonly settlement_uuid: string; readonly tree_size: number; readonly merkle_root: string }
  readonly to: { readonly settlement_uuid: string; readonly tree_size: number; readonly merkle_root: string }
  readonly proof: ReadonlyArray<string>
}

/** A settlement as the page knows it independently: its signed root and the log size after it. */
export interface TreeHead {
  readonly settlement_uuid: string
  readonly tree_size: number
  readonly merkle_root: string
}

/** Checks a consistency proof against the two settlements' signed roots and sizes (`older`, `newer`). */
export const checkConsistency = async (proof: ConsistencyProofWire, older: TreeHead, newer: TreeHead): Promise<Report> => {
  const steps: Step[] = []
  const heads: Array<[string, ConsistencyProofWire["from"], TreeHead]> = [
    ["Older settlement", proof.from, older],
    ["Newer settlement", proof.to, newer]
  ]
  for (const [name, stated, known] of heads) {
    const same = stated.settlement_uuid === known.settlement_uuid && stated.tree_size === known.tree_size && stated.merkle_root === known.merkle_root
    steps.push(
      same
        ? { name, ok: true, detail: `${known.tree_size} leaves, root ${known.merkle_root}, as signed` }
        : { name, ok: false, detail: `the proof states ${stated.tree_size} leaves and root ${stated.merkle_root}; the settlement has ${known.tree_size} leaves and root ${known.merkle_root}` }
    )
  }
  const firstRoot = parseHash(older.merkle_root)
  const secondRoot = parseHash(newer.merkle_root)
  const nodes = parseAll(proof.proof)
  if (firstRoot === undefined || secondRoot === undefined || nodes === undefined) {
    steps.push({ name: "Proof format", ok: false, detail: "a hash is not of the form sha256:<64 hex digits>" })
    return report(steps)
  }
  const outcome = await verifyConsistency(older.tree_size, newer.tree_size, nodes, firstRoot, secondRoot)
  steps.push(
    outcome.ok
      ? { name: "Consistency", ok: true, detail: `${nodes.length} hashes rebuild both signed roots: the ${older.tree_size} older leaves are unchanged in the ${newer.tree_size}` }
      : { name: "Consistency", ok: false, detail: outcome.reason }
  )
  return report(steps)
}

/**
 * The size of the log after each settlement, oldest first: the running sum of receipt counts in
 * sealing order (one log per organization), starting from `base` leaves sealed before the oldest one given.
 */
export const treeSizes = <T extends { readonly receipt_count: number; readonly sealed_at: string }>(
  settlements: ReadonlyArray<T>,
  base = 0
): Array<T & { readonly tree_size: number }> => {
  let size = base
  return [...settlements]
    .sort((a, b) => Date.parse(a.sealed_at) - Date.parse(b.sealed_at))
    .map((settlement) => {
      size += settlement.receipt_count
      return { ...settlement, tree_size: size }
    })
}
