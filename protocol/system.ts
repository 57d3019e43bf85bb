/**
 * Health and readiness (root paths, no `/api/v1` prefix). Prometheus metrics are not part of the
 * public API: they are served on a listener of their own (`METRICS_PORT`), see the README.
 */

import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"

const Check = Schema.Struct({
  ok: Schema.Boolean,
  kind: Schema.String,
  latency_ms: Schema.Finite,
  error: Schema.optionalKey(Schema.String)
})
const readinessFields = {
  status: Schema.Literals(["ok", "unavailable"]),
  checks: Schema.Struct({ database: Check, redis: Check })
}

export const Health = Schema.Struct({ status: Schema.Literal("ok") })
export const Readiness = Schema.Struct(readinessFields)
export class NotReady extends Schema.Error<NotReady>("NotReady")(readinessFields, { httpApiStatus: 503, description: "A dependency is not answering" }) {}

export class SystemGroup extends HttpApiGroup.make("system")
  .add(
    HttpApiEndpoint.get("health", "/health", { success: Health }),
    HttpApiEndpoint.get("ready", "/health/ready", { success: Readiness, error: NotReady })
  )
  .annotateMerge(OpenApi.annotations({ title: "System", description: "Liveness and readiness (database and Redis)." }))
{}
