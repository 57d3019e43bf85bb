/** The organization's cases (newest first, paged) and a form that runs a new case, streamed as it happens. */
import { useCallback, useEffect, useRef, useState } from "preact/hooks"
import { ApiError } from "../api.ts"
import { CaseLink, emptyRun, foldRun, percent, RunProgress, type RunView, Verdict } from "../case-view.tsx"
import { type CaseList, CaseRefused, listCases, listModels, type ModelEntry, streamCase } from "../cases-api.ts"
import { PageHeading } from "../components.tsx"
import { useApp } from "../context.ts"
import { localTime } from "../format.ts"
import { pageOf, setQuery } from "../kit.tsx"

const PER_PAGE = 20

type Load = { readonly state: "loading" } | { readonly state: "ready"; readonly list: CaseList } | { readonly state: "failed"; readonly message: string }

const message = (cause: unknown) => (cause instanceof Error ? cause.message : "Loading failed.")

export const CasesPage = ({ search }: { search: string }) => {
  const { session } = useApp()
  // The page number lives in the URL (deep links, reload, back).
  const page = pageOf(search)
  const setPage = (next: number) => setQuery(search, { page: next === 1 ? undefined : String(next) })
  const [load, setLoad] = useState<Load>({ state: "loading" })

  const reload = useCallback(async () => {
    try {
      setLoad({ state: "ready", list: await listCases(session.token, page, PER_PAGE) })
    } catch (cause) {
      if (!(cause instanceof ApiError && cause.status === 401)) setLoad({ state: "failed", message: message(cause) })
    }
  }, [session.token, page])

  useEffect(() => {
    void reload()
  }, [reload])

  return (
    <main>
      <PageHeading>Cases</PageHeading>
      <NewCaseForm onFinished={() => (page === 1 ? void reload() : setPage(1))} />
      <section aria-labelledby="recent-title">
        <h2 id="recent-title">Recent cases</h2>
        {load.state === "loading" && <p role="status">Loading…</p>}
        {load.state === "failed" && (
          <p role="alert" class="error">
            {load.message}{" "}
            <button type="button" onClick={() => void reload()}>
              Retry
            </button>
          </p>
        )}
        {load.state === "ready" && load.list.cases.length === 0 && <p class="empty">No cases yet.</p>}
        {load.state === "ready" && load.list.cases.length > 0 && (
          <>
            <table class="case-table">
              <caption class="visually-hidden">Cases, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Case</th>
                  <th scope="col">Decision</th>
                  <th scope="col">Confidence</th>
                  <th scope="col">Disagreement</th>
                  <th scope="col">Review</th>
                  <th scope="col">Date</th>
                </tr>
              </thead>
              <tbody>
                {load.list.cases.map((item) => (
                  <tr key={item.case_id} data-case-id={item.case_id}>
                    <td data-label="Case">
                      <CaseLink caseId={item.case_id} />
                      <span class="models">{item.models.join(", ")}</span>
                    </td>
                    <td data-label="Decision">{item.status === "failed" ? <span class="error">failed</span> : <Verdict decision={item.decision} />}</td>
                    <td data-label="Confidence">{percent(item.confidence_score)}</td>
                    <td data-label="Disagreement">{item.disagreement_score === null ? "—" : item.disagreement_score.toFixed(2)}</td>
                    <td data-label="Review">{item.review_status ?? (item.requires_human_review ? "needed" : "not needed")}</td>
                    <td data-label="Date">
                      <time dateTime={item.created_at}>{localTime(item.created_at)}</time>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            <nav class="pager" aria-label="Pages of cases">
              <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>
                Previous
              </button>
              <span>
                Page {load.list.pagination.page} of {Math.max(1, Math.ceil(load.list.pagination.total / PER_PAGE))}
              </span>
              <button type="button" disabled={!load.list.pagination.has_more} onClick={() => setPage(page + 1)}>
                Next
              </button>
            </nav>
          </>
        )}
      </section>
    </main>
  )
}

type Run =
  | { readonly state: "idle" }
  | { readonly state: "running"; readonly view: RunView }
  | { readonly state: "finished"; readonly view: RunView }
  | { readonly state: "cancelled"; readonly view: RunView }
  | { readonly state: "refused"; readonly message: string; readonly issues: ReadonlyArray<{ readonly path: string; readonly message: string }> }

const NewCaseForm = ({ onFinished }: { onFinished: () => void }) => {
  const { session, announce } = useApp()
  const [models, setModels] = useState<ReadonlyArray<ModelEntry> | undefined>()
  const [modelsError, setModelsError] = useState<string | undefined>()
  const [details, setDetails] = useState("")
  const [chosen, setChosen] = useState<ReadonlyArray<string>>([])
  const [threshold, setThreshold] = useState("")
  const [formError, setFormError] = useState<string | undefined>()
  const [run, setRun] = useState<Run>({ state: "idle" })
  const abort = useRef<AbortController | undefined>(undefined)
  const errorRef = useRef<HTMLParagraphElement>(null)
  const runButton = useRef<HTMLButtonElement>(null)

  useEffect(() => {
    listModels(session.token).then(
      (entries) => setModels(entries.filter((entry) => entry.available && entry.disabled !== true)),
      (cause) => setModelsError(message(cause))
    )
  }, [session.token])

  // Leaving the page stops a run in progress.
  useEffect(() => () => abort.current?.abort(), [])

  useEffect(() => {
    if (formError !== undefined) errorRef.current?.focus()
  }, [formError])

  const toggle = (model: string, on: boolean) => setChosen((list) => (on ? [...list.filter((entry) => entry !== model), model] : list.filter((entry) => entry !== model)))

  const submit = async (event: Event) => {
    event.preventDefault()
    if (abort.current !== undefined) return
    if (details.trim() === "") return setFormError("Describe the case in Details.")
    if (chosen.length < 2 || chosen.length > 3) return setFormError("Choose 2 or 3 models.")
    const value = threshold.trim() === "" ? undefined : Number(threshold)
    if (value !== undefined && !(value >= 0 && value <= 1)) return setFormError("The review threshold is a number from 0 to 1.")
    setFormError(undefined)
    const controller = new AbortController()
    abort.current = controller
    let view = emptyRun
    setRun({ state: "running", view })
    announce("Case started.")
    try {
      await streamCase(session.token, { details, models: chosen, ...(value === undefined ? {} : { options: { human_review_threshold: value } }) }, controller.signal, (caseEvent) => {
        view = foldRun(view, caseEvent)
        setRun({ state: "running", view })
      })
      setRun({ state: "finished", view })
      announce(view.error === undefined ? "Case finished." : `Case failed: ${view.error}`)
      onFinished()
    } catch (cause) {
      if (controller.signal.aborted) {
        setRun({ state: "cancelled", view })
        announce("Case cancelled.")
      } else if (cause instanceof CaseRefused) setRun({ state: "refused", message: cause.message, issues: cause.issues })
      else setRun({ state: "finished", view: { ...view, error: message(cause) } })
    } finally {
      if (abort.current === controller) abort.current = undefined
    }
  }

  const running = run.state === "running"
  // Cancel disappears when the run ends: keep keyboard focus in the form rather than on the page.
  useEffect(() => {
    if (!running && document.activeElement === document.body) runButton.current?.focus()
  }, [running])
  return (
    <section aria-labelledby="new-case-title" class="new-case">
      <h2 id="new-case-title">New case</h2>
      <form onSubmit={submit} noValidate>
        <div class="stack">
          <label for="case-details">Details</label>
          <textarea id="case-details" required maxLength={50_000} value={details} disabled={running} onInput={(event) => setDetails(event.currentTarget.value)} />
        </div>
        <fieldset class="models-choice" disabled={running}>
          <legend>Models (choose 2 or 3)</legend>
          {models === undefined && modelsError === undefined && <p role="status">Loading models…</p>}
          {modelsError !== undefined && (
            <p role="alert" class="error">
              {modelsError}
            </p>
          )}
          {models?.length === 0 && <p class="empty">No models are available to this organization. Add a custom model or provider credentials first.</p>}
          {models?.map((model) => (
            <label key={model.model_id} class="check">
              <input type="checkbox" checked={chosen.includes(model.model_id)} onChange={(event) => toggle(model.model_id, event.currentTarget.checked)} />
              <span>
                {model.display_name} <code class="wrap">{model.model_id}</code>
              </span>
            </label>
          ))}
        </fieldset>
        <div class="stack threshold">
          <label for="case-threshold">Human review threshold (optional, 0 to 1)</label>
          <input
            id="case-threshold"
            type="number"
            inputMode="decimal"
            min="0"
            max="1"
            step="0.05"
            value={threshold}
            disabled={running}
            aria-describedby="threshold-hint"
            onInput={(event) => setThreshold(event.currentTarget.value)}
          />
          <small id="threshold-hint">Disagreement above this flags the case for human review (default 0.4).</small>
        </div>
        {formError !== undefined && (
          <p role="alert" class="error" tabIndex={-1} ref={errorRef}>
            {formError}
          </p>
        )}
        <div class="actions-row">
          <button type="submit" class="primary" ref={runButton} aria-disabled={running}>
            Run case
          </button>
          {running && (
            <button type="button" onClick={() => abort.current?.abort()}>
              Cancel
            </button>
          )}
        </div>
      </form>
      {run.state !== "idle" && (
        <section class="run" aria-labelledby="run-title" aria-live="polite" aria-busy={running}>
          <h2 id="run-title">Result</h2>
          {run.state === "refused" ? (
            <div role="alert" class="error">
              <p>The case was refused: {run.message}</p>
              {run.issues.length > 1 && (
                <ul>
                  {run.issues.map((issue) => (
                    <li key={issue.path + issue.message}>
                      {issue.path}: {issue.message}
                    </li>
                  ))}
                </ul>
              )}
            </div>
          ) : (
            <>
              <p class="run-state" data-state={run.state}>
                {run.state === "running" && (run.view.caseId === undefined ? "Starting…" : `Running case ${run.view.caseId}…`)}
                {run.state === "cancelled" && "Cancelled. The gateway stops the model calls."}
                {run.state === "finished" && run.view.error === undefined && run.view.latencyMs !== undefined && `Done in ${run.view.latencyMs} ms.`}
              </p>
              <RunProgress run={run.view} />
              {run.view.error !== undefined && (
                <p role="alert" class="error">
                  {run.view.error}
                </p>
              )}
              {run.state === "finished" && run.view.caseId !== undefined && run.view.error === undefined && (
                <p>
                  <CaseLink caseId={run.view.caseId}>Open the case</CaseLink>
                </p>
              )}
            </>
          )}
        </section>
      )}
    </section>
  )
}
