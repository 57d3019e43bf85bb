/** Why an output-policy change was refused. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidInput } from "../platform/domain-error.js"

/** mergeOutputPolicy lists every issue of a patch; nothing else is refused. */
export class OutputPoliciesError extends Schema.TaggedError<OutputPoliciesError>()("OutputPoliciesError", {
  reason: Schema.Union([InvalidInput])
}) {}

export const refuse = (reason: OutputPoliciesError["reason"]) => Effect.fail(new OutputPoliciesError({ reason }))
