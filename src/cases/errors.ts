/** Why a case was refused or could not run: the area's one error, whose reasons are the wire's refusals. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import {
  CaseNotFound,
  DuplicateCase,
  ModelUnavailable,
  NotAnApprover,
  PlanLimitExceeded,
  ReviewAlreadyResolved,
  ReviewNotRequired
} from "../../protocol/cases.js"
import { InvalidInput } from "../../protocol/errors.js"
import { Reasons } from "../platform/domain-error.js"

export { CaseNotFound, DuplicateCase, ModelUnavailable, NotAnApprover, PlanLimitExceeded, ReviewAlreadyResolved, ReviewNotRequired }

/* Each reason by its class, not by its fields: a union of the classes rebuilds a reason as the first member whose fields fit. */
export class CasesError extends Schema.TaggedError<CasesError>()("CasesError", {
  reason: Reasons([InvalidInput, CaseNotFound, DuplicateCase, ModelUnavailable, PlanLimitExceeded, ReviewNotRequired, ReviewAlreadyResolved, NotAnApprover])
}) {}

export const refuse = (reason: CasesError["reason"]) => Effect.fail(new CasesError({ reason }))
