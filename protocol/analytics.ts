/** Aggregate analytics over the organization's actions (admin or owner only). */

import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { Authenticated } from "./auth.js"
import { boundedInt } from "./common.js"
import { Forbidden, InvalidInput } from "./errors.js"

const Days = { days: Schema.optionalKey(boundedInt(1, 365)) }

export const TimeseriesBuckets = ["hour", "day", "week"] as const
/** The widest range the time series covers, and the most buckets it answers (31 days of hours). */
export const TIMESERIES_MAX_DAYS = 366
export const TIMESERIES_MAX_BUCKETS = 744

/** Human decision times (approved or denied by a person) of the actions decided in a bucket, in seconds. */
const Latency = Schema.Struct({ decided: Schema.Number, median_seconds: Schema.NullOr(Schema.Number), p95_seconds: Schema.NullOr(Schema.Number) })

export const Timeseries = Schema.Struct({
  from: Schema.String,
  to: Schema.String,
  bucket: Schema.Literals(TimeseriesBuckets),
  /** Every status met in the range, sorted. */
  statuses: Schema.Array(Schema.String),
  /** Every bucket from the one holding `from` to the one holding `to`, empty ones included, oldest first. */
  buckets: Schema.Array(
    Schema.Struct({
      start: Schema.String,
      total: Schema.Number,
      by_status: Schema.Record(Schema.String, Schema.Number),
      approval_latency: Latency
    })
  ),
  /** Actions denied by a policy in the range, per policy (max 50, most denials first); `policy_name` null once the policy is deleted. */
  denials_by_policy: Schema.Array(Schema.Struct({ policy_uuid: Schema.NullOr(Schema.String), policy_name: Schema.NullOr(Schema.String), denied: Schema.Number }))
})
export type Timeseries = typeof Timeseries.Type

export class AnalyticsGroup extends HttpApiGroup.make("analytics")
  .add(
    HttpApiEndpoint.get("actionsOverTime", "/api/v1/analytics/actions-over-time", { error: Forbidden,
      query: { ...Days, period: Schema.optionalKey(Schema.Literals(["daily", "weekly"])) },
      success: Schema.Struct({ data: Schema.Array(Schema.Struct({ date: Schema.String, count: Schema.Number })) })
    }),
    HttpApiEndpoint.get("approvalRates", "/api/v1/analytics/approval-rates", { error: Forbidden,
      query: Days,
      success: Schema.Struct({ approved: Schema.Number, denied: Schema.Number, review: Schema.Number, total: Schema.Number })
    }),
    HttpApiEndpoint.get("modelAgreement", "/api/v1/analytics/model-agreement", { error: Forbidden,
      query: Days,
      success: Schema.Struct({
        total_cases: Schema.Number,
        avg_disagreement: Schema.Number,
        by_decision: Schema.Struct({ APPROVE: Schema.Number, DENY: Schema.Number, REVIEW: Schema.Number })
      })
    }),
    HttpApiEndpoint.get("policyDenials", "/api/v1/analytics/policy-denials", { error: Forbidden,
      query: Days,
      success: Schema.Struct({
        data: Schema.Array(Schema.Struct({ action_type: Schema.String, total: Schema.Number, denied: Schema.Number }))
      })
    }),
    HttpApiEndpoint.get("topAgents", "/api/v1/analytics/top-agents", { error: Forbidden,
      query: { ...Days, limit: Schema.optionalKey(boundedInt(1, 50)) },
      success: Schema.Struct({ data: Schema.Array(Schema.Struct({ agent_id: Schema.String, action_count: Schema.Number })) })
    }),
    HttpApiEndpoint.get("timeseries", "/api/v1/analytics/timeseries", {
      error: [Forbidden, InvalidInput],
      query: {
        from: Schema.optionalKey(Schema.String.annotate({ description: "ISO 8601 timestamp; default `to` minus 7 days" })),
        to: Schema.optionalKey(Schema.String.annotate({ description: "ISO 8601 timestamp; default now" })),
        bucket: Schema.optionalKey(Schema.Literals(TimeseriesBuckets))
      },
      success: Timeseries
    })
  )
  .middleware(Authenticated)
  .annotateMerge(OpenApi.annotations({ title: "Analytics", description: "`days` 1-365 (default 30). Admin or owner only." }))
{}
