/** Handlers of `/api/v1/feature-flags*` (API key, toggling needs the admin role) and `/api/v1/admin/feature-flags*` (X-Admin-Key). */
import * as Effect from "effect/Effect"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { Conflict, NotFound } from "../../protocol/errors.js"
import { requireRole, requireScope } from "../access/guards.js"
import { answer } from "../platform/wire-errors.js"
import { Flags } from "./service.js"

const missing = answer({ FlagNotFound: NotFound })

export const FlagsHttp = HttpApiBuilder.group(GatewayApi, "flags", (handlers) =>
  Effect.gen(function* () {
    const flags = yield* Flags
    return handlers
      .handle("resolved", () =>
        Effect.flatMap(requireScope("flags:read"), (principal) => Effect.map(flags.resolvedFor(principal.orgUuid), (resolved) => ({ flags: resolved })))
      )
      .handle("toggle", ({ params, payload }) =>
        Effect.flatMap(Effect.flatMap(requireScope("flags:write"), requireRole(["owner", "admin"], "toggling a feature flag")), (principal) =>
          missing(flags.toggle(principal.orgUuid, params.key, payload.enabled))
        )
      )
  })
)

export const FlagsAdminHttp = HttpApiBuilder.group(GatewayApi, "flagsAdmin", (handlers) =>
  Effect.gen(function* () {
    const flags = yield* Flags
    return handlers
      .handle("list", () => flags.list)
      .handle("create", ({ payload }) => answer({ FlagExists: Conflict })(flags.create(payload)))
      .handle("update", ({ params, payload }) => missing(flags.update(params.key, payload)))
      .handle("remove", ({ params }) => flags.remove(params.key))
      .handle("enableOrg", ({ params }) => missing(flags.enableOrg(params.key, params.org_uuid)))
      .handle("disableOrg", ({ params }) => missing(flags.disableOrg(params.key, params.org_uuid)))
  })
)
