/**
 * Webhooks (spec "Webhooks", CONTRACT.md "Webhooks"): registration, listing,
 * removal and the delivery log.
 */

import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { Authenticated } from "./auth.js"
import { NullableTimestamp, PageQuery, Pagination, Timestamp } from "./common.js"
import { Forbidden, InvalidInput, refusal } from "./errors.js"

export const WebhookStatuses = ["active", "disabled"] as const
export const DeliveryStatuses = ["pending", "delivered", "failed"] as const

export const Webhook = Schema.Struct({
  id: Schema.String,
  url: Schema.String,
  secret: Schema.NullOr(Schema.String).annotate({ description: "`whsec_…`; only in the creation response, otherwise null" }),
  events: Schema.Array(Schema.String),
  status: Schema.Literals(WebhookStatuses),
  created_at: Timestamp
})

export type Webhook = typeof Webhook.Type

export const WebhookDelivery = Schema.Struct({
  id: Schema.String.annotate({ description: "also the `webhook-id` header; the same on every retry" }),
  event: Schema.String,
  payload: Schema.Record(Schema.String, Schema.Unknown),
  status_code: Schema.NullOr(Schema.Int),
  attempt: Schema.Int,
  status: Schema.Literals(DeliveryStatuses),
  delivered_at: NullableTimestamp,
  created_at: Timestamp
})

export type WebhookDelivery = typeof WebhookDelivery.Type

export class WebhookNotFound extends Schema.Error<WebhookNotFound>("WebhookNotFound")(refusal("NOT_FOUND", "Webhook not found"), {
  httpApiStatus: 404,
  description: "No such webhook in the caller's organization"
}) {
  readonly _tag = "WebhookNotFound"
}

export const CreateWebhookRequest = Schema.Struct({
  url: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(2048)),
  events: Schema.optionalKey(Schema.Array(Schema.String).check(Schema.isMinLength(1), Schema.isMaxLength(50)))
})

export class WebhooksGroup extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.post("create", "/api/v1/webhooks", { error: [Forbidden, InvalidInput],
      payload: CreateWebhookRequest,
      success: Webhook.pipe(HttpApiSchema.status(201))
    }),
    HttpApiEndpoint.get("list", "/api/v1/webhooks", { error: Forbidden,
      success: Schema.Array(Webhook)
    }),
    HttpApiEndpoint.delete("remove", "/api/v1/webhooks/:webhook_id", { error: [Forbidden, WebhookNotFound],
      params: { webhook_id: Schema.String },
      success: HttpApiSchema.NoContent
    }),
    HttpApiEndpoint.get("deliveries", "/api/v1/webhooks/:webhook_id/deliveries", { error: [Forbidden, WebhookNotFound],
      params: { webhook_id: Schema.String },
      query: PageQuery,
      success: Schema.Struct({ data: Schema.Array(WebhookDelivery), pagination: Pagination })
    })
  )
  .middleware(Authenticated)
  .annotateMerge(
    OpenApi.annotations({
      title: "Webhooks",
      description:
        "Signed HTTPS callbacks (Standard Webhooks headers `webhook-id`, `webhook-timestamp`, `webhook-signature`, plus `X-Signature: sha256=<hex>`). Retries after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h."
    })
  )
{}
