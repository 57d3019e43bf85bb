/** Why a whitelist operation was refused. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidInput } from "../platform/domain-error.js"

export class EntryNotFound extends Schema.TaggedError<EntryNotFound>()("EntryNotFound", { id: Schema.String }) {
  readonly code = "NOT_FOUND"
  override readonly message = `Whitelist entry ${this.id} not found`
  readonly details = { id: this.id }
}

export class ApprovalNotFound extends Schema.TaggedError<ApprovalNotFound>()("ApprovalNotFound", { id: Schema.String }) {
  readonly code = "NOT_FOUND"
  override readonly message = `Endpoint approval ${this.id} not found`
  readonly details = { id: this.id }
}

export class AlreadyResolved extends Schema.TaggedError<AlreadyResolved>()("AlreadyResolved", { id: Schema.String, status: Schema.String }) {
  readonly code = "ALREADY_RESOLVED"
  override readonly message = `The approval request is already ${this.status}`
  readonly details = { id: this.id }
}

export class WhitelistError extends Schema.TaggedError<WhitelistError>()("WhitelistError", {
  reason: Schema.Union([EntryNotFound, ApprovalNotFound, AlreadyResolved, InvalidInput])
}) {}

export const refuse = (reason: WhitelistError["reason"]) => Effect.fail(new WhitelistError({ reason }))
