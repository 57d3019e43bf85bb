/** Handlers of `/api/v1/analytics/*` (admin or owner; non-admins get 403). */
import * as Effect from "effect/Effect"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { requireRole, requireScope } from "../access/guards.js"
import { Analytics } from "./service.js"

const DEFAULT_DAYS = 30

export const AnalyticsHttp = HttpApiBuilder.group(GatewayApi, "analytics", (handlers) =>
  Effect.gen(function* () {
    const analytics = yield* Analytics
    const admin = Effect.flatMap(requireScope("analytics:read"), requireRole(["owner", "admin"], "analytics"))
    return handlers
      .handle("actionsOverTime", ({ query }) =>
        Effect.flatMap(admin, (p) => analytics.actionsOverTime(p.orgUuid, query.days ?? DEFAULT_DAYS, query.period ?? "daily"))
      )
      .handle("approvalRates", ({ query }) => Effect.flatMap(admin, (p) => analytics.approvalRates(p.orgUuid, query.days ?? DEFAULT_DAYS)))
      .handle("modelAgreement", ({ query }) => Effect.flatMap(admin, (p) => analytics.modelAgreement(p.orgUuid, query.days ?? DEFAULT_DAYS)))
      .handle("policyDenials", ({ query }) => Effect.flatMap(admin, (p) => analytics.policyDenials(p.orgUuid, query.days ?? DEFAULT_DAYS)))
      .handle("topAgents", ({ query }) =>
        Effect.flatMap(admin, (p) => analytics.topAgents(p.orgUuid, query.days ?? DEFAULT_DAYS, query.limit ?? 10))
      )
      .handle("timeseries", ({ query }) => Effect.flatMap(admin, (p) => analytics.timeseries(p.orgUuid, query)))
  })
)
