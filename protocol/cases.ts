/**
 * Consensus cases (spec 000 "Cases", "Streaming events"): two or three models answer the same
 * question; the gateway computes a consensus with a disagreement score, flags human review and
 * signs a receipt (version 1.0) over the case. Also as Server-Sent Events and on the WebSocket
 * channel `case:<id>`.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { Authenticated, PublicRoute } from "./auth.js"
import { NullableTimestamp, PageQuery, Pagination, Timestamp } from "./common.js"
import { accessRefusal, Forbidden, InvalidInput, refusal, Unauthorized, Unprocessable } from "./errors.js"

export const CASE_RECEIPT_VERSION = "1.0"
export const MAX_CASE_DETAILS = 50_000

export const CaseResult = Schema.Struct({
  model: Schema.String,
  model_version: Schema.NullOr(Schema.String),
  provider: Schema.String,
  /** APPROVE, DENY or REVIEW; ERROR for a model that failed. */
  decision: Schema.String,
  confidence: Schema.Number,
  key_factors: Schema.Array(Schema.String),
  reasoning: Schema.String,
  latency_ms: Schema.Int,
  error: Schema.NullOr(Schema.String)
})
export type CaseResult = typeof CaseResult.Type

export const ConsensusView = Schema.Struct({
  decision: Schema.Literals(["APPROVE", "DENY", "REVIEW", "MIXED"]),
  text: Schema.String,
  confidence_score: Schema.Number,
  disagreement_score: Schema.Number,
  requires_human_review: Schema.Boolean,
  human_review_reason: Schema.NullOr(Schema.String)
})

export const CaseReceipt = Schema.Struct({
  receipt_uuid: Schema.String,
  payload_hash: Schema.String,
  signature: Schema.String,
  public_key_id: Schema.String,
  timestamp: Timestamp,
  timestamp_authority: Schema.String,
  receipt_version: Schema.String,
  verify_url: Schema.String,
  /** The exact RFC 8785 JSON that was signed, for offline verification. */
  signed_payload: Schema.String,
  timestamp_token: Schema.NullOr(Schema.String)
})

export const CaseReview = Schema.Struct({
  status: Schema.Literals(["pending", "approved", "denied"]),
  reviewed_by: Schema.NullOr(Schema.String),
  reviewed_at: NullableTimestamp,
  reason: Schema.NullOr(Schema.String)
})

export const Case = Schema.Struct({
  case_id: Schema.String,
  status: Schema.Literals(["complete", "failed"]),
  models: Schema.Array(Schema.String),
  details_hash: Schema.String,
  details: Schema.NullOr(Schema.String),
  context: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)),
  consensus: Schema.NullOr(ConsensusView),
  case_results: Schema.Array(CaseResult),
  receipt: Schema.NullOr(CaseReceipt),
  review: Schema.NullOr(CaseReview),
  latency_ms: Schema.Int,
  created_at: Timestamp
})
export type Case = typeof Case.Type

export const CaseListItem = Schema.Struct({
  case_id: Schema.String,
  status: Schema.String,
  models: Schema.Array(Schema.String),
  decision: Schema.NullOr(Schema.String),
  confidence_score: Schema.NullOr(Schema.Number),
  disagreement_score: Schema.NullOr(Schema.Number),
  requires_human_review: Schema.Boolean,
  review_status: Schema.NullOr(Schema.String),
  receipt_uuid: Schema.NullOr(Schema.String),
  latency_ms: Schema.NullOr(Schema.Int),
  created_at: Timestamp
})
export type CaseListItem = typeof CaseListItem.Type

export const NewCase = Schema.Struct({
  details: Schema.String,
  context: Schema.optionalKey(Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown))),
  models: Schema.Array(Schema.String),
  options: Schema.optionalKey(
    Schema.NullOr(
      Schema.Struct({
        human_review_threshold: Schema.optionalKey(Schema.NullOr(Schema.Number)),
        store_details: Schema.optionalKey(Schema.NullOr(Schema.Boolean)),
        idempotency_key: Schema.optionalKey(Schema.NullOr(Schema.String))
      })
    )
  )
})
export type NewCase = typeof NewCase.Type

export class CaseNotFound extends Schema.Error<CaseNotFound>("CaseNotFound")(refusal("NOT_FOUND"), {
  httpApiStatus: 404,
  description: "No such case in the caller's organization (or still running)"
}) {
  readonly _tag = "CaseNotFound"
  static of(caseId: string) {
    return new CaseNotFound({ message: `Case ${caseId} not found`, details: { case_id: caseId } })
  }
}

/** Same idempotency key with another body, or while the first run is under way (CONTRACT). */
export class DuplicateCase extends Schema.Error<DuplicateCase>("DuplicateCase")(refusal("DUPLICATE_REQUEST"), {
  httpApiStatus: 409,
  description: "The idempotency key was used with another request, or its case is still running"
}) {
  readonly _tag = "DuplicateCase"
  static of(why: string, caseId: string) {
    return new DuplicateCase({ message: why, details: { case_id: caseId } })
  }
}

