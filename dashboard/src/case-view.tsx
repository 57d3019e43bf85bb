/** Pieces shared by the cases page (a streamed run) and the case page (stored or live). */
import { useState } from "preact/hooks"
import { ApiError } from "./api.ts"
import { type Case, type CaseEvent, type CaseResult, type Consensus, reviewCase } from "./cases-api.ts"
import { useApp } from "./context.ts"
import { localTime } from "./format.ts"
import { BASE, onLinkClick } from "./router.ts"

export const percent = (value: number | null | undefined) => (value === null || value === undefined ? "—" : `${Math.round(value * 100)} %`)

export const caseHref = (caseId: string) => `${BASE}/cases/${encodeURIComponent(caseId)}`

export const CaseLink = ({ caseId, children }: { caseId: string; children?: preact.ComponentChildren }) => (
  <a href={caseHref(caseId)} onClick={onLinkClick}>
    {children ?? <code class="hash">{caseId}</code>}
  </a>
)

const decisionClass = (decision: string) => `verdict verdict-${decision.toLowerCase()}`

export const Verdict = ({ decision }: { decision: string | null }) => (decision === null ? <span>—</span> : <span class={decisionClass(decision)}>{decision}</span>)

/** One model's answer, as streamed (`model_complete`) or stored (`case_results`). */
export const ModelAnswer = ({ result }: { result: CaseResult }) => (
  <article class="card model-answer" aria-label={`${result.model}: ${result.decision}`} data-model={result.model}>
    <h3>
      <code class="wrap">{result.model}</code> <Verdict decision={result.decision} />
    </h3>
    <dl class="facts">
      <dt>Confidence</dt>
      <dd>{percent(result.confidence)}</dd>
      <dt>Latency</dt>
      <dd>{result.latency_ms} ms</dd>
      {result.model_version !== null && (
        <>
          <dt>Version</dt>
          <dd class="wrap">{result.model_version}</dd>
        </>
      )}
      {result.key_factors.length > 0 && (
        <>
          <dt>Key factors</dt>
          <dd>
            <ul class="factors">
              {result.key_factors.map((factor) => (
                <li key={factor}>{factor}</li>
              ))}
            </ul>
          </dd>
        </>
      )}
      {result.reasoning !== "" && (
        <>
          <dt>Reasoning</dt>
          <dd>{result.reasoning}</dd>
        </>
      )}
      {result.error !== null && (
        <>
          <dt>Error</dt>
          <dd class="error">{result.error}</dd>
        </>
      )}
    </dl>
  </article>
)

export const ConsensusFacts = ({ consensus }: { consensus: Consensus }) => (
  <section class="consensus" aria-labelledby="consensus-title">
    <h2 id="consensus-title">
      Consensus: <Verdict decision={consensus.decision} />
    </h2>
    <dl class="facts">
      <dt>Confidence</dt>
      <dd>{percent(consensus.confidence_score)}</dd>
      <dt>Disagreement</dt>
      <dd>{consensus.disagreement_score.toFixed(2)}</dd>
      <dt>Human review</dt>
      <dd>{consensus.requires_human_review ? `needed${consensus.human_review_reason === null ? "" : `: ${consensus.human_review_reason}`}` : "not needed"}</dd>
      {consensus.text !== "" && (
        <>
          <dt>Summary</dt>
          <dd>{consensus.text}</dd>
        </>
      )}
    </dl>
  </section>
)

/** What a run has shown so far, folded from its events (the stream's, or the `case:<id>` channel's). */
export interface RunView {
  readonly caseId?: string
  readonly models: ReadonlyArray<string>
  readonly results: ReadonlyArray<CaseResult>
  readonly consensus?: Consensus
  readonly receiptUuid?: string
  readonly latencyMs?: number
  readonly error?: string
}

export const emptyRun: RunView = { models: [], results: [] }

export const foldRun = (run: RunView, event: CaseEvent): RunView => {
  switch (event.event) {
    case "started":
      return { ...run, caseId: event.data.case_id, models: event.data.models }
    case "model_complete":
      // The channel and a reload can both deliver one answer: keep it once, in arrival order.
      return run.results.some((result) => result.model === event.data.model) ? run : { ...run, results: [...run.results, event.data] }
    case "consensus":
      return { ...run, consensus: event.data }
    case "receipt":
      return { ...run, receiptUuid: event.data.receipt_uuid }
    case "done":
      return { ...run, caseId: event.data.case_id, latencyMs: event.data.latency_ms }
    case "error":
      return { ...run, error: event.data.message }
  }
}

/** The models' answers in arrival order, then consensus and receipt, as they come. */
export const RunProgress = ({ run }: { run: RunView }) => {
  const waiting = run.models.filter((model) => !run.results.some((result) => result.model === model))
  return (
    <>
      <ol class="cards answers" aria-label="Model answers">
        {run.results.map((result) => (
          <li key={result.model}>
            <ModelAnswer result={result} />
          </li>
        ))}
      </ol>
      {waiting.length > 0 && run.error === undefined && run.latencyMs === undefined && (
        <p class="empty">
          Waiting for {waiting.length} of {run.models.length} models…
        </p>
      )}
      {run.consensus !== undefined && <ConsensusFacts consensus={run.consensus} />}
      {run.receiptUuid !== undefined && (
        <p data-receipt={run.receiptUuid}>
          Receipt <code class="hash">{run.receiptUuid}</code>
        </p>
      )}
    </>
  )
}

const reviewRefusal = (error: unknown): string => {
  if (!(error instanceof ApiError)) return "Something went wrong; try again."
  if (error.status === 403) return "You are not an approver of this organization's cases."
  if (error.status === 409) return "This case was already reviewed."
  return error.message
}

/** Approve or deny a case waiting for human review, with an optional reason. */
export const CaseReviewForm = ({ kase, onReviewed }: { kase: Case; onReviewed: (updated: Case | undefined) => void }) => {
  const { session, announce } = useApp()
  const [reason, setReason] = useState("")
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | undefined>()
  const decide = async (decision: "approve" | "deny") => {
    setBusy(true)
    setError(undefined)
    try {
      const updated = await reviewCase(session.token, kase.case_id, decision, reason.trim())
      announce(`Case ${decision === "approve" ? "approved" : "denied"}.`)
      onReviewed(updated)
    } catch (cause) {
      setError(reviewRefusal(cause))
      if (cause instanceof ApiError && cause.status === 409) onReviewed(undefined)
    } finally {
      setBusy(false)
    }
  }
  return (
    <section class="review-form" aria-labelledby="review-title">
      <h2 id="review-title">Human review</h2>
      <div class="stack">
        <label for="review-reason">Reason (optional)</label>
        <textarea id="review-reason" maxLength={2000} value={reason} onInput={(event) => setReason(event.currentTarget.value)} />
      </div>
      <div class="actions-row">
        <button type="button" class="approve" disabled={busy} onClick={() => decide("approve")}>
          Approve
        </button>
        <button type="button" class="deny" disabled={busy} onClick={() => decide("deny")}>
          Deny
        </button>
      </div>
      {error !== undefined && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
    </section>
  )
}

export const ReviewState = ({ review }: { review: NonNullable<Case["review"]> }) => (
  <p class={`status review-${review.status}`}>
    Review {review.status}
    {review.reviewed_by !== null && ` by ${review.reviewed_by}`}
    {review.reviewed_at !== null && (
      <>
        {" "}
        at <time dateTime={review.reviewed_at}>{localTime(review.reviewed_at)}</time>
      </>
    )}
    {review.reason !== null && `. Reason: ${review.reason}`}
  </p>
)
