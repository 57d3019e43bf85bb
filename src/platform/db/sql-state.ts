/**
 * Maps a PostgreSQL error (anything carrying a SQLSTATE `code`) to the same
 * `effect/sql` error reasons that `@effect/sql-pg` produces, so code that
 * matches on `reason._tag` behaves identically on PGlite and on Postgres.
 */
import {
  AuthenticationError,
  AuthorizationError,
  ConnectionError,
  ConstraintError,
  DeadlockError,
  LockTimeoutError,
  SerializationError,
  SqlError,
  type SqlErrorReason,
  SqlSyntaxError,
  StatementTimeoutError,
  UniqueViolation,
  UnknownError
} from "effect/sql/SqlError"

const stringField = (value: unknown, key: string): string | undefined => {
  if (typeof value !== "object" || value === null || !(key in value)) return undefined
  const field = (value as Record<string, unknown>)[key]
  return typeof field === "string" ? field : undefined
}

export const sqlStateOf = (cause: unknown): string | undefined => stringField(cause, "code")

export const classifySqlState = (cause: unknown, message: string, operation: string): SqlErrorReason => {
  const props = { cause, message, operation }
  const code = sqlStateOf(cause)
  if (code === undefined) return new UnknownError(props)
  if (code.startsWith("08")) return new ConnectionError(props)
  if (code.startsWith("28")) return new AuthenticationError(props)
  if (code === "42501") return new AuthorizationError(props)
  if (code.startsWith("42")) return new SqlSyntaxError(props)
  if (code === "23505") {
    const constraint = stringField(cause, "constraint")?.trim()
    return new UniqueViolation({ ...props, constraint: constraint ? constraint : "unknown" })
  }
  if (code.startsWith("23")) return new ConstraintError(props)
  if (code === "40P01") return new DeadlockError(props)
  if (code === "40001") return new SerializationError(props)
  if (code === "55P03") return new LockTimeoutError(props)
  if (code === "57014") return new StatementTimeoutError(props)
  return new UnknownError(props)
}

export const sqlErrorFrom = (cause: unknown, message: string, operation: string): SqlError =>
  new SqlError({ reason: classifySqlState(cause, message, operation) })
