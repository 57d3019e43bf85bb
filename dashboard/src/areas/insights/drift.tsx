/**
 * Drift: the organization's agents with each one's drift state now (`/dashboard/drift`), and one
 * agent's baseline and current action-type mix side by side, its score over the alerts stored so
 * far, and its alerts (`/dashboard/drift/<agent id>`). The lookback (`?lookback=24`) and the
 * page are in the URL.
 *
 * The API keeps no score history: a score is stored only when a check raises an alert, so the
 * score chart shows the alerts' scores and the score now.
 */
import { useMemo, useRef, useState } from "preact/hooks"
import { Chart, type ChartSpec } from "../../chart/chart.tsx"
import { PageHeading } from "../../components.tsx"
import { useApp } from "../../context.ts"
import { localTime } from "../../format.ts"
import { Empty, ErrorLine, Link, LoadView, Pager, PER_PAGE, pageOf, queryOf, setQuery, useLoad, useSubmit } from "../../kit.tsx"
import { BASE, navigate } from "../../router.ts"
import { type AgentRow, acknowledgeDriftAlert, type DriftAlert, type DriftStatus, getDriftStatus, listAgents, listDriftAlerts } from "./api.ts"
import { InsightsTabs } from "./tabs.tsx"

/**
 * The symmetric KL divergence from which a window counts as drifting ("low"), as the gateway scores
 * it (docs/decisions.md "Drift"; src/drift/score.ts THRESHOLDS). The API does not answer it.
 */
export const ALERT_THRESHOLD = 0.2

const LOOKBACKS = [
  { hours: 24, label: "Last 24 hours" },
  { hours: 168, label: "Last 7 days" },
  { hours: 720, label: "Last 30 days" }
] as const

const lookbackOf = (search: string): number => {
  const hours = Number(queryOf(search).lookback)
  return LOOKBACKS.some((item) => item.hours === hours) ? hours : 24
}

const LookbackFilter = ({ search, hours }: { search: string; hours: number }) => (
  <div>
    <label for="drift-lookback">Current window</label>
    <select id="drift-lookback" value={String(hours)} onChange={(event) => setQuery(search, { lookback: event.currentTarget.value === "24" ? undefined : event.currentTarget.value })}>
      {LOOKBACKS.map((item) => (
        <option key={item.hours} value={String(item.hours)}>
          {item.label}
        </option>
      ))}
    </select>
  </div>
)

const agentHref = (agentId: string, search = "") => `${BASE}/drift/${encodeURIComponent(agentId)}${search}`
const number = (value: number | undefined, digits = 3) => (value === undefined ? "—" : value.toFixed(digits))
const percent = (value: number | undefined) => (value === undefined ? 0 : Math.round(value * 1000) / 10)

/** At most a few status reads at once: a page of agents must not spend the caller's rate limit in one burst. */
const MAX_IN_FLIGHT = 4
let inFlight = 0
const waiting: Array<() => void> = []
const limited = async <T,>(task: () => Promise<T>): Promise<T> => {
  if (inFlight >= MAX_IN_FLIGHT) await new Promise<void>((resolve) => waiting.push(resolve))
  inFlight++
  try {
    return await task()
  } finally {
    inFlight--
    waiting.shift()?.()
  }
}

const Severity = ({ status }: { status: DriftStatus }) =>
  !status.has_baseline ? (
    <span>no active baseline</span>
  ) : (
    <span class={`drift-severity drift-${status.severity ?? "info"}`} data-severity={status.severity}>
      {status.is_drifting ? `drifting (${status.severity})` : "stable"}, KL {number(status.kl_divergence)}
    </span>
  )

export const DriftListPage = ({ search }: { search: string }) => {
  const { session } = useApp()
  const page = pageOf(search)
  const hours = lookbackOf(search)
  const [loaded, retry] = useLoad(() => listAgents(session.token, page, PER_PAGE), [session.token, page])
  const [agentId, setAgentId] = useState("")
  const open = (event: Event) => {
    event.preventDefault()
    const id = agentId.trim()
    if (id !== "") navigate(agentHref(id, hours === 24 ? "" : `?lookback=${hours}`))
  }
  return (
    <main>
      <InsightsTabs />
      <PageHeading>Drift</PageHeading>
      <form class="filters" aria-label="Drift options" onSubmit={open}>
        <LookbackFilter search={search} hours={hours} />
        <div>
          <label for="drift-agent-id">Agent id</label>
          <input id="drift-agent-id" value={agentId} maxLength={200} onInput={(event) => setAgentId(event.currentTarget.value)} />
        </div>
        <button type="submit">Open agent</button>
      </form>
      <p class="hint">Any agent id the organization's actions carry can be opened above, registered or not.</p>
      <LoadView loaded={loaded} retry={retry} what="agents">
        {(list) =>
          list.data.length === 0 ? (
            <Empty>No registered agents yet.</Empty>
          ) : (
            <>
              <div class="table-scroll">
                <table class="case-table">
                  <caption class="visually-hidden">Agents and their drift now</caption>
                  <thead>
                    <tr>
                      <th scope="col">Agent</th>
                      <th scope="col">Status</th>
                      <th scope="col">Actions</th>
                      <th scope="col">Drift now</th>
                    </tr>
                  </thead>
                  <tbody>
                    {list.data.map((agent) => (
                      <AgentDriftRow key={agent.agent_slug} agent={agent} hours={hours} />
                    ))}
                  </tbody>
                </table>
              </div>
              <Pager pagination={list.pagination} search={search} label="Agents" />
            </>
          )
        }
      </LoadView>
    </main>
  )
}

