/**
 * The database boundary of every store: a SQL failure or a row that does not decode is a defect
 * (the caller cannot act on it; it surfaces as a 500 with its cause logged and a `request_id`),
 * said once per store by wrapping its methods, instead of at each call site. The finders of
 * `rows.ts` name the row that did not decode.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { type SqlClient, SqlError } from "effect/sql"

/** What a store may fail with that is the database's fault, not the caller's. */
type Infrastructure = SqlError.SqlError | Schema.SchemaError

type Defected<M> = {
  readonly [K in keyof M]: M[K] extends SqlClient.SqlClient
    ? M[K]
    : M[K] extends (...args: infer Args) => Effect.Effect<infer A, infer E, infer R>
    ? (...args: Args) => Effect.Effect<A, Exclude<E, Infrastructure>, R>
    : M[K] extends Effect.Effect<infer A, infer E, infer R>
      ? Effect.Effect<A, Exclude<E, Infrastructure>, R>
      : M[K]
}

/** A row the database returned that the store's schema refuses. */
export class UndecodableRow extends Error {
  constructor(
    readonly rowId: string | undefined,
    override readonly cause: Schema.SchemaError
  ) {
    super(`A row${rowId === undefined ? "" : ` (id ${rowId})`} did not decode: ${cause.message}`)
    this.name = "UndecodableRow"
  }
}

const asDefect = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, Infrastructure>, R> =>
  Effect.catchIf(
    effect,
    (error): error is Extract<E, Infrastructure> => SqlError.isSqlError(error) || Schema.isSchemaError(error),
    (error) => (Schema.isSchemaError(error) ? Effect.die(new UndecodableRow(undefined, error)) : Effect.die(error))
  ) as Effect.Effect<A, Exclude<E, Infrastructure>, R>

/**
 * A store whose methods (and effect members) fail only with what the domain can act on. A
 * `SqlClient` handed out for transactions passes through as it is.
 */
export const sqlDefects = <M extends Record<string, unknown>>(methods: M): Defected<M> => {
  const out: Record<string, unknown> = {}
  for (const [key, member] of Object.entries(methods)) {
    if (typeof member === "function" && "withTransaction" in member) out[key] = member
    else if (typeof member === "function") out[key] = (...args: Array<unknown>) => {
      const result = (member as (...a: Array<unknown>) => unknown)(...args)
      return Effect.isEffect(result) ? asDefect(result) : result
    }
    else out[key] = Effect.isEffect(member) ? asDefect(member) : member
  }
  return out as Defected<M>
}

/** True for a unique-constraint violation, whichever statement raised it. */
export const isUniqueViolation = (error: unknown): boolean => SqlError.isSqlError(error) && error.reason._tag === "UniqueViolation"

/** For tests: is this failure the defect `sqlDefects` makes of an undecodable row? */
export const isUndecodableRow = (cause: Cause.Cause<unknown>) => Cause.squash(cause) instanceof UndecodableRow
