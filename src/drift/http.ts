/** Handlers of `/api/v1/agents/{agent_id}/drift…`: keys or JWTs, except acknowledgement (JWT only, so a person is recorded). */
import * as Effect from "effect/Effect"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { listPage } from "../../protocol/common.js"
import { requireJwt, requireScope } from "../access/guards.js"
import { refusals } from "../platform/wire-errors.js"
import { DEFAULT_LOOKBACK_HOURS, Drift } from "./service.js"

const createErrors = refusals("DriftError", "DriftAgentNotFound", "InvalidInput")
const readErrors = refusals("DriftError", "DriftAgentNotFound")
const acknowledgeErrors = refusals("DriftError", "DriftAlertNotFound")

export const DriftHttp = HttpApiBuilder.group(GatewayApi, "drift", (handlers) =>
  Effect.gen(function* () {
    const drift = yield* Drift
    return handlers
      .handle("baseline", ({ params, payload }) =>
        Effect.flatMap(requireScope("drift:write"), (principal) => createErrors(drift.createProduction(principal.orgUuid, params.agent_id, payload)))
      )
      .handle("syntheticBaseline", ({ params, payload }) =>
        Effect.flatMap(requireScope("drift:write"), (principal) => createErrors(drift.createSynthetic(principal.orgUuid, params.agent_id, payload)))
      )
      .handle("pooledBaseline", ({ params, payload }) =>
        Effect.flatMap(requireScope("drift:write"), (principal) => createErrors(drift.createPooled(principal.orgUuid, params.agent_id, payload)))
      )
      .handle("status", ({ params, query }) =>
        Effect.flatMap(requireScope("drift:read"), (principal) =>
          readErrors(drift.status(principal.orgUuid, params.agent_id, query.lookback_hours ?? DEFAULT_LOOKBACK_HOURS))
        )
      )
      .handle("check", ({ params, query }) =>
        Effect.flatMap(requireScope("drift:write"), (principal) =>
          readErrors(drift.check(principal.orgUuid, params.agent_id, query.lookback_hours ?? DEFAULT_LOOKBACK_HOURS))
        )
      )
      .handle("alerts", ({ params, query }) =>
        Effect.flatMap(requireScope("drift:read"), (principal) => {
          const page = query.page ?? 1
          const perPage = query.per_page ?? 50
          const acknowledged = query.acknowledged === undefined ? undefined : query.acknowledged === "true"
          return Effect.map(readErrors(drift.alerts(principal.orgUuid, params.agent_id, { page, perPage, acknowledged })), (found) =>
            listPage(found.items, { page, perPage, total: found.total })
          )
        })
      )
      .handle("acknowledge", ({ params }) =>
        Effect.flatMap(requireJwt, (principal) => acknowledgeErrors(drift.acknowledge(principal.orgUuid, params.agent_id, params.alert_id, principal.email)))
      )
  })
)
