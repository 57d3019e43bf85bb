/** Handlers of `/api/v1/gateway/settings` (the gateway's own routes are in server.ts). */
import * as Effect from "effect/Effect"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { requireRole, requireScope } from "../access/guards.js"
import { LlmGateway } from "./service.js"

export const LlmGatewayHttp = HttpApiBuilder.group(GatewayApi, "llmGateway", (handlers) =>
  Effect.gen(function* () {
    const gateway = yield* LlmGateway
    return handlers
      .handle("settings", () => Effect.flatMap(requireScope("gateway:read"), (principal) => gateway.settings(principal.orgUuid)))
      .handle("updateSettings", ({ payload }) =>
        requireScope("gateway:write").pipe(
          Effect.flatMap(requireRole(["owner", "admin"], "changing the gateway settings")),
          Effect.flatMap((principal) => gateway.updateSettings(principal.orgUuid, payload.store_details))
        )
      )
  })
)
