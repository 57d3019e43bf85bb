/** Health, readiness and metrics (root paths, no `/api/v1` prefix). */

import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
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
    HttpApiEndpoint.get("ready", "/health/ready", { success: Readiness, error: NotReady }),
    HttpApiEndpoint.get("metrics", "/metrics", {
      success: Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/plain; version=0.0.4" }))
    })
  )
  .annotateMerge(OpenApi.annotations({ title: "System", description: "Liveness, readiness (database and Redis) and Prometheus metrics." }))
{}
