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
import { Conflict, Forbidden, NotFound, ServiceUnavailable, TooManyRequests, Unauthorized, Unprocessable } from "./errors.js"

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

const CaseErrors = [Forbidden, NotFound, Conflict, Unprocessable, TooManyRequests, ServiceUnavailable]
const idempotencyHeader = { "idempotency-key": Schema.optionalKey(Schema.String) }
const caseId = { case_id: Schema.String }

/** The SSE stream's events, in order: started, model_complete (one per model), consensus, receipt, done; or error. */
const EventStream = Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/event-stream" }))

export const Resolution = Schema.Struct({ reason: Schema.optionalKey(Schema.NullOr(Schema.String)) })

export class CasesGroup extends HttpApiGroup.make("cases")
  .add(
    HttpApiEndpoint.post("create", "/api/v1/cases", { headers: idempotencyHeader, payload: NewCase, error: CaseErrors, success: Case.pipe(HttpApiSchema.status(201)) }),
    HttpApiEndpoint.post("stream", "/api/v1/cases/stream", { headers: idempotencyHeader, payload: NewCase, error: CaseErrors, success: EventStream }),
    HttpApiEndpoint.get("list", "/api/v1/cases", {
      query: PageQuery,
      error: [Forbidden, Unprocessable],
      success: Schema.Struct({ cases: Schema.Array(CaseListItem), data: Schema.Array(CaseListItem), pagination: Pagination })
    }),
    HttpApiEndpoint.get("get", "/api/v1/cases/:case_id", { params: caseId, error: CaseErrors, success: Case }),
    HttpApiEndpoint.post("approve", "/api/v1/cases/:case_id/approve", { params: caseId, payload: Resolution, error: [Unauthorized, ...CaseErrors], success: Case }),
    HttpApiEndpoint.post("deny", "/api/v1/cases/:case_id/deny", { params: caseId, payload: Resolution, error: [Unauthorized, ...CaseErrors], success: Case })
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
  .add(HttpApiEndpoint.get("verify", "/api/v1/verify/case/:case_id", { params: caseId, error: NotFound, success: Schema.Record(Schema.String, Schema.Unknown) }))
  .middleware(PublicRoute)
  .annotateMerge(OpenApi.annotations({ title: "Case receipts", description: "Public verification of a case's signed receipt: signature, payload hash and timestamp, no key needed." }))
{}
