/**
 * Output policies: one per organization (defaults until set), and the
 * OutputFiltering port used on notarize. The `enable_output_filtering` flag, resolved
 * per organization (absent: `ENABLE_OUTPUT_FILTERING`, default on), switches filtering off.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Principal } from "../../protocol/auth.js"
import { InvalidInput } from "../../protocol/errors.js"
import type { OutputPolicyTest, OutputPolicyView } from "../../protocol/output-policies.js"
import { Flags } from "../flags/service.js"
import { OutputFiltering } from "../policies/ports.js"
import { DEFAULT_OUTPUT_POLICY, filterOutput, mergeOutputPolicy, type OutputPolicy } from "../scan/output-filter.js"
import { type OutputPoliciesError, refuse } from "./errors.js"
import { makeOutputPoliciesStore } from "./store.js"

/** The stored document is merged over the defaults, so fields added later get their default. */
const fromStored = (stored: Record<string, unknown>): OutputPolicy => {
  const merged = mergeOutputPolicy(DEFAULT_OUTPUT_POLICY, stored)
  return merged.ok ? merged.policy : DEFAULT_OUTPUT_POLICY
}

const view = (policy: OutputPolicy): OutputPolicyView => ({
  enabled: policy.enabled,
  mode: policy.mode,
  libraries: [...policy.libraries],
  deny_severity_threshold: policy.deny_severity_threshold,
  redact_severity_threshold: policy.redact_severity_threshold
})

export interface OutputPoliciesService {
  /** The organization's policy as notarize applies it (defaults until set). */
  readonly load: (orgUuid: string) => Effect.Effect<OutputPolicy>
  readonly get: (principal: Principal) => Effect.Effect<OutputPolicyView>
  /** A partial update; every issue of the patch is listed in one InvalidInput. */
  readonly update: (principal: Principal, patch: unknown) => Effect.Effect<OutputPolicyView, OutputPoliciesError>
  readonly test: (principal: Principal, text: string) => Effect.Effect<OutputPolicyTest>
}

export const makeOutputPolicies = Effect.gen(function* () {
  const store = yield* makeOutputPoliciesStore

  const load = Effect.fn("OutputPolicies.load")(function* (orgUuid: string) {
    const stored = yield* store.find(orgUuid)
    return stored === undefined ? DEFAULT_OUTPUT_POLICY : fromStored(stored)
  })

  const get = Effect.fn("OutputPolicies.get")(function* (principal: Principal) {
    return view(yield* load(principal.orgUuid))
  })

  const update = Effect.fn("OutputPolicies.update")(function* (principal: Principal, patch: unknown) {
    const merged = mergeOutputPolicy(yield* load(principal.orgUuid), patch)
    if (!merged.ok) return yield* refuse(InvalidInput.of(merged.issues))
    const stored = view(merged.policy)
    yield* store.save(principal.orgUuid, stored)
    return stored
  })

  const test = Effect.fn("OutputPolicies.test")(function* (principal: Principal, text: string) {
    const policy = yield* load(principal.orgUuid)
    // The test shows what the policy would do, even while it is disabled.
    const result = filterOutput(text, { ...policy, enabled: true })
    return { flags: [...result.flags], denied: result.denied, redacted_text: result.redacted_text ?? null }
  })

  return OutputPolicies.of({ load, get, update, test })
})

export class OutputPolicies extends Context.Service<OutputPolicies, OutputPoliciesService>()("gateway/OutputPolicies") {
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
