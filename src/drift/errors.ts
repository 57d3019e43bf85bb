/** Why a drift request was refused: the area's one error, whose reasons are the wire's refusals. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { DriftAgentNotFound, DriftAlertNotFound } from "../../protocol/drift.js"
import { InvalidInput } from "../../protocol/errors.js"
import { Reasons } from "../platform/domain-error.js"

export { DriftAgentNotFound, DriftAlertNotFound }

/*
 * Each reason by its class, not by its fields: the two refusals have the same fields, and a union
 * of the classes would rebuild a DriftAlertNotFound as the first member that fits (DriftAgentNotFound).
 */
export class DriftError extends Schema.TaggedError<DriftError>()("DriftError", {
  reason: Reasons([DriftAgentNotFound, DriftAlertNotFound, InvalidInput])
}) {}

export const refuse = (reason: DriftError["reason"]) => Effect.fail(new DriftError({ reason }))
