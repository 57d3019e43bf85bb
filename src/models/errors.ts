/** Why a model-preferences or custom-model operation was refused: the area's one error, whose reasons are the wire's refusals. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidInput } from "../../protocol/errors.js"
import { CustomModelNotFound, InvalidChatDefault, ModelIdExists } from "../../protocol/models.js"
import { Reasons } from "../platform/domain-error.js"

export { CustomModelNotFound, InvalidChatDefault, ModelIdExists }

export class ModelsError extends Schema.TaggedError<ModelsError>()("ModelsError", {
  reason: Reasons([InvalidChatDefault, InvalidInput, CustomModelNotFound, ModelIdExists])
}) {}

export const refuse = (reason: ModelsError["reason"]) => Effect.fail(new ModelsError({ reason }))
