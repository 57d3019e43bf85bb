/** Why a drift request was refused: the area's one error, whose reasons are the wire's refusals. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { DriftAgentNotFound, DriftAlertNotFound } from "../../protocol/drift.js"
import { InvalidInput } from "../../protocol/errors.js"
import { Reasons } from "../platform/domain-error.js"

export { DriftAgentNotFound, DriftAlertNotFound }

export class DriftError extends Schema.TaggedError<DriftError>()("DriftError", {
  reason: Reasons([DriftAgentNotFound, DriftAlertNotFound, InvalidInput])
}) {}

export const refuse = (reason: DriftError["reason"]) => Effect.fail(new DriftError({ reason }))
