/** Why a receipt lookup or a key rotation was refused: the area's one error, whose reasons are the wire's refusals (protocol/receipts.ts). */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { ActionReceiptNotFound, ReceiptNotFound, RotationInProgress } from "../../protocol/receipts.js"
import { Reasons } from "../platform/domain-error.js"

export { ActionReceiptNotFound, ReceiptNotFound, RotationInProgress }

export class ReceiptsError extends Schema.TaggedError<ReceiptsError>()("ReceiptsError", {
  reason: Reasons([ReceiptNotFound, ActionReceiptNotFound, RotationInProgress])
}) {}

export const refuse = (reason: ReceiptsError["reason"]) => Effect.fail(new ReceiptsError({ reason }))
