/** Vocabulary shared by policy validation and evaluation. */

import { PolicyDecisions, PolicyModes, PolicyStatuses } from "../../protocol/lists.js"
import type { CompiledCustomPattern } from "../scan/custom.js"
import type { Library } from "../scan/types.js"
import type { CompiledConditions } from "./conditions.js"

export type PolicyMode = (typeof PolicyModes)[number]
export type PolicyDecision = (typeof PolicyDecisions)[number]
export type PolicyStatus = (typeof PolicyStatuses)[number]

export const POLICY_MODES: ReadonlyArray<PolicyMode> = PolicyModes
export const POLICY_DECISIONS: ReadonlyArray<PolicyDecision> = PolicyDecisions
export const POLICY_STATUSES: ReadonlyArray<PolicyStatus> = PolicyStatuses

const DECISION_RANK: Readonly<Record<PolicyDecision, number>> = { allow: 0, require_approval: 1, deny: 2 }

/** deny > require_approval > allow. */
export const decisionRank = (decision: PolicyDecision): number => DECISION_RANK[decision]

/** What an authorization asks to do: the fields conditions can address. */
export interface PolicySubject {
  readonly action_type: string
  readonly details: string
  readonly agent_id?: string | null
  readonly agent_version?: string | null
  readonly model_id?: string | null
  readonly model_version?: string | null
  readonly endpoint_url?: string | null
  readonly instruction_hash?: string | null
  readonly context?: Readonly<Record<string, unknown>> | null
}

export interface PolicyScope {
  readonly agent_ids?: ReadonlyArray<string> | null
  readonly action_types?: ReadonlyArray<string> | null
}

/** A content_scan policy's `scan_config`, compiled (see content-scan.ts). */
export interface CompiledScanConfig {
  readonly libraries: ReadonlyArray<Library>
  readonly customPatterns: ReadonlyArray<CompiledCustomPattern>
}

/**
 * A policy ready for evaluation: the stored row plus its compiled parts (compile once
 * when the organization's policy snapshot is loaded, not per request).
 */
export interface EvaluablePolicy {
  readonly id: string
  readonly name: string
  readonly mode: PolicyMode
  readonly decision: PolicyDecision
  readonly priority: number
  /** ISO-8601 text or a Date; breaks priority ties, older first. */
  readonly created_at: string | Date
  /** When given, only `active` policies take part in combineDecisions. */
  readonly status?: PolicyStatus
  readonly scope?: PolicyScope | null
  /** Rules mode. */
  readonly rules?: CompiledConditions
  /** content_scan mode. */
  readonly scan?: CompiledScanConfig
  /** ai and consensus modes: the policy text, its models, and a version that changes with every edit. */
  readonly ai?: { readonly prompt: string; readonly models: ReadonlyArray<string>; readonly version: string }
}
