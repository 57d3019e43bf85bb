/** Handlers of `/api/v1/approvers/notification-channels` (admin or owner). */
import * as Effect from "effect/Effect"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { requireRole, requireScope } from "../access/guards.js"
import { refusals } from "../platform/wire-errors.js"
import { ApprovalChannels } from "./service.js"

export const NotificationChannelsHttp = HttpApiBuilder.group(GatewayApi, "notificationChannels", (handlers) =>
  Effect.gen(function* () {
    const channels = yield* ApprovalChannels
    return handlers
      .handle("get", () =>
        Effect.gen(function* () {
          const principal = yield* requireScope("notifications:read")
          yield* requireRole(["owner", "admin"], "notification channels")(principal)
          return yield* channels.get(principal.orgUuid)
        })
      )
      .handle("put", ({ payload }) =>
        Effect.gen(function* () {
          const principal = yield* requireScope("notifications:write")
          yield* requireRole(["owner", "admin"], "notification channels")(principal)
          return yield* channels.put(principal.orgUuid, payload).pipe(refusals("ChannelsError", "InvalidInput"))
        })
      )
  })
)
