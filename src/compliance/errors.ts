/** Why a compliance report request was refused (CONTRACT "Compliance reports"). */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidInput } from "../platform/domain-error.js"

export class ReportNotFound extends Schema.TaggedError<ReportNotFound>()("ReportNotFound", { report_uuid: Schema.String }) {
  readonly code = "NOT_FOUND"
  override readonly message = "Compliance report not found"
  readonly details = { report_uuid: this.report_uuid }
}

/** The art6 action is unknown or another organization's. */
export class ReportActionNotFound extends Schema.TaggedError<ReportActionNotFound>()("ReportActionNotFound", { action_uuid: Schema.String }) {
  readonly code = "NOT_FOUND"
  override readonly message = `Action ${this.action_uuid} not found`
  readonly details = { action_uuid: this.action_uuid }
}

export class ReportNotReady extends Schema.TaggedError<ReportNotReady>()("ReportNotReady", { report_uuid: Schema.String, status: Schema.String }) {
  readonly code = "REPORT_NOT_READY"
  override readonly message = `The report is ${this.status}, not ready`
  readonly details = { report_uuid: this.report_uuid, status: this.status }
}

export class ComplianceError extends Schema.TaggedError<ComplianceError>()("ComplianceError", {
  reason: Schema.Union([ReportNotFound, ReportActionNotFound, ReportNotReady, InvalidInput])
}) {}

export const refuse = (reason: ComplianceError["reason"]) => Effect.fail(new ComplianceError({ reason }))
