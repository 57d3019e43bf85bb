/** Wire views of stored cases, the SSE/WebSocket events of a finished case, and its notification item. */
import type { Case, CaseListItem } from "../../protocol/cases.js"
import type { CaseRow } from "./store.js"

export type CaseEventName = "started" | "model_complete" | "consensus" | "receipt" | "done" | "error"

export interface CaseEvent {
  readonly event: CaseEventName
  readonly data: Record<string, unknown>
}

export const caseView = (row: CaseRow): Case => ({
  case_id: row.case_id,
  status: row.status === "complete" ? "complete" : "failed",
  models: row.models,
  details_hash: row.details_hash,
  details: row.details,
  context: row.context,
  consensus: row.consensus,
  case_results: row.case_results ?? [],
  receipt: row.receipt,
  review: row.review_status === null ? null : { status: row.review_status, reviewed_by: row.reviewed_by, reviewed_at: row.reviewed_at, reason: row.review_reason },
  latency_ms: row.latency_ms ?? 0,
  created_at: row.created_at
})

export const caseListItem = (row: CaseRow): CaseListItem => ({
  case_id: row.case_id,
  status: row.status,
  models: row.models,
  decision: row.consensus?.decision ?? null,
  confidence_score: row.consensus?.confidence_score ?? null,
  disagreement_score: row.consensus?.disagreement_score ?? null,
  requires_human_review: row.consensus?.requires_human_review ?? false,
  review_status: row.review_status,
  receipt_uuid: row.receipt?.receipt_uuid ?? null,
  latency_ms: row.latency_ms,
  created_at: row.created_at
})

export const modelCompleteData = (result: Case["case_results"][number]) => ({
  model: result.model,
  model_version: result.model_version,
  provider: result.provider,
  decision: result.decision,
  confidence: result.confidence,
  key_factors: result.key_factors,
  reasoning: result.reasoning,
  latency_ms: result.latency_ms,
  error: result.error
})

export const consensusData = (consensus: NonNullable<Case["consensus"]>) => ({ ...consensus })

export const receiptData = (receipt: NonNullable<Case["receipt"]>) => ({
  receipt_uuid: receipt.receipt_uuid,
  payload_hash: receipt.payload_hash,
  signature: receipt.signature,
  public_key_id: receipt.public_key_id
})

/** The events a finished case streamed, for an idempotent replay on the stream route. */
export const replayEvents = (view: Case, requestId: string): ReadonlyArray<CaseEvent> => [
  { event: "started", data: { case_id: view.case_id, models: view.models, request_id: requestId } },
  ...view.case_results.map((result) => ({ event: "model_complete" as const, data: modelCompleteData(result) })),
  ...(view.consensus === null ? [] : [{ event: "consensus" as const, data: consensusData(view.consensus) }]),
  ...(view.receipt === null ? [] : [{ event: "receipt" as const, data: receiptData(view.receipt) }]),
  { event: "done", data: { case_id: view.case_id, latency_ms: view.latency_ms } }
]

export const caseReviewItem = (row: { readonly case_id: string; readonly created_at: string; readonly consensus: Record<string, unknown> | null }, read: boolean) => ({
  id: row.case_id,
  type: "case_review" as const,
  notification_key: `case:${row.case_id}`,
  title: `Case review needed: ${String(row.consensus?.decision ?? "MIXED")}`,
  description: `Models disagree (disagreement ${Number(row.consensus?.disagreement_score ?? 0).toFixed(2)}); a human should decide`,
  href: `/dashboard/cases/${row.case_id}`,
  created_at: row.created_at,
  read
})
