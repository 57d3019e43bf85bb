/** Why authentication refused a credential. The edge checks of `guards.ts` answer wire errors directly. */
import * as Schema from "effect/Schema"

export class InvalidCredential extends Schema.TaggedError<InvalidCredential>()("InvalidCredential", {}) {
  readonly code = "UNAUTHORIZED"
  override readonly message = "Missing, invalid or revoked credentials"
}

/** The rate-limit state a refusal answers with (the fields of `RateLimitResult`), for the 429's headers. */
const LimitState = Schema.Struct({
  allowed: Schema.Boolean,
  limit: Schema.Number,
  remaining: Schema.Number,
  resetMs: Schema.Number,
  retryAfterSeconds: Schema.Number,
  windowMs: Schema.Number
})

/** The client address, or the key prefix, is past its budget of failed authentications: the credential was not checked. */
export class CredentialsThrottled extends Schema.TaggedError<CredentialsThrottled>()("CredentialsThrottled", {
  by: Schema.Literals(["address", "key_prefix"]),
  state: LimitState
}) {
  readonly code = "RATE_LIMIT_EXCEEDED"
  override readonly message = `Too many failed authentications ${this.by === "address" ? "from this address" : "with this key prefix"}; retry in ${this.state.retryAfterSeconds} s`
}

export class AccessError extends Schema.TaggedError<AccessError>()("AccessError", { reason: Schema.Union([InvalidCredential, CredentialsThrottled]) }) {}
