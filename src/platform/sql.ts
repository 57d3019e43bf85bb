/** Small helpers shared by every store: timestamps and counts as the wire wants them. */
import * as Effect from "effect/Effect"
import type { SqlClient } from "effect/sql"

export type Sql = SqlClient.SqlClient

/** ISO 8601 UTC, or null. Both drivers return timestamptz as Date; be lenient with strings. */
export const iso = (value: unknown): string | null => {
  if (value === null || value === undefined) return null
  if (value instanceof Date) return value.toISOString()
  return new Date(String(value)).toISOString()
}

export const isoRequired = (value: unknown): string => iso(value) ?? new Date(0).toISOString()

/** COUNT(*) comes back as bigint (int8); the wire wants a number. */
export const count = (value: unknown): number => Number(value ?? 0)

/** jsonb arrives parsed on both drivers; strings are parsed defensively. */
export const jsonValue = <A>(value: unknown, fallback: A): A => {
  if (value === null || value === undefined) return fallback
  if (typeof value === "string") {
    try {
      return JSON.parse(value) as A
    } catch {
      return fallback
    }
  }
  return value as A
}

export const offset = (page: number, perPage: number) => (page - 1) * perPage

/** True for a unique-constraint violation on either backend. */
export const isUniqueViolation = (error: unknown): boolean =>
  (error as { reason?: { _tag?: string } } | undefined)?.reason?._tag === "UniqueViolation"

/**
 * Base tables with an `org_uuid` column: where an organization's rows live
 * (read from the catalogue, so a table added later is included).
 */
export const organizationTables = (sql: Sql) =>
  sql<{ table_name: string }>`
    SELECT c.table_name FROM information_schema.columns c
    JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
    WHERE c.table_schema = current_schema() AND c.column_name = 'org_uuid'
      AND t.table_type = 'BASE TABLE' AND c.table_name <> 'organizations'
    ORDER BY c.table_name`.pipe(Effect.map((rows) => rows.map((row) => row.table_name)))
