/**
 * Analytics over a period kept in the URL (`?period=7d&bucket=day`): actions per status, the time
 * people take to decide, and denials per policy, each a chart with its table view, from
 * `GET /api/v1/analytics/timeseries` (owner or admin; a member's 403 shows as a refusal).
 */
import { useMemo } from "preact/hooks"
import { Chart, type ChartSpec } from "../../chart/chart.tsx"
import { PageHeading } from "../../components.tsx"
import { useApp } from "../../context.ts"
import { statusLabel } from "../../format.ts"
import { Empty, Link, LoadView, queryOf, setQuery, useLoad } from "../../kit.tsx"
import { getTimeseries, type Timeseries } from "./api.ts"
import { InsightsTabs } from "./tabs.tsx"

const HOUR = 3_600_000
export const PERIODS = [
  { value: "24h", label: "Last 24 hours", ms: 24 * HOUR, bucket: "hour" },
  { value: "7d", label: "Last 7 days", ms: 7 * 24 * HOUR, bucket: "day" },
  { value: "30d", label: "Last 30 days", ms: 30 * 24 * HOUR, bucket: "day" }
] as const
const BUCKETS = [
  { value: "hour", label: "Hour" },
  { value: "day", label: "Day" },
  { value: "week", label: "Week" }
] as const
type Bucket = Timeseries["bucket"]

/** The period and bucket the URL asks for (unknown values fall back to 7 days by day). */
export const readPeriod = (search: string) => {
  const query = queryOf(search)
  const period = PERIODS.find((item) => item.value === query.period) ?? PERIODS[1]
  const bucket = BUCKETS.find((item) => item.value === query.bucket)?.value ?? period.bucket
  return { period, bucket: bucket as Bucket }
}

const seconds = (iso: string) => Date.parse(iso) / 1000

const specsOf = (series: Timeseries) => {
  const x = series.buckets.map((bucket) => seconds(bucket.start))
  const statuses: ChartSpec = {
    title: "Actions by status",
    kind: "line",
    xKind: "time",
    xLabel: "Period starting",
    x,
    series: series.statuses.map((status) => ({ label: statusLabel(status), values: series.buckets.map((bucket) => bucket.by_status[status] ?? 0) }))
  }
  const latency: ChartSpec = {
    title: "Time to a human decision (approve or deny)",
    kind: "line",
    xKind: "time",
    xLabel: "Period starting",
    unit: "s",
    x,
    series: [
      { label: "Median", values: series.buckets.map((bucket) => bucket.approval_latency.median_seconds) },
      { label: "95th percentile", values: series.buckets.map((bucket) => bucket.approval_latency.p95_seconds) }
    ]
  }
  const denials: ChartSpec = {
    title: "Denials by policy",
    kind: "bars",
    xKind: "category",
    xLabel: "Policy",
    x: series.denials_by_policy.map((_, index) => index),
    categories: series.denials_by_policy.map(policyName),
    series: [{ label: "Denied", values: series.denials_by_policy.map((row) => row.denied) }]
  }
  return { statuses, latency, denials }
}

const policyName = (row: Timeseries["denials_by_policy"][number]) =>
  row.policy_uuid === null ? "No policy recorded" : (row.policy_name ?? `Deleted policy ${row.policy_uuid}`)

export const AnalyticsPage = ({ search }: { search: string }) => {
  const { session } = useApp()
  const { period, bucket } = readPeriod(search)
  const [loaded, retry] = useLoad(() => {
    const to = Date.now()
    return getTimeseries(session.token, new Date(to - period.ms).toISOString(), new Date(to).toISOString(), bucket)
  }, [session.token, period.value, bucket])
  return (
    <main>
      <InsightsTabs />
      <PageHeading>Analytics</PageHeading>
      <form class="filters" aria-label="Analytics period" onSubmit={(event) => event.preventDefault()}>
        <div>
          <label for="analytics-period">Period</label>
          <select id="analytics-period" value={period.value} onChange={(event) => setQuery(search, { period: event.currentTarget.value, bucket: undefined })}>
            {PERIODS.map((item) => (
              <option key={item.value} value={item.value}>
                {item.label}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label for="analytics-bucket">Group by</label>
          <select id="analytics-bucket" value={bucket} onChange={(event) => setQuery(search, { period: period.value, bucket: event.currentTarget.value })}>
            {BUCKETS.map((item) => (
              <option key={item.value} value={item.value}>
                {item.label}
              </option>
            ))}
          </select>
        </div>
      </form>
      <LoadView loaded={loaded} retry={retry} what="analytics">
        {(series) => <Charts series={series} />}
      </LoadView>
    </main>
  )
}

const Charts = ({ series }: { series: Timeseries }) => {
  const specs = useMemo(() => specsOf(series), [series])
  const total = series.buckets.reduce((sum, bucket) => sum + bucket.total, 0)
  const decided = series.buckets.reduce((sum, bucket) => sum + bucket.approval_latency.decided, 0)
  const denied = series.denials_by_policy.reduce((sum, row) => sum + row.denied, 0)
  return (
    <>
      <dl class="facts insights-totals">
        <dt>Actions</dt>
        <dd data-total="actions">{total}</dd>
        <dt>Human decisions</dt>
        <dd data-total="decisions">{decided}</dd>
        <dt>Denied by a policy</dt>
        <dd data-total="denied">{denied}</dd>
      </dl>
      {total === 0 && <Empty>No actions in this period.</Empty>}
      <div class="insights-charts">
        <Chart id="chart-statuses" spec={specs.statuses} />
        <Chart id="chart-latency" spec={specs.latency} />
        <Chart id="chart-denials" spec={specs.denials} />
      </div>
      {series.denials_by_policy.length > 0 && (
        <section aria-labelledby="denying-policies">
          <h2 id="denying-policies">Denying policies</h2>
          <ul class="insights-policies">
            {series.denials_by_policy.map((row) => (
              <li key={row.policy_uuid ?? "none"}>
                {row.policy_uuid === null || row.policy_name === null ? (
                  policyName(row)
                ) : (
                  <Link href={`policies/${encodeURIComponent(row.policy_uuid)}`}>{row.policy_name}</Link>
                )}
                : {row.denied} denied
              </li>
            ))}
          </ul>
        </section>
      )}
    </>
  )
}
