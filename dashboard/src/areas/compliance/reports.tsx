/**
 * EU AI Act compliance reports: the list (framework and status filters in the URL), a form that
 * creates one, and a report's page, which downloads the signed PDF and verifies it in this browser.
 */
import { useEffect, useRef, useState } from "preact/hooks"
import { ApiError } from "../../api.ts"
import { PageHeading } from "../../components.tsx"
import { useApp } from "../../context.ts"
import { localTime } from "../../format.ts"
import { Empty, ErrorLine, FilterSelect, Link, LoadView, Pager, PER_PAGE, pageOf, problemText, queryOf, setQuery, useLoad, useSubmit } from "../../kit.tsx"
import { BASE, navigate } from "../../router.ts"
import { saveBlob } from "../../save.ts"
import {
  ANNEX_IV_TITLES,
  type ComplianceReport,
  type CreateReportRequest,
  createReport,
  downloadReport,
  FRAMEWORK_LABELS,
  FRAMEWORKS,
  getReport,
  listOf,
  listReports,
  REPORT_STATUSES,
  words
} from "./api.ts"
import { ComplianceTabs, DetailHeading, Field, typed, VerdictView } from "./parts.tsx"
import { type Verdict, verifyReport } from "./verify.ts"

/** Statuses a report may still leave (reserved by the API: reports are made inside the request today). */
const UNSETTLED = new Set(["pending", "generating"])
const REFRESH_MS = 3000

const frameworkLabel = (framework: string) => FRAMEWORK_LABELS[framework] ?? words(framework)

const period = (report: ComplianceReport) =>
  report.period_start === null ? "—" : `${new Date(report.period_start).toISOString().slice(0, 10)} – ${new Date(report.period_end ?? report.period_start).toISOString().slice(0, 10)}`

/** Reloads every few seconds while `unsettled` (a report still being made). */
const useRefreshWhile = (unsettled: boolean, reload: () => unknown) => {
  useEffect(() => {
    if (!unsettled) return
    const timer = setInterval(() => void reload(), REFRESH_MS)
    return () => clearInterval(timer)
  }, [unsettled, reload])
}

