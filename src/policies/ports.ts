/**
 * What the actions flow asks of policies, the endpoint whitelist and output
 * filtering. Implemented in `src/policies/`, `src/whitelist/` and
 * `src/output-policies/`; consumed by `src/actions/`. Also what policies ask
 * of the organization's actor (`OrgPolicies`, implemented in `actors/org.ts`).
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { OrgSnapshotPort } from "../platform/org-snapshot.js"
import type { OutputPolicy } from "../scan/output-filter.js"
import type { EvaluablePolicy } from "./types.js"

/** An organization's active policies, compiled; the version grows with every change. */
export interface OrgPolicySnapshot {
  readonly version: number
  readonly policies: ReadonlyArray<EvaluablePolicy>
}

/** The organization's policies as its OrgActor holds them. */
export class OrgPolicies extends Context.Service<OrgPolicies, OrgSnapshotPort<OrgPolicySnapshot>>()("gateway/OrgPolicies") {}

/** What a policy sees of an action being authorized. */
export interface ActionSubject {
  readonly action_type: string
  readonly details: string
  readonly agent_id: string | null
  readonly agent_version: string | null
  readonly model_id: string | null
  readonly model_version: string | null
  readonly endpoint_url: string | null
  readonly instruction_hash: string | null
  readonly context: Record<string, unknown> | null
}

export interface PolicyVerdict {
  readonly decision: "allow" | "require_approval" | "deny"
  /** The highest-priority policy that produced the winning decision; null when nothing matched. */
  readonly policy_uuid: string | null
  readonly reasoning: string
  /** Fail-closed notices (e.g. an AI policy that could not be evaluated). */
  readonly warnings: ReadonlyArray<string>
  /** Every policy evaluated, in order, as the JSON text the action stores (src/policies/recorded.ts). */
  readonly evaluations: string
}

export class PolicyDecisions extends Context.Service<
  PolicyDecisions,
  {
    /** Evaluates every active policy of the organization (from its cached snapshot) and counts the evaluations. */
    readonly evaluate: (orgUuid: string, subject: ActionSubject) => Effect.Effect<PolicyVerdict>
  }
>()("gateway/PolicyDecisions") {}

export type EndpointCheck =
  | { readonly outcome: "allowed" }
  | { readonly outcome: "warn"; readonly warning: string }
  | { readonly outcome: "blocked"; readonly approval_id: string; readonly url_pattern_suggested: string }
  | { readonly outcome: "tls_mismatch"; readonly message: string; readonly expected: string; readonly actual: string | null }

export class EndpointGuard extends Context.Service<
  EndpointGuard,
  {
    /** Matches `endpoint_url` against the organization's whitelist; in strict mode a miss creates an approval request. */
    readonly check: (orgUuid: string, input: { readonly url: string; readonly agentId: string | null; readonly actionType: string }) => Effect.Effect<EndpointCheck>
  }
>()("gateway/EndpointGuard") {}

export class OutputFiltering extends Context.Service<
  OutputFiltering,
  {
    /** The organization's output policy (defaults when never set), honouring the `enable_output_filtering` flag. */
    readonly policyFor: (orgUuid: string) => Effect.Effect<OutputPolicy>
  }
>()("gateway/OutputFiltering") {}
