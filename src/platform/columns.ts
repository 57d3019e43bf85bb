/**
 * Column schemas for `SqlSchema` row decoding: what the driver hands back (Date, bigint, parsed or
 * textual jsonb) decoded to what the wire wants. Strict: NULL where a column is required, an
 * unparseable value or a shape that does not match fails the decode, and the store turns that
 * into a defect naming the row (`db/store.ts`). Nullable columns say so with the `Nullable*` forms.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import * as SchemaIssue from "effect/SchemaIssue"

const refuse = (actual: unknown, message: string) => Effect.fail(new SchemaIssue.InvalidValue({ message }, actual))

const toIso = (value: Date | string) => {
  const date = value instanceof Date ? value : new Date(value)
  return Number.isNaN(date.getTime()) ? refuse(value, "not a timestamp") : Effect.succeed(date.toISOString())
}

/** timestamptz (a Date; text when cast) as ISO 8601 UTC. */
export const Timestamp = Schema.Union([Schema.Date, Schema.String]).pipe(
  Schema.decodeTo(Schema.String, { decode: SchemaGetter.transformEffect(toIso), encode: SchemaGetter.transform((iso: string) => iso) })
)
export const NullableTimestamp = Schema.NullOr(Timestamp)

const toNumber = (value: number | bigint | string) => {
  const number = Number(value)
  return Number.isFinite(number) && (typeof value !== "string" || value.trim() !== "") ? Effect.succeed(number) : refuse(value, "not a number")
}

/** int8 and numeric (COUNT(*), SUM, bigint columns; a bigint or a string from the driver) as a number. */
export const Count = Schema.Union([Schema.Number, Schema.BigInt, Schema.String]).pipe(
  Schema.decodeTo(Schema.Number, { decode: SchemaGetter.transformEffect(toNumber), encode: SchemaGetter.transform((n: number) => n) })
)
export const NullableCount = Schema.NullOr(Count)

const toBigInt = (value: number | bigint | string) => {
  try {
    return Effect.succeed(BigInt(value))
  } catch {
    return refuse(value, "not an integer")
  }
}

/** A bigserial id (int8 arrives as a string or bigint), to order by. */
export const Serial = Schema.Union([Schema.Number, Schema.BigInt, Schema.String]).pipe(
  Schema.decodeTo(Schema.BigInt, { decode: SchemaGetter.transformEffect(toBigInt), encode: SchemaGetter.transform((n: bigint) => n) })
)

const parsed = (value: unknown) => {
  if (typeof value !== "string") return Effect.succeed(value)
  try {
    return Effect.succeed(JSON.parse(value) as unknown)
  } catch {
    return refuse(value, "not JSON")
  }
}

/**
 * A jsonb column checked against `schema` (parsed by the driver, or text when cast). NULL is not
 * a value here: write `NullableJson`, or COALESCE in the query where the wire wants a default.
 */
export const Json = <S extends Schema.Top>(schema: S) =>
  Schema.Unknown.check(Schema.makeFilter((value) => (value === null || value === undefined ? "a JSON value, not NULL" : undefined))).pipe(
    Schema.decodeTo(schema, {
      decode: SchemaGetter.transformEffect((value: unknown) => parsed(value) as Effect.Effect<S["Encoded"], SchemaIssue.Issue>),
      encode: SchemaGetter.transform((value: S["Encoded"]): unknown => value)
    })
  )
export const NullableJson = <S extends Schema.Top>(schema: S) => Schema.NullOr(Json(schema))

/** A JSON object column (`details`, `payload`, `context` …). */
export const JsonObject = Json(Schema.Record(Schema.String, Schema.Unknown))
