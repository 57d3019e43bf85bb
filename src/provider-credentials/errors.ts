/** Why a provider-credentials operation was refused: the area's one error, whose reason is the wire's refusal. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidInput } from "../../protocol/errors.js"
import { Reasons } from "../platform/domain-error.js"

export class ProviderCredentialsError extends Schema.TaggedError<ProviderCredentialsError>()("ProviderCredentialsError", {
  reason: Reasons([InvalidInput])
}) {}

export const refuse = (reason: ProviderCredentialsError["reason"]) => Effect.fail(new ProviderCredentialsError({ reason }))
