/**
 * The handler edge: an area's domain error carries one of its reasons, and each reason is a
 * refusal of the wire contract with its own status and code (`protocol/errors.ts`). The edge lets
 * the reasons through as the endpoint's declared errors; the endpoint's `error` list is what the
 * type checker holds them to, so a reason an endpoint does not declare does not compile.
 */
import * as Effect from "effect/Effect"

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
