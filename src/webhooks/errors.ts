/** Why a webhook operation was refused. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidInput } from "../platform/domain-error.js"

export class WebhookNotFound extends Schema.TaggedError<WebhookNotFound>()("WebhookNotFound", {}) {
  readonly code = "NOT_FOUND"
  override readonly message = "Webhook not found"
}

export class WebhooksError extends Schema.TaggedError<WebhooksError>()("WebhooksError", { reason: Schema.Union([WebhookNotFound, InvalidInput]) }) {}

export const refuse = (reason: WebhooksError["reason"]) => Effect.fail(new WebhooksError({ reason }))
