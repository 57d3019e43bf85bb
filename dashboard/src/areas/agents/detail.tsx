/**
 * One agent, in four deep-linkable sections: the overview (facts, reputation, versions, decommission
 * and transfer), its identity (DID document and agent card), its credentials (with their status-list
 * bits, and revoking the active one) and the mutual-signing requests of its actions. Another
 * organization's agent answers 404 and shows the not-found state.
 */
import { useEffect, useRef, useState } from "preact/hooks"
import { PageHeading } from "../../components.tsx"
import { ConfirmButton, ConfirmForm } from "../../confirm.tsx"
import { useApp } from "../../context.ts"
import { localTime, statusLabel } from "../../format.ts"
import { AreaTabs, Empty, ErrorLine, Link, LoadView, Pager, pageOf, problemText, useLoad, useSubmit } from "../../kit.tsx"
import { BASE, navigate } from "../../router.ts"
import {
  type AgentView,
  agentCardPath,
  bitSet,
  type CredentialRecord,
  decommissionAgent,
  didDocumentPath,
  getAgent,
  getAgentCard,
  getDid,
  getReputation,
  listAgentActions,
  listCredentials,
  listVersions,
  loadStatusBits,
  mutualSignOf,
  type PendingMutualSign,
  revokeCredential,
  rotateDid,
  statusEntryOf,
  transferAgent
} from "./api.ts"

export const SECTIONS = ["identity", "credentials", "mutual-signing"] as const
export type Section = "overview" | (typeof SECTIONS)[number]

export const agentHref = (slug: string, section?: string) => `agents/${encodeURIComponent(slug)}${section === undefined ? "" : `/${section}`}`

export const AgentDetail = ({ slug, section, search }: { slug: string; section: Section; search: string }) => {
  const { session } = useApp()
  const [loaded, reload] = useLoad(() => getAgent(session.token, slug), [session.token, slug])
  const missing = loaded.state === "failed" && loaded.status === 404
  const title = loaded.state === "ready" ? loaded.value.name : missing ? "Agent not found" : `Agent ${slug}`
  return (
    <main class="agents">
      <p class="breadcrumb">
        <Link href="agents">All agents</Link>
      </p>
      <PageHeading>{title}</PageHeading>
      <LoadView loaded={loaded} retry={missing ? undefined : reload} what="the agent">
        {(agent) => (
          <>
            <AreaTabs
              label="Agent sections"
              tabs={[
                { href: agentHref(slug), label: "Overview", prefix: false },
                { href: agentHref(slug, "identity"), label: "DID and agent card" },
                { href: agentHref(slug, "credentials"), label: "Credentials" },
                { href: agentHref(slug, "mutual-signing"), label: "Mutual signing" }
              ]}
            />
            {section === "overview" && <Overview agent={agent} onChanged={reload} />}
            {section === "identity" && <Identity agent={agent} />}
            {section === "credentials" && <Credentials agent={agent} />}
            {section === "mutual-signing" && <MutualSigning agent={agent} search={search} />}
          </>
        )}
      </LoadView>
    </main>
  )
}

const AgentStatus = ({ status }: { status: string }) => <span class={`agent-status agent-status-${status}`}>{status}</span>

/** A message that takes the focus when it appears (the outcome of a change). */
const Outcome = ({ message }: { message: string | undefined }) => {
  const ref = useRef<HTMLParagraphElement>(null)
  useEffect(() => {
    if (message !== undefined) ref.current?.focus()
  }, [message])
  return message === undefined ? null : (
    <p class="notice" tabIndex={-1} ref={ref}>
      {message}
    </p>
  )
}

/* Overview. */

