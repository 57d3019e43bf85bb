/**
 * One case (the `href` of case-review notifications): the stored case, its review while pending,
 * and, through the `case:<id>` channel, the models of a case still running as they answer (the
 * gateway answers 404 for a case until it has finished).
 */
import { useCallback, useEffect, useState } from "preact/hooks"
import { CaseStreamEvents } from "../../../protocol/lists.ts"
import { ApiError } from "../api.ts"
import { CaseReviewForm, ConsensusFacts, emptyRun, foldRun, ModelAnswer, ReviewState, RunProgress, type RunView } from "../case-view.tsx"
import { type Case, type CaseEvent, getCase } from "../cases-api.ts"
import { PageHeading } from "../components.tsx"
import { useApp, useChannel } from "../context.ts"
import { localTime } from "../format.ts"
import { BASE, onLinkClick } from "../router.ts"

type Load =
  | { readonly state: "loading" }
  | { readonly state: "ready"; readonly kase: Case }
  | { readonly state: "missing" }
  | { readonly state: "failed"; readonly message: string }

const STREAM_EVENTS: ReadonlySet<string> = new Set(CaseStreamEvents)

/** A `case:<id>` frame's data (`{type: "case.<event>", event, case_id, ...fields}`) as a stream event. */
const asCaseEvent = (data: unknown): CaseEvent | undefined => {
  if (typeof data !== "object" || data === null) return undefined
  const event = (data as { event?: unknown }).event
  return typeof event === "string" && STREAM_EVENTS.has(event) ? ({ event, data } as CaseEvent) : undefined
}

export const CasePage = ({ caseId }: { caseId: string }) => {
  const { session, announce } = useApp()
  const [load, setLoad] = useState<Load>({ state: "loading" })
  const [run, setRun] = useState<RunView>(emptyRun)

  const reload = useCallback(async () => {
    try {
      setLoad({ state: "ready", kase: await getCase(session.token, caseId) })
    } catch (cause) {
      if (cause instanceof ApiError && cause.status === 404) setLoad((now) => (now.state === "ready" ? now : { state: "missing" }))
      else if (!(cause instanceof ApiError && cause.status === 401)) setLoad({ state: "failed", message: cause instanceof Error ? cause.message : "Loading failed." })
    }
  }, [session.token, caseId])

  useEffect(() => {
    void reload()
  }, [reload])

  useChannel(`case:${caseId}`, {
    // After a reconnect the case may have finished meanwhile.
    onSubscribed: () => void reload(),
    onEvent: (data) => {
      const event = asCaseEvent(data)
      if (event === undefined) return
      setRun((view) => foldRun(view, event))
      if (event.event === "model_complete") announce(`${event.data.model} answered ${event.data.decision}.`)
      if (event.event === "done" || event.event === "error") void reload()
    }
  })

  const back = (
    <p>
      <a href={`${BASE}/cases`} onClick={onLinkClick}>
        ← Cases
      </a>
    </p>
  )
  const live = run.models.length > 0 || run.results.length > 0
  if (load.state === "loading") return <main>{back}<p role="status">Loading…</p></main>
  if (load.state === "failed")
    return (
      <main>
        {back}
        <PageHeading>Case</PageHeading>
        <p role="alert" class="error">
          {load.message}
        </p>
      </main>
    )
  if (load.state === "missing")
    return (
      <main>
        {back}
        <PageHeading>{live ? "Case running" : "Case not found"}</PageHeading>
        {live ? (
          <section class="run" aria-live="polite" aria-labelledby="live-title">
            <h2 id="live-title">Live</h2>
            <p>
              Case <code class="hash">{caseId}</code>
            </p>
            <RunProgress run={run} />
            {run.error !== undefined && (
              <p role="alert" class="error">
                {run.error}
              </p>
            )}
          </section>
        ) : (
          <p>No finished case of your organization has this id. If it is still running, its answers appear here as they arrive.</p>
        )}
      </main>
    )

  const { kase } = load
  return (
    <main>
      {back}
      <PageHeading>Case {kase.consensus === null ? kase.status : kase.consensus.decision}</PageHeading>
      <dl class="facts">
        <dt>Case</dt>
        <dd>
          <code class="hash">{kase.case_id}</code>
        </dd>
        <dt>Status</dt>
        <dd>{kase.status}</dd>
        <dt>Created</dt>
        <dd>
          <time dateTime={kase.created_at}>{localTime(kase.created_at)}</time>
        </dd>
        <dt>Latency</dt>
        <dd>{kase.latency_ms} ms</dd>
        <dt>Details</dt>
        <dd class="pre">{kase.details ?? "not stored (only the hash)"}</dd>
        <dt>Details hash</dt>
        <dd>
          <code class="hash">{kase.details_hash}</code>
        </dd>
      </dl>
      {kase.consensus !== null && <ConsensusFacts consensus={kase.consensus} />}
      {kase.review !== null && kase.review.status !== "pending" && <ReviewState review={kase.review} />}
      {kase.review?.status === "pending" && (
        <>
          <p class="status review-pending">Review pending</p>
          <CaseReviewForm kase={kase} onReviewed={(updated) => (updated === undefined ? void reload() : setLoad({ state: "ready", kase: updated }))} />
        </>
      )}
      <section aria-labelledby="answers-title">
        <h2 id="answers-title">Model answers</h2>
        <ol class="cards answers" aria-label="Model answers">
          {kase.case_results.map((result) => (
            <li key={result.model}>
              <ModelAnswer result={result} />
            </li>
          ))}
        </ol>
      </section>
      {kase.receipt !== null && (
        <section aria-labelledby="receipt">
          <h2 id="receipt">Receipt</h2>
          <dl class="facts">
            <dt>Receipt</dt>
            <dd>
              <code class="hash">{kase.receipt.receipt_uuid}</code>
            </dd>
            <dt>Payload hash</dt>
            <dd>
              <code class="hash">{kase.receipt.payload_hash}</code>
            </dd>
            <dt>Verify</dt>
            <dd>
              <a href={kase.receipt.verify_url}>{kase.receipt.verify_url}</a>
            </dd>
          </dl>
        </section>
      )}
    </main>
  )
}
