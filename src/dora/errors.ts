/** Why a DORA request was refused (CONTRACT.md "DORA module"): the area's one error, whose reasons are the wire's refusals. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { IncidentNotFound, InvalidIncidentState, RelatedActionsNotFound, TestNotFound, ThirdPartyNotFound } from "../../protocol/dora.js"
import { InvalidInput } from "../../protocol/errors.js"
import { Reasons } from "../platform/domain-error.js"

export { IncidentNotFound, InvalidIncidentState, RelatedActionsNotFound, TestNotFound, ThirdPartyNotFound }

export class DoraError extends Schema.TaggedError<DoraError>()("DoraError", {
  reason: Reasons([IncidentNotFound, ThirdPartyNotFound, TestNotFound, RelatedActionsNotFound, InvalidIncidentState, InvalidInput])
}) {}

export const refuse = (reason: DoraError["reason"]) => Effect.fail(new DoraError({ reason }))
