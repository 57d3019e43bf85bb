/** Why a feature-flag operation was refused. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

export class FlagNotFound extends Schema.TaggedError<FlagNotFound>()("FlagNotFound", { key: Schema.String }) {
  readonly code = "NOT_FOUND"
  override readonly message = `Feature flag ${this.key} not found`
  readonly details = { key: this.key }
}

export class FlagExists extends Schema.TaggedError<FlagExists>()("FlagExists", { key: Schema.String }) {
  readonly code = "FLAG_EXISTS"
  override readonly message = `Feature flag ${this.key} already exists`
  readonly details = { key: this.key }
}

export class FlagsError extends Schema.TaggedError<FlagsError>()("FlagsError", {
  reason: Schema.Union([FlagNotFound, FlagExists])
}) {}

export const refuse = (reason: FlagsError["reason"]) => Effect.fail(new FlagsError({ reason }))