export const ReportList = ({ search }: { search: string }) => {
  const { session } = useApp()
  const query = queryOf(search)
  const page = pageOf(search)
  const [framework, setFramework] = useState(query.framework ?? "")
  const [status, setStatus] = useState(query.status ?? "")
  useEffect(() => {
    setFramework(query.framework ?? "")
    setStatus(query.status ?? "")
  }, [query.framework, query.status])
  const [loaded, reload] = useLoad(
    () => listReports(session.token, { framework: query.framework, status: query.status }, page, PER_PAGE),
    [session.token, query.framework, query.status, page]
  )
  useRefreshWhile(loaded.state === "ready" && loaded.value.data.some((report) => UNSETTLED.has(report.status)), reload)
  const filter = (event: Event) => {
    event.preventDefault()
    setQuery(search, { framework, status })
  }
  return (
    <main class="compliance">
      <ComplianceTabs />
      <PageHeading>Compliance reports</PageHeading>
      <p>
        <Link href="reports/new" class="button-link">
          New report
        </Link>
      </p>
      <form class="filters" onSubmit={filter} aria-label="Filter reports">
        <FilterSelect id="report-framework" label="Framework" value={framework} choices={FRAMEWORKS} onChange={setFramework} text={frameworkLabel} />
        <FilterSelect id="report-status" label="Status" value={status} choices={REPORT_STATUSES} onChange={setStatus} />
        <button type="submit">Filter</button>
      </form>
      <LoadView loaded={loaded} retry={reload} what="reports">
        {(list) =>
          list.data.length === 0 ? (
            <Empty>No reports match.</Empty>
          ) : (
            <>
              <div class="table-scroll">
                <table class="case-table">
                  <caption class="visually-hidden">Compliance reports</caption>
                  <thead>
                    <tr>
                      <th scope="col">Report</th>
                      <th scope="col">Period</th>
                      <th scope="col">Status</th>
                      <th scope="col">Receipts</th>
                      <th scope="col">Created</th>
                      <th scope="col">Retained until</th>
                    </tr>
                  </thead>
                  <tbody>
                    {list.data.map((report) => (
                      <tr key={report.id} data-report-id={report.id}>
                        <td>
                          <Link href={`reports/${encodeURIComponent(report.id)}`}>{frameworkLabel(report.framework)}</Link>
                        </td>
                        <td>{period(report)}</td>
                        <td>
                          <span class={`status report-${report.status}`}>{report.status}</span>
                        </td>
                        <td>{report.receipt_count}</td>
                        <td>
                          <time dateTime={report.created_at}>{localTime(report.created_at)}</time>
                        </td>
                        <td>{localTime(report.retain_until)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <Pager pagination={list.pagination} search={search} label="Reports" />
            </>
          )
        }
      </LoadView>
    </main>
  )
}

export const NewReport = () => {
  const { session, announce } = useApp()
  const [framework, setFramework] = useState<string>("eu_ai_act_art12")
  const today = new Date().toISOString().slice(0, 10)
  const [start, setStart] = useState(today)
  const [end, setEnd] = useState(today)
  const [actionUuid, setActionUuid] = useState("")
  const [agents, setAgents] = useState("")
  const [sections, setSections] = useState<ReadonlyArray<string>>(ANNEX_IV_TITLES.map(() => ""))
  const { busy, error, submit } = useSubmit()
  const errorRef = useRef<HTMLDivElement>(null)
  useEffect(() => {
    if (error !== undefined) errorRef.current?.focus()
  }, [error])
  const art6 = framework === "eu_ai_act_art6"
  const onSubmit = async (event: Event) => {
    event.preventDefault()
    const agentFilter = listOf(agents)
    const body: CreateReportRequest = {
      framework: framework as CreateReportRequest["framework"],
      ...(art6 ? {} : { period_start: start, period_end: end }),
      ...(art6 ? { action_uuid: actionUuid.trim() } : {}),
      ...(agentFilter.length > 0 && !art6 ? { agent_filter: agentFilter } : {}),
      ...(framework === "eu_ai_act_annex_iv" ? { documentation: Object.fromEntries(sections.map((text, index) => [`section_${index + 1}`, text.trim() === "" ? null : text])) } : {})
    }
    let created: ComplianceReport | undefined
    const ok = await submit(async () => {
      created = await createReport(session.token, body)
    })
    if (ok && created !== undefined) {
      announce(`Report ${created.status === "ready" ? "created" : created.status}.`)
      navigate(`${BASE}/reports/${encodeURIComponent(created.id)}`)
    }
  }
  return (
    <main class="compliance">
      <ComplianceTabs />
      <PageHeading>New compliance report</PageHeading>
      <p>
        <Link href="reports">Back to reports</Link>
      </p>
      <section class="new-case" aria-label="New report">
        <form onSubmit={onSubmit} noValidate>
          <Field id="new-report-framework" label="Framework">
            <select id="new-report-framework" value={framework} onChange={typed(setFramework)}>
              {FRAMEWORKS.map((key) => (
                <option key={key} value={key}>
                  {frameworkLabel(key)}
                </option>
              ))}
            </select>
          </Field>
          {art6 ? (
            <Field id="new-report-action" label="Action id" hint="The action whose decision the report explains.">
              <input id="new-report-action" required value={actionUuid} aria-describedby="new-report-action-hint" onInput={typed(setActionUuid)} />
            </Field>
          ) : (
            <>
              <div class="compliance-pair">
                <Field id="new-report-start" label="Period start" hint="From the start of this day (UTC).">
                  <input id="new-report-start" type="date" required value={start} aria-describedby="new-report-start-hint" onInput={typed(setStart)} />
                </Field>
                <Field id="new-report-end" label="Period end" hint="To the end of this day (UTC); at most 366 days after the start.">
                  <input id="new-report-end" type="date" required value={end} aria-describedby="new-report-end-hint" onInput={typed(setEnd)} />
                </Field>
              </div>
              <Field id="new-report-agents" label="Agents (optional)" hint="Agent ids separated by commas; empty means every agent.">
                <input id="new-report-agents" value={agents} aria-describedby="new-report-agents-hint" onInput={typed(setAgents)} />
              </Field>
            </>
          )}
          {framework === "eu_ai_act_annex_iv" && (
            <fieldset class="compliance-sections">
              <legend>Annex IV documentation (what the gateway cannot know; empty points print "not provided")</legend>
              {ANNEX_IV_TITLES.map((title, index) => (
                <Field key={title} id={`new-report-section-${index + 1}`} label={`${index + 1}. ${title}`}>
                  <textarea
                    id={`new-report-section-${index + 1}`}
                    rows={2}
                    maxLength={20_000}
                    value={sections[index]}
                    onInput={(event) => {
                      const text = event.currentTarget.value
                      setSections((current) => current.map((value, at) => (at === index ? text : value)))
                    }}
                  />
                </Field>
              ))}
            </fieldset>
          )}
          <div tabIndex={-1} ref={errorRef}>
            <ErrorLine message={error} />
          </div>
          <div>
            <button type="submit" class="primary" disabled={busy}>
              {busy ? "Creating…" : "Create report"}
            </button>
          </div>
        </form>
      </section>
    </main>
  )
}

type Check = { readonly state: "idle" } | { readonly state: "checking" } | { readonly state: "done"; readonly verdict: Verdict } | { readonly state: "failed"; readonly message: string }

export const ReportDetail = ({ reportId }: { reportId: string }) => {
  const { session, announce } = useApp()
  const [loaded, reload] = useLoad(() => getReport(session.token, reportId), [session.token, reportId])
  const report = loaded.state === "ready" ? loaded.value : undefined
  useRefreshWhile(report !== undefined && UNSETTLED.has(report.status), reload)
  const [check, setCheck] = useState<Check>({ state: "idle" })
  const [saveError, setSaveError] = useState<string | undefined>()

  /** Fetches the PDF with the session's token and checks it against the report as shown. */
  const fetchAndVerify = async (shown: ComplianceReport): Promise<Blob | undefined> => {
    setCheck({ state: "checking" })
    try {
      const blob = await downloadReport(session.token, shown.id)
      const verdict = await verifyReport(shown, new Uint8Array(await blob.arrayBuffer()))
      setCheck({ state: "done", verdict })
      return blob
    } catch (cause) {
      if (!(cause instanceof ApiError && cause.status === 401)) setCheck({ state: "failed", message: problemText(cause) })
      return undefined
    }
  }
  const ready = report?.status === "ready"
  // A ready report is verified once as soon as it is shown.
  useEffect(() => {
    if (report !== undefined && ready) void fetchAndVerify(report)
  }, [report?.id, ready])

  const onDownload = async () => {
    if (report === undefined) return
    setSaveError(undefined)
    const blob = await fetchAndVerify(report)
    if (blob === undefined) setSaveError("The PDF could not be downloaded.")
    else {
      saveBlob(blob, `${report.framework}-${report.id}.pdf`)
      announce("Report downloaded.")
    }
  }

  return (
    <main class="compliance">
      <ComplianceTabs />
      <DetailHeading loaded={loaded} what="Report" title={(value) => frameworkLabel(value.framework)} />
      <p>
        <Link href="reports">Back to reports</Link>
      </p>
      <LoadView loaded={loaded} retry={reload} what="the report">
        {(value) => (
          <>
            <dl class="facts">
              <dt>Status</dt>
              <dd>
                <span class={`status report-${value.status}`} data-report-status={value.status}>
                  {value.status}
                </span>
                {UNSETTLED.has(value.status) && <span class="hint"> (refreshing every {REFRESH_MS / 1000} s until it is ready)</span>}
              </dd>
              {value.error_message !== null && (
                <>
                  <dt>Why it failed</dt>
                  <dd class="error">{value.error_message}</dd>
                </>
              )}
              <dt>Framework</dt>
              <dd>
                <code>{value.framework}</code>
              </dd>
              <dt>Period</dt>
              <dd>{period(value)}</dd>
              {value.action_uuid !== null && (
                <>
                  <dt>Action</dt>
                  <dd>
                    <Link href={`actions/${encodeURIComponent(value.action_uuid)}`}>{value.action_uuid}</Link>
                  </dd>
                </>
              )}
              <dt>Agents</dt>
              <dd class="wrap">{value.agent_filter === null ? "all" : value.agent_filter.join(", ")}</dd>
              <dt>Receipts</dt>
              <dd>{value.receipt_count}</dd>
              <dt>PDF size</dt>
              <dd>{value.pdf_size_bytes === null ? "—" : `${value.pdf_size_bytes} bytes`}</dd>
              <dt>Content hash</dt>
              <dd>
                <code class="hash">{value.content_hash ?? "—"}</code>
              </dd>
              <dt>Signature</dt>
              <dd>
                <code class="hash">{value.signature ?? "—"}</code>
              </dd>
              <dt>Key id</dt>
              <dd>
                <code class="hash">{value.signing_key_id ?? "—"}</code>
              </dd>
              <dt>Timestamp token</dt>
              <dd>{value.timestamp_token_present ? "present (RFC 3161)" : "none"}</dd>
              <dt>Generated</dt>
              <dd>{localTime(value.generated_at)}</dd>
              <dt>Retained until</dt>
              <dd>{localTime(value.retain_until)}</dd>
              <dt>Created</dt>
              <dd>{localTime(value.created_at)}</dd>
              <dt>Report id</dt>
              <dd>
                <code class="hash">{value.id}</code>
              </dd>
            </dl>
            {value.report_metadata !== null && (
              <details>
                <summary>Report metadata (signed)</summary>
                <pre class="payload">{JSON.stringify(value.report_metadata, null, 2)}</pre>
              </details>
            )}
            {value.status === "ready" && (
              <section aria-labelledby="report-verification">
                <h2 id="report-verification">Verification</h2>
                <p class="hint">
                  The PDF is downloaded with your session and checked here: its sha256 and size against the report, the Ed25519 signature over the report's
                  descriptor with the key from the gateway's JWKS, and the timestamp token's imprint. The server's own verdict is not used.
                </p>
                {check.state === "checking" && <p role="status">Verifying the report…</p>}
                {check.state === "failed" && (
                  <p role="alert" class="error">
                    Could not verify: {check.message}
                  </p>
                )}
                {check.state === "done" && <VerdictView verdict={check.verdict} label="Report checks" />}
                <div class="actions-row">
                  <button type="button" class="primary" disabled={check.state === "checking"} onClick={() => void onDownload()}>
                    Download PDF
                  </button>
                  <button type="button" disabled={check.state === "checking"} onClick={() => void fetchAndVerify(value)}>
                    Verify again
                  </button>
                </div>
                <ErrorLine message={saveError} />
              </section>
            )}
          </>
        )}
      </LoadView>
    </main>
  )
}
