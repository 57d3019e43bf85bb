/** Why an evidence or discovery request was refused (spec 001 "Evidence and discovery"). */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidInput } from "../platform/domain-error.js"

export class EmptyActionList extends Schema.TaggedError<EmptyActionList>()("EmptyActionList", {}) {
  readonly code = "EMPTY_ACTION_LIST"
  override readonly message = "action_uuids must name at least one action"
  readonly details = {}
}

/** Uuids that exist in no organization. */
export class ActionNotFound extends Schema.TaggedError<ActionNotFound>()("ActionNotFound", { action_uuids: Schema.Array(Schema.String) }) {
  readonly code = "ACTION_NOT_FOUND"
  override readonly message = this.action_uuids.length === 1 ? `Action ${this.action_uuids[0]} not found` : `${this.action_uuids.length} actions not found`
  readonly details = { action_uuids: this.action_uuids }
}

/** Uuids of actions that belong to another organization: named back, nothing about them told. */
export class CrossOrgActions extends Schema.TaggedError<CrossOrgActions>()("CrossOrgActions", { action_uuids: Schema.Array(Schema.String) }) {
  readonly code = "CROSS_ORG_ACTIONS"
  override readonly message = "A package may only hold actions of the caller's organization"
  readonly details = { action_uuids: this.action_uuids }
}

export class PackageNotFound extends Schema.TaggedError<PackageNotFound>()("PackageNotFound", { package_uuid: Schema.String }) {
  readonly code = "NOT_FOUND"
  override readonly message = `Evidence package ${this.package_uuid} not found`
  readonly details = { package_uuid: this.package_uuid }
}

/** The liability chain's starting action: unknown or another organization's (404 either way). */
export class ChainActionNotFound extends Schema.TaggedError<ChainActionNotFound>()("ChainActionNotFound", { action_uuid: Schema.String }) {
  readonly code = "ACTION_NOT_FOUND"
  override readonly message = `Action ${this.action_uuid} not found`
  readonly details = { action_uuid: this.action_uuid }
}

export class MissingReason extends Schema.TaggedError<MissingReason>()("MissingReason", {}) {
  readonly code = "MISSING_REASON"
  override readonly message = "A discovery query needs a reason"
  readonly details = {}
}

export class FutureTimestamp extends Schema.TaggedError<FutureTimestamp>()("FutureTimestamp", { point_in_time: Schema.String }) {
  readonly code = "FUTURE_TIMESTAMP"
  override readonly message = "point_in_time is in the future"
  readonly details = { point_in_time: this.point_in_time }
}

export class EvidenceError extends Schema.TaggedError<EvidenceError>()("EvidenceError", {
  reason: Schema.Union([EmptyActionList, ActionNotFound, CrossOrgActions, PackageNotFound, ChainActionNotFound, MissingReason, FutureTimestamp, InvalidInput])
}) {}

export const refuse = (reason: EvidenceError["reason"]) => Effect.fail(new EvidenceError({ reason }))
