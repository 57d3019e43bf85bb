/**
 * Value conversion for the PGlite client, chosen so that the same query sees
 * the same JavaScript values on PGlite as on `@effect/sql-pg`:
 *
 * - parameters are typed the way sql-pg infers them (boolean → bool, bigint →
 *   int8, integer → int4/int8, other numbers → float8, Date → timestamptz,
 *   Uint8Array → bytea, strings untyped so the server derives the type, arrays
 *   typed by their elements) and sent as text; a plain object is refused, as
 *   sql-pg refuses it (use a jsonb fragment instead);
 * - results are parsed like sql-pg decodes them (int8 → bigint, numeric →
 *   string, date → "YYYY-MM-DD", timestamp/timestamptz → Date, interval →
 *   { months, days, microseconds }, time → bigint microseconds, float4 rounded
 *   to single precision).
 */
import { PgTypes } from "@effect/sql-pg"

const OID = PgTypes.OID

/** A parameter PGlite can bind as-is: its text form and its type (0 = let the server decide). */
export interface EncodedParameters {
  readonly values: Array<string | null>
  readonly types: Array<number>
}

export class ParameterEncodeError extends Error {
  override readonly name = "ParameterEncodeError"
}

const INT32_MIN = -2147483648
const INT32_MAX = 2147483647

const hexOf = (bytes: Uint8Array): string =>
  `\\x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex")}`

type Encoded = readonly [oid: number, text: string | null]

const encodeScalar = (value: unknown): Encoded => {
  if (value === null || value === undefined) return [0, null]
  switch (typeof value) {
    case "boolean":
      return [OID.bool, value ? "t" : "f"]
    case "bigint":
      return [OID.int8, value.toString()]
    case "number":
      if (Number.isInteger(value)) {
        if (value >= INT32_MIN && value <= INT32_MAX) return [OID.int4, String(value)]
        if (Number.isSafeInteger(value)) return [OID.int8, String(value)]
      }
      return [OID.float8, String(value)]
    case "string":
      return [0, value]
  }
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new ParameterEncodeError("Invalid Date parameter")
    return [OID.timestamptz, value.toISOString()]
  }
  if (value instanceof Uint8Array) return [OID.bytea, hexOf(value)]
  if (value instanceof Int8Array) {
    return [OID.bytea, hexOf(new Uint8Array(value.buffer, value.byteOffset, value.byteLength))]
  }
  throw new ParameterEncodeError(`Cannot infer a PostgreSQL type for ${String(value)}`)
}

const quoteArrayElement = (text: string): string => `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`

const encodeArray = (elements: ReadonlyArray<unknown>): Encoded => {
  // An empty array binds untyped, so the server takes the type from the statement.
  if (elements.length === 0) return [0, "{}"]
  let elementOid: number | undefined
  const parts: Array<string> = []
  for (const element of elements) {
    if (Array.isArray(element)) throw new ParameterEncodeError("Nested array parameters are not supported")
    const [scalarOid, text] = encodeScalar(element)
    if (text === null) {
      parts.push("NULL")
      continue
    }
    const oid = scalarOid === 0 ? OID.text : scalarOid
    if (elementOid === undefined) elementOid = oid
    else if (elementOid !== oid) {
      throw new ParameterEncodeError("Array parameter elements must have the same inferred OID")
    }
    parts.push(quoteArrayElement(text))
  }
  if (elementOid === undefined) {
    throw new ParameterEncodeError("Cannot infer the type of an array containing only null values")
  }
  const arrayOid = PgTypes.arrayOidFor(elementOid)
  if (arrayOid === undefined) throw new ParameterEncodeError(`No array type known for element OID ${elementOid}`)
  return [arrayOid, `{${parts.join(",")}}`]
}

