/** Why a drift request was refused. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidInput } from "../platform/domain-error.js"

export class AgentNotFound extends Schema.TaggedError<AgentNotFound>()("AgentNotFound", { agent_id: Schema.String }) {
  readonly code = "NOT_FOUND"
  override readonly message = "No such agent in this organization"
  readonly details = { agent_id: this.agent_id }
}

export class AlertNotFound extends Schema.TaggedError<AlertNotFound>()("AlertNotFound", { alert_id: Schema.String }) {
  readonly code = "NOT_FOUND"
  override readonly message = "No such drift alert"
  readonly details = { alert_id: this.alert_id }
}

export class DriftError extends Schema.TaggedError<DriftError>()("DriftError", {
  reason: Schema.Union([AgentNotFound, AlertNotFound, InvalidInput])
}) {}

export const refuse = (reason: DriftError["reason"]) => Effect.fail(new DriftError({ reason }))
