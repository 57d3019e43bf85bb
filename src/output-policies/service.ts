/**
 * Output policies: one per organization (defaults until set), and the
 * OutputFiltering port used on notarize. The `enable_output_filtering` flag, resolved
 * per organization (absent: `ENABLE_OUTPUT_FILTERING`, default on), switches filtering off.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql"
import type { Principal } from "../../protocol/auth.js"
import { Flags } from "../flags/service.js"
import { jsonb } from "../platform/db/index.js"
import { InvalidInput } from "../platform/domain-error.js"
import { jsonValue } from "../platform/sql.js"
import { OutputFiltering } from "../policies/ports.js"
import { DEFAULT_OUTPUT_POLICY, filterOutput, mergeOutputPolicy, type OutputPolicy } from "../scan/output-filter.js"
import { refuse } from "./errors.js"

/** The stored document is merged over the defaults, so fields added later get their default. */
const fromStored = (stored: unknown): OutputPolicy => {
  const merged = mergeOutputPolicy(DEFAULT_OUTPUT_POLICY, jsonValue<unknown>(stored, {}))
  return merged.ok ? merged.policy : DEFAULT_OUTPUT_POLICY
}

const view = (policy: OutputPolicy) => ({
  enabled: policy.enabled,
  mode: policy.mode,
  libraries: [...policy.libraries],
  deny_severity_threshold: policy.deny_severity_threshold,
  redact_severity_threshold: policy.redact_severity_threshold
})

export const makeOutputPolicies = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const load = (orgUuid: string) =>
    sql`SELECT policy FROM output_policies WHERE org_uuid = ${orgUuid}`.pipe(
      Effect.map((rows) => (rows[0] ? fromStored(rows[0].policy) : DEFAULT_OUTPUT_POLICY)),
      Effect.orDie
    )

  return {
    load,
    get: (principal: Principal) => Effect.map(load(principal.orgUuid), view),
    update: (principal: Principal, patch: unknown) =>
      Effect.gen(function* () {
        const merged = mergeOutputPolicy(yield* load(principal.orgUuid), patch)
        if (!merged.ok) return yield* refuse(new InvalidInput({ issues: merged.issues }))
        const stored = view(merged.policy)
        yield* sql`INSERT INTO output_policies (org_uuid, policy) VALUES (${principal.orgUuid}, ${jsonb(stored)})
                   ON CONFLICT (org_uuid) DO UPDATE SET policy = EXCLUDED.policy, updated_at = now()`.pipe(Effect.orDie)
        return stored
      }),
    test: (principal: Principal, text: string) =>
      Effect.map(load(principal.orgUuid), (policy) => {
        // The test shows what the policy would do, even while it is disabled.
        const result = filterOutput(text, { ...policy, enabled: true })
        return { flags: [...result.flags], denied: result.denied, redacted_text: result.redacted_text ?? null }
      })
  }
})

export class OutputPolicies extends Context.Service<OutputPolicies, Effect.Success<typeof makeOutputPolicies>>()("gateway/OutputPolicies") {
  static readonly layer = Layer.effect(OutputPolicies, makeOutputPolicies)
}

export const OutputFilteringLive = Layer.effect(
  OutputFiltering,
  Effect.gen(function* () {
    const policies = yield* OutputPolicies
    const flags = yield* Flags
    return {
      policyFor: (orgUuid) =>
        Effect.flatMap(flags.isEnabled(orgUuid, "enable_output_filtering"), (enabled) =>
          enabled ? policies.load(orgUuid) : Effect.succeed({ ...DEFAULT_OUTPUT_POLICY, enabled: false })
        )
    }
  })
)

export const outputPoliciesLayer = OutputFilteringLive.pipe(Layer.provideMerge(OutputPolicies.layer))
