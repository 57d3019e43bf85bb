/**
 * The areas beyond the approvals inbox, each a chunk of its own loaded when first opened, so the
 * first page's script stays small. A path's first segment names its area; the area's page gets every
 * segment and the query string and picks its own section.
 */
import type { ComponentType } from "preact"
import { useEffect, useState } from "preact/hooks"

export interface AreaProps {
  /** The path after /dashboard/, split (`["escrow", "acc_1"]`). */
  readonly path: ReadonlyArray<string>
  /** `location.search` (filters and page). */
  readonly search: string
}

type AreaModule = { readonly default: ComponentType<AreaProps> }

const agents = () => import("./areas/agents/page.tsx") as Promise<AreaModule>
const ledgers = () => import("./areas/ledgers/page.tsx") as Promise<AreaModule>
const compliance = () => import("./areas/compliance/page.tsx") as Promise<AreaModule>
const platform = () => import("./areas/platform/page.tsx") as Promise<AreaModule>
const insights = () => import("./areas/insights/page.tsx") as Promise<AreaModule>

/** First path segment → the area that draws it. */
export const AREAS: Readonly<Record<string, () => Promise<AreaModule>>> = {
  agents,
  escrow: ledgers,
  settlements: ledgers,
  evidence: ledgers,
  estate: ledgers,
  reports: compliance,
  incidents: compliance,
  "third-parties": compliance,
  "resilience-tests": compliance,
  models: platform,
  "provider-credentials": platform,
  "custom-models": platform,
  flags: platform,
  sso: platform,
  sanitize: platform,
  "code-review": platform,
  analytics: insights,
  drift: insights
}

/** The main menu's groups beyond part 1: label, where it leads, and the segments it covers. */
export const AREA_NAV: ReadonlyArray<{ readonly label: string; readonly href: string; readonly segments: ReadonlyArray<string> }> = [
  { label: "Agents", href: "agents", segments: ["agents"] },
  { label: "Ledgers", href: "escrow", segments: ["escrow", "settlements", "evidence", "estate"] },
  { label: "Compliance", href: "reports", segments: ["reports", "incidents", "third-parties", "resilience-tests"] },
  { label: "Analytics", href: "analytics", segments: ["analytics", "drift"] },
  { label: "Platform", href: "models", segments: ["models", "provider-credentials", "custom-models", "flags", "sso", "sanitize", "code-review"] }
]

const loaded = new Map<() => Promise<AreaModule>, ComponentType<AreaProps>>()

/** Draws an area once its chunk has arrived (at once when it already has). */
export const AreaPage = ({ path, search }: AreaProps) => {
  const load = AREAS[path[0] ?? ""]!
  const [page, setPage] = useState<{ load: () => Promise<AreaModule>; component: ComponentType<AreaProps> } | "failed" | undefined>(() => {
    const component = loaded.get(load)
    return component === undefined ? undefined : { load, component }
  })
  const [attempt, setAttempt] = useState(0)
  useEffect(() => {
    const known = loaded.get(load)
    if (known !== undefined) {
      setPage({ load, component: known })
      return
    }
    let current = true
    setPage(undefined)
    load().then(
      (module) => {
        loaded.set(load, module.default)
        if (current) setPage({ load, component: module.default })
      },
      () => current && setPage("failed")
    )
    return () => {
      current = false
    }
  }, [load, attempt])
  if (page === "failed")
    return (
      <main>
        <div role="alert" class="error">
          <p>This page could not be loaded (the gateway may have been updated, or the connection dropped).</p>
          <button type="button" onClick={() => setAttempt((n) => n + 1)}>
            Try again
          </button>
        </div>
      </main>
    )
  if (page === undefined || page.load !== load)
    return (
      <main>
        <p role="status" class="loading">
          Loading…
        </p>
      </main>
    )
  const Component = page.component
  return <Component path={path} search={search} />
}
