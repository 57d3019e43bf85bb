/**
 * The compliance area: EU AI Act reports (/dashboard/reports), DORA incidents (/dashboard/incidents),
 * the ICT third-party register (/dashboard/third-parties) and resilience tests
 * (/dashboard/resilience-tests); `/<section>/new` creates, `/<section>/<id>` is one item.
 */
import type { AreaProps } from "../../areas.tsx"
import { PageHeading } from "../../components.tsx"
import "./compliance.css"
import { IncidentDetail, IncidentList, NewIncident } from "./incidents.tsx"
import { ComplianceTabs } from "./parts.tsx"
import { NewReport, ReportDetail, ReportList } from "./reports.tsx"
import { NewTest, TestDetail, TestList } from "./tests.tsx"
import { NewThirdParty, ThirdPartyDetail, ThirdPartyList } from "./third-parties.tsx"

export default function Page({ path, search }: AreaProps) {
  const [section, id, ...rest] = path
  if (rest.length === 0) {
    switch (section) {
      case "reports":
        return id === undefined ? <ReportList search={search} /> : id === "new" ? <NewReport /> : <ReportDetail key={id} reportId={id} />
      case "incidents":
        return id === undefined ? <IncidentList search={search} /> : id === "new" ? <NewIncident /> : <IncidentDetail key={id} incidentId={id} />
      case "third-parties":
        return id === undefined ? <ThirdPartyList search={search} /> : id === "new" ? <NewThirdParty /> : <ThirdPartyDetail key={id} partyId={id} />
      case "resilience-tests":
        return id === undefined ? <TestList search={search} /> : id === "new" ? <NewTest /> : <TestDetail key={id} testId={id} />
    }
  }
  return (
    <main class="compliance">
      <ComplianceTabs />
      <PageHeading>Page not found</PageHeading>
      <p>There is no such compliance page.</p>
    </main>
  )
}