const Overview = ({ agent, onChanged }: { agent: AgentView; onChanged: () => void }) => {
  const [outcome, setOutcome] = useState<string | undefined>()
  const metadata = Object.keys(agent.metadata).length === 0 ? undefined : JSON.stringify(agent.metadata, null, 2)
  return (
    <>
      <Outcome message={outcome} />
      <dl class="facts">
        <dt>Slug</dt>
        <dd>
          <code class="wrap">{agent.agent_slug}</code>
        </dd>
        <dt>Status</dt>
        <dd data-agent-status={agent.status}>
          <AgentStatus status={agent.status} />
          {agent.decommissioned_at !== null && (
            <>
              {" "}
              since <time dateTime={agent.decommissioned_at}>{localTime(agent.decommissioned_at)}</time>
            </>
          )}
        </dd>
        <dt>Description</dt>
        <dd class="wrap">{agent.description ?? "none"}</dd>
        <dt>Capabilities</dt>
        <dd class="wrap">{agent.capabilities.length === 0 ? "none declared" : agent.capabilities.join(", ")}</dd>
        <dt>Current version</dt>
        <dd>{agent.current_version ?? "none published"}</dd>
        <dt>Actions</dt>
        <dd>
          {agent.action_count} <Link href={`${BASE}/actions?agent_id=${encodeURIComponent(agent.agent_slug)}`}>Actions by this agent</Link>
        </dd>
        <dt>Owner organization</dt>
        <dd>
          <code class="wrap">{agent.owner_id}</code>
        </dd>
        <dt>Registered</dt>
        <dd>
          <time dateTime={agent.created_at}>{localTime(agent.created_at)}</time>
        </dd>
        <dt>Metadata</dt>
        <dd>{metadata === undefined ? "none" : <pre class="json json-small">{metadata}</pre>}</dd>
      </dl>
      {/* Keyed by status: a decommission changes the score (tier "decommissioned"). */}
      <ReputationPanel key={agent.status} slug={agent.agent_slug} />
      <Versions slug={agent.agent_slug} />
      {agent.status === "active" && (
        <>
          <Decommission
            agent={agent}
            onDone={(message) => {
              setOutcome(message)
              onChanged()
            }}
          />
          <Transfer agent={agent} />
        </>
      )}
    </>
  )
}

const ReputationPanel = ({ slug }: { slug: string }) => {
  const [loaded, reload] = useLoad(() => getReputation(slug), [slug])
  return (
    <section aria-labelledby="agent-reputation" class="agent-section">
      <h2 id="agent-reputation">Reputation</h2>
      {loaded.state === "failed" && loaded.status === 404 ? (
        <Empty>No reputation yet.</Empty>
      ) : (
        <LoadView loaded={loaded} retry={reload} what="the reputation">
          {(reputation) =>
            reputation.tier === "unrated" ? (
              <Empty>No reputation yet: the agent has no decided actions and no attestations.</Empty>
            ) : (
              <dl class="facts">
                <dt>Score</dt>
                <dd data-reputation-score>{reputation.score} of 100</dd>
                <dt>Tier</dt>
                <dd data-reputation-tier={reputation.tier}>{reputation.tier}</dd>
                <dt>Attestations</dt>
                <dd>{reputation.total_attestations}</dd>
                <dt>Computed</dt>
                <dd>
                  <time dateTime={reputation.computed_at}>{localTime(reputation.computed_at)}</time> (formula {reputation.formula_version})
                </dd>
              </dl>
            )
          }
        </LoadView>
      )}
    </section>
  )
}

