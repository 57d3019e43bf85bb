/** Why an output-policy change was refused: the area's one error, whose reason is the wire's refusal. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidInput } from "../../protocol/errors.js"
import { Reasons } from "../platform/domain-error.js"

/** mergeOutputPolicy lists every issue of a patch; nothing else is refused. */
export class OutputPoliciesError extends Schema.TaggedError<OutputPoliciesError>()("OutputPoliciesError", {
  reason: Reasons([InvalidInput])
}) {}

export const refuse = (reason: OutputPoliciesError["reason"]) => Effect.fail(new OutputPoliciesError({ reason }))
