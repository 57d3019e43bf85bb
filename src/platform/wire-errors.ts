/**
 * The handler edge: turns an area's domain error into the wire error its endpoint declares.
 * A reason the handler does not list is a defect (500 with its cause logged): the endpoint
 * promised not to answer it.
 */
import * as Effect from "effect/Effect"
import { type BadRequest, type Conflict, Forbidden, type Gone, type NotFound, type ServiceUnavailable, TooManyRequests, Unauthorized, type Unprocessable } from "../../protocol/errors.js"
import type { Reason } from "./domain-error.js"

type WireError =
  | typeof BadRequest
  | typeof Unauthorized
  | typeof Forbidden
  | typeof NotFound
  | typeof Conflict
  | typeof Gone
  | typeof Unprocessable
  | typeof TooManyRequests
  | typeof ServiceUnavailable

/** Access and rate errors repeat the text as `error`; the others always carry `details`. */
const accessStyle = new Set<WireError>([Unauthorized, Forbidden, TooManyRequests])

export const toWire = (Wire: WireError, reason: Reason) =>
  accessStyle.has(Wire)
    ? new Wire({ code: reason.code, message: reason.message, error: reason.message, ...(reason.details ? { details: reason.details } : {}) })
    : new Wire({ code: reason.code, message: reason.message, details: reason.details ?? {} })

/**
 * `service.call(...).pipe(answer({ EntryNotFound: NotFound, AlreadyResolved: Conflict }))`
 */
export const answer =
  <const Table extends Readonly<Record<string, WireError>>>(table: Table) =>
  <A, E extends { readonly reason: Reason }, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, InstanceType<Table[keyof Table]>, R> =>
    Effect.catch(effect, (error) => {
      const Wire = table[error.reason._tag]
      return Wire === undefined ? Effect.die(error) : Effect.fail(toWire(Wire, error.reason) as InstanceType<Table[keyof Table]>)
    })
