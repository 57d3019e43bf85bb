/** Why the notification-channel settings were refused: the area's one error, whose reason is the wire's refusal. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidInput } from "../../protocol/errors.js"
import { Reasons } from "../platform/domain-error.js"

export class ChannelsError extends Schema.TaggedError<ChannelsError>()("ChannelsError", { reason: Reasons([InvalidInput]) }) {}

export const refuse = (reason: ChannelsError["reason"]) => Effect.fail(new ChannelsError({ reason }))
