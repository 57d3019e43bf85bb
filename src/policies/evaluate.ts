/**
 * Pure policy evaluation: conditions against a subject, and the combination of every
 * active, in-scope policy of an organization into one decision (CONTRACT.md, Policies).
 */
import type { CompiledCondition, CompiledConditions, FieldRef } from "./conditions.js"
import { matchContentScan } from "./content-scan.js"
import {
  decisionRank,
  type EvaluablePolicy,
  type PolicyDecision,
  type PolicyMode,
  type PolicySubject
} from "./types.js"

// ---------------------------------------------------------------------------
// Conditions
//
// Semantics, chosen to be conservative and predictable:
// - A missing field (absent, null, or a context key that is not there) never satisfies
//   eq, in, contains, regex, gt, lt, gte or lte; `neq` and `not_in` on it are true
//   (a value that is not there is not equal to, and not in, anything).
// - No type coercion: eq compares with ===, so "5" and 5 differ; membership uses
//   SameValueZero on the exact JSON value.
// - gt/lt/gte/lte compare JSON numbers only. A numeric string such as "1500" in
//   context does not match `gt 1000`: agents must send amounts as numbers, and a
//   string never silently turns into a number.
// - contains: substring test when both sides are strings; membership when the field is
//   an array (e.g. context.tags contains "pii"); false otherwise.
// - regex: strings only, unanchored search, RE2 semantics (linear time).
// - in / not_in: the field must be a scalar to be a member; an object or array field is
//   never `in` a list (so `not_in` is true for it).
// ---------------------------------------------------------------------------

const hasOwn = Object.prototype.hasOwnProperty

/** Reads `context.<key>`: the whole key first (keys may contain dots), then a nested path. */
const readContext = (context: PolicySubject["context"], key: string, path: ReadonlyArray<string>): unknown => {
  if (context === undefined || context === null) return undefined
  if (hasOwn.call(context, key)) return context[key]
  if (path.length < 2) return undefined
  let current: unknown = context
  for (const segment of path) {
    if (typeof current !== "object" || current === null || Array.isArray(current)) return undefined
    if (!hasOwn.call(current, segment)) return undefined
    current = (current as Record<string, unknown>)[segment]
  }
  return current
}

export const readField = (subject: PolicySubject, field: FieldRef): unknown =>
  field.kind === "top" ? subject[field.name] : readContext(subject.context, field.key, field.path)

const isMember = (value: unknown): value is string | number | boolean =>
  typeof value === "string" || typeof value === "number" || typeof value === "boolean"

export const conditionHolds = (condition: CompiledCondition, subject: PolicySubject): boolean => {
  const value = readField(subject, condition.field)
  const missing = value === undefined || value === null
  switch (condition.op) {
    case "eq":
      return !missing && value === condition.value
    case "neq":
      return missing || value !== condition.value
    case "in":
      return !missing && isMember(value) && condition.values.has(value)
    case "not_in":
      return missing || !isMember(value) || !condition.values.has(value)
    case "contains":
      if (typeof value === "string") return typeof condition.value === "string" && value.includes(condition.value)
      if (Array.isArray(value)) return value.includes(condition.value)
      return false
    case "regex":
      return typeof value === "string" && condition.regex.test(value)
    case "gt":
      return typeof value === "number" && value > condition.value
    case "lt":
      return typeof value === "number" && value < condition.value
    case "gte":
      return typeof value === "number" && value >= condition.value
    case "lte":
      return typeof value === "number" && value <= condition.value
  }
}

/** All conditions must hold (AND). An empty list holds. */
export const evaluateRules = (compiled: CompiledConditions, subject: PolicySubject): boolean => {
  for (const condition of compiled.conditions) {
    if (!conditionHolds(condition, subject)) return false
  }
  return true
}

// ---------------------------------------------------------------------------
// One policy
// ---------------------------------------------------------------------------

/** What evaluating one policy against one subject gave. */
export type PolicyMatch =
  | { readonly kind: "match"; readonly reason: string }
  | { readonly kind: "no_match" }
  /** The policy could not be evaluated: it fails closed to require_approval with `warning`. */
  | { readonly kind: "unavailable"; readonly warning: string }

export type PolicyEvaluator = (policy: EvaluablePolicy, subject: PolicySubject) => PolicyMatch
export type PolicyEvaluators = Readonly<Record<PolicyMode, PolicyEvaluator>>

const aiUnavailable: PolicyEvaluator = (policy) => ({
  kind: "unavailable",
  warning: `AI policy ${policy.name} could not be evaluated (no model call available); human approval required`
})

export const defaultEvaluators: PolicyEvaluators = {
  rules: (policy, subject) => {
    if (policy.rules === undefined) {
      return { kind: "unavailable", warning: `Policy ${policy.name} has no compiled conditions; human approval required` }
    }
    return evaluateRules(policy.rules, subject)
      ? { kind: "match", reason: `all ${policy.rules.conditions.length} condition(s) of policy ${policy.name} hold` }
      : { kind: "no_match" }
  },
  content_scan: (policy, subject) => {
    if (policy.scan === undefined) {
      return { kind: "unavailable", warning: `Policy ${policy.name} has no compiled scan_config; human approval required` }
    }
    const hit = matchContentScan(policy.scan, subject)
    return hit === undefined
      ? { kind: "no_match" }
      : { kind: "match", reason: `policy ${policy.name} found ${hit.entity_type} (${hit.library}, ${hit.severity})` }
  },
  ai: aiUnavailable,
  consensus: aiUnavailable
}

