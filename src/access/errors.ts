/** Why authentication refused a credential. The edge checks of `guards.ts` answer wire errors directly. */
import * as Schema from "effect/Schema"

export class InvalidCredential extends Schema.TaggedError<InvalidCredential>()("InvalidCredential", {}) {
  readonly code = "UNAUTHORIZED"
  override readonly message = "Missing, invalid or revoked credentials"
}

export class AccessError extends Schema.TaggedError<AccessError>()("AccessError", { reason: Schema.Union([InvalidCredential]) }) {}
