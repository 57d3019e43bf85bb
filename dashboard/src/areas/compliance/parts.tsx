/** Pieces the compliance pages share: tabs, headings of detail pages, verdicts, field helpers, countdowns. */
import type { ComponentChildren } from "preact"
import { useEffect, useState } from "preact/hooks"
import { ApiError } from "../../api.ts"
import { PageHeading } from "../../components.tsx"
import { AreaTabs, type Loaded, problemText } from "../../kit.tsx"
import type { Verdict } from "./verify.ts"

export const ComplianceTabs = () => (
  <AreaTabs
    label="Compliance"
    tabs={[
      { href: "reports", label: "Reports" },
      { href: "incidents", label: "Incidents" },
      { href: "third-parties", label: "Third parties" },
      { href: "resilience-tests", label: "Resilience tests" }
    ]}
  />
)

/** DORA routes answer 404 on a list when the `dora` flag is off for the organization. */
export const doraProblem = (cause: unknown): string =>
  cause instanceof ApiError && cause.status === 404 ? "The DORA module is off for this organization (feature flag dora)." : problemText(cause)

/** A detail page's heading: the thing's name once loaded, "… not found" on a 404, a plain title otherwise. */
export const DetailHeading = <T,>({ loaded, what, title }: { loaded: Loaded<T>; what: string; title: (value: T) => string }) => {
  if (loaded.state === "failed" && loaded.status === 404) return <PageHeading>{what} not found</PageHeading>
  return <PageHeading>{loaded.state === "ready" ? title(loaded.value) : what}</PageHeading>
}

/** The checks of a signed document and its verdict, announced when it changes. */
export const VerdictView = ({ verdict, label }: { verdict: Verdict; label: string }) => (
  <div class="checks">
    <p class={`verdict ${verdict.verified ? "verdict-valid" : "verdict-invalid"}`} role="status" aria-label={`${label} verdict`}>
      {verdict.verified ? "Verified: every check passed in this browser." : `Does not verify: ${verdict.checks.filter((check) => !check.passed).map((check) => check.name.toLowerCase()).join(", ")} failed.`}
    </p>
    <ul aria-label={label}>
      {verdict.checks.map((check) => (
        <li key={check.name} class={`check ${check.passed ? "check-passed" : "check-failed"}`}>
          <span class="check-name">{check.name}</span>: <span class="check-outcome">{check.passed ? "passed" : "failed"}</span>
          <span class="check-detail">{check.detail}</span>
        </li>
      ))}
    </ul>
  </div>
)

/** A labelled field (input, select or textarea as `children`), with a hint line. */
export const Field = ({ id, label, hint, children }: { id: string; label: string; hint?: string; children: ComponentChildren }) => (
  <div class="stack">
    <label for={id}>{label}</label>
    {children}
    {hint !== undefined && (
      <span class="hint" id={`${id}-hint`}>
        {hint}
      </span>
    )}
  </div>
)

/** The value of a text input as it is typed. */
export const typed = (set: (value: string) => void) => (event: Event) => set((event.currentTarget as HTMLInputElement).value)

/** `YYYY-MM-DDTHH:mm` of a datetime-local input (local time) → ISO 8601 UTC, or undefined when empty/invalid. */
export const localInputToIso = (value: string): string | undefined => {
  if (value === "") return undefined
  const at = new Date(value)
  return Number.isNaN(at.getTime()) ? undefined : at.toISOString()
}

/** Now as a datetime-local value (local time, minutes). */
export const localInputNow = (): string => {
  const now = new Date()
  const pad = (n: number) => String(n).padStart(2, "0")
  return `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}T${pad(now.getHours())}:${pad(now.getMinutes())}`
}

/** The current time, every second while mounted. */
export const useSecondTick = () => {
  const [now, setNow] = useState(Date.now)
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000)
    return () => clearInterval(timer)
  }, [])
  return now
}

/** "3 h 05 min 09 s" (days when longer than one). */
export const duration = (millis: number): string => {
  const total = Math.floor(Math.abs(millis) / 1000)
  const seconds = total % 60
  const minutes = Math.floor(total / 60) % 60
  const hours = Math.floor(total / 3600) % 24
  const days = Math.floor(total / 86_400)
  const pad = (n: number) => String(n).padStart(2, "0")
  if (days > 0) return `${days} d ${hours} h ${pad(minutes)} min`
  if (hours > 0) return `${hours} h ${pad(minutes)} min ${pad(seconds)} s`
  return `${minutes} min ${pad(seconds)} s`
}

export const yesNo = (value: boolean | null | undefined): string => (value === null || value === undefined ? "not given" : value ? "yes" : "no")