/** Parameters built by sql-pg's own helpers (the jsonb fragment, `PgTypes.int8(...)`, ...). */
const encodeTypedParameter = (parameter: PgTypes.Parameter): Encoded => {
  const { oid, value } = parameter
  if (value === null || value === undefined) return [oid, null]
  if (oid === OID.json || oid === OID.jsonb) {
    const text = JSON.stringify(value)
    return [oid, text === undefined ? null : text]
  }
  const [, text] = Array.isArray(value) ? encodeArray(value) : encodeScalar(value)
  return [oid, text]
}

const encodeOne = (value: unknown): Encoded => {
  if (PgTypes.isParameter(value)) return encodeTypedParameter(value)
  return Array.isArray(value) ? encodeArray(value) : encodeScalar(value)
}

/** Throws `ParameterEncodeError` for values sql-pg would refuse too. */
export const encodeParameters = (params: ReadonlyArray<unknown>): EncodedParameters => {
  const values: Array<string | null> = new Array(params.length)
  const types: Array<number> = new Array(params.length)
  for (let index = 0; index < params.length; index++) {
    const [oid, text] = encodeOne(params[index])
    values[index] = text
    types[index] = oid
  }
  return { values, types }
}

// --- results -----------------------------------------------------------------

const parseTimestamptz = (text: string): Date =>
  // "2024-01-01 10:00:00.123456+00" → ISO 8601 with a full "+00:00" offset.
  new Date(text.replace(" ", "T").replace(/([+-]\d\d)$/, "$1:00"))

// timestamp without time zone: sql-pg reads the stored wall clock as UTC.
const parseTimestamp = (text: string): Date => new Date(`${text.replace(" ", "T")}Z`)

const MICROS_PER_SECOND = 1_000_000n

/** "[-]HH:MM:SS[.ffffff]" → signed microseconds. */
const timeToMicros = (sign: string | undefined, h: string, m: string, s: string, fraction: string | undefined) => {
  const whole = (BigInt(h) * 3600n + BigInt(m) * 60n + BigInt(s)) * MICROS_PER_SECOND
  const micros = whole + BigInt((fraction ?? "").padEnd(6, "0").slice(0, 6))
  return sign === "-" ? -micros : micros
}

const TIME_PATTERN = /([+-])?(\d+):(\d\d):(\d\d)(?:\.(\d+))?/

const parseTime = (text: string): bigint => {
  const match = TIME_PATTERN.exec(text)
  if (match === null) throw new Error(`Unrecognised time value: ${text}`)
  return timeToMicros(match[1], match[2], match[3], match[4], match[5])
}

/** timetz: sql-pg always writes the zone as ±HH:MM ("04:05:06+02" → "04:05:06+02:00"). */
const parseTimetz = (text: string): string =>
  text.replace(/([+-])(\d\d)(?::(\d\d))?(?::\d\d)?$/, (_, sign: string, hours: string, minutes?: string) =>
    `${sign}${hours}:${minutes ?? "00"}`
  )

/** Parses the default ("postgres") IntervalStyle output into sql-pg's interval shape. */
export const parseInterval = (text: string): PgTypes.Interval => {
  let months = 0
  let days = 0
  for (const match of text.matchAll(/([+-]?\d+) (year|mon|day)s?/g)) {
    const amount = Number(match[1])
    if (match[2] === "year") months += amount * 12
    else if (match[2] === "mon") months += amount
    else days += amount
  }
  const time = TIME_PATTERN.exec(text)
  const microseconds = time === null ? 0n : timeToMicros(time[1], time[2], time[3], time[4], time[5])
  return { months, days, microseconds }
}

/** PGlite `parsers` option: text → the values sql-pg's binary decoders produce. */
export const resultParsers: Record<number, (text: string) => unknown> = {
  [OID.int8]: (text) => BigInt(text),
  [OID.float4]: (text) => Math.fround(Number.parseFloat(text)),
  [OID.date]: (text) => text,
  [OID.time]: parseTime,
  [OID.timetz]: parseTimetz,
  [OID.timestamp]: parseTimestamp,
  [OID.timestamptz]: parseTimestamptz,
  [OID.interval]: parseInterval
}
