/** Why a credential operation was refused. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { AgentNotFound } from "../platform/domain-error.js"

export class NoActiveCredential extends Schema.TaggedError<NoActiveCredential>()("NoActiveCredential", { agent_slug: Schema.String }) {
  readonly code = "NOT_FOUND"
  override readonly message = `Agent ${this.agent_slug} has no active credential`
  readonly details = { agent_slug: this.agent_slug }
}

export class StatusListNotFound extends Schema.TaggedError<StatusListNotFound>()("StatusListNotFound", { list_id: Schema.String }) {
  readonly code = "NOT_FOUND"
  override readonly message = `Status list ${this.list_id} not found`
  readonly details = { list_id: this.list_id }
}

export class CredentialsError extends Schema.TaggedError<CredentialsError>()("CredentialsError", {
  reason: Schema.Union([AgentNotFound, NoActiveCredential, StatusListNotFound])
}) {}

export { AgentNotFound }

export const refuse = (reason: CredentialsError["reason"]) => Effect.fail(new CredentialsError({ reason }))
