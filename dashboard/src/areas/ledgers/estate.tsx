/**
 * Estate: per agent, its will (set or replaced here), its death certificate with the succession the
 * will ordered (issued here once the agent is decommissioned, after a confirmation), and its
 * compliance snapshots. The API keys all of it by agent, so the list is the organization's agents.
 */
import { useRef, useState } from "preact/hooks"
import type { NotifyTarget, SuccessionPolicy } from "../../../../protocol/estate.ts"
import { ApiError } from "../../api.ts"
import { ConfirmForm } from "../../confirm.tsx"
import { useApp } from "../../context.ts"
import { Empty, ErrorLine, FormFooter, Link, LoadView, Pager, PER_PAGE, pageOf, useLoad, useSubmit } from "../../kit.tsx"
import { BASE } from "../../router.ts"
import {
  type AgentView,
  type DeathCertificateAnswer,
  getAgent,
  getDeathCertificate,
  getWill,
  issueDeathCertificate,
  listAgents,
  listSnapshots,
  putWill,
  type WillAnswer
} from "./api.ts"
import { Hash, isNotFound, LedgerPage, NotFound, When } from "./shared.tsx"

const estateHref = (slug: string) => `${BASE}/estate/${encodeURIComponent(slug)}`

const POLICIES: ReadonlyArray<{ value: SuccessionPolicy; label: string }> = [
  { value: "transfer_to_successor", label: "Transfer to a successor" },
  { value: "archive", label: "Archive" },
  { value: "delete", label: "Delete after the retention period" }
]

const CAUSES = ["replaced", "deprecated", "security_incident", "end_of_life"]

