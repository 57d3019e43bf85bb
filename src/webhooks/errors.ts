/** Why a webhook operation was refused: the area's one error, whose reasons are the wire's refusals. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidInput } from "../../protocol/errors.js"
import { WebhookNotFound } from "../../protocol/webhooks.js"
import { Reasons } from "../platform/domain-error.js"

export { WebhookNotFound }

export class WebhooksError extends Schema.TaggedError<WebhooksError>()("WebhooksError", { reason: Reasons([WebhookNotFound, InvalidInput]) }) {}

export const refuse = (reason: WebhooksError["reason"]) => Effect.fail(new WebhooksError({ reason }))
