/** The policies and webhooks APIs (protocol/policies.ts, protocol/webhooks.ts) as the settings pages call them. */
import type { Pagination as PaginationSchema } from "../../protocol/common.ts"
import type { PolicySummary as PolicySummarySchema, PolicyView } from "../../protocol/policies.ts"
import type { WebhookDelivery as WebhookDeliverySchema, Webhook as WebhookSchema } from "../../protocol/webhooks.ts"
import { ApiError, request } from "./api.ts"

export type Policy = PolicyView
export type PolicySummary = typeof PolicySummarySchema.Type
export type Pagination = typeof PaginationSchema.Type
export type Webhook = typeof WebhookSchema.Type
export type WebhookDelivery = typeof WebhookDeliverySchema.Type
export type PolicyList = { readonly policies: ReadonlyArray<PolicySummary>; readonly pagination: Pagination }
export type DeliveryList = { readonly data: ReadonlyArray<WebhookDelivery>; readonly pagination: Pagination }

export {
  ConditionFields as FIELDS,
  ConditionOperators as OPS,
  EventTypes as EVENTS,
  PolicyDecisions as DECISIONS,
  PolicyModes as MODES,
  PolicyStatuses as POLICY_STATUSES,
  ScanLibraries as SCAN_LIBRARIES
} from "../../protocol/lists.ts"

export interface Condition {
  readonly field: string
  readonly op: string
  readonly value: unknown
}

export interface NewPolicy {
  readonly name: string
  readonly mode: string
  readonly decision: string
  readonly priority?: number
  readonly conditions?: ReadonlyArray<Condition>
  readonly ai_prompt?: string
  readonly ai_models?: ReadonlyArray<string>
  readonly scan_config?: { readonly libraries: ReadonlyArray<string> }
  readonly activate?: boolean
}

export interface DryRun {
  readonly action_type: string
  readonly details: string
  readonly agent_id?: string
  readonly model_id?: string
}

export interface DryRunResult {
  readonly decision: string
  readonly reasoning: string
  readonly confidence: number
  readonly model_votes?: ReadonlyArray<{ readonly model: string; readonly decision: string; readonly confidence: number }> | null
}

export { parseConditionValue, showConditionValue } from "./condition-value.ts"

const id = encodeURIComponent

export const listPolicies = (token: string, filters: { readonly mode: string; readonly status: string }, page: number, perPage: number) => {
  const query = new URLSearchParams({ page: String(page), per_page: String(perPage) })
  if (filters.mode !== "") query.set("mode", filters.mode)
  if (filters.status !== "") query.set("status", filters.status)
  return request<PolicyList>("GET", `/api/v1/policies?${query}`, token)
}

export const createPolicy = (token: string, body: NewPolicy) => request<Policy>("POST", "/api/v1/policies", token, body)
export const getPolicy = (token: string, policyId: string) => request<Policy>("GET", `/api/v1/policies/${id(policyId)}`, token)
export const updatePolicy = (token: string, policyId: string, body: { readonly name: string; readonly priority: number; readonly decision: string }) =>
  request<Policy>("PATCH", `/api/v1/policies/${id(policyId)}`, token, body)
export const deletePolicy = (token: string, policyId: string) => request<{ readonly deleted: boolean }>("DELETE", `/api/v1/policies/${id(policyId)}`, token)
export const setPolicyActive = (token: string, policyId: string, active: boolean) =>
  request<{ readonly status: string }>("POST", `/api/v1/policies/${id(policyId)}/${active ? "activate" : "deactivate"}`, token)
export const dryRunPolicy = (token: string, policyId: string, body: DryRun) => request<DryRunResult>("POST", `/api/v1/policies/${id(policyId)}/dry-run`, token, body)

export const listWebhooks = (token: string) => request<ReadonlyArray<Webhook>>("GET", "/api/v1/webhooks", token)
export const createWebhook = (token: string, body: { readonly url: string; readonly events?: ReadonlyArray<string> }) => request<Webhook>("POST", "/api/v1/webhooks", token, body)
export const deleteWebhook = (token: string, webhookId: string) => request<unknown>("DELETE", `/api/v1/webhooks/${id(webhookId)}`, token)
export const listDeliveries = (token: string, webhookId: string, page: number, perPage: number) =>
  request<DeliveryList>("GET", `/api/v1/webhooks/${id(webhookId)}/deliveries?page=${page}&per_page=${perPage}`, token)

/** A refusal as a sentence for the form it came from; members get a 403 on every change. */
export const refusalText = (cause: unknown, what: string): string => {
  if (!(cause instanceof ApiError)) return cause instanceof Error ? cause.message : "Something went wrong; try again."
  if (cause.status === 403) return `Only owners and admins can change ${what}.`
  if (cause.status === 409 && cause.code === "POLICY_ACTIVE") return "This policy is active: deactivate it before deleting it."
  return cause.code === "ERROR" || cause.code === "NETWORK" ? cause.message : `${cause.message} (${cause.code})`
}
