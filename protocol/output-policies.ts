/** Output policy of an organization (release 2026-04-15, output filtering on notarize). */

import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { Authenticated } from "./auth.js"
import { Forbidden, InvalidInput } from "./errors.js"

export const OutputPolicyView = Schema.Struct({
  enabled: Schema.Boolean,
  mode: Schema.String,
  libraries: Schema.Array(Schema.String),
  deny_severity_threshold: Schema.String,
  redact_severity_threshold: Schema.String
})
export type OutputPolicyView = typeof OutputPolicyView.Type

export const OutputPolicyTest = Schema.Struct({
  flags: Schema.Array(Schema.Struct({ entity_type: Schema.String, severity: Schema.String, library: Schema.String, count: Schema.Number })),
  denied: Schema.Boolean,
  redacted_text: Schema.NullOr(Schema.String)
})
export type OutputPolicyTest = typeof OutputPolicyTest.Type

export class OutputPoliciesGroup extends HttpApiGroup.make("outputPolicies")
  .add(
    HttpApiEndpoint.get("get", "/api/v1/output-policies", { error: Forbidden, success: OutputPolicyView }),
    // Validated by mergeOutputPolicy so every issue is listed in one 422.
    HttpApiEndpoint.patch("update", "/api/v1/output-policies", { error: [Forbidden, InvalidInput],
      payload: Schema.Record(Schema.String, Schema.Unknown),
      success: OutputPolicyView
    }),
    HttpApiEndpoint.post("test", "/api/v1/output-policies/test", { error: Forbidden,
      payload: Schema.Struct({ text: Schema.String.check(Schema.isMaxLength(1_000_000)) }),
      success: OutputPolicyTest
    })
  )
  .middleware(Authenticated)
  .annotateMerge(OpenApi.annotations({ title: "Output policies", description: "Scanning of `outcome_details` on notarize (admin)." }))
{}
