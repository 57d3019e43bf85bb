/** Why an explanation request was refused (CONTRACT.md "Signed explanations"). */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidInput } from "../platform/domain-error.js"

/** An action that does not exist or belongs to another organization (404 either way). */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", { action_uuid: Schema.String }) {
  readonly code = "NOT_FOUND"
  override readonly message = `Action ${this.action_uuid} not found`
  readonly details = { action_uuid: this.action_uuid }
}

export class ExplanationsError extends Schema.TaggedError<ExplanationsError>()("ExplanationsError", {
  reason: Schema.Union([NotFound, InvalidInput])
}) {}

export const refuse = (reason: ExplanationsError["reason"]) => Effect.fail(new ExplanationsError({ reason }))
