/** Why a compliance report request was refused (CONTRACT "Compliance reports"): the area's one error, whose reasons are the wire's refusals. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { ReportActionNotFound, ReportNotFound, ReportNotReady } from "../../protocol/compliance.js"
import { InvalidInput } from "../../protocol/errors.js"
import { Reasons } from "../platform/domain-error.js"

export { ReportActionNotFound, ReportNotFound, ReportNotReady }

export class ComplianceError extends Schema.TaggedError<ComplianceError>()("ComplianceError", {
  reason: Reasons([ReportNotFound, ReportActionNotFound, ReportNotReady, InvalidInput])
}) {}

export const refuse = (reason: ComplianceError["reason"]) => Effect.fail(new ComplianceError({ reason }))
