/** Why the notification-channel settings were refused. */
import * as Schema from "effect/Schema"
import { InvalidInput } from "../platform/domain-error.js"

export class ChannelsError extends Schema.TaggedError<ChannelsError>()("ChannelsError", { reason: Schema.Union([InvalidInput]) }) {}
