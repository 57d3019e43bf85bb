/** Why a credential operation was refused: the area's one error, whose reasons are the wire's refusals. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { NoActiveCredential, StatusListNotFound } from "../../protocol/credentials.js"
import { AgentNotFound } from "../../protocol/errors.js"
import { Reasons } from "../platform/domain-error.js"

export { AgentNotFound, NoActiveCredential, StatusListNotFound }

export class CredentialsError extends Schema.TaggedError<CredentialsError>()("CredentialsError", {
  reason: Reasons([AgentNotFound, NoActiveCredential, StatusListNotFound])
}) {}

export const refuse = (reason: CredentialsError["reason"]) => Effect.fail(new CredentialsError({ reason }))
