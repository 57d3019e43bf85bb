/** Handlers of `/api/v1/webhooks*` (scopes webhooks:read / webhooks:write). */
import * as Effect from "effect/Effect"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { requireRole, requireScope } from "../access/guards.js"
import { refusals } from "../platform/wire-errors.js"
import { Webhooks } from "./service.js"

export const WebhooksHttp = HttpApiBuilder.group(GatewayApi, "webhooks", (handlers) =>
  Effect.gen(function* () {
    const webhooks = yield* Webhooks
    return handlers
      .handle("create", ({ payload }) =>
        Effect.flatMap(requireScope("webhooks:write"), (principal) =>
          webhooks.create(principal.orgUuid, payload).pipe(refusals("WebhooksError", "InvalidInput"))
        )
      )
      .handle("list", () => Effect.flatMap(requireScope("webhooks:read"), (principal) => webhooks.list(principal.orgUuid)))
      .handle("remove", ({ params }) =>
        // Deleting an endpoint silences what the organization watches with it: owner or admin only.
        Effect.flatMap(Effect.flatMap(requireScope("webhooks:write"), requireRole(["owner", "admin"], "deleting webhooks")), (principal) =>
          webhooks.remove(principal.orgUuid, params.webhook_id).pipe(refusals("WebhooksError", "WebhookNotFound"))
        )
      )
      .handle("deliveries", ({ params, query }) =>
        Effect.flatMap(requireScope("webhooks:read"), (principal) =>
          webhooks
            .deliveries(principal.orgUuid, params.webhook_id, query.page ?? 1, query.per_page ?? 20)
            .pipe(refusals("WebhooksError", "WebhookNotFound"))
        )
      )
  })
)
