/**
 * `SqlSchema`'s finders, with one difference: a row that does not decode is a defect naming the
 * row (`UndecodableRow` with its `id`, `uuid` or `org_uuid`), not a failure the caller could take
 * for an answer. The whole result decodes at once as before; only a failing result is decoded
 * row by row to find the culprit.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlSchema } from "effect/sql"
import { UndecodableRow } from "./store.js"

const rowIdOf = (row: unknown): string | undefined => {
  if (row === null || typeof row !== "object") return undefined
  const { id, uuid, org_uuid } = row as Record<string, unknown>
  const found = id ?? uuid ?? org_uuid
  return typeof found === "string" || typeof found === "number" || typeof found === "bigint" ? String(found) : undefined
}

const decodeRows = <Res extends Schema.Constraint>(Result: Res) => {
  const decodeAll = Schema.decodeUnknownEffect(Schema.mutable(Schema.Array(Result)))
  const decodeOne = Schema.decodeUnknownExit(Result as unknown as Schema.Codec<unknown, unknown>)
  return (rows: ReadonlyArray<unknown>) =>
    Effect.catchTag(decodeAll(rows), "SchemaError", (error) => {
      const culprit = rows.find((row) => decodeOne(row)._tag === "Failure")
      return Effect.die(new UndecodableRow(rowIdOf(culprit), error))
    })
}

interface Options<Req extends Schema.Constraint, Res extends Schema.Constraint, E, R> {
  readonly Request: Req
  readonly Result: Res
  readonly execute: (request: Req["Encoded"]) => Effect.Effect<ReadonlyArray<unknown>, E, R>
}

export const findAll = <Req extends Schema.Constraint, Res extends Schema.Constraint, E, R>(options: Options<Req, Res, E, R>) => {
  const encodeRequest = Schema.encodeEffect(options.Request)
  const decode = decodeRows(options.Result)
  return (request: Req["Type"]) => Effect.flatMap(Effect.flatMap(encodeRequest(request), options.execute), decode)
}

export const findOneOption = <Req extends Schema.Constraint, Res extends Schema.Constraint, E, R>(options: Options<Req, Res, E, R>) => {
  const find = findAll(options)
  return (request: Req["Type"]) => Effect.map(find(request), (rows) => Option.fromNullishOr(rows[0] as Res["Type"] | undefined))
}

/** The first row; none fails with `NoSuchElementError`, as `SqlSchema.findOne`. */
export const findOne = <Req extends Schema.Constraint, Res extends Schema.Constraint, E, R>(options: Options<Req, Res, E, R>) => {
  const find = findAll(options)
  return (request: Req["Type"]) =>
    Effect.flatMap(find(request), (rows) => (rows.length === 0 ? Effect.fail(new Cause.NoSuchElementError()) : Effect.succeed(rows[0] as Res["Type"])))
}

const void_ = SqlSchema.void

export { void_ as void }
