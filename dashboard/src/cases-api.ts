/** The cases API (protocol/cases.ts) and the model catalogue, as the dashboard calls them. */
import type { CaseListItem as CaseListItemSchema, CaseResult as CaseResultSchema, Case as CaseSchema, ConsensusView, NewCase } from "../../protocol/cases.ts"
import type { Pagination as PaginationSchema } from "../../protocol/common.ts"
import { CaseStreamEvents } from "../../protocol/lists.ts"
import type { CatalogueEntry } from "../../protocol/models.ts"
import { ApiError, request, sessionRejected } from "./api.ts"
import { SseParser } from "./sse.ts"
import type { ErrorBody } from "./types.ts"

export type Case = CaseSchema
export type CaseResult = CaseResultSchema
export type CaseListItem = typeof CaseListItemSchema.Type
export type Consensus = typeof ConsensusView.Type
export type Pagination = typeof PaginationSchema.Type
export type ModelEntry = CatalogueEntry
export type CaseList = { readonly cases: ReadonlyArray<CaseListItem>; readonly pagination: Pagination }

/** The events of `POST /cases/stream` (and, as `data.event`, of the `case:<id>` channel). */
export type CaseEvent =
  | { readonly event: "started"; readonly data: { readonly case_id: string; readonly models: ReadonlyArray<string> } }
  | { readonly event: "model_complete"; readonly data: CaseResult }
  | { readonly event: "consensus"; readonly data: Consensus }
  | { readonly event: "receipt"; readonly data: { readonly receipt_uuid: string; readonly payload_hash: string; readonly public_key_id: string } }
  | { readonly event: "done"; readonly data: { readonly case_id: string; readonly latency_ms: number } }
  | { readonly event: "error"; readonly data: { readonly message: string; readonly case_id?: string } }

const id = encodeURIComponent

export const listCases = (token: string, page: number, perPage: number) => request<CaseList>("GET", `/api/v1/cases?page=${page}&per_page=${perPage}`, token)

export const getCase = (token: string, caseId: string) => request<Case>("GET", `/api/v1/cases/${id(caseId)}`, token)

export const reviewCase = (token: string, caseId: string, decision: "approve" | "deny", reason: string) =>
  request<Case>("POST", `/api/v1/cases/${id(caseId)}/${decision}`, token, reason === "" ? {} : { reason })

export const listModels = (token: string) => request<ReadonlyArray<ModelEntry>>("GET", "/api/v1/models", token)

/** A refusal before the stream began (422, 429, …), with the validation issues when there are some. */
export class CaseRefused extends ApiError {
  constructor(
    status: number,
    code: string,
    message: string,
    readonly issues: ReadonlyArray<{ readonly path: string; readonly message: string }>
  ) {
    super(status, code, message)
  }
}

const STREAM_EVENTS: ReadonlySet<string> = new Set(CaseStreamEvents)

/**
 * Runs a case as Server-Sent Events, calling `onEvent` as each arrives; resolves after `done` or
 * `error`. Aborting `signal` cancels the request (the gateway then cancels the model calls).
 */
export const streamCase = async (token: string, body: NewCase, signal: AbortSignal, onEvent: (event: CaseEvent) => void): Promise<void> => {
  let response: Response
  try {
    response = await fetch("/api/v1/cases/stream", {
      method: "POST",
      headers: { accept: "text/event-stream", authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
      credentials: "omit",
      signal
    })
  } catch (cause) {
    if (signal.aborted) throw cause
    throw new ApiError(0, "NETWORK", "The gateway could not be reached. Check your connection and try again.")
  }
  if (!response.ok || response.body === null) {
    if (response.status === 401) sessionRejected()
    const parsed = (await response.json().catch(() => ({}))) as ErrorBody & { details?: { issues?: ReadonlyArray<{ path: string; message: string }> } }
    throw new CaseRefused(response.status, parsed.code ?? "ERROR", parsed.message ?? `Request failed (${response.status})`, parsed.details?.issues ?? [])
  }
  const parser = new SseParser()
  const reader = response.body.getReader()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      for (const frame of parser.push(value)) {
        if (!STREAM_EVENTS.has(frame.event)) continue
        let data: unknown
        try {
          data = JSON.parse(frame.data)
        } catch {
          continue
        }
        const event = { event: frame.event, data } as CaseEvent
        onEvent(event)
        if (event.event === "done" || event.event === "error") return
      }
    }
  } finally {
    reader.cancel().catch(() => undefined)
  }
  throw new ApiError(0, "STREAM_ENDED", "The stream ended before the case finished. Check the cases list for its result.")
}
