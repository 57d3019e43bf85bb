/** Identifiers: the spec's prefixed ids (`act_`, `pol_`, `rct_`, …) and plain UUIDs. */
import { randomFillSync, randomUUID } from "node:crypto"

const POOL_BYTES = 8192
const pool = Buffer.alloc(POOL_BYTES)
let poolOffset = POOL_BYTES

/**
 * `length` fresh bytes from the system CSPRNG, drawn from a pool refilled 8 KB at a time (one
 * system call per ~340 ids instead of one per id: it showed in the authorize profile). Each byte
 * is handed out once; the view is valid until the next call, so copy what you keep.
 */
export const randomView = (length: number): Buffer => {
  if (length > POOL_BYTES) return randomFillSync(Buffer.alloc(length))
  if (poolOffset + length > POOL_BYTES) {
    randomFillSync(pool)
    poolOffset = 0
  }
  const view = pool.subarray(poolOffset, poolOffset + length)
  poolOffset += length
  return view
}

const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"

/** `prefix_` + 24 random base36 characters (~124 bits). */
export const newId = (prefix: string): string => {
  const bytes = randomView(24)
  let out = `${prefix}_`
  for (let i = 0; i < 24; i++) out += alphabet[bytes[i]! % 36]
  return out
}

export const newUuid = (): string => randomUUID()

/** Crockford base32 (no I, L, O, U): approval codes people type. */
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
export const newCrockfordCode = (length: number): string => {
  const bytes = randomView(length)
  let out = ""
  for (let i = 0; i < length; i++) out += crockford[bytes[i]! & 31]
  return out
}
