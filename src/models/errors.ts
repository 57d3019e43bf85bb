/** Why a model-preferences or custom-model operation was refused. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidInput } from "../platform/domain-error.js"

/** The chat default is empty or outside the chat allow-list (spec 002: 400). */
export class InvalidChatDefault extends Schema.TaggedError<InvalidChatDefault>()("InvalidChatDefault", { model_id: Schema.String, why: Schema.String }) {
  readonly code = "INVALID_CHAT_DEFAULT"
  override readonly message = this.why
  readonly details = { chat_default_model: this.model_id }
}

export class CustomModelNotFound extends Schema.TaggedError<CustomModelNotFound>()("CustomModelNotFound", { id: Schema.String }) {
  readonly code = "NOT_FOUND"
  override readonly message = `Custom model ${this.id} not found`
  readonly details = { id: this.id }
}

/** `model_id` is unique within the organization (spec 002). */
export class ModelIdExists extends Schema.TaggedError<ModelIdExists>()("ModelIdExists", { model_id: Schema.String }) {
  readonly code = "MODEL_ID_EXISTS"
  override readonly message = `A custom model with model_id ${this.model_id} already exists`
  readonly details = { model_id: this.model_id }
}

export class ModelsError extends Schema.TaggedError<ModelsError>()("ModelsError", {
  reason: Schema.Union([InvalidChatDefault, InvalidInput, CustomModelNotFound, ModelIdExists])
}) {}

export const refuse = (reason: ModelsError["reason"]) => Effect.fail(new ModelsError({ reason }))
