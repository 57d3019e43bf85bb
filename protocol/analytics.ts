/** Aggregate analytics over the organization's actions (admin or owner only). */

import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { Authenticated } from "./auth.js"
import { boundedInt } from "./common.js"
import { Forbidden } from "./errors.js"

const Days = { days: Schema.optionalKey(boundedInt(1, 365)) }

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
    })
  )
  .middleware(Authenticated)
  .annotateMerge(OpenApi.annotations({ title: "Analytics", description: "`days` 1-365 (default 30). Admin or owner only." }))
{}
