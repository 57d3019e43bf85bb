/**
 * Column schemas for `SqlSchema` row decoding: what the drivers hand back (Date, bigint, parsed or
 * textual jsonb) decoded to what the wire wants, with the same leniency as the helpers in `sql.ts`.
 */
import * as Schema from "effect/Schema"
import * as SchemaTransformation from "effect/SchemaTransformation"
import { count, iso, isoRequired, jsonValue } from "./sql.js"

const fromColumn = <To extends Schema.Top>(to: To, decode: (value: unknown) => To["Encoded"]) =>
  Schema.Unknown.pipe(Schema.decodeTo(to, SchemaTransformation.transform({ decode, encode: (value: To["Encoded"]): unknown => value })))

/** timestamptz as ISO 8601 UTC (the epoch when null, as `isoRequired`). */
export const Timestamp = fromColumn(Schema.String, isoRequired)
export const NullableTimestamp = fromColumn(Schema.NullOr(Schema.String), iso)

/** int8 (COUNT(*), bigint columns) as a number. */
export const Count = fromColumn(Schema.Number, count)
export const NullableCount = fromColumn(Schema.NullOr(Schema.Number), (value) => (value === null || value === undefined ? null : count(value)))

/** A bigserial id (int8 arrives as a string or bigint), to order by. */
export const Serial = fromColumn(Schema.BigInt, (value) => BigInt(value as string | number | bigint))

/** A jsonb column checked against `schema`; `fallback` when null or unparseable. */
export const Json = <S extends Schema.Top>(schema: S, fallback: S["Encoded"]) => fromColumn(schema, (value) => jsonValue(value, fallback))
