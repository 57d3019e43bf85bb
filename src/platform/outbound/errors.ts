import { Data } from "effect"

export type OutboundErrorKind =
  | "invalid_url"
  | "scheme_not_allowed"
  | "address_not_allowed"
  | "dns_failed"
  | "connect_timeout"
  | "timeout"
  | "response_too_large"
  | "network"

/**
 * Every failure of the outbound client. A plain `Error` as well, so promise
 * callers can `catch` it; `_tag` "OutboundError" for `Effect.catchTag`.
 */
export class OutboundError extends Data.TaggedError("OutboundError")<{
  readonly kind: OutboundErrorKind
  readonly message: string
}> {}

export const outboundError = (kind: OutboundErrorKind, message: string): OutboundError =>
  new OutboundError({ kind, message })
