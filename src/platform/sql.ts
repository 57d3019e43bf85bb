/** Small helpers shared by every store: paging, and where an organization's rows live. */
import * as Effect from "effect/Effect"
import type { SqlClient } from "effect/sql"

export type Sql = SqlClient.SqlClient

export const offset = (page: number, perPage: number) => (page - 1) * perPage

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
