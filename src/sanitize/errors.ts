/** Why a sanitize request was refused: the area's one error, whose reasons are the wire's refusals. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidInput } from "../../protocol/errors.js"
import { Reasons } from "../platform/domain-error.js"

export class SanitizeError extends Schema.TaggedError<SanitizeError>()("SanitizeError", {
  reason: Reasons([InvalidInput])
}) {}

export const refuse = (reason: SanitizeError["reason"]) => Effect.fail(new SanitizeError({ reason }))