export const EstateList = ({ search }: { search: string }) => {
  const { session } = useApp()
  const page = pageOf(search)
  const [loaded, retry] = useLoad(() => listAgents(session.token, page, PER_PAGE), [session.token, page])
  return (
    <LedgerPage title="Estate">
      <p class="hint">Each agent's will, its death certificate and the succession the will orders. Choose an agent.</p>
      <LoadView loaded={loaded} retry={retry} what="agents">
        {({ agents, pagination }) =>
          agents.length === 0 ? (
            <Empty>No agents registered yet.</Empty>
          ) : (
            <>
              <div class="table-scroll">
                <table class="case-table">
                  <caption class="visually-hidden">Agents</caption>
                  <thead>
                    <tr>
                      <th scope="col">Agent</th>
                      <th scope="col">Name</th>
                      <th scope="col">Status</th>
                      <th scope="col">Registered</th>
                    </tr>
                  </thead>
                  <tbody>
                    {agents.map((agent) => (
                      <tr key={agent.agent_slug}>
                        <td data-label="Agent" class="wrap">
                          <Link href={estateHref(agent.agent_slug)}>{agent.agent_slug}</Link>
                        </td>
                        <td data-label="Name" class="wrap">
                          {agent.name}
                        </td>
                        <td data-label="Status">{agent.status}</td>
                        <td data-label="Registered">
                          <When at={agent.created_at} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <Pager pagination={pagination} search={search} label="Agents" />
            </>
          )
        }
      </LoadView>
    </LedgerPage>
  )
}

/** A 404 answered as "none" (no will, no certificate yet); any other failure stays one. */
const orNone = <T,>(promise: Promise<T>): Promise<T | null> =>
  promise.catch((cause: unknown) => {
    if (cause instanceof ApiError && cause.status === 404) return null
    throw cause
  })

export const AgentEstatePage = ({ slug, search }: { slug: string; search: string }) => {
  const { session } = useApp()
  const [agent, retryAgent] = useLoad(() => getAgent(session.token, slug), [session.token, slug])
  if (isNotFound(agent)) return <NotFound what="Agent" back={`${BASE}/estate`} backLabel="All agents" />
  return (
    <LedgerPage title={agent.state === "ready" ? `Estate of ${agent.value.name}` : "Estate"}>
      <LoadView loaded={agent} retry={retryAgent} what="the agent">
        {(value) => <AgentEstate agent={value} search={search} />}
      </LoadView>
    </LedgerPage>
  )
}

const AgentEstate = ({ agent, search }: { agent: AgentView; search: string }) => {
  const { session } = useApp()
  const slug = agent.agent_slug
  const [will, reloadWill] = useLoad(() => orNone(getWill(session.token, slug)), [session.token, slug])
  const [certificate, reloadCertificate] = useLoad(() => orNone(getDeathCertificate(session.token, slug)), [session.token, slug])
  return (
    <>
      <dl class="facts">
        <dt>Agent</dt>
        <dd>
          <code class="hash">{slug}</code>
        </dd>
        <dt>Status</dt>
        <dd>{agent.status}</dd>
        {agent.decommissioned_at !== null && (
          <>
            <dt>Decommissioned</dt>
            <dd>
              <When at={agent.decommissioned_at} />
            </dd>
          </>
        )}
        <dt>Actions</dt>
        <dd>{agent.action_count}</dd>
      </dl>
      <section class="ledger-section" aria-labelledby="will-title">
        <h2 id="will-title">Will</h2>
        <LoadView loaded={will} retry={reloadWill} what="the will">
          {(answer) => (
            <>
              {answer === null ? <Empty>No will yet.</Empty> : <WillFacts answer={answer} />}
              <WillForm slug={slug} current={answer} onSaved={() => void reloadWill()} />
            </>
          )}
        </LoadView>
      </section>
      <section class="ledger-section" aria-labelledby="certificate-title">
        <h2 id="certificate-title">Death certificate and succession</h2>
        <LoadView loaded={certificate} retry={reloadCertificate} what="the death certificate">
          {(answer) =>
            answer !== null ? (
              <CertificateFacts answer={answer} />
            ) : agent.status === "decommissioned" ? (
              <CertificateForm slug={slug} onIssued={() => void reloadCertificate()} />
            ) : (
              <p class="notice">
                None. A death certificate is issued for a decommissioned agent only; this one is {agent.status}.{" "}
                <Link href={`${BASE}/agents/${encodeURIComponent(slug)}`}>Open the agent</Link>
              </p>
            )
          }
        </LoadView>
      </section>
      <Snapshots slug={slug} search={search} />
    </>
  )
}

const targetText = (target: NotifyTarget) => `${target.type} ${target.target}`

const WillFacts = ({ answer }: { answer: WillAnswer }) => {
  const will = answer.will
  return (
    <dl class="facts" aria-label="The will">
      <dt>Succession</dt>
      <dd>{POLICIES.find((policy) => policy.value === will.succession_policy)?.label ?? will.succession_policy}</dd>
      <dt>Successor</dt>
      <dd>{will.successor_slug === null ? "—" : <Link href={estateHref(will.successor_slug)}>{will.successor_slug}</Link>}</dd>
      <dt>Keep data for</dt>
      <dd>{will.data_retention_days === null ? "—" : `${will.data_retention_days} days`}</dd>
      <dt>Tell</dt>
      <dd class="wrap">{will.notify_emails.length === 0 ? "nobody" : will.notify_emails.map(targetText).join(", ")}</dd>
      <dt>Instructions</dt>
      <dd class="pre">{will.instructions ?? "—"}</dd>
      <dt>Updated</dt>
      <dd>
        <When at={will.updated_at} />
      </dd>
    </dl>
  )
}

/** One target a line: "email a@b", "webhook https://…", "slack https://…", or a bare address (e-mail). */
const parseTargets = (text: string): NotifyTarget[] =>
  text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "")
    .map((line) => {
      const [first = "", ...rest] = line.split(/\s+/)
      if ((first === "email" || first === "webhook" || first === "slack") && rest.length > 0) return { type: first, target: rest.join(" ") }
      return { type: "email" as const, target: line }
    })

const WillForm = ({ slug, current, onSaved }: { slug: string; current: WillAnswer | null; onSaved: () => void }) => {
  const { session, announce } = useApp()
  const { busy, error, submit } = useSubmit()
  const will = current?.will
  const [policy, setPolicy] = useState<SuccessionPolicy>(will?.succession_policy ?? "transfer_to_successor")
  const [successor, setSuccessor] = useState(will?.successor_slug ?? "")
  const [retention, setRetention] = useState(will?.data_retention_days === null || will === undefined ? "" : String(will.data_retention_days))
  const [targets, setTargets] = useState(will?.notify_emails.map(targetText).join("\n") ?? "")
  const [instructions, setInstructions] = useState(will?.instructions ?? "")
  const [saved, setSaved] = useState(false)
  const policyRef = useRef<HTMLSelectElement>(null)
  const send = async (event: Event) => {
    event.preventDefault()
    setSaved(false)
    const days = retention.trim() === "" ? null : Number(retention)
    const ok = await submit(() =>
      putWill(session.token, slug, {
        succession_policy: policy,
        successor_slug: successor.trim() === "" ? null : successor.trim(),
        data_retention_days: days,
        notify_emails: parseTargets(targets),
        instructions: instructions.trim() === "" ? null : instructions
      })
    )
    if (ok) {
      setSaved(true)
      announce("Will saved.")
      onSaved()
    } else policyRef.current?.focus()
  }
  return (
    <form class="new-case" onSubmit={send} aria-labelledby="will-form-title">
      <h3 id="will-form-title">{current === null ? "Write the will" : "Replace the will"}</h3>
      <p class="hint">Owners and admins only.</p>
      <div class="form-row">
        <div class="stack">
          <label for="will-policy">Succession</label>
          <select id="will-policy" ref={policyRef} value={policy} onChange={(event) => setPolicy(event.currentTarget.value as SuccessionPolicy)}>
            {POLICIES.map((option) => (
              <option key={option.value} value={option.value}>
                {option.label}
              </option>
            ))}
          </select>
        </div>
        <div class="stack">
          <label for="will-successor">Successor agent (slug)</label>
          <input id="will-successor" maxLength={64} value={successor} onInput={(event) => setSuccessor(event.currentTarget.value)} />
        </div>
        <div class="stack">
          <label for="will-retention">Keep data for (days)</label>
          <input id="will-retention" type="number" min={0} max={7300} value={retention} onInput={(event) => setRetention(event.currentTarget.value)} />
        </div>
      </div>
      <div class="stack">
        <label for="will-targets">Whom to tell (one a line: an e-mail address, or "webhook URL", "slack URL")</label>
        <textarea id="will-targets" value={targets} onInput={(event) => setTargets(event.currentTarget.value)} />
      </div>
      <div class="stack">
        <label for="will-instructions">Instructions</label>
        <textarea id="will-instructions" maxLength={10_000} value={instructions} onInput={(event) => setInstructions(event.currentTarget.value)} />
      </div>
      <FormFooter error={error} busy={busy} label="Save will" />
      <p role="status">{saved ? "Saved." : ""}</p>
    </form>
  )
}

const CertificateFacts = ({ answer }: { answer: DeathCertificateAnswer }) => {
  const { death_certificate: certificate, succession } = answer
  return (
    <>
      <dl class="facts" aria-label="The death certificate">
        <dt>Certificate</dt>
        <dd>
          <code class="hash">{certificate.certificate_id}</code>
        </dd>
        <dt>Cause</dt>
        <dd>{certificate.cause}</dd>
        <dt>Notes</dt>
        <dd class="pre">{certificate.notes ?? "—"}</dd>
        <dt>Issued</dt>
        <dd>
          <When at={certificate.issued_at} />
        </dd>
      </dl>
      <h3>Succession</h3>
      <dl class="facts" aria-label="The succession">
        <dt>Ran</dt>
        <dd>{succession.triggered ? "yes" : "no (no will)"}</dd>
        <dt>Policy</dt>
        <dd>{succession.succession_policy ?? "—"}</dd>
        <dt>Successor</dt>
        <dd>{succession.successor_slug === null ? "—" : <Link href={estateHref(succession.successor_slug)}>{succession.successor_slug}</Link>}</dd>
        <dt>Transfer receipt</dt>
        <dd>
          <Hash value={succession.transfer_receipt_id} />
        </dd>
        {succession.purge_after !== null && (
          <>
            <dt>Data purged after</dt>
            <dd>
              <When at={succession.purge_after} />
            </dd>
            <dt>Purged</dt>
            <dd>
              <When at={succession.purged_at} />
            </dd>
          </>
        )}
      </dl>
    </>
  )
}

const CertificateForm = ({ slug, onIssued }: { slug: string; onIssued: () => void }) => {
  const { session, announce } = useApp()
  const { busy, error, submit } = useSubmit()
  const [cause, setCause] = useState(CAUSES[0]!)
  const [notes, setNotes] = useState("")
  const issue = async () => {
    const ok = await submit(() => issueDeathCertificate(session.token, slug, { cause, ...(notes.trim() === "" ? {} : { notes: notes.trim() }) }))
    if (ok) {
      announce("Death certificate issued; the will's succession ran.")
      onIssued()
    }
  }
  return (
    <ConfirmForm
      id="certificate-form"
      formClass="new-case"
      labelledBy="certificate-form-title"
      label="Issue certificate"
      question="This cannot be undone: the will's succession runs at once. Issue it?"
      busy={busy}
      check={() => true}
      onConfirm={() => void issue()}
    >
      <h3 id="certificate-form-title">Issue the death certificate</h3>
      <div class="stack">
        <label for="certificate-cause">Cause</label>
        <select id="certificate-cause" value={cause} onChange={(event) => setCause(event.currentTarget.value)}>
          {CAUSES.map((value) => (
            <option key={value} value={value}>
              {value.replaceAll("_", " ")}
            </option>
          ))}
        </select>
      </div>
      <div class="stack">
        <label for="certificate-notes">Notes (optional)</label>
        <textarea id="certificate-notes" maxLength={10_000} value={notes} onInput={(event) => setNotes(event.currentTarget.value)} />
      </div>
      <ErrorLine message={error} />
    </ConfirmForm>
  )
}

const Snapshots = ({ slug, search }: { slug: string; search: string }) => {
  const { session } = useApp()
  const page = pageOf(search)
  const [loaded, retry] = useLoad(() => listSnapshots(session.token, slug, page, PER_PAGE), [session.token, slug, page])
  return (
    <section class="ledger-section" aria-labelledby="snapshots-title">
      <h2 id="snapshots-title">Compliance snapshots</h2>
      <LoadView loaded={loaded} retry={retry} what="compliance snapshots">
        {({ snapshots, pagination }) =>
          snapshots.length === 0 ? (
            <Empty>No compliance snapshots of this agent.</Empty>
          ) : (
            <>
              <div class="table-scroll">
                <table class="case-table">
                  <caption class="visually-hidden">Compliance snapshots, newest first</caption>
                  <thead>
                    <tr>
                      <th scope="col">Framework</th>
                      <th scope="col">Overall</th>
                      <th scope="col">Findings</th>
                      <th scope="col">Recorded</th>
                    </tr>
                  </thead>
                  <tbody>
                    {snapshots.map((snapshot) => (
                      <tr key={snapshot.snapshot_uuid}>
                        <td data-label="Framework">{snapshot.framework}</td>
                        <td data-label="Overall">{snapshot.overall_status.replaceAll("_", " ")}</td>
                        <td data-label="Findings">
                          {snapshot.pass_count} pass · {snapshot.fail_count} fail · {snapshot.partial_count} partial
                        </td>
                        <td data-label="Recorded">
                          <When at={snapshot.created_at} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <Pager pagination={pagination} search={search} label="Compliance snapshots" />
            </>
          )
        }
      </LoadView>
    </section>
  )
}
