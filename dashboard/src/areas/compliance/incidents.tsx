/**
 * DORA incidents: the list (status, severity and major filters in the URL), opening one, and an
 * incident's page with its lifecycle (the allowed transitions as buttons), the classification
 * explained criterion by criterion, the notification deadline counting down, and the signed report.
 */
import { useEffect, useRef, useState } from "preact/hooks"
import { ApiError, downloadBytes } from "../../api.ts"
import { PageHeading } from "../../components.tsx"
import { useApp } from "../../context.ts"
import { localTime } from "../../format.ts"
import { Empty, ErrorLine, FilterSelect, FormFooter, Link, LoadView, Pager, PER_PAGE, pageOf, queryOf, setQuery, useLoad, useSubmit } from "../../kit.tsx"
import { BASE, navigate } from "../../router.ts"
import { saveBlob } from "../../save.ts"
import {
  CATEGORIES,
  type ClassifyIncident,
  classifyIncident,
  createIncident,
  getIncident,
  INCIDENT_STATUSES,
  type Incident,
  incidentReportPath,
  listIncidents,
  listOf,
  listThirdParties,
  ROOT_CAUSES,
  resolveIncident,
  SEVERITIES,
  words
} from "./api.ts"
import { gateRows, majorReason, THRESHOLD_LABELS, thresholdGroups } from "./classification.ts"
import { ComplianceTabs, DetailHeading, doraProblem, duration, Field, localInputNow, localInputToIso, typed, useSecondTick, VerdictView } from "./parts.tsx"
import { type Verdict, verifyIncidentReport } from "./verify.ts"

const HOUR_MS = 3_600_000

/** Which calls each status allows (CONTRACT "DORA module", the lifecycle table). */
const ALLOWED = {
  classify: ["detected", "classified"],
  resolve: ["classified"],
  report: ["resolved", "reported"]
} as const

const can = (operation: keyof typeof ALLOWED, status: string) => (ALLOWED[operation] as ReadonlyArray<string>).includes(status)

const isAdmin = (role: string) => role === "owner" || role === "admin"

