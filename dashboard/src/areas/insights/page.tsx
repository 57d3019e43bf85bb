/**
 * The insights area: analytics over time (`/dashboard/analytics`) and agent drift
 * (`/dashboard/drift`, `/dashboard/drift/<agent id>`).
 */
import type { AreaProps } from "../../areas.tsx"
import { PageHeading } from "../../components.tsx"
import { AnalyticsPage } from "./analytics.tsx"
import { DriftAgentPage, DriftListPage } from "./drift.tsx"
import "./insights.css"

export default function Page({ path, search }: AreaProps) {
  if (path[0] === "analytics" && path.length === 1) return <AnalyticsPage search={search} />
  if (path[0] === "drift" && path.length === 1) return <DriftListPage search={search} />
  if (path[0] === "drift" && path.length === 2 && path[1] !== "") return <DriftAgentPage agentId={path[1]!} search={search} />
  return (
    <main>
      <PageHeading>Page not found</PageHeading>
      <p>There is no such page.</p>
    </main>
  )
}
