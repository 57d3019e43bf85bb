/** Handlers of `/api/v1/notifications/*`. */
import * as Effect from "effect/Effect"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { requireScope } from "../access/guards.js"
import { Notifications } from "./service.js"

export const NotificationsHttp = HttpApiBuilder.group(GatewayApi, "notifications", (handlers) =>
  Effect.gen(function* () {
    const notifications = yield* Notifications
    return handlers
      .handle("pending", () => Effect.flatMap(requireScope("notifications:read"), notifications.pending))
      .handle("markRead", ({ payload }) =>
        Effect.flatMap(requireScope("notifications:write"), (principal) => notifications.markRead(principal, payload.notification_keys))
      )
      .handle("markAllRead", () => Effect.flatMap(requireScope("notifications:write"), notifications.markAllRead))
  })
)
