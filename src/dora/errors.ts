/** Why a DORA request was refused (CONTRACT.md "DORA module"). */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidInput } from "../platform/domain-error.js"

export class IncidentNotFound extends Schema.TaggedError<IncidentNotFound>()("IncidentNotFound", { uuid: Schema.String }) {
  readonly code = "NOT_FOUND"
  override readonly message = `Incident ${this.uuid} not found`
  readonly details = { uuid: this.uuid }
}

export class ThirdPartyNotFound extends Schema.TaggedError<ThirdPartyNotFound>()("ThirdPartyNotFound", { uuid: Schema.String }) {
  readonly code = "NOT_FOUND"
  override readonly message = `Third party ${this.uuid} not found`
  readonly details = { uuid: this.uuid }
}

export class TestNotFound extends Schema.TaggedError<TestNotFound>()("TestNotFound", { uuid: Schema.String }) {
  readonly code = "NOT_FOUND"
  override readonly message = `Resilience test ${this.uuid} not found`
  readonly details = { uuid: this.uuid }
}

/** Related actions that are not the organization's (unknown or another's: named back, nothing told). */
export class RelatedActionsNotFound extends Schema.TaggedError<RelatedActionsNotFound>()("RelatedActionsNotFound", {
  action_uuids: Schema.Array(Schema.String)
}) {
  readonly code = "NOT_FOUND"
  override readonly message = this.action_uuids.length === 1 ? `Action ${this.action_uuids[0]} not found` : `${this.action_uuids.length} actions not found`
  readonly details = { action_uuids: this.action_uuids }
}

/** A transition the lifecycle table forbids. */
export class InvalidIncidentState extends Schema.TaggedError<InvalidIncidentState>()("InvalidIncidentState", {
  uuid: Schema.String,
  status: Schema.String,
  operation: Schema.String,
  allowed_from: Schema.Array(Schema.String)
}) {
  readonly code = "INVALID_INCIDENT_STATE"
  override readonly message = `Cannot ${this.operation} an incident that is ${this.status} (allowed from ${this.allowed_from.join(" or ")})`
  readonly details = { uuid: this.uuid, status: this.status, operation: this.operation, allowed_from: this.allowed_from }
}

export class DoraError extends Schema.TaggedError<DoraError>()("DoraError", {
  reason: Schema.Union([IncidentNotFound, ThirdPartyNotFound, TestNotFound, RelatedActionsNotFound, InvalidIncidentState, InvalidInput])
}) {}

export const refuse = (reason: DoraError["reason"]) => Effect.fail(new DoraError({ reason }))