export class ModelUnavailable extends Schema.Error<ModelUnavailable>("ModelUnavailable")(refusal("MODEL_UNAVAILABLE", "Every model of the case failed"), {
  httpApiStatus: 503,
  description: "Every model of the case failed (`details.errors` per model)"
}) {
  readonly _tag = "ModelUnavailable"
  static of(caseId: string, errors: ReadonlyArray<{ readonly model: string; readonly error: string }>) {
    return new ModelUnavailable({ details: { case_id: caseId, errors } })
  }
}

/** Answered with Retry-After and the RateLimit headers (`details.limit`). */
export class PlanLimitExceeded extends Schema.Error<PlanLimitExceeded>("PlanLimitExceeded")(accessRefusal("PLAN_LIMIT_EXCEEDED", "Plan limit exceeded"), {
  httpApiStatus: 429,
  description: "The plan's monthly case runs are used up"
}) {
  readonly _tag = "PlanLimitExceeded"
  static of(plan: string, limit: number) {
    const message = `The ${plan} plan allows ${limit} case runs per month`
    return new PlanLimitExceeded({ message, error: message, details: { plan, limit } })
  }
}

export class ReviewNotRequired extends Schema.Error<ReviewNotRequired>("ReviewNotRequired")(refusal("REVIEW_NOT_REQUIRED"), {
  httpApiStatus: 409,
  description: "The case was not flagged for human review"
}) {
  readonly _tag = "ReviewNotRequired"
  static of(caseId: string) {
    return new ReviewNotRequired({ message: `Case ${caseId} does not need a human review`, details: { case_id: caseId, review_status: null } })
  }
}

export class ReviewAlreadyResolved extends Schema.Error<ReviewAlreadyResolved>("ReviewAlreadyResolved")(refusal("ALREADY_RESOLVED"), {
  httpApiStatus: 409,
  description: "The case's review was already approved or denied"
}) {
  readonly _tag = "ReviewAlreadyResolved"
  static of(caseId: string, reviewStatus: string) {
    return new ReviewAlreadyResolved({ message: `Case ${caseId} was already ${reviewStatus}`, details: { case_id: caseId, review_status: reviewStatus } })
  }
}

export class NotAnApprover extends Schema.Error<NotAnApprover>("NotAnApprover")(
  accessRefusal("FORBIDDEN", "Only the organization's admins, owner and default approvers resolve case reviews"),
  { httpApiStatus: 403, description: "The caller is not an admin, the owner or a default approver" }
) {
  readonly _tag = "NotAnApprover"
}

const RunErrors = [Forbidden, InvalidInput, DuplicateCase, PlanLimitExceeded]
const ReviewErrors = [Unauthorized, NotAnApprover, CaseNotFound, ReviewNotRequired, ReviewAlreadyResolved]
const idempotencyHeader = { "idempotency-key": Schema.optionalKey(Schema.String) }
const caseId = { case_id: Schema.String }

/** The SSE stream's events, in order: started, model_complete (one per model), consensus, receipt, done; or error. */
const EventStream = Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/event-stream" }))

export const Resolution = Schema.Struct({ reason: Schema.optionalKey(Schema.NullOr(Schema.String)) })

export class CasesGroup extends HttpApiGroup.make("cases")
  .add(
    HttpApiEndpoint.post("create", "/api/v1/cases", { headers: idempotencyHeader, payload: NewCase, error: [...RunErrors, ModelUnavailable], success: Case.pipe(HttpApiSchema.status(201)) }),
    HttpApiEndpoint.post("stream", "/api/v1/cases/stream", { headers: idempotencyHeader, payload: NewCase, error: RunErrors, success: EventStream }),
    HttpApiEndpoint.get("list", "/api/v1/cases", {
      query: PageQuery,
      error: [Forbidden, Unprocessable],
      success: Schema.Struct({ cases: Schema.Array(CaseListItem), data: Schema.Array(CaseListItem), pagination: Pagination })
    }),
    HttpApiEndpoint.get("get", "/api/v1/cases/:case_id", { params: caseId, error: [Forbidden, CaseNotFound], success: Case }),
    HttpApiEndpoint.post("approve", "/api/v1/cases/:case_id/approve", { params: caseId, payload: Resolution, error: ReviewErrors, success: Case }),
    HttpApiEndpoint.post("deny", "/api/v1/cases/:case_id/deny", { params: caseId, payload: Resolution, error: ReviewErrors, success: Case })
  )
  .middleware(Authenticated)
  .annotateMerge(
    OpenApi.annotations({
      title: "Cases",
      description:
        "Ask 2-3 models the same question; get their answers, a consensus (decision, weighted confidence, disagreement score, human-review flag) and a signed receipt. `POST /cases/stream` answers the same as Server-Sent Events; the WebSocket channel `case:<id>` carries the same events. A case flagged for review is resolved by a human on the dashboard (approve or deny, JWT only)."
    })
  )
{}

export class CasesPublicGroup extends HttpApiGroup.make("casesPublic")
  .add(HttpApiEndpoint.get("verify", "/api/v1/verify/case/:case_id", { params: caseId, error: CaseNotFound, success: Schema.Record(Schema.String, Schema.Unknown) }))
  .middleware(PublicRoute)
  .annotateMerge(OpenApi.annotations({ title: "Case receipts", description: "Public verification of a case's signed receipt: signature, payload hash and timestamp, no key needed." }))
{}