const AgentDriftRow = ({ agent, hours }: { agent: AgentRow; hours: number }) => {
  const { session } = useApp()
  const [loaded, retry] = useLoad(() => limited(() => getDriftStatus(session.token, agent.agent_slug, hours)), [session.token, agent.agent_slug, hours])
  return (
    <tr data-agent-id={agent.agent_slug}>
      <td data-label="Agent" class="wrap">
        <Link href={agentHref(agent.agent_slug, hours === 24 ? "" : `?lookback=${hours}`)}>{agent.name}</Link> <code class="hash">{agent.agent_slug}</code>
      </td>
      <td data-label="Status">{agent.status}</td>
      <td data-label="Actions">{agent.action_count}</td>
      <td data-label="Drift now">
        {loaded.state === "loading" && <span class="loading">loading…</span>}
        {loaded.state === "failed" && (
          <span class="error">
            {loaded.message}{" "}
            <button type="button" onClick={retry} aria-label={`Load drift of ${agent.name} again`}>
              Try again
            </button>
          </span>
        )}
        {loaded.state === "ready" && <Severity status={loaded.value} />}
      </td>
    </tr>
  )
}

/** Baseline and current mix over the union of their action types, in percent. */
const distributionSpec = (status: DriftStatus): ChartSpec => {
  const baseline = status.baseline?.action_type_dist ?? {}
  const current = status.current_window?.action_type_dist ?? {}
  const types = [...new Set([...Object.keys(baseline), ...Object.keys(current)])].sort()
  return {
    title: "Action types: baseline and current window",
    kind: "bars",
    xKind: "category",
    xLabel: "Action type",
    unit: "%",
    x: types.map((_, index) => index),
    categories: types,
    series: [
      { label: "Baseline", values: types.map((type) => percent(baseline[type])) },
      { label: "Current", values: types.map((type) => percent(current[type])) }
    ]
  }
}

/** The scores the alerts stored, oldest first, then the score now; with the alert threshold. */
const scoreSpec = (alerts: ReadonlyArray<DriftAlert>, status: DriftStatus, now: number): ChartSpec => {
  const points = [...alerts]
    .sort((a, b) => Date.parse(a.detected_at) - Date.parse(b.detected_at))
    .map((alert) => ({ at: Date.parse(alert.detected_at) / 1000, kl: alert.kl_divergence }))
  if (status.kl_divergence !== undefined) points.push({ at: Math.max(now / 1000, (points.at(-1)?.at ?? 0) + 1), kl: status.kl_divergence })
  return {
    title: "Drift score (symmetric KL divergence) at each alert and now",
    kind: "line",
    xKind: "time",
    xLabel: "Time",
    x: points.map((point) => point.at),
    series: [
      { label: "KL divergence", values: points.map((point) => Math.round(point.kl * 1000) / 1000) },
      { label: "Alert threshold", values: points.map(() => ALERT_THRESHOLD) }
    ]
  }
}

const HISTORY = 200

export const DriftAgentPage = ({ agentId, search }: { agentId: string; search: string }) => {
  const { session } = useApp()
  const hours = lookbackOf(search)
  const [status, retryStatus] = useLoad(() => getDriftStatus(session.token, agentId, hours), [session.token, agentId, hours])
  // The newest alerts for the score chart; the list below pages through all of them.
  const [history, retryHistory] = useLoad(() => listDriftAlerts(session.token, agentId, 1, HISTORY), [session.token, agentId])
  return (
    <main>
      <InsightsTabs />
      <PageHeading>Drift of {agentId}</PageHeading>
      <p>
        <Link href="drift">All agents</Link>
      </p>
      <form class="filters" aria-label="Drift options" onSubmit={(event) => event.preventDefault()}>
        <LookbackFilter search={search} hours={hours} />
      </form>
      <LoadView loaded={status} retry={retryStatus} what="the agent's drift">
        {(value) =>
          !value.has_baseline ? (
            <Empty>This agent has no active baseline, so there is nothing to compare its actions with. Create one through the API (POST /api/v1/agents/{agentId}/drift/baseline).</Empty>
          ) : (
            <DriftDetail status={value} history={history.state === "ready" ? history.value.data : []} historyFailed={history.state === "failed" ? retryHistory : undefined} />
          )
        }
      </LoadView>
      {status.state === "ready" && <AlertList agentId={agentId} search={search} onChanged={retryHistory} />}
    </main>
  )
}

