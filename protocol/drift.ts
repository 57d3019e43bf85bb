/**
 * Drift detection (spec 002 "Drift detection"): baselines of an agent's action-type mix and
 * volume, the live comparison against the active one, and the alerts a check stores.
 */

import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { Authenticated } from "./auth.js"
import { boundedInt, NullableTimestamp, Pagination, Timestamp } from "./common.js"
import { Forbidden, InvalidInput, refusal, Unauthorized } from "./errors.js"

export const BaselineTypes = ["production", "synthetic", "pooled"] as const
export const Severities = ["info", "low", "medium", "high", "critical"] as const
export type Severity = (typeof Severities)[number]

const Distribution = Schema.Record(Schema.String, Schema.Number)

export const DriftBaseline = Schema.Struct({
  id: Schema.String,
  agent_id: Schema.String,
  baseline_type: Schema.Literals(BaselineTypes),
  is_active: Schema.Boolean,
  window_start: Timestamp,
  window_end: Timestamp,
  action_type_dist: Distribution,
  total_actions: Schema.Number,
  avg_actions_per_day: Schema.Number,
  source_agent_ids: Schema.NullOr(Schema.Array(Schema.String))
})
export type DriftBaseline = typeof DriftBaseline.Type

export const DriftAlert = Schema.Struct({
  id: Schema.String,
  agent_id: Schema.String,
  baseline_uuid: Schema.String,
  window_start: Timestamp,
  window_end: Timestamp,
  kl_divergence: Schema.Number,
  volume_ratio: Schema.Number,
  severity: Schema.Literals(Severities),
  new_action_types: Schema.NullOr(Schema.Array(Schema.String)),
  detected_at: Timestamp,
  acknowledged_at: NullableTimestamp,
  acknowledged_by: Schema.NullOr(Schema.String)
})
export type DriftAlert = typeof DriftAlert.Type

export const CurrentWindow = Schema.Struct({
  agent_id: Schema.String,
  window_start: Timestamp,
  window_end: Timestamp,
  action_type_dist: Distribution,
  total_actions: Schema.Number,
  avg_actions_per_day: Schema.Number
})
export type CurrentWindow = typeof CurrentWindow.Type

/** Without an active baseline only the first four fields are present. */
export const DriftStatus = Schema.Struct({
  agent_id: Schema.String,
  has_baseline: Schema.Boolean,
  is_drifting: Schema.Boolean,
  baseline: Schema.optionalKey(DriftBaseline),
  current_window: Schema.optionalKey(CurrentWindow),
  kl_divergence: Schema.optionalKey(Schema.Number),
  volume_ratio: Schema.optionalKey(Schema.Number),
  severity: Schema.optionalKey(Schema.Literals(Severities)),
  new_action_types: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String)))
})
export type DriftStatus = typeof DriftStatus.Type

/** Dates are checked by the service (422 with every issue), so the wire takes text. */
const DateText = Schema.String.annotate({ description: "ISO 8601 timestamp" })

export const ProductionBaselineRequest = Schema.Struct({
  window_start: DateText,
  window_end: DateText,
  activate: Schema.optionalKey(Schema.Boolean)
})
export type ProductionBaselineRequest = typeof ProductionBaselineRequest.Type

export const SyntheticBaselineRequest = Schema.Struct({
  expected_distribution: Distribution,
  expected_actions_per_day: Schema.Number.check(Schema.isGreaterThanOrEqualTo(0)),
  activate: Schema.optionalKey(Schema.Boolean)
})
export type SyntheticBaselineRequest = typeof SyntheticBaselineRequest.Type

export const PooledBaselineRequest = Schema.Struct({
  source_agent_ids: Schema.Array(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200))).check(Schema.isMinLength(1), Schema.isMaxLength(100)),
  window_start: DateText,
  window_end: DateText,
  activate: Schema.optionalKey(Schema.Boolean)
})
export type PooledBaselineRequest = typeof PooledBaselineRequest.Type

const LookbackQuery = { lookback_hours: Schema.optionalKey(boundedInt(1, 720)) }

const AlertQuery = {
  page: Schema.optionalKey(boundedInt(1, 1_000_000)),
  per_page: Schema.optionalKey(boundedInt(1, 200)),
  acknowledged: Schema.optionalKey(Schema.Literals(["true", "false"]))
}

const AlertPage = Schema.Struct({ data: Schema.Array(DriftAlert), pagination: Pagination })

/** Not a registered agent of the organization, nor an agent id its actions carry. */
export class DriftAgentNotFound extends Schema.Error<DriftAgentNotFound>("DriftAgentNotFound")(refusal("NOT_FOUND", "No such agent in this organization"), {
  httpApiStatus: 404,
  description: "No such agent in the caller's organization"
}) {
  readonly _tag = "DriftAgentNotFound"
  static of(agentId: string) {
    return new DriftAgentNotFound({ details: { agent_id: agentId } })
  }
}

export class DriftAlertNotFound extends Schema.Error<DriftAlertNotFound>("DriftAlertNotFound")(refusal("NOT_FOUND", "No such drift alert"), {
  httpApiStatus: 404,
  description: "No such alert of this agent in the caller's organization"
}) {
  readonly _tag = "DriftAlertNotFound"
  static of(alertId: string) {
    return new DriftAlertNotFound({ details: { alert_id: alertId } })
  }
}

const AgentParam = { agent_id: Schema.String }
const PATH = "/api/v1/agents/:agent_id/drift"

export class DriftGroup extends HttpApiGroup.make("drift")
  .add(
    HttpApiEndpoint.post("baseline", `${PATH}/baseline`, {
      error: [Forbidden, DriftAgentNotFound, InvalidInput],
      params: AgentParam,
      payload: ProductionBaselineRequest,
      success: DriftBaseline.pipe(HttpApiSchema.status(201))
    }),
    HttpApiEndpoint.post("syntheticBaseline", `${PATH}/baseline/synthetic`, {
      error: [Forbidden, DriftAgentNotFound, InvalidInput],
      params: AgentParam,
      payload: SyntheticBaselineRequest,
      success: DriftBaseline.pipe(HttpApiSchema.status(201))
    }),
    HttpApiEndpoint.post("pooledBaseline", `${PATH}/baseline/pooled`, {
      error: [Forbidden, DriftAgentNotFound, InvalidInput],
      params: AgentParam,
      payload: PooledBaselineRequest,
      success: DriftBaseline.pipe(HttpApiSchema.status(201))
    }),
    HttpApiEndpoint.get("status", PATH, { error: [Forbidden, DriftAgentNotFound], params: AgentParam, query: LookbackQuery, success: DriftStatus }),
    HttpApiEndpoint.post("check", `${PATH}/check`, { error: [Forbidden, DriftAgentNotFound], params: AgentParam, query: LookbackQuery, success: Schema.NullOr(DriftAlert) }),
    HttpApiEndpoint.get("alerts", `${PATH}/alerts`, { error: [Forbidden, DriftAgentNotFound], params: AgentParam, query: AlertQuery, success: AlertPage }),
    HttpApiEndpoint.post("acknowledge", `${PATH}/alerts/:alert_id/acknowledge`, {
      error: [Unauthorized, DriftAlertNotFound],
      params: { ...AgentParam, alert_id: Schema.String },
      success: DriftAlert
    })
  )
  .middleware(Authenticated)
  .annotateMerge(
    OpenApi.annotations({
      title: "Drift detection",
      description: "Baselines of an agent's action-type mix and volume, the live symmetric KL divergence against the active one, and alerts."
    })
  ) {}
