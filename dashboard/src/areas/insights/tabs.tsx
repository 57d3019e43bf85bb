/** The insights area's sections. */
import { AreaTabs } from "../../kit.tsx"

export const InsightsTabs = () => (
  <AreaTabs
    label="Insights sections"
    tabs={[
      { href: "analytics", label: "Analytics" },
      { href: "drift", label: "Drift" }
    ]}
  />
)
