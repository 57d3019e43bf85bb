/** Why a receipt lookup or a key rotation was refused. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

export class ReceiptNotFound extends Schema.TaggedError<ReceiptNotFound>()("ReceiptNotFound", {}) {
  readonly code = "NOT_FOUND"
  override readonly message = "No receipt found"
}

export class ActionReceiptNotFound extends Schema.TaggedError<ActionReceiptNotFound>()("ActionReceiptNotFound", {}) {
  readonly code = "NOT_FOUND"
  override readonly message = "No receipt for this action"
}

export class RotationInProgress extends Schema.TaggedError<RotationInProgress>()("RotationInProgress", {}) {
  readonly code = "ROTATION_IN_PROGRESS"
  override readonly message = "Another rotation finished first; retry"
}

export class ReceiptsError extends Schema.TaggedError<ReceiptsError>()("ReceiptsError", {
  reason: Schema.Union([ReceiptNotFound, ActionReceiptNotFound, RotationInProgress])
}) {}

export const refuse = (reason: ReceiptsError["reason"]) => Effect.fail(new ReceiptsError({ reason }))
