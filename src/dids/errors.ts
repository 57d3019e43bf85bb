/** Why a DID operation was refused: the area's one error, whose reasons are the wire's refusals. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { DidNotResolved } from "../../protocol/dids.js"
import { AgentNotFound } from "../../protocol/errors.js"
import { Reasons } from "../platform/domain-error.js"

export { AgentNotFound, DidNotResolved }

export class DidsError extends Schema.TaggedError<DidsError>()("DidsError", {
  reason: Reasons([AgentNotFound, DidNotResolved])
}) {}

export const refuse = (reason: DidsError["reason"]) => Effect.fail(new DidsError({ reason }))
