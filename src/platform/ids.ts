/** Identifiers: the spec's prefixed ids (`act_`, `pol_`, `rct_`, …) and plain UUIDs. */
import { randomBytes, randomUUID } from "node:crypto"

const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"

/** `prefix_` + 24 random base36 characters (~124 bits). */
export const newId = (prefix: string): string => {
  const bytes = randomBytes(24)
  let out = `${prefix}_`
  for (let i = 0; i < 24; i++) out += alphabet[bytes[i]! % 36]
  return out
}

export const newUuid = (): string => randomUUID()

/** Crockford base32 (no I, L, O, U): approval codes people type. */
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
export const newCrockfordCode = (length: number): string => {
  const bytes = randomBytes(length)
  let out = ""
  for (let i = 0; i < length; i++) out += crockford[bytes[i]! & 31]
  return out
}