const Versions = ({ slug }: { slug: string }) => {
  const { session } = useApp()
  const [loaded, reload] = useLoad(() => listVersions(session.token, slug), [session.token, slug])
  return (
    <section aria-labelledby="agent-versions" class="agent-section">
      <h2 id="agent-versions">Versions</h2>
      <LoadView loaded={loaded} retry={reload} what="the versions">
        {(versions) =>
          versions.length === 0 ? (
            <Empty>No versions published yet.</Empty>
          ) : (
            <div class="table-scroll">
              <table class="case-table">
                <caption class="visually-hidden">Versions, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Version</th>
                    <th scope="col">Published</th>
                    <th scope="col">Instruction hash</th>
                    <th scope="col">Model</th>
                    <th scope="col">Changelog</th>
                  </tr>
                </thead>
                <tbody>
                  {versions.map((version) => (
                    <tr key={version.version}>
                      <td data-label="Version">{version.version}</td>
                      <td data-label="Published">
                        <time dateTime={version.published_at}>{localTime(version.published_at)}</time>
                      </td>
                      <td data-label="Instruction hash">{version.instruction_hash === null ? "none" : <code class="hash">{version.instruction_hash}</code>}</td>
                      <td data-label="Model" class="wrap">
                        {version.model_id ?? "none"}
                      </td>
                      <td data-label="Changelog" class="wrap pre">
                        {version.changelog ?? ""}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </LoadView>
    </section>
  )
}

/** A reason of 1 to 1000 characters, as the API takes it. */
const useReason = (id: string) => {
  const [value, setValue] = useState("")
  const [problem, setProblem] = useState<string | undefined>()
  const ref = useRef<HTMLTextAreaElement>(null)
  const check = () => {
    const length = value.trim().length
    if (length >= 1 && length <= 1000) {
      setProblem(undefined)
      return true
    }
    setProblem("Give a reason of 1 to 1000 characters.")
    ref.current?.focus()
    return false
  }
  const field = (label: string) => (
    <div class="stack">
      <label for={id}>{label}</label>
      <textarea
        id={id}
        ref={ref}
        maxLength={1000}
        value={value}
        aria-invalid={problem !== undefined}
        aria-describedby={problem === undefined ? undefined : `${id}-error`}
        onInput={(event) => setValue(event.currentTarget.value)}
      />
      {problem !== undefined && (
        <p id={`${id}-error`} class="error">
          {problem}
        </p>
      )}
    </div>
  )
  return { value: value.trim(), check, field, clear: () => setValue("") }
}

const Decommission = ({ agent, onDone }: { agent: AgentView; onDone: (message: string) => void }) => {
  const { session } = useApp()
  const reason = useReason("decommission-reason")
  const { busy, error, submit } = useSubmit()
  return (
    <section aria-labelledby="agent-decommission" class="agent-section danger-zone">
      <h2 id="agent-decommission">Decommission</h2>
      <p>
        Irreversible: a decommissioned agent can no longer notarize actions, publish versions or open escrow accounts. Its records are kept. Owners and admins
        only.
      </p>
      <ConfirmForm
        id="decommission-form"
        label="Decommission agent"
        question={`Decommission ${agent.name} for good?`}
        busy={busy}
        check={reason.check}
        onConfirm={async () => {
          if (await submit(() => decommissionAgent(session.token, agent.agent_slug, reason.value))) {
            // The message takes the focus (read out once; no separate announcement).
            onDone(`${agent.name} is decommissioned. Reason: ${reason.value}`)
          }
        }}
      >
        {reason.field("Reason (required)")}
      </ConfirmForm>
      <ErrorLine message={error} />
    </section>
  )
}

const Transfer = ({ agent }: { agent: AgentView }) => {
  const { session, announce } = useApp()
  const [target, setTarget] = useState("")
  const [problem, setProblem] = useState<string | undefined>()
  const ref = useRef<HTMLInputElement>(null)
  const { busy, error, submit } = useSubmit()
  const trimmed = target.trim()
  const check = () => {
    const why = trimmed === "" ? "Enter the id of the organization to transfer to." : trimmed === session.orgUuid ? "That is this organization." : undefined
    setProblem(why)
    if (why !== undefined) ref.current?.focus()
    return why === undefined
  }
  return (
    <section aria-labelledby="agent-transfer" class="agent-section danger-zone">
      <h2 id="agent-transfer">Transfer to another organization</h2>
      <p>
        The agent, its DID and its history move to the other organization, which becomes its owner; a new credential is issued for it and this organization no
        longer sees it. The transfer is signed with your session and recorded in both organizations. Owners and admins only.
      </p>
      <ConfirmForm
        id="transfer-form"
        label="Transfer agent"
        question={`Transfer ${agent.name} to organization ${trimmed}? You will no longer see it.`}
        busy={busy}
        check={check}
        onConfirm={async () => {
          if (await submit(() => transferAgent(session.token, agent.agent_slug, session.orgUuid, trimmed))) {
            announce(`${agent.name} was transferred to organization ${trimmed}.`)
            navigate(`${BASE}/agents`)
          }
        }}
      >
        <div class="stack">
          <label for="transfer-target">Target organization id</label>
          <input
            id="transfer-target"
            ref={ref}
            class="secret-field"
            maxLength={200}
            autocomplete="off"
            spellcheck={false}
            value={target}
            aria-invalid={problem !== undefined}
            aria-describedby={problem === undefined ? "transfer-target-hint" : "transfer-target-hint transfer-target-error"}
            onInput={(event) => setTarget(event.currentTarget.value)}
          />
          <p id="transfer-target-hint" class="hint">
            The receiving organization's id (its org_uuid), as its owner sees it.
          </p>
          {problem !== undefined && (
            <p id="transfer-target-error" class="error">
              {problem}
            </p>
          )}
        </div>
      </ConfirmForm>
      <ErrorLine message={error} />
    </section>
  )
}

/* DID and agent card. */

/** Pretty JSON in a scrollable, focusable block, with a copy button. */
const JsonBlock = ({ label, value }: { label: string; value: unknown }) => {
  const text = JSON.stringify(value, null, 2)
  const [copied, setCopied] = useState("")
  return (
    <div class="json-block">
      <div class="actions-row">
        <button
          type="button"
          onClick={() =>
            navigator.clipboard.writeText(text).then(
              () => setCopied(`${label} copied.`),
              () => setCopied("Copying was refused by the browser: select the text and copy it by hand.")
            )
          }
        >
          Copy {label}
        </button>
        <span role="status">{copied}</span>
      </div>
      <section aria-label={`${label} as JSON`}>
        {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable block must be reachable (and scrollable) by keyboard */}
        <pre class="json" tabIndex={0}>
          {text}
        </pre>
      </section>
    </div>
  )
}

const Identity = ({ agent }: { agent: AgentView }) => {
  const { session } = useApp()
  const slug = agent.agent_slug
  const [did, reloadDid] = useLoad(() => getDid(session.token, slug), [session.token, slug])
  const [card, reloadCard] = useLoad(() => getAgentCard(slug), [slug])
  const rotation = useSubmit()
  const [rotated, setRotated] = useState("")
  return (
    <>
      <section aria-labelledby="agent-did" class="agent-section">
        <h2 id="agent-did">DID document</h2>
        <LoadView loaded={did} retry={reloadDid} what="the DID">
          {(info) => (
            <>
              <dl class="facts">
                <dt>DID</dt>
                <dd>
                  <code class="wrap" data-did>
                    {info.did}
                  </code>
                </dd>
                <dt>Key version</dt>
                <dd>{info.version}</dd>
                <dt>Key created</dt>
                <dd>{info.created_at === null ? "no key yet" : <time dateTime={info.created_at}>{localTime(info.created_at)}</time>}</dd>
                <dt>Published at</dt>
                <dd>
                  <a href={didDocumentPath(slug)} class="wrap">
                    {didDocumentPath(slug)}
                  </a>
                </dd>
              </dl>
              {Object.keys(info.document).length === 0 ? <Empty>No key has been generated for this agent yet.</Empty> : <JsonBlock label="DID document" value={info.document} />}
              <h3>Rotate the key</h3>
              <p>
                A new Ed25519 key replaces the current one, which is discarded; the DID stays the same. Signatures made with the old key no longer verify
                against the document. Owners and admins only.
              </p>
              <div class="actions-row">
                <ConfirmButton
                  label="Rotate key"
                  question="Discard the current key and make a new one?"
                  busy={rotation.busy}
                  onConfirm={async () => {
                    let version = 0
                    const done = await rotation.submit(async () => {
                      version = (await rotateDid(session.token, slug)).new_version
                    })
                    if (done) {
                      const message = `Key rotated: the document is now at key version ${version}.`
                      setRotated(message)
                      reloadDid()
                      reloadCard()
                    }
                  }}
                />
              </div>
              <p role="status">{rotated}</p>
              <ErrorLine message={rotation.error} />
            </>
          )}
        </LoadView>
      </section>
      <section aria-labelledby="agent-card" class="agent-section">
        <h2 id="agent-card">Agent card</h2>
        <LoadView loaded={card} retry={reloadCard} what="the agent card">
          {(value) => (
            <>
              <dl class="facts">
                <dt>Name</dt>
                <dd class="wrap">{value.name}</dd>
                <dt>Address</dt>
                <dd class="wrap">{value.url}</dd>
                <dt>Capabilities</dt>
                <dd class="wrap">{value.capabilities.length === 0 ? "none declared" : value.capabilities.join(", ")}</dd>
                <dt>Authentication</dt>
                <dd class="wrap">
                  {value.authentication.type} at {value.authentication.authorization_url}
                </dd>
                <dt>Notarization</dt>
                <dd>{value.platform.notarization ? "yes" : "no"}</dd>
                <dt>Mutual signing</dt>
                <dd>{value.platform.mutual_signing ? "yes" : "no"}</dd>
                <dt>Reputation score</dt>
                <dd>{value.platform.reputation_score ?? "no reputation yet"}</dd>
                <dt>Published at</dt>
                <dd>
                  <a href={agentCardPath(slug)} class="wrap">
                    {agentCardPath(slug)}
                  </a>
                </dd>
              </dl>
              <JsonBlock label="Agent card" value={value} />
            </>
          )}
        </LoadView>
      </section>
    </>
  )
}

/* Credentials. */

type CredentialState = "active" | "revoked" | "expired"

const stateOf = (credential: CredentialRecord, now: number): CredentialState =>
  credential.revoked_at !== null ? "revoked" : Date.parse(credential.expires_at) <= now ? "expired" : "active"

/** The credentials and the status lists they point to (each list read once; an unreadable one is undefined). */
const loadCredentials = async (token: string, slug: string) => {
  const { credentials } = await listCredentials(token, slug)
  const urls = [...new Set(credentials.flatMap((credential) => statusEntryOf(credential)?.statusListCredential ?? []))]
  const lists = await Promise.all(urls.map(async (url) => [url, await loadStatusBits(url).catch(() => undefined)] as const))
  return { credentials, bits: new Map(lists), now: Date.now() }
}

const StatusListCell = ({ credential, bits }: { credential: CredentialRecord; bits: ReadonlyMap<string, Uint8Array | undefined> }) => {
  const entry = statusEntryOf(credential)
  if (entry === undefined) return <>no status entry</>
  const list = bits.get(entry.statusListCredential)
  const index = Number(entry.statusListIndex)
  if (list === undefined || !Number.isInteger(index)) return <>could not be read</>
  return bitSet(list, index) ? (
    <span data-status-bit="set">
      {entry.statusPurpose === "revocation" ? "revoked" : entry.statusPurpose} (bit {index} set)
    </span>
  ) : (
    <span data-status-bit="clear">not {entry.statusPurpose === "revocation" ? "revoked" : entry.statusPurpose} (bit {index} clear)</span>
  )
}

const Credentials = ({ agent }: { agent: AgentView }) => {
  const { session } = useApp()
  const slug = agent.agent_slug
  const [loaded, reload] = useLoad(() => loadCredentials(session.token, slug), [session.token, slug])
  const [outcome, setOutcome] = useState<string | undefined>()
  return (
    <section aria-labelledby="agent-credentials" class="agent-section">
      <h2 id="agent-credentials">Capability credentials</h2>
      <p class="hint">
        W3C verifiable credentials signed by the platform. A new one is issued when the agent's capabilities, version or owner change, superseding (revoking)
        the previous one. The status list is the public StatusList2021 bitstring verifiers read.
      </p>
      <Outcome message={outcome} />
      <LoadView loaded={loaded} retry={reload} what="the credentials">
        {({ credentials, bits, now }) => {
          const active = credentials.find((credential) => stateOf(credential, now) === "active")
          return (
            <>
              {credentials.length === 0 ? (
                <Empty>No credential has been issued for this agent.</Empty>
              ) : (
                <div class="table-scroll">
                  <table class="case-table">
                    <caption class="visually-hidden">Credentials, newest first</caption>
                    <thead>
                      <tr>
                        <th scope="col">Version</th>
                        <th scope="col">Credential id</th>
                        <th scope="col">Issued</th>
                        <th scope="col">Expires</th>
                        <th scope="col">State</th>
                        <th scope="col">Status list</th>
                      </tr>
                    </thead>
                    <tbody>
                      {credentials.map((credential) => {
                        const state = stateOf(credential, now)
                        return (
                          <tr key={credential.vc_id} data-credential={credential.vc_id} data-state={state}>
                            <td data-label="Version">{credential.version}</td>
                            <td data-label="Credential id">
                              <code class="hash">{credential.vc_id}</code>
                            </td>
                            <td data-label="Issued">
                              <time dateTime={credential.issued_at}>{localTime(credential.issued_at)}</time>
                            </td>
                            <td data-label="Expires">
                              <time dateTime={credential.expires_at}>{localTime(credential.expires_at)}</time>
                            </td>
                            <td data-label="State">
                              <span class={`credential-state credential-state-${state}`}>{state}</span>
                              {credential.revoked_at !== null && (
                                <>
                                  {" "}
                                  <time dateTime={credential.revoked_at}>{localTime(credential.revoked_at)}</time>
                                </>
                              )}
                            </td>
                            <td data-label="Status list">
                              <StatusListCell credential={credential} bits={bits} />
                            </td>
                          </tr>
                        )
                      })}
                    </tbody>
                  </table>
                </div>
              )}
              {credentials[0] !== undefined && (
                <details class="agent-details">
                  <summary>Newest credential (version {credentials[0].version}) as JSON</summary>
                  <JsonBlock label="Credential" value={credentials[0].vc_json} />
                </details>
              )}
              {active === undefined ? (
                <p class="hint">No credential is active, so there is nothing to revoke.</p>
              ) : (
                <RevokeCredential
                  key={active.vc_id}
                  slug={slug}
                  credential={active}
                  onRevoked={(message) => {
                    setOutcome(message)
                    reload()
                  }}
                />
              )}
            </>
          )
        }}
      </LoadView>
    </section>
  )
}

const RevokeCredential = ({ slug, credential, onRevoked }: { slug: string; credential: CredentialRecord; onRevoked: (message: string) => void }) => {
  const { session } = useApp()
  const reason = useReason("revoke-reason")
  const { busy, error, submit } = useSubmit()
  return (
    <div class="danger-zone">
      <h3>Revoke the active credential (version {credential.version})</h3>
      <p>Permanent: verifiers will see it revoked in the status list. Owners and admins only.</p>
      <ConfirmForm
        id="revoke-form"
        label="Revoke credential"
        question={`Revoke credential version ${credential.version} for good?`}
        busy={busy}
        check={reason.check}
        onConfirm={async () => {
          if (await submit(() => revokeCredential(session.token, slug, reason.value))) onRevoked(`Credential version ${credential.version} revoked.`)
        }}
      >
        {reason.field("Reason for revoking (required)")}
      </ConfirmForm>
      <ErrorLine message={error} />
    </div>
  )
}

/* Mutual signing. */

/** Actions per page here: each one's request is a separate (public, per-IP limited) lookup. */
const MUTUAL_PER_PAGE = 20

type Lookup = { readonly request: PendingMutualSign | undefined } | { readonly problem: string }

const inTurns = async <A, B>(items: ReadonlyArray<A>, width: number, work: (item: A) => Promise<B>): Promise<Array<B>> => {
  const results: Array<B> = new Array(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const index = next++
      results[index] = await work(items[index]!)
    }
  }
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker))
  return results
}

const MutualSigning = ({ agent, search }: { agent: AgentView; search: string }) => {
  const { session } = useApp()
  const slug = agent.agent_slug
  const page = pageOf(search)
  const [loaded, reload] = useLoad(async () => {
    const actions = await listAgentActions(session.token, slug, page, MUTUAL_PER_PAGE)
    const lookups = await inTurns(actions.data, 4, (action) =>
      mutualSignOf(action.action_uuid).then(
        (request): Lookup => ({ request }),
        (cause): Lookup => ({ problem: problemText(cause) })
      )
    )
    return { actions, lookups }
  }, [session.token, slug, page])
  return (
    <section aria-labelledby="agent-mutual" class="agent-section">
      <h2 id="agent-mutual">Mutual-signing requests</h2>
      <p class="hint">
        A counterparty co-signs one of this agent's actions with its own DID key. Each action has at most one request, looked up action by action:{" "}
        {MUTUAL_PER_PAGE} actions per page, newest first.
      </p>
      <LoadView loaded={loaded} retry={reload} what="the mutual-signing requests">
        {({ actions, lookups }) => {
          if (actions.data.length === 0) return <Empty>This agent has no actions yet, so no mutual-signing requests.</Empty>
          const found = lookups.filter((lookup) => "request" in lookup && lookup.request !== undefined).length
          return (
            <>
              <p role="status">
                {found === 0 ? "None of the actions on this page has a mutual-signing request." : `${found} of the ${actions.data.length} actions on this page have a request.`}
              </p>
              <div class="table-scroll">
                <table class="case-table">
                  <caption class="visually-hidden">This agent's actions and their mutual-signing requests</caption>
                  <thead>
                    <tr>
                      <th scope="col">Action</th>
                      <th scope="col">Requested</th>
                      <th scope="col">Mutual signing</th>
                      <th scope="col">Counterparty</th>
                      <th scope="col">Expires</th>
                    </tr>
                  </thead>
                  <tbody>
                    {actions.data.map((action, index) => {
                      const lookup = lookups[index]!
                      const request = "request" in lookup ? lookup.request : undefined
                      return (
                        <tr key={action.action_uuid} data-action={action.action_uuid} data-mutual={request?.status ?? ("problem" in lookup ? "unknown" : "none")}>
                          <td data-label="Action" class="wrap">
                            <Link href={`${BASE}/actions/${encodeURIComponent(action.action_uuid)}`}>{action.action_type}</Link>{" "}
                            <span class="hint">({statusLabel(action.status)})</span>
                          </td>
                          <td data-label="Requested">{request === undefined ? "—" : <time dateTime={request.requested_at}>{localTime(request.requested_at)}</time>}</td>
                          <td data-label="Mutual signing">
                            {"problem" in lookup ? (
                              <span class="error">could not be checked: {lookup.problem}</span>
                            ) : request === undefined ? (
                              "no request"
                            ) : (
                              <span class={`mutual-status mutual-status-${request.status}`}>{request.status}</span>
                            )}
                          </td>
                          <td data-label="Counterparty">{request === undefined ? "—" : <code class="wrap">{request.counterparty_did}</code>}</td>
                          <td data-label="Expires">{request === undefined ? "—" : <time dateTime={request.expires_at}>{localTime(request.expires_at)}</time>}</td>
                        </tr>
                      )
                    })}
                  </tbody>
                </table>
              </div>
              <Pager pagination={actions.pagination} search={search} label="Actions" />
            </>
          )
        }}
      </LoadView>
    </section>
  )
}
