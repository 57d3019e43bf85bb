/** The insights area's calls: the analytics time series, the agent list and each agent's drift (status and alerts). */
import type { Timeseries } from "../../../../protocol/analytics.ts"
import type { DriftAlert, DriftStatus } from "../../../../protocol/drift.ts"
import { request } from "../../api.ts"
import type { Pagination } from "../../kit.tsx"

export type { DriftAlert, DriftStatus, Timeseries }

const id = encodeURIComponent

/** Counts per status, decision latency and policy denials over [from, to] (owner or admin). */
export const getTimeseries = (token: string, from: string, to: string, bucket: Timeseries["bucket"]) =>
  request<Timeseries>("GET", `/api/v1/analytics/timeseries?${new URLSearchParams({ from, to, bucket })}`, token)

export interface AgentRow {
  readonly agent_slug: string
  readonly name: string
  readonly status: string
  readonly action_count: number
}

export const listAgents = (token: string, page: number, perPage: number) =>
  request<{ readonly data: ReadonlyArray<AgentRow>; readonly pagination: Pagination }>("GET", `/api/v1/agents?page=${page}&per_page=${perPage}`, token)

/** The live comparison against the active baseline over the last `hours` hours. */
export const getDriftStatus = (token: string, agentId: string, hours: number) =>
  request<DriftStatus>("GET", `/api/v1/agents/${id(agentId)}/drift?lookback_hours=${hours}`, token)

export const listDriftAlerts = (token: string, agentId: string, page: number, perPage: number) =>
  request<{ readonly data: ReadonlyArray<DriftAlert>; readonly pagination: Pagination }>(
    "GET",
    `/api/v1/agents/${id(agentId)}/drift/alerts?page=${page}&per_page=${perPage}`,
    token
  )

/** JWT only: the signed-in person is recorded as having acknowledged it. */
export const acknowledgeDriftAlert = (token: string, agentId: string, alertId: string) =>
  request<DriftAlert>("POST", `/api/v1/agents/${id(agentId)}/drift/alerts/${id(alertId)}/acknowledge`, token)
