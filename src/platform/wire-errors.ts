/**
 * The handler edge: an area's domain error carries one of its reasons, and each reason is a
 * refusal of the wire contract with its own status and code (`protocol/errors.ts`). The edge lets
 * the reasons through as the endpoint's declared errors; the endpoint's `error` list is what the
 * type checker holds them to, so a reason an endpoint does not declare does not compile.
 */
import * as Effect from "effect/Effect"
import { type BadRequest, type Conflict, Forbidden, type Gone, type NotFound, type ServiceUnavailable, TooManyRequests, Unauthorized, type Unprocessable } from "../../protocol/errors.js"
import type { Reason } from "./domain-error.js"

type ReasonOf<E, K extends string> = E extends { readonly _tag: K; readonly reason: infer Reason } ? Reason : never

/**
 * `service.call(...).pipe(refusals("WebhooksError", "WebhookNotFound"))`: the listed reasons of the
 * area error fail as themselves (the endpoint declares them); any other reason is a defect, since
 * the endpoint promised not to answer it.
 */
export const refusals =
  <const K extends string, const Answered extends string>(tag: K, ...answered: ReadonlyArray<Answered>) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, { readonly _tag: K }> | Extract<ReasonOf<E, K>, { readonly _tag: Answered }>, R> => {
    const cases = Object.fromEntries(answered.map((reasonTag) => [reasonTag, (reason: unknown) => Effect.fail(reason)]))
    return Effect.catchReasons(effect as Effect.Effect<A, { readonly _tag: string; readonly reason: { readonly _tag: string } }, R>, tag as never, cases, (_reason, error) =>
      Effect.die(error)
    ) as Effect.Effect<A, never, R>
  }

/* TRANSITIONAL (issue 28): the old answer tables, removed once every area declares its refusals. */

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