const DriftDetail = ({ status, history, historyFailed }: { status: DriftStatus; history: ReadonlyArray<DriftAlert>; historyFailed: (() => void) | undefined }) => {
  const distribution = useMemo(() => distributionSpec(status), [status])
  const scores = useMemo(() => scoreSpec(history, status, Date.now()), [history, status])
  const baseline = status.baseline!
  const current = status.current_window!
  return (
    <>
      <dl class="facts">
        <dt>State</dt>
        <dd>
          <Severity status={status} />
        </dd>
        <dt>Volume ratio</dt>
        <dd>{number(status.volume_ratio, 2)} (current actions a day over the baseline's)</dd>
        <dt>New action types</dt>
        <dd>{status.new_action_types === null || status.new_action_types === undefined ? "none" : status.new_action_types.join(", ")}</dd>
        <dt>Baseline</dt>
        <dd>
          {baseline.baseline_type}, {baseline.total_actions} actions, {number(baseline.avg_actions_per_day, 1)} a day, {localTime(baseline.window_start)} – {localTime(baseline.window_end)}
          {baseline.source_agent_ids !== null && ` (pooled from ${baseline.source_agent_ids.join(", ")})`}
        </dd>
        <dt>Current window</dt>
        <dd>
          {current.total_actions} actions, {number(current.avg_actions_per_day, 1)} a day, {localTime(current.window_start)} – {localTime(current.window_end)}
        </dd>
      </dl>
      <div class="insights-charts">
        <Chart id="chart-distribution" spec={distribution} />
        <Chart id="chart-score" spec={scores} />
      </div>
      <p class="hint">
        The gateway stores a score only when a check raises an alert, so the score chart shows the alerts' scores and the score now. An alert is raised from a KL divergence of {ALERT_THRESHOLD}, or on a volume change or a new action type.
      </p>
      {historyFailed !== undefined && (
        <p class="error">
          The alerts for the score chart could not be loaded.{" "}
          <button type="button" onClick={historyFailed}>
            Try again
          </button>
        </p>
      )}
    </>
  )
}

const AlertList = ({ agentId, search, onChanged }: { agentId: string; search: string; onChanged: () => void }) => {
  const { session } = useApp()
  const page = pageOf(search)
  const [loaded, retry] = useLoad(() => listDriftAlerts(session.token, agentId, page, PER_PAGE), [session.token, agentId, page])
  const heading = useRef<HTMLHeadingElement>(null)
  const changed = () => {
    void retry()
    onChanged()
    heading.current?.focus()
  }
  return (
    <section aria-labelledby="drift-alerts">
      <h2 id="drift-alerts" ref={heading} tabIndex={-1}>
        Alerts
      </h2>
      <LoadView loaded={loaded} retry={retry} what="alerts">
        {(list) =>
          list.data.length === 0 ? (
            <Empty>No alerts for this agent.</Empty>
          ) : (
            <>
              <div class="table-scroll">
                <table class="case-table">
                  <caption class="visually-hidden">Drift alerts of {agentId}</caption>
                  <thead>
                    <tr>
                      <th scope="col">Detected</th>
                      <th scope="col">Severity</th>
                      <th scope="col">KL divergence</th>
                      <th scope="col">Volume ratio</th>
                      <th scope="col">New types</th>
                      <th scope="col">Acknowledged</th>
                    </tr>
                  </thead>
                  <tbody>
                    {list.data.map((alert) => (
                      <AlertRow key={alert.id} agentId={agentId} alert={alert} onChanged={changed} />
                    ))}
                  </tbody>
                </table>
              </div>
              <Pager pagination={list.pagination} search={search} label="Alerts" />
            </>
          )
        }
      </LoadView>
    </section>
  )
}

const AlertRow = ({ agentId, alert, onChanged }: { agentId: string; alert: DriftAlert; onChanged: () => void }) => {
  const { session, announce } = useApp()
  const { busy, error, submit } = useSubmit()
  const acknowledge = async () => {
    if (await submit(() => acknowledgeDriftAlert(session.token, agentId, alert.id))) {
      announce(`Alert of ${localTime(alert.detected_at)} acknowledged.`)
      onChanged()
    }
  }
  return (
    <tr data-alert-id={alert.id}>
      <td data-label="Detected">
        <time dateTime={alert.detected_at}>{localTime(alert.detected_at)}</time>
      </td>
      <td data-label="Severity">
        <span class={`drift-severity drift-${alert.severity}`}>{alert.severity}</span>
      </td>
      <td data-label="KL divergence">{number(alert.kl_divergence)}</td>
      <td data-label="Volume ratio">{number(alert.volume_ratio, 2)}</td>
      <td data-label="New types" class="wrap">
        {alert.new_action_types?.join(", ") ?? "none"}
      </td>
      <td data-label="Acknowledged">
        {alert.acknowledged_at !== null ? (
          <span>
            {localTime(alert.acknowledged_at)} by {alert.acknowledged_by ?? "unknown"}
          </span>
        ) : (
          <button type="button" disabled={busy} onClick={() => void acknowledge()} aria-label={`Acknowledge the ${alert.severity} alert of ${localTime(alert.detected_at)}`}>
            Acknowledge
          </button>
        )}
        <ErrorLine message={error} />
      </td>
    </tr>
  )
}
