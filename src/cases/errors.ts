/** Why a case was refused or could not run. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidInput } from "../platform/domain-error.js"

export class CaseNotFound extends Schema.TaggedError<CaseNotFound>()("CaseNotFound", { case_id: Schema.String }) {
  readonly code = "NOT_FOUND"
  override readonly message = `Case ${this.case_id} not found`
  readonly details = { case_id: this.case_id }
}

/** Same idempotency key with another body, or while the first run is under way (CONTRACT). */
export class DuplicateCase extends Schema.TaggedError<DuplicateCase>()("DuplicateCase", { why: Schema.String, case_id: Schema.String }) {
  readonly code = "DUPLICATE_REQUEST"
  override readonly message = this.why
  readonly details = { case_id: this.case_id }
}

export class ModelUnavailable extends Schema.TaggedError<ModelUnavailable>()("ModelUnavailable", { case_id: Schema.String, errors: Schema.Array(Schema.Struct({ model: Schema.String, error: Schema.String })) }) {
  readonly code = "MODEL_UNAVAILABLE"
  override readonly message = "Every model of the case failed"
  readonly details = { case_id: this.case_id, errors: this.errors }
}

export class PlanLimitExceeded extends Schema.TaggedError<PlanLimitExceeded>()("PlanLimitExceeded", { plan: Schema.String, limit: Schema.Number, retry_after_seconds: Schema.Number }) {
  readonly code = "PLAN_LIMIT_EXCEEDED"
  override readonly message = `The ${this.plan} plan allows ${this.limit} case runs per month`
  readonly details = { plan: this.plan, limit: this.limit }
}

export class NotReviewable extends Schema.TaggedError<NotReviewable>()("NotReviewable", { case_id: Schema.String, review_status: Schema.NullOr(Schema.String) }) {
  readonly code = this.review_status === null ? "REVIEW_NOT_REQUIRED" : "ALREADY_RESOLVED"
  override readonly message = this.review_status === null ? `Case ${this.case_id} does not need a human review` : `Case ${this.case_id} was already ${this.review_status}`
  readonly details = { case_id: this.case_id, review_status: this.review_status }
}

export class NotAnApprover extends Schema.TaggedError<NotAnApprover>()("NotAnApprover", {}) {
  readonly code = "FORBIDDEN"
  override readonly message = "Only the organization's admins, owner and default approvers resolve case reviews"
}

export class CasesError extends Schema.TaggedError<CasesError>()("CasesError", {
  reason: Schema.Union([InvalidInput, CaseNotFound, DuplicateCase, ModelUnavailable, PlanLimitExceeded, NotReviewable, NotAnApprover])
}) {}

export const refuse = (reason: CasesError["reason"]) => Effect.fail(new CasesError({ reason }))
