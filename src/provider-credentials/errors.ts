/** Why a provider-credentials operation was refused. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidInput } from "../platform/domain-error.js"

export class ProviderCredentialsError extends Schema.TaggedError<ProviderCredentialsError>()("ProviderCredentialsError", {
  reason: Schema.Union([InvalidInput])
}) {}

export const refuse = (reason: ProviderCredentialsError["reason"]) => Effect.fail(new ProviderCredentialsError({ reason }))