export const IncidentList = ({ search }: { search: string }) => {
  const { session } = useApp()
  const query = queryOf(search)
  const page = pageOf(search)
  const [status, setStatus] = useState(query.status ?? "")
  const [severity, setSeverity] = useState(query.severity ?? "")
  const [major, setMajor] = useState(query.is_major ?? "")
  useEffect(() => {
    setStatus(query.status ?? "")
    setSeverity(query.severity ?? "")
    setMajor(query.is_major ?? "")
  }, [query.status, query.severity, query.is_major])
  const [loaded, reload] = useLoad(
    () =>
      listIncidents(session.token, { status: query.status, severity: query.severity, is_major: query.is_major }, page, PER_PAGE).catch((cause) => {
        throw new Error(doraProblem(cause))
      }),
    [session.token, query.status, query.severity, query.is_major, page]
  )
  const now = Date.now()
  return (
    <main class="compliance">
      <ComplianceTabs />
      <PageHeading>DORA incidents</PageHeading>
      <p>
        <Link href="incidents/new" class="button-link">
          Open an incident
        </Link>
      </p>
      <form
        class="filters"
        aria-label="Filter incidents"
        onSubmit={(event) => {
          event.preventDefault()
          setQuery(search, { status, severity, is_major: major })
        }}
      >
        <FilterSelect id="incident-status" label="Status" value={status} choices={INCIDENT_STATUSES} onChange={setStatus} />
        <FilterSelect id="incident-severity" label="Severity" value={severity} choices={SEVERITIES} onChange={setSeverity} />
        <FilterSelect
          id="incident-major"
          label="Major"
          value={major}
          choices={["true", "false"]}
          onChange={setMajor}
          text={(choice) => (choice === "true" ? "Major only" : "Not major")}
        />
        <button type="submit">Filter</button>
      </form>
      <LoadView loaded={loaded} retry={reload} what="incidents">
        {(list) =>
          list.data.length === 0 ? (
            <Empty>No incidents match.</Empty>
          ) : (
            <>
              <div class="table-scroll">
                <table class="case-table">
                  <caption class="visually-hidden">DORA incidents</caption>
                  <thead>
                    <tr>
                      <th scope="col">Incident</th>
                      <th scope="col">Status</th>
                      <th scope="col">Severity</th>
                      <th scope="col">Major</th>
                      <th scope="col">Detected</th>
                      <th scope="col">Initial notification</th>
                    </tr>
                  </thead>
                  <tbody>
                    {list.data.map((incident) => (
                      <tr key={incident.uuid}>
                        <td class="wrap">
                          <Link href={`incidents/${encodeURIComponent(incident.uuid)}`}>{incident.title}</Link>
                        </td>
                        <td>
                          <span class={`status incident-${incident.status}`}>{incident.status}</span>
                        </td>
                        <td>{incident.severity ?? "—"}</td>
                        <td>{incident.is_major ? "major" : "no"}</td>
                        <td>
                          <time dateTime={incident.detected_at}>{localTime(incident.detected_at)}</time>
                        </td>
                        <td>{deadlineWords(incident, now)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <Pager pagination={list.pagination} search={search} label="Incidents" />
            </>
          )
        }
      </LoadView>
    </main>
  )
}

/** The initial notification's state in words, at `now`. */
const deadlineWords = (incident: Incident, now: number): string => {
  const due = incident.initial_notification_due_at
  if (!incident.is_major || due === null) return "not due (not major)"
  if (incident.reported_at !== null) return `report made ${localTime(incident.reported_at)}`
  const left = Date.parse(due) - now
  return left > 0 ? `due in ${duration(left)}` : `overdue by ${duration(left)}`
}

export const NewIncident = () => {
  const { session, announce } = useApp()
  const [title, setTitle] = useState("")
  const [description, setDescription] = useState("")
  const [detected, setDetected] = useState(localInputNow)
  const [services, setServices] = useState("")
  const [clients, setClients] = useState("")
  const [scope, setScope] = useState("")
  const [actions, setActions] = useState("")
  const { busy, error, submit, setError } = useSubmit()
  const errorRef = useRef<HTMLDivElement>(null)
  useEffect(() => {
    if (error !== undefined) errorRef.current?.focus()
  }, [error])
  const onSubmit = async (event: Event) => {
    event.preventDefault()
    const detectedAt = localInputToIso(detected)
    if (title.trim() === "" || description.trim() === "" || detectedAt === undefined) {
      setError("Give a title, a description and when the incident was detected.")
      return
    }
    const count = clients.trim() === "" ? undefined : Number(clients)
    if (count !== undefined && !(Number.isInteger(count) && count >= 0)) {
      setError("Clients affected is a whole number from 0.")
      return
    }
    let created: Incident | undefined
    const ok = await submit(async () => {
      created = await createIncident(session.token, {
        title: title.trim(),
        description: description.trim(),
        detected_at: detectedAt,
        affected_services: listOf(services),
        geographic_scope: listOf(scope),
        related_action_uuids: listOf(actions),
        ...(count === undefined ? {} : { clients_affected_count: count })
      })
    })
    if (ok && created !== undefined) {
      announce(`Incident ${created.title} opened.`)
      navigate(`${BASE}/incidents/${encodeURIComponent(created.uuid)}`)
    }
  }
  return (
    <main class="compliance">
      <ComplianceTabs />
      <PageHeading>Open a DORA incident</PageHeading>
      <p>
        <Link href="incidents">Back to incidents</Link>
      </p>
      <section class="new-case" aria-label="New incident">
        <form onSubmit={onSubmit} noValidate>
          <Field id="incident-title" label="Title">
            <input id="incident-title" required maxLength={200} value={title} onInput={typed(setTitle)} />
          </Field>
          <Field id="incident-description" label="Description">
            <textarea id="incident-description" required rows={4} maxLength={10_000} value={description} onInput={typed(setDescription)} />
          </Field>
          <Field id="incident-detected" label="Detected at" hint="Your local time; at most 5 minutes ahead of now.">
            <input id="incident-detected" type="datetime-local" required value={detected} aria-describedby="incident-detected-hint" onInput={typed(setDetected)} />
          </Field>
          <Field id="incident-services" label="Affected services (optional)" hint="Separated by commas.">
            <input id="incident-services" value={services} aria-describedby="incident-services-hint" onInput={typed(setServices)} />
          </Field>
          <Field id="incident-clients" label="Clients affected (optional)">
            <input id="incident-clients" type="number" min={0} step={1} value={clients} onInput={typed(setClients)} />
          </Field>
          <Field id="incident-scope" label="Geographic scope (optional)" hint="ISO country codes separated by commas (DE, FR…); EU member states count toward spread.">
            <input id="incident-scope" value={scope} aria-describedby="incident-scope-hint" onInput={typed(setScope)} />
          </Field>
          <Field id="incident-actions" label="Related action ids (optional)" hint="Actions of this organization, separated by commas.">
            <input id="incident-actions" value={actions} aria-describedby="incident-actions-hint" onInput={typed(setActions)} />
          </Field>
          <div tabIndex={-1} ref={errorRef}>
            <ErrorLine message={error} />
          </div>
          <div>
            <button type="submit" class="primary" disabled={busy}>
              {busy ? "Opening…" : "Open incident"}
            </button>
          </div>
        </form>
      </section>
    </main>
  )
}

type Panel = "none" | "classify" | "resolve"

export const IncidentDetail = ({ incidentId }: { incidentId: string }) => {
  const { session, announce } = useApp()
  const [loaded, reload] = useLoad(
    () =>
      getIncident(session.token, incidentId).catch((cause) => {
        throw cause instanceof ApiError && cause.status === 404 ? cause : new Error(doraProblem(cause))
      }),
    [session.token, incidentId]
  )
  const [panel, setPanel] = useState<Panel>("none")
  const statusRef = useRef<HTMLParagraphElement>(null)
  /** After a change: the incident again, the form closed, focus on its new status. */
  const changed = async (message: string) => {
    setPanel("none")
    announce(message)
    await reload()
    statusRef.current?.focus()
  }
  return (
    <main class="compliance">
      <ComplianceTabs />
      <DetailHeading loaded={loaded} what="Incident" title={(value) => value.title} />
      <p>
        <Link href="incidents">Back to incidents</Link>
      </p>
      <LoadView loaded={loaded} retry={reload} what="the incident">
        {(incident) => (
          <>
            {incident.warnings.length > 0 && (
              <ul class="notice compliance-warnings" aria-label="Warnings">
                {incident.warnings.map((warning) => (
                  <li key={warning}>{warning}</li>
                ))}
              </ul>
            )}
            <section aria-labelledby="incident-lifecycle">
              <h2 id="incident-lifecycle">Lifecycle</h2>
              <ol class="lifecycle">
                {INCIDENT_STATUSES.map((step) => (
                  <li key={step} aria-current={step === incident.status ? "step" : undefined} class={step === incident.status ? "lifecycle-current" : undefined}>
                    {step}
                  </li>
                ))}
              </ol>
              <p ref={statusRef} tabIndex={-1} data-incident-status={incident.status}>
                Status: <strong>{incident.status}</strong>. {nextStepText(incident)}
              </p>
              {isAdmin(session.role) ? (
                <div class="actions-row">
                  {can("classify", incident.status) && (
                    <button type="button" aria-expanded={panel === "classify"} onClick={() => setPanel(panel === "classify" ? "none" : "classify")}>
                      {incident.status === "detected" ? "Classify" : "Reclassify"}
                    </button>
                  )}
                  {can("resolve", incident.status) && (
                    <button type="button" aria-expanded={panel === "resolve"} onClick={() => setPanel(panel === "resolve" ? "none" : "resolve")}>
                      Resolve
                    </button>
                  )}
                </div>
              ) : (
                <p class="hint">Classifying, resolving and reports need the admin or owner role.</p>
              )}
              {panel === "classify" && <ClassifyForm incident={incident} onDone={() => void changed("Incident classified.")} onCancel={() => setPanel("none")} />}
              {panel === "resolve" && <ResolveForm incident={incident} onDone={() => void changed("Incident resolved.")} onCancel={() => setPanel("none")} />}
            </section>
            <Deadline incident={incident} />
            <Classification incident={incident} />
            <IncidentFacts incident={incident} />
            {isAdmin(session.role) && can("report", incident.status) && <IncidentReport incident={incident} onMade={() => void changed("Report made.")} />}
          </>
        )}
      </LoadView>
    </main>
  )
}

const nextStepText = (incident: Incident): string => {
  switch (incident.status) {
    case "detected":
      return "Next: classify it (severity, category, criteria)."
    case "classified":
      return "Next: resolve it, or classify it again while it is open."
    case "resolved":
      return incident.is_major ? "Next: make the signed report; the incident becomes reported." : "Make the signed report when needed; a non-major incident stays resolved."
    default:
      return "The signed report was made."
  }
}

/** The initial notification deadline (Art. 19; Delegated Regulation (EU) 2025/301), counting down each second. */
const Deadline = ({ incident }: { incident: Incident }) => {
  const now = useSecondTick()
  const due = incident.initial_notification_due_at
  return (
    <section aria-labelledby="incident-deadline">
      <h2 id="incident-deadline">Notification deadline</h2>
      {!incident.is_major || due === null ? (
        <p data-deadline="none">No Article 19 notification is due: the incident is not classified as major.</p>
      ) : (
        <>
          {(() => {
            const left = Date.parse(due) - now
            if (incident.reported_at !== null)
              return (
                <p data-deadline="reported">
                  Initial notification was due <time dateTime={due}>{localTime(due)}</time>; the signed report was made{" "}
                  <time dateTime={incident.reported_at}>{localTime(incident.reported_at)}</time>
                  {Date.parse(incident.reported_at) > Date.parse(due) ? " (after the deadline)." : "."}
                </p>
              )
            return left > 0 ? (
              <p data-deadline="open" class="deadline">
                Initial notification due <time dateTime={due}>{localTime(due)}</time>: <span role="timer">in {duration(left)}</span>
              </p>
            ) : (
              <p data-deadline="overdue" class="deadline deadline-overdue">
                <strong>Overdue</strong>: the initial notification was due <time dateTime={due}>{localTime(due)}</time>,{" "}
                <span role="timer">{duration(left)} ago</span>
              </p>
            )
          })()}
          <p class="hint">
            The earlier of 4 h after it became major ({localTime(new Date(Date.parse(incident.became_major_at ?? due) + 4 * HOUR_MS).toISOString())}) and 24 h after
            detection ({localTime(new Date(Date.parse(incident.detected_at) + 24 * HOUR_MS).toISOString())}). The gateway records and signs; it files nothing.
          </p>
        </>
      )}
    </section>
  )
}

const BASIS_TEXT: Record<string, string> = {
  explicit: "Set explicitly by whoever classified it (is_major was sent); the criteria below, if any, are shown for comparison.",
  rts_criteria: "Computed from the RTS criteria (Delegated Regulation (EU) 2024/1772): major when critical services are affected and at least two thresholds are met, or on a successful malicious unauthorised access.",
  severity: "No criteria were given: critical and high severity count as major, medium and low do not."
}

/** Why the incident is major or not: the basis, then each criterion with its value and threshold. */
const Classification = ({ incident }: { incident: Incident }) => {
  if (incident.classification_basis === null)
    return (
      <section aria-labelledby="incident-classification">
        <h2 id="incident-classification">Classification</h2>
        <p>Not classified yet.</p>
      </section>
    )
  const criteria = incident.criteria
  const assessment = incident.rts_assessment
  return (
    <section aria-labelledby="incident-classification">
      <h2 id="incident-classification">Classification</h2>
      <p data-major={String(incident.is_major)}>
        <strong>{incident.is_major ? "Major incident" : "Not a major incident"}</strong> (basis: {words(incident.classification_basis)}). {BASIS_TEXT[incident.classification_basis]}
      </p>
      {incident.classification_basis === "severity" && (
        <p>
          Severity <strong>{incident.severity}</strong>: {incident.severity === "critical" || incident.severity === "high" ? "counts as major" : "does not count as major"}.
        </p>
      )}
      {criteria !== null && assessment !== null && (
        <>
          <p data-rts-major={String(assessment.major)}>{majorReason(assessment, criteria.malicious_unauthorised_access === true)}</p>
          <div class="table-scroll">
            <table class="case-table criteria">
              <caption>Art. 6 gate: critical services ({assessment.critical_services_affected ? "met" : "not met"})</caption>
              <thead>
                <tr>
                  <th scope="col">Criterion</th>
                  <th scope="col">Value</th>
                  <th scope="col">Counts when</th>
                  <th scope="col">Met</th>
                </tr>
              </thead>
              <tbody>
                {gateRows(criteria).map((row) => (
                  <tr key={row.field}>
                    <th scope="row">{row.label}</th>
                    <td>{row.value}</td>
                    <td>{row.rule}</td>
                    <td class={row.met ? "met" : "not-met"}>{row.met ? "met" : "not met"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <div class="table-scroll">
            <table class="case-table criteria">
              <caption>
                Art. 9 thresholds: {assessment.thresholds_met.length} of 6 met
                {assessment.thresholds_met.length > 0 && ` (${assessment.thresholds_met.map((key) => words(key)).join(", ")})`}
              </caption>
              <thead>
                <tr>
                  <th scope="col">Threshold</th>
                  <th scope="col">Criterion</th>
                  <th scope="col">Value</th>
                  <th scope="col">Counts when</th>
                  <th scope="col">Met</th>
                </tr>
              </thead>
              <tbody>
                {thresholdGroups(criteria, incident).flatMap((group) => {
                  const met = assessment.thresholds_met.includes(group.key as never)
                  return group.rows.map((row, index) => (
                    <tr key={`${group.key}-${row.field}`} data-threshold={group.key}>
                      {index === 0 && (
                        <th scope="rowgroup" rowSpan={group.rows.length}>
                          {THRESHOLD_LABELS[group.key]}: <span class={met ? "met" : "not-met"}>{met ? "met" : "not met"}</span>
                        </th>
                      )}
                      <td>{row.label}</td>
                      <td>{row.value}</td>
                      <td>{row.rule}</td>
                      <td class={row.met ? "met" : "not-met"}>{row.met ? "met" : "not met"}</td>
                    </tr>
                  ))
                })}
              </tbody>
            </table>
          </div>
          {assessment.missing.length > 0 && <p class="hint">Not given (counted as not met): {assessment.missing.map((key) => words(key)).join(", ")}.</p>}
        </>
      )}
    </section>
  )
}

const IncidentFacts = ({ incident }: { incident: Incident }) => (
  <section aria-labelledby="incident-facts">
    <h2 id="incident-facts">Details</h2>
    <dl class="facts">
      <dt>Description</dt>
      <dd class="pre">{incident.description}</dd>
      <dt>Severity</dt>
      <dd>{incident.severity ?? "—"}</dd>
      <dt>Category</dt>
      <dd>{words(incident.category)}</dd>
      <dt>Detected</dt>
      <dd>{localTime(incident.detected_at)}</dd>
      <dt>Classified</dt>
      <dd>{localTime(incident.classified_at)}</dd>
      <dt>Became major</dt>
      <dd>{localTime(incident.became_major_at)}</dd>
      <dt>Resolved</dt>
      <dd>{localTime(incident.resolved_at)}</dd>
      <dt>Reported</dt>
      <dd>{localTime(incident.reported_at)}</dd>
      <dt>Clients affected</dt>
      <dd>{incident.clients_affected_count.toLocaleString("en")}</dd>
      <dt>Affected services</dt>
      <dd class="wrap">{incident.affected_services.join(", ") || "—"}</dd>
      <dt>Geographic scope</dt>
      <dd>{incident.geographic_scope.join(", ") || "—"}</dd>
      <dt>Root cause</dt>
      <dd class="pre">{[words(incident.root_cause_classification), incident.root_cause_summary].filter((part) => part !== null && part !== "—").join(": ") || "—"}</dd>
      {incident.third_party_uuid !== null && (
        <>
          <dt>Third party</dt>
          <dd>
            <Link href={`third-parties/${encodeURIComponent(incident.third_party_uuid)}`}>{incident.third_party_uuid}</Link>
          </dd>
        </>
      )}
      <dt>Resolution</dt>
      <dd class="pre">{incident.resolution_summary ?? "—"}</dd>
      <dt>Lessons learned</dt>
      <dd class="pre">{incident.lessons_learned ?? "—"}</dd>
      <dt>Related actions</dt>
      <dd>
        {incident.related_action_uuids.length === 0 ? (
          "—"
        ) : (
          <ul class="plain">
            {incident.related_action_uuids.map((uuid) => (
              <li key={uuid}>
                <Link href={`actions/${encodeURIComponent(uuid)}`}>{uuid}</Link>
              </li>
            ))}
          </ul>
        )}
      </dd>
      <dt>Incident id</dt>
      <dd>
        <code class="hash">{incident.uuid}</code>
      </dd>
    </dl>
  </section>
)

type Tri = "" | "yes" | "no"
const triOf = (value: boolean | null | undefined): Tri => (value === true ? "yes" : value === false ? "no" : "")
const boolOf = (value: Tri): boolean | null => (value === "" ? null : value === "yes")

const BOOLEAN_CRITERIA = [
  ["critical_services_affected", "Critical services affected (Art. 6)"],
  ["malicious_unauthorised_access", "Successful malicious unauthorised access"],
  ["relevant_clients_affected", "Relevant clients or counterparts affected"],
  ["reputational_impact", "Reputational impact"],
  ["data_loss_adverse_impact", "Data loss with adverse impact (9(5)(a))"]
] as const

const NUMBER_CRITERIA = [
  ["clients_affected_pct", "Clients affected (%)", 100],
  ["financial_counterparts_affected_pct", "Financial counterparts affected (%)", 100],
  ["transactions_affected_pct", "Transactions affected, by number (%)", 100],
  ["transactions_value_affected_pct", "Transactions affected, by value (%)", 100],
  ["duration_hours", "Duration (hours)", undefined],
  ["service_downtime_hours", "Service downtime (hours)", undefined],
  ["economic_impact_eur", "Economic impact (EUR)", undefined]
] as const

const ClassifyForm = ({ incident, onDone, onCancel }: { incident: Incident; onDone: () => void; onCancel: () => void }) => {
  const { session } = useApp()
  const [severity, setSeverity] = useState<string>(incident.severity ?? "medium")
  const [category, setCategory] = useState<string>(incident.category ?? "system_failure")
  const [major, setMajor] = useState<string>(incident.classification_basis === "explicit" ? String(incident.is_major) : "")
  const [summary, setSummary] = useState(incident.root_cause_summary ?? "")
  const [rootCause, setRootCause] = useState(incident.root_cause_classification ?? "")
  const [thirdParty, setThirdParty] = useState(incident.third_party_uuid ?? "")
  const [clients, setClients] = useState(String(incident.clients_affected_count))
  const [useCriteria, setUseCriteria] = useState(incident.criteria !== null)
  const initial = incident.criteria
  const [flags, setFlags] = useState<Record<string, Tri>>(() => Object.fromEntries(BOOLEAN_CRITERIA.map(([key]) => [key, triOf(initial?.[key])])))
  const [numbers, setNumbers] = useState<Record<string, string>>(() =>
    Object.fromEntries(NUMBER_CRITERIA.map(([key]) => [key, initial?.[key] === null || initial?.[key] === undefined ? "" : String(initial[key])]))
  )
  const [states, setStates] = useState(initial?.member_states_affected?.join(", ") ?? "")
  const [parties] = useLoad(() => listThirdParties(session.token, { is_active: "true" }, 1, 100), [session.token])
  const { busy, error, submit, setError } = useSubmit()
  const firstRef = useRef<HTMLSelectElement>(null)
  useEffect(() => firstRef.current?.focus(), [])
  const onSubmit = async (event: Event) => {
    event.preventDefault()
    const count = Number(clients)
    if (clients.trim() === "" || !Number.isInteger(count) || count < 0) return setError("Clients affected is a whole number from 0.")
    const criteria: Record<string, unknown> = {}
    if (useCriteria) {
      for (const [key] of BOOLEAN_CRITERIA) criteria[key] = boolOf(flags[key] ?? "")
      for (const [key] of NUMBER_CRITERIA) {
        const text = (numbers[key] ?? "").trim()
        const value = Number(text)
        if (text !== "" && !(Number.isFinite(value) && value >= 0)) return setError(`${key.replaceAll("_", " ")} must be a number from 0.`)
        criteria[key] = text === "" ? null : value
      }
      const codes = listOf(states)
      criteria.member_states_affected = codes.length === 0 ? null : codes
    }
    const body: ClassifyIncident = {
      severity: severity as ClassifyIncident["severity"],
      category,
      clients_affected_count: count,
      root_cause_summary: summary.trim() === "" ? null : summary,
      root_cause_classification: rootCause === "" ? null : rootCause,
      third_party_uuid: thirdParty === "" ? null : thirdParty,
      ...(major === "" ? {} : { is_major: major === "true" }),
      ...(useCriteria ? { criteria: criteria as ClassifyIncident["criteria"] } : {})
    }
    if (await submit(() => classifyIncident(session.token, incident.uuid, body))) onDone()
  }
  return (
    <form class="compliance-form" onSubmit={onSubmit} noValidate aria-labelledby="classify-title">
      <h3 id="classify-title">Classify the incident</h3>
      <div class="compliance-pair">
        <Field id="classify-severity" label="Severity">
          <select id="classify-severity" ref={firstRef} value={severity} onChange={typed(setSeverity)}>
            {SEVERITIES.map((key) => (
              <option key={key} value={key}>
                {key}
              </option>
            ))}
          </select>
        </Field>
        <Field id="classify-category" label="Category">
          <select id="classify-category" value={category} onChange={typed(setCategory)}>
            {[...new Set([...CATEGORIES, category])].map((key) => (
              <option key={key} value={key}>
                {words(key)}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <Field id="classify-third-party" label="Third party" hint="Required when the category is third party failure.">
        <select id="classify-third-party" value={thirdParty} aria-describedby="classify-third-party-hint" onChange={typed(setThirdParty)}>
          <option value="">None</option>
          {parties.state === "ready" &&
            parties.value.data.map((party) => (
              <option key={party.uuid} value={party.uuid}>
                {party.vendor_name}
              </option>
            ))}
        </select>
      </Field>
      <Field id="classify-major" label="Major" hint="Leave it to the criteria (or, without criteria, to the severity), or decide it.">
        <select id="classify-major" value={major} aria-describedby="classify-major-hint" onChange={typed(setMajor)}>
          <option value="">Decide from the criteria or severity</option>
          <option value="true">Major (explicit)</option>
          <option value="false">Not major (explicit)</option>
        </select>
      </Field>
      <Field id="classify-clients" label="Clients affected">
        <input id="classify-clients" type="number" min={0} step={1} value={clients} onInput={typed(setClients)} />
      </Field>
      <div class="compliance-pair">
        <Field id="classify-root-cause" label="Root cause">
          <select id="classify-root-cause" value={rootCause} onChange={typed(setRootCause)}>
            <option value="">Not known yet</option>
            {[...new Set([...ROOT_CAUSES, ...(rootCause === "" ? [] : [rootCause])])].map((key) => (
              <option key={key} value={key}>
                {words(key)}
              </option>
            ))}
          </select>
        </Field>
        <Field id="classify-summary" label="Root cause summary">
          <textarea id="classify-summary" rows={2} maxLength={10_000} value={summary} onInput={typed(setSummary)} />
        </Field>
      </div>
      <label class="check">
        <input type="checkbox" checked={useCriteria} onChange={(event) => setUseCriteria(event.currentTarget.checked)} /> Assess the RTS criteria (Delegated Regulation (EU)
        2024/1772)
      </label>
      {useCriteria && (
        <fieldset class="compliance-criteria">
          <legend>Criteria (an empty one counts as not met)</legend>
          {BOOLEAN_CRITERIA.map(([key, label]) => (
            <Field key={key} id={`criterion-${key}`} label={label}>
              <select id={`criterion-${key}`} value={flags[key]} onChange={(event) => setFlags((current) => ({ ...current, [key]: event.currentTarget.value as Tri }))}>
                <option value="">Not given</option>
                <option value="yes">Yes</option>
                <option value="no">No</option>
              </select>
            </Field>
          ))}
          {NUMBER_CRITERIA.map(([key, label, max]) => (
            <Field key={key} id={`criterion-${key}`} label={label}>
              <input
                id={`criterion-${key}`}
                type="number"
                min={0}
                max={max}
                step="any"
                value={numbers[key]}
                onInput={(event) => setNumbers((current) => ({ ...current, [key]: event.currentTarget.value }))}
              />
            </Field>
          ))}
          <Field id="criterion-member-states" label="EU member states affected" hint="ISO codes separated by commas; empty uses the incident's geographic scope.">
            <input id="criterion-member-states" value={states} aria-describedby="criterion-member-states-hint" onInput={typed(setStates)} />
          </Field>
        </fieldset>
      )}
      <FormFooter error={error} busy={busy} label={busy ? "Saving…" : "Save classification"}>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </FormFooter>
    </form>
  )
}

const ResolveForm = ({ incident, onDone, onCancel }: { incident: Incident; onDone: () => void; onCancel: () => void }) => {
  const { session } = useApp()
  const [summary, setSummary] = useState("")
  const [lessons, setLessons] = useState("")
  const [resolvedAt, setResolvedAt] = useState("")
  const { busy, error, submit, setError } = useSubmit()
  const firstRef = useRef<HTMLTextAreaElement>(null)
  useEffect(() => firstRef.current?.focus(), [])
  const onSubmit = async (event: Event) => {
    event.preventDefault()
    if (summary.trim() === "") return setError("Describe how the incident was resolved.")
    const at = localInputToIso(resolvedAt)
    const body = { resolution_summary: summary.trim(), lessons_learned: lessons.trim() === "" ? null : lessons, ...(at === undefined ? {} : { resolved_at: at }) }
    if (await submit(() => resolveIncident(session.token, incident.uuid, body))) onDone()
  }
  return (
    <form class="compliance-form" onSubmit={onSubmit} noValidate aria-labelledby="resolve-title">
      <h3 id="resolve-title">Resolve the incident</h3>
      <Field id="resolve-summary" label="Resolution summary">
        <textarea id="resolve-summary" ref={firstRef} required rows={3} maxLength={10_000} value={summary} onInput={typed(setSummary)} />
      </Field>
      <Field id="resolve-lessons" label="Lessons learned (optional)">
        <textarea id="resolve-lessons" rows={3} maxLength={10_000} value={lessons} onInput={typed(setLessons)} />
      </Field>
      <Field id="resolve-at" label="Resolved at (optional)" hint="Your local time; empty means now.">
        <input id="resolve-at" type="datetime-local" value={resolvedAt} aria-describedby="resolve-at-hint" onInput={typed(setResolvedAt)} />
      </Field>
      <FormFooter error={error} busy={busy} label={busy ? "Resolving…" : "Resolve incident"}>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </FormFooter>
    </form>
  )
}

type ReportState = { readonly state: "idle" } | { readonly state: "busy" } | { readonly state: "done"; readonly verdict: Verdict } | { readonly state: "failed"; readonly message: string }

/** The signed PDF: the first download makes it (a major incident becomes reported); each download is verified here. */
const IncidentReport = ({ incident, onMade }: { incident: Incident; onMade: () => void }) => {
  const { session } = useApp()
  const [state, setState] = useState<ReportState>({ state: "idle" })
  const fetchReport = async (save: boolean) => {
    setState({ state: "busy" })
    try {
      const blob = await downloadBytes(session.token, incidentReportPath(incident.uuid))
      const bytes = new Uint8Array(await blob.arrayBuffer())
      // The signature fields are set by the first download: read them again before checking.
      const current = incident.has_report ? incident : await getIncident(session.token, incident.uuid)
      setState({ state: "done", verdict: await verifyIncidentReport(current, bytes) })
      if (save) saveBlob(blob, `dora-incident-${incident.uuid}.pdf`)
      if (!incident.has_report) onMade()
    } catch (cause) {
      if (!(cause instanceof ApiError && cause.status === 401)) setState({ state: "failed", message: doraProblem(cause) })
    }
  }
  return (
    <section aria-labelledby="incident-report">
      <h2 id="incident-report">Signed report</h2>
      {incident.has_report ? (
        <dl class="facts">
          <dt>Signed</dt>
          <dd>{localTime(incident.report_signed_at)}</dd>
          <dt>Content hash</dt>
          <dd>
            <code class="hash">{incident.report_content_hash}</code>
          </dd>
          <dt>Key id</dt>
          <dd>
            <code class="hash">{incident.report_signing_key_id}</code>
          </dd>
        </dl>
      ) : (
        <p class="hint">
          The first download makes and signs the PDF{incident.is_major ? " and marks the incident reported" : "; a non-major incident stays resolved"}. Later downloads are
          the same bytes.
        </p>
      )}
      {state.state === "busy" && <p role="status">Working…</p>}
      {state.state === "failed" && (
        <p role="alert" class="error">
          {state.message}
        </p>
      )}
      {state.state === "done" && <VerdictView verdict={state.verdict} label="Incident report checks" />}
      <div class="actions-row">
        <button type="button" class="primary" disabled={state.state === "busy"} onClick={() => void fetchReport(true)}>
          {incident.has_report ? "Download report" : "Make and download report"}
        </button>
        {incident.has_report && (
          <button type="button" disabled={state.state === "busy"} onClick={() => void fetchReport(false)}>
            Verify report
          </button>
        )}
      </div>
    </section>
  )
}
