/** Why a sanitize request was refused. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidInput } from "../platform/domain-error.js"

export class SanitizeError extends Schema.TaggedError<SanitizeError>()("SanitizeError", {
  reason: Schema.Union([InvalidInput])
}) {}

export const refuse = (reason: SanitizeError["reason"]) => Effect.fail(new SanitizeError({ reason }))
