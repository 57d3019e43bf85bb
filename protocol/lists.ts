/**
 * The contract's vocabularies as plain lists, with no imports: the schemas of protocol/ build on
 * them, and the dashboard imports them as they are (it takes nothing else from protocol/ but
 * types), so a value added here reaches the API and the pages together.
 */

export const ActionStatuses = ["authorized", "pending_approval", "denied_by_policy", "approved", "denied_by_human", "notarized", "failed"] as const

export const EventTypes = [
  "case.complete",
  "case.requires_human_review",
  "case.approved",
  "case.denied",
  "action.approval_requested",
  "action.approved",
  "action.denied",
  "action.authorized",
  "action.notarized",
  "action.failed",
  "action.denied_by_policy",
  "action.expired",
  "action.auto_merged",
  "drift.alert"
] as const

export const PolicyModes = ["rules", "ai", "consensus", "content_scan"] as const
export const PolicyStatuses = ["draft", "active", "inactive"] as const
export const PolicyDecisions = ["allow", "require_approval", "deny"] as const
/** The operators a condition may use (the gateway also reads `ne` as `neq`). */
export const ConditionOperators = ["eq", "neq", "in", "not_in", "contains", "regex", "gt", "lt", "gte", "lte"] as const
/** Top-level fields of the evaluated action; `context.<key>` addresses the authorize `context` object. */
export const ConditionFields = ["action_type", "details", "agent_id", "agent_version", "model_id", "model_version", "endpoint_url", "instruction_hash"] as const
export const ScanLibraries = ["credentials", "pii"] as const

/** Areas with `<area>:read|write` scopes (CONTRACT.md "Access"). */
export const ScopeAreas = ["actions", "agents", "analytics", "cases", "keys", "models", "notifications", "policies", "receipts", "team", "webhooks", "whitelist"] as const

/** The events of a case's SSE stream, in order: started, model_complete (one per model), consensus, receipt, done; or error. */
export const CaseStreamEvents = ["started", "model_complete", "consensus", "receipt", "done", "error"] as const
