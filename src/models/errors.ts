/** Why a model-preferences change was refused. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidInput } from "../platform/domain-error.js"

/** The chat default is empty or outside the chat allow-list (spec 002: 400). */
export class InvalidChatDefault extends Schema.TaggedError<InvalidChatDefault>()("InvalidChatDefault", { model_id: Schema.String, why: Schema.String }) {
  readonly code = "INVALID_CHAT_DEFAULT"
  override readonly message = this.why
  readonly details = { chat_default_model: this.model_id }
}

export class ModelsError extends Schema.TaggedError<ModelsError>()("ModelsError", { reason: Schema.Union([InvalidChatDefault, InvalidInput]) }) {}

export const refuse = (reason: ModelsError["reason"]) => Effect.fail(new ModelsError({ reason }))
