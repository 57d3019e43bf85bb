/**
 * How a middleware answers without an effect when it needs nothing that waits (a cached
 * credential, an in-process rate limit): the compiled routes call it first and run the
 * middleware's effect only when it returns undefined (a cache miss, Redis, a refusal that
 * must be counted). Middleware outside the gateway need not know about it.
 */
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type { HttpServerRequest } from "effect/http/HttpServerRequest"
import type { HttpServerResponse } from "effect/http/HttpServerResponse"

/** Let the request through with one service provided to the handler, or answer it now. */
export type SyncOutcome =
  | { readonly _tag: "Provide"; readonly key: Context.Key<any, any>; readonly value: unknown }
  | { readonly _tag: "Respond"; readonly response: HttpServerResponse }

/** A plain middleware's synchronous path (a property of the middleware function). */
export const syncMiddleware: unique symbol = Symbol.for("gateway/syncMiddleware")
export type SyncMiddleware = (request: HttpServerRequest) => SyncOutcome | undefined

/** A security middleware's synchronous paths, by scheme name (a property of the service). */
export const syncSecurity: unique symbol = Symbol.for("gateway/syncSecurity")
export type SyncSecurity = (credential: string, request: HttpServerRequest) => SyncOutcome | undefined

export const provide = <I, S>(key: Context.Key<I, S>, value: S): SyncOutcome => ({ _tag: "Provide", key, value })
export const respond = (response: HttpServerResponse): SyncOutcome => ({ _tag: "Respond", response })

/** An outcome carried out on the middleware's inner effect: the answer, or the handler with the service. */
export const runOutcome = <A, E, R>(outcome: SyncOutcome, handler: Effect.Effect<A, E, R>): Effect.Effect<A | HttpServerResponse, E, any> =>
  outcome._tag === "Respond" ? Effect.succeed(outcome.response) : Effect.provideService(handler, outcome.key, outcome.value)
