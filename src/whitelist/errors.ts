/** Why a whitelist operation was refused: the area's one error, whose reasons are the wire's refusals. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidInput } from "../../protocol/errors.js"
import { AlreadyResolved, ApprovalNotFound, EntryNotFound } from "../../protocol/whitelist.js"
import { Reasons } from "../platform/domain-error.js"

export { AlreadyResolved, ApprovalNotFound, EntryNotFound }

export class WhitelistError extends Schema.TaggedError<WhitelistError>()("WhitelistError", {
  reason: Reasons([EntryNotFound, ApprovalNotFound, AlreadyResolved, InvalidInput])
}) {}

export type WhitelistReason = WhitelistError["reason"]

export const refuse = (reason: WhitelistReason) => Effect.fail(new WhitelistError({ reason }))
