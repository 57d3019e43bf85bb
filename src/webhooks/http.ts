/** Handlers of `/api/v1/webhooks*` (scopes webhooks:read / webhooks:write). */
import * as Effect from "effect/Effect"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { NotFound, Unprocessable } from "../../protocol/errors.js"
import { requireRole, requireScope } from "../access/guards.js"
import { answer } from "../platform/wire-errors.js"
import { Webhooks } from "./service.js"

const createErrors = answer({ InvalidInput: Unprocessable })
const hookErrors = answer({ WebhookNotFound: NotFound })

export const WebhooksHttp = HttpApiBuilder.group(GatewayApi, "webhooks", (handlers) =>
  Effect.gen(function* () {
    const webhooks = yield* Webhooks
    return handlers
      .handle("create", ({ payload }) =>
        Effect.flatMap(requireScope("webhooks:write"), (principal) => createErrors(webhooks.create(principal.orgUuid, payload)))
      )
      .handle("list", () => Effect.flatMap(requireScope("webhooks:read"), (principal) => webhooks.list(principal.orgUuid)))
      .handle("remove", ({ params }) =>
        // Deleting an endpoint silences what the organization watches with it: owner or admin only.
        Effect.flatMap(Effect.flatMap(requireScope("webhooks:write"), requireRole(["owner", "admin"], "deleting webhooks")), (principal) =>
          hookErrors(webhooks.remove(principal.orgUuid, params.webhook_id))
        )
      )
      .handle("deliveries", ({ params, query }) =>
        Effect.flatMap(requireScope("webhooks:read"), (principal) =>
          hookErrors(webhooks.deliveries(principal.orgUuid, params.webhook_id, query.page ?? 1, query.per_page ?? 20))
        )
      )
  })
)
