/** Pieces every ledgers page shares: the section tabs, the not-found page, hashes, times, verdicts. */
import type { ComponentChildren } from "preact"
import { PageHeading } from "../../components.tsx"
import { localTime } from "../../format.ts"
import { AreaTabs, Link, type Loaded } from "../../kit.tsx"
import { BASE } from "../../router.ts"
import type { Report } from "./merkle.ts"

const TABS = [
  { href: `${BASE}/escrow`, label: "Escrow" },
  { href: `${BASE}/settlements`, label: "Settlements" },
  { href: `${BASE}/evidence`, label: "Evidence" },
  { href: `${BASE}/estate`, label: "Estate" }
]

/** A ledgers page: the section tabs, then its heading and content. */
export const LedgerPage = ({ title, children }: { title: string; children?: ComponentChildren }) => (
  <main class="ledgers">
    <AreaTabs label="Ledgers" tabs={TABS} />
    <PageHeading>{title}</PageHeading>
    {children}
  </main>
)

/** What a detail page shows for an id that does not exist here (or is another organization's). */
export const NotFound = ({ what, back, backLabel }: { what: string; back: string; backLabel: string }) => (
  <LedgerPage title={`${what} not found`}>
    <p>It does not exist, or it belongs to another organization.</p>
    <p>
      <Link href={back}>{backLabel}</Link>
    </p>
  </LedgerPage>
)

export const isNotFound = (loaded: Loaded<unknown>) => loaded.state === "failed" && loaded.status === 404

export const Hash = ({ value }: { value: string | null | undefined }) => (value === null || value === undefined ? <span>none</span> : <code class="hash">{value}</code>)

export const When = ({ at }: { at: string | null | undefined }) =>
  at === null || at === undefined ? <span>—</span> : <time dateTime={at}>{localTime(at)}</time>

/** A verification's outcome: one line saying verified or not, then each step with its reason. */
export const Verdict = ({ report, label }: { report: Report; label: string }) => (
  <section class="merkle-verdict" aria-label={label}>
    <p role="status" class={report.verified ? "verdict verdict-valid" : "verdict verdict-invalid"}>
      {report.verified ? "✓ Verified" : "✗ Does not verify"}
      <span class="visually-hidden">: {label}</span>
    </p>
    <ul class="merkle-steps" aria-label={`${label} steps`}>
      {report.steps.map((step) => (
        <li key={step.name} class={step.ok ? "check check-passed" : "check check-failed"}>
          <span class="check-name">{step.name}:</span> <span class="check-outcome">{step.ok ? "holds" : "fails"}</span>
          <span class="check-detail">{step.detail}</span>
        </li>
      ))}
    </ul>
  </section>
)

export const short = (uuid: string) => uuid.slice(0, 8)