/** A policy with non-empty scope lists sees only the listed agents / action types. */
export const inScope = (policy: EvaluablePolicy, subject: PolicySubject): boolean => {
  const scope = policy.scope
  if (scope === undefined || scope === null) return true
  const agents = scope.agent_ids
  if (agents !== undefined && agents !== null && agents.length > 0) {
    if (typeof subject.agent_id !== "string" || !agents.includes(subject.agent_id)) return false
  }
  const types = scope.action_types
  if (types !== undefined && types !== null && types.length > 0) {
    if (!types.includes(subject.action_type)) return false
  }
  return true
}

/** Runs an evaluator; a throwing evaluator fails closed like an unavailable one. */
const runEvaluator = (
  evaluators: Partial<PolicyEvaluators>,
  policy: EvaluablePolicy,
  subject: PolicySubject
): PolicyMatch => {
  const evaluator = evaluators[policy.mode] ?? defaultEvaluators[policy.mode]
  if (evaluator === undefined) {
    return { kind: "unavailable", warning: `Policy ${policy.name} has an unknown mode; human approval required` }
  }
  try {
    return evaluator(policy, subject)
  } catch {
    return { kind: "unavailable", warning: `Policy ${policy.name} could not be evaluated; human approval required` }
  }
}

// ---------------------------------------------------------------------------
// Across policies
// ---------------------------------------------------------------------------

const timeOf = (value: string | Date): number => {
  const ms = value instanceof Date ? value.getTime() : Date.parse(value)
  return Number.isNaN(ms) ? Number.POSITIVE_INFINITY : ms
}

/** Highest priority first; ties: older created_at first, then id. */
export const comparePolicies = (a: EvaluablePolicy, b: EvaluablePolicy): number => {
  if (a.priority !== b.priority) return b.priority - a.priority
  const byAge = timeOf(a.created_at) - timeOf(b.created_at)
  if (byAge !== 0 && !Number.isNaN(byAge)) return byAge
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0
}

export interface CombinedDecision {
  readonly decision: PolicyDecision
  /** The highest-priority policy that produced the winning decision; null when nothing matched. */
  readonly policy_uuid: string | null
  readonly reasoning: string
  /** Fail-closed notices (policies that could not be evaluated). Approval warnings are the caller's. */
  readonly warnings: ReadonlyArray<string>
  /** Ids of the policies evaluated, in order (the caller bumps their evaluation_count). */
  readonly evaluated: ReadonlyArray<string>
  /** What each evaluated policy gave, in evaluation order (recorded on the action for its explanation). */
  readonly trace: ReadonlyArray<PolicyStep>
}

/** One policy's part in a combined decision: `produced` is allow when it did not match. */
export interface PolicyStep {
  readonly policy: EvaluablePolicy
  readonly match: PolicyMatch
  readonly produced: PolicyDecision
}

/**
 * Every active policy in scope is evaluated, highest priority first; the most
 * restrictive produced decision wins; a deny stops evaluation. A policy produces its
 * decision only when it matches; one that cannot be evaluated produces require_approval.
 */
export const combineDecisions = (
  policies: ReadonlyArray<EvaluablePolicy>,
  subject: PolicySubject,
  evaluators: Partial<PolicyEvaluators> = defaultEvaluators
): CombinedDecision => {
  const candidates = policies.filter(
    (policy) => (policy.status === undefined || policy.status === "active") && inScope(policy, subject)
  )
  if (candidates.length > 1) candidates.sort(comparePolicies)
  let decision: PolicyDecision = "allow"
  let winner: EvaluablePolicy | null = null
  let reason = ""
  const warnings: Array<string> = []
  const evaluated: Array<string> = []
  const trace: Array<PolicyStep> = []
  for (const policy of candidates) {
    evaluated.push(policy.id)
    const match = runEvaluator(evaluators, policy, subject)
    if (match.kind === "no_match") {
      trace.push({ policy, match, produced: "allow" })
      continue
    }
    let produced: PolicyDecision
    if (match.kind === "unavailable") {
      warnings.push(match.warning)
      produced = "require_approval"
    } else {
      produced = policy.decision
    }
    trace.push({ policy, match, produced })
    // Strictly greater: on equal restrictiveness the earlier (higher-priority) policy keeps the credit.
    if (winner === null || decisionRank(produced) > decisionRank(decision)) {
      decision = produced
      winner = policy
      reason = match.kind === "match" ? match.reason : match.warning
    }
    if (produced === "deny") break
  }
  const reasoning =
    winner === null
      ? candidates.length === 0
        ? "no active policy applies to this action; allowed"
        : `none of the ${candidates.length} applicable polic${candidates.length === 1 ? "y" : "ies"} matched; allowed`
      : `${decision} by policy ${winner.name}: ${reason}`
  return { decision, policy_uuid: winner?.id ?? null, reasoning, warnings, evaluated, trace }
}

export interface DryRunResult {
  readonly decision: PolicyDecision
  readonly reasoning: string
  readonly confidence: number
}

/**
 * One policy against one subject, whatever its status (dry-run works on drafts).
 * Scope is honoured: an out-of-scope action would never see the policy.
 */
export const dryRun = (
  policy: EvaluablePolicy,
  subject: PolicySubject,
  evaluators: Partial<PolicyEvaluators> = defaultEvaluators
): DryRunResult => {
  if (!inScope(policy, subject)) {
    return { decision: "allow", reasoning: `policy ${policy.name} does not apply to this agent or action type`, confidence: 1 }
  }
  const match = runEvaluator(evaluators, policy, subject)
  switch (match.kind) {
    case "match":
      return { decision: policy.decision, reasoning: match.reason, confidence: 1 }
    case "no_match":
      return { decision: "allow", reasoning: `policy ${policy.name} does not match this action`, confidence: 1 }
    case "unavailable":
      return { decision: "require_approval", reasoning: match.warning, confidence: 0 }
  }
}
