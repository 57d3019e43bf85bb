/** Why a settlement request was refused: the area's one error, whose reasons are the wire's refusals (protocol/settlements.ts). */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidInput } from "../../protocol/errors.js"
import { ReceiptNotSettled, SettlementNotFound } from "../../protocol/settlements.js"
import { Reasons } from "../platform/domain-error.js"

export { ReceiptNotSettled, SettlementNotFound }

export class SettlementError extends Schema.TaggedError<SettlementError>()("SettlementError", {
  reason: Reasons([SettlementNotFound, ReceiptNotSettled, InvalidInput])
}) {}

export const refuse = (reason: SettlementError["reason"]) => Effect.fail(new SettlementError({ reason }))
