/** Why a settlement request was refused. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidInput } from "../platform/domain-error.js"

export class SettlementNotFound extends Schema.TaggedError<SettlementNotFound>()("SettlementNotFound", { settlement_uuid: Schema.String }) {
  readonly code = "NOT_FOUND"
  override readonly message = "Settlement not found"
  readonly details = { settlement_uuid: this.settlement_uuid }
}

export class ReceiptNotSettled extends Schema.TaggedError<ReceiptNotSettled>()("ReceiptNotSettled", { receipt_uuid: Schema.String }) {
  readonly code = "NOT_FOUND"
  override readonly message = "No settled receipt with this id in this organization"
  readonly details = { receipt_uuid: this.receipt_uuid }
}

export class SettlementError extends Schema.TaggedError<SettlementError>()("SettlementError", {
  reason: Schema.Union([SettlementNotFound, ReceiptNotSettled, InvalidInput])
}) {}

export const refuse = (reason: SettlementError["reason"]) => Effect.fail(new SettlementError({ reason }))
