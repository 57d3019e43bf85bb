/** Why an explanation request was refused (CONTRACT.md "Signed explanations"): the area's one error, whose reasons are the wire's refusals. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidInput } from "../../protocol/errors.js"
import { ExplanationNotFound } from "../../protocol/explanations.js"
import { Reasons } from "../platform/domain-error.js"

export { ExplanationNotFound }

export class ExplanationsError extends Schema.TaggedError<ExplanationsError>()("ExplanationsError", {
  reason: Reasons([ExplanationNotFound, InvalidInput])
}) {}

export const refuse = (reason: ExplanationsError["reason"]) => Effect.fail(new ExplanationsError({ reason }))
