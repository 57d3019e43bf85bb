/** Handlers of `/api/v1/feature-flags*` (API key, toggling needs the admin role) and `/api/v1/admin/feature-flags*` (X-Admin-Key). */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { requireRole, requireScope } from "../access/guards.js"
import { requestIdOf } from "../gateway/request.js"
import { auditActor } from "../platform/audit.js"
import { refusals } from "../platform/wire-errors.js"
import { Flags } from "./service.js"

const missing = refusals("FlagsError", "FlagNotFound")
const requestId = Effect.map(HttpServerRequest, requestIdOf)
const platformAdmin = Effect.map(requestId, (id) => ({ orgUuid: null, actor: "platform-admin", requestId: id }))

export const FlagsHttp = HttpApiBuilder.group(GatewayApi, "flags", (handlers) =>
  Effect.gen(function* () {
    const flags = yield* Flags
    return handlers
      .handle("resolved", () =>
        Effect.flatMap(requireScope("flags:read"), (principal) => Effect.map(flags.resolvedFor(principal.orgUuid), (resolved) => ({ flags: resolved })))
      )
      .handle("toggle", ({ params, payload }) =>
        Effect.gen(function* () {
          const principal = yield* Effect.flatMap(requireScope("flags:write"), requireRole(["owner", "admin"], "toggling a feature flag"))
          const who = { orgUuid: principal.orgUuid, actor: auditActor(principal), requestId: yield* requestId }
          return yield* flags.toggle(who, params.key, payload.enabled).pipe(missing)
        })
      )
  })
)

export const FlagsAdminHttp = HttpApiBuilder.group(GatewayApi, "flagsAdmin", (handlers) =>
  Effect.gen(function* () {
    const flags = yield* Flags
    return handlers
      .handle("list", () => flags.list)
      .handle("create", ({ payload }) => Effect.flatMap(platformAdmin, (who) => flags.create(who, payload).pipe(refusals("FlagsError", "FlagExists"))))
      .handle("update", ({ params, payload }) => Effect.flatMap(platformAdmin, (who) => flags.update(who, params.key, payload).pipe(missing)))
      .handle("remove", ({ params }) => Effect.flatMap(platformAdmin, (who) => flags.remove(who, params.key)))
      .handle("enableOrg", ({ params }) => Effect.flatMap(platformAdmin, (who) => flags.enableOrg(who, params.key, params.org_uuid).pipe(missing)))
      .handle("disableOrg", ({ params }) => Effect.flatMap(platformAdmin, (who) => flags.disableOrg(who, params.key, params.org_uuid).pipe(missing)))
  })
)
