/**
 * Shared wire schemas: identifiers, hashes, signatures, timestamps, pagination.
 */
import * as Schema from "effect/Schema"

export const Sha256Hash = Schema.String.check(Schema.isPattern(/^sha256:[0-9a-f]{64}$/)).annotate({
  description: "`sha256:` followed by 64 lowercase hex digits",
  examples: ["sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"]
})
export const Ed25519Signature = Schema.String.check(Schema.isPattern(/^ed25519:[A-Za-z0-9_-]+$/)).annotate({
  description: "`ed25519:` followed by the base64url (no padding) signature"
})
export const Timestamp = Schema.String.annotate({ description: "ISO 8601 UTC timestamp", examples: ["2026-04-10T11:24:00.000Z"] })
export const NullableTimestamp = Schema.NullOr(Timestamp)

/** Query integers arrive as strings. */
const intFromString = (min: number, max: number) =>
  Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum: min, maximum: max }))

export const PageQuery = {
  page: Schema.optionalKey(intFromString(1, 1_000_000)),
  per_page: Schema.optionalKey(intFromString(1, 100))
}

export const Pagination = Schema.Struct({
  page: Schema.Int,
  per_page: Schema.Int,
  total: Schema.Int,
  has_more: Schema.Boolean
})
export type Pagination = typeof Pagination.Type

export const pagination = (page: number, perPage: number, total: number): Pagination => ({
  page,
  per_page: perPage,
  total,
  has_more: page * perPage < total
})

/**
 * A page of a list as the contract answers it: the spec's key (`policies`, `members`, ...) and
 * `data` with the same array, and `pagination`. Without a key, only `data`.
 */
export const listPage = <T, const K extends string = never>(
  items: ReadonlyArray<T>,
  page: { readonly page: number; readonly perPage: number; readonly total: number },
  key?: K
): { data: Array<T>; pagination: Pagination } & { [P in K]: Array<T> } => {
  const data = [...items]
  const body = { data, pagination: pagination(page.page, page.perPage, page.total) }
  return (key === undefined ? body : { [key]: data, ...body }) as { data: Array<T>; pagination: Pagination } & { [P in K]: Array<T> }
}

export const boundedInt = intFromString
