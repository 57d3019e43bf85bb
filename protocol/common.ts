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

/** A page of a list without a key of its own: `data` and `pagination`. */
export interface Page<T> {
  readonly data: ReadonlyArray<T>
  readonly pagination: Pagination
}

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

/**
 * Offset lists for the release-history routes (CONTRACT "Endpoints named only in release history"):
 * `limit` 1-100 (default 50) and `offset` >= 0 (default 0); `page`/`per_page` are read only when
 * both `limit` and `offset` are absent.
 */
export const OffsetPageQuery = {
  limit: Schema.optionalKey(intFromString(1, 100)),
  offset: Schema.optionalKey(intFromString(0, Number.MAX_SAFE_INTEGER)),
  ...PageQuery
}

export interface OffsetWindow {
  readonly limit: number
  readonly offset: number
}

export const offsetWindow = (query: {
  readonly limit?: number | undefined
  readonly offset?: number | undefined
  readonly page?: number | undefined
  readonly per_page?: number | undefined
}): OffsetWindow => {
  if (query.limit === undefined && query.offset === undefined && (query.page !== undefined || query.per_page !== undefined)) {
    const perPage = query.per_page ?? 50
    return { limit: perPage, offset: ((query.page ?? 1) - 1) * perPage }
  }
  return { limit: query.limit ?? 50, offset: query.offset ?? 0 }
}

/**
 * The offset list answer: `{items, data, total, limit, offset, pagination}` (the SDKs read the first
 * four; `data` and `pagination` meet the contract's list rule). With a key, the same array under it.
 */
export const offsetListPage = <T, const K extends string = never>(
  items: ReadonlyArray<T>,
  window: OffsetWindow,
  total: number,
  key?: K
): {
  items: Array<T>
  data: Array<T>
  total: number
  limit: number
  offset: number
  pagination: Pagination
} & { [P in K]: Array<T> } => {
  const array = [...items]
  const body = {
    items: array,
    data: array,
    total,
    limit: window.limit,
    offset: window.offset,
    pagination: {
      page: Math.floor(window.offset / window.limit) + 1,
      per_page: window.limit,
      total,
      has_more: window.offset + array.length < total
    }
  }
  return (key === undefined ? body : { [key]: array, ...body }) as typeof body & { [P in K]: Array<T> }
}

/** The wire schema of an offset list of `item`. */
export const OffsetList = <S extends Schema.Top>(item: S) =>
  Schema.Struct({
    items: Schema.Array(item),
    data: Schema.Array(item),
    total: Schema.Int,
    limit: Schema.Int,
    offset: Schema.Int,
    pagination: Pagination
  })
