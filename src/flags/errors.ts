/** Why a feature-flag operation was refused: the area's one error, whose reasons are the wire's refusals. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { FlagExists, FlagNotFound } from "../../protocol/flags.js"
import { Reasons } from "../platform/domain-error.js"

export { FlagExists, FlagNotFound }

export class FlagsError extends Schema.TaggedError<FlagsError>()("FlagsError", {
  reason: Reasons([FlagNotFound, FlagExists])
}) {}

export const refuse = (reason: FlagsError["reason"]) => Effect.fail(new FlagsError({ reason }))
