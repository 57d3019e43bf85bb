/**
 * Evidence: sealed packages (a new one from actions picked in a list), a package's page, the audited
 * as-of view of the organization's actions (time travel), and an action's liability chain drawn as
 * linked boxes up to its root.
 */
import { useRef, useState } from "preact/hooks"
import { ActionStatuses } from "../../../../protocol/lists.ts"
import { listActions } from "../../api.ts"
import { useApp } from "../../context.ts"
import { statusLabel } from "../../format.ts"
import { Empty, FormFooter, Link, LoadView, Pager, PER_PAGE, pageOf, queryOf, setQuery, useLoad, useSubmit } from "../../kit.tsx"
import { BASE, navigate } from "../../router.ts"
import { createPackage, type DiscoveryRecord, getPackage, liabilityChain, listPackages, timeTravel } from "./api.ts"
import { Hash, isNotFound, LedgerPage, NotFound, short, When } from "./shared.tsx"

const packageHref = (uuid: string) => `${BASE}/evidence/${encodeURIComponent(uuid)}`
const chainHref = (actionUuid: string) => `${BASE}/evidence/chain/${encodeURIComponent(actionUuid)}`
const actionHref = (actionUuid: string) => `${BASE}/actions/${encodeURIComponent(actionUuid)}`

const EvidenceLinks = () => (
  <nav class="actions-row" aria-label="Evidence tools">
    <Link href={`${BASE}/evidence/new`}>New package</Link>
    <Link href={`${BASE}/evidence/time-travel`}>Time travel</Link>
    <Link href={`${BASE}/evidence/chain`}>Liability chain</Link>
  </nav>
)

export const EvidenceList = ({ search }: { search: string }) => {
  const { session } = useApp()
  const page = pageOf(search)
  const [loaded, retry] = useLoad(() => listPackages(session.token, page, PER_PAGE), [session.token, page])
  return (
    <LedgerPage title="Evidence packages">
      <EvidenceLinks />
      <LoadView loaded={loaded} retry={retry} what="evidence packages">
        {({ packages, pagination }) =>
          packages.length === 0 ? (
            <Empty>No evidence packages yet.</Empty>
          ) : (
            <>
              <div class="table-scroll">
                <table class="case-table">
                  <caption class="visually-hidden">Evidence packages, newest first</caption>
                  <thead>
                    <tr>
                      <th scope="col">Title</th>
                      <th scope="col">Actions</th>
                      <th scope="col">Sealed</th>
                      <th scope="col">Package hash</th>
                    </tr>
                  </thead>
                  <tbody>
                    {packages.map((item) => (
                      <tr key={item.package_uuid}>
                        <td data-label="Title" class="wrap">
                          <Link href={packageHref(item.package_uuid)}>{item.title}</Link>
                        </td>
                        <td data-label="Actions">{item.action_count}</td>
                        <td data-label="Sealed">
                          <When at={item.sealed_at} />
                        </td>
                        <td data-label="Package hash">
                          <code class="hash">{item.package_hash}</code>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <Pager pagination={pagination} search={search} label="Evidence packages" />
            </>
          )
        }
      </LoadView>
    </LedgerPage>
  )
}

/** A new package: a title, a purpose, and actions ticked in the organization's actions list (kept across its pages). */
export const NewPackagePage = ({ search }: { search: string }) => {
  const { session, announce } = useApp()
  const query = queryOf(search)
  const page = pageOf(search)
  const filters = { agent_id: query.agent_id ?? "", status: query.status ?? "" }
  const [loaded, retry] = useLoad(() => listActions(session.token, filters, page, PER_PAGE), [session.token, filters.agent_id, filters.status, page])
  const [title, setTitle] = useState("")
  const [purpose, setPurpose] = useState("")
  const [agent, setAgent] = useState(filters.agent_id)
  const [chosen, setChosen] = useState<ReadonlyArray<string>>([])
  const { busy, error, submit } = useSubmit()
  const titleRef = useRef<HTMLInputElement>(null)
  const [titleError, setTitleError] = useState<string | undefined>()
  const toggle = (uuid: string, on: boolean) => setChosen((list) => (on ? [...list, uuid] : list.filter((entry) => entry !== uuid)))
  const seal = async (event: Event) => {
    event.preventDefault()
    if (title.trim() === "") {
      setTitleError("Give the package a title.")
      titleRef.current?.focus()
      return
    }
    setTitleError(undefined)
    let created: string | undefined
    const ok = await submit(async () => {
      const sealed = await createPackage(session.token, { title: title.trim(), action_uuids: chosen, ...(purpose.trim() === "" ? {} : { purpose: purpose.trim() }) })
      created = sealed.package_uuid
    })
    if (ok && created !== undefined) {
      announce("Evidence package sealed.")
      navigate(packageHref(created))
    }
  }
  return (
    <LedgerPage title="New evidence package">
      <form onSubmit={seal} class="new-case" noValidate>
        <div class="stack">
          <label for="package-title">Title</label>
          <input
            id="package-title"
            ref={titleRef}
            maxLength={200}
            value={title}
            aria-invalid={titleError !== undefined}
            aria-describedby={titleError === undefined ? undefined : "package-title-error"}
            onInput={(event) => setTitle(event.currentTarget.value)}
          />
          {titleError !== undefined && (
            <p id="package-title-error" class="error">
              {titleError}
            </p>
          )}
        </div>
        <div class="stack">
          <label for="package-purpose">Purpose (optional)</label>
          <textarea id="package-purpose" maxLength={2000} value={purpose} onInput={(event) => setPurpose(event.currentTarget.value)} />
        </div>
        <p role="status" class="chosen-count">
          {chosen.length === 0 ? "No actions chosen yet." : `${chosen.length} action${chosen.length === 1 ? "" : "s"} chosen.`}
        </p>
        <FormFooter error={error} busy={busy} label="Seal package">
          {chosen.length > 0 && (
            <button type="button" onClick={() => setChosen([])}>
              Clear the choice
            </button>
          )}
        </FormFooter>
      </form>
      <section class="ledger-section" aria-labelledby="pick-title">
        <h2 id="pick-title">Choose actions</h2>
        <form
          class="filters"
          aria-label="Filter actions"
          onSubmit={(event) => {
            event.preventDefault()
            setQuery(search, { agent_id: agent.trim() })
          }}
        >
          <div>
            <label for="pick-agent">Agent id</label>
            <input id="pick-agent" value={agent} onInput={(event) => setAgent(event.currentTarget.value)} />
          </div>
          <div>
            <label for="pick-status">Status</label>
            <select id="pick-status" value={filters.status} onChange={(event) => setQuery(search, { status: event.currentTarget.value })}>
              <option value="">any</option>
              {ActionStatuses.map((status) => (
                <option key={status} value={status}>
                  {statusLabel(status)}
                </option>
              ))}
            </select>
          </div>
          <button type="submit">Filter</button>
        </form>
        <LoadView loaded={loaded} retry={retry} what="actions">
          {(list) =>
            list.data.length === 0 ? (
              <Empty>No actions match.</Empty>
            ) : (
              <>
                <fieldset class="models-choice">
                  <legend>Actions to include</legend>
                  <ul class="plain pick-list">
                    {list.data.map((action) => (
                      <li key={action.action_uuid}>
                        <label class="check">
                          <input type="checkbox" checked={chosen.includes(action.action_uuid)} onChange={(event) => toggle(action.action_uuid, event.currentTarget.checked)} />
                          <span>
                            {action.action_type} · {action.agent_id ?? "no agent"} · {statusLabel(action.status)} · <When at={action.created_at} />{" "}
                            <code class="hash">{short(action.action_uuid)}</code>
                          </span>
                        </label>
                      </li>
                    ))}
                  </ul>
                </fieldset>
                <Pager pagination={list.pagination} search={search} label="Actions" />
              </>
            )
          }
        </LoadView>
      </section>
    </LedgerPage>
  )
}

export const PackagePage = ({ packageUuid }: { packageUuid: string }) => {
  const { session } = useApp()
  const [loaded, retry] = useLoad(() => getPackage(session.token, packageUuid), [session.token, packageUuid])
  if (isNotFound(loaded)) return <NotFound what="Evidence package" back={`${BASE}/evidence`} backLabel="All evidence packages" />
  return (
    <LedgerPage title={loaded.state === "ready" ? `Evidence package: ${loaded.value.title}` : "Evidence package"}>
      <LoadView loaded={loaded} retry={retry} what="the package">
        {(item) => (
          <>
            <dl class="facts">
              <dt>Status</dt>
              <dd>{item.status}</dd>
              <dt>Purpose</dt>
              <dd class="wrap">{item.purpose ?? "—"}</dd>
              <dt>Actions</dt>
              <dd>{item.action_count}</dd>
              <dt>Sealed</dt>
              <dd>
                <When at={item.sealed_at} />
              </dd>
              <dt>Package hash</dt>
              <dd>
                <Hash value={item.package_hash} />
              </dd>
              <dt>Signature</dt>
              <dd>
                <Hash value={item.signature} />
              </dd>
              <dt>Key</dt>
              <dd>
                <code class="hash">{item.public_key_id}</code>
              </dd>
              <dt>Timestamp token</dt>
              <dd>{item.timestamp_token === null ? "none" : "present (RFC 3161)"}</dd>
              <dt>Package id</dt>
              <dd>
                <code class="hash">{item.package_uuid}</code>
              </dd>
            </dl>
            <section class="ledger-section" aria-labelledby="package-actions-title">
              <h2 id="package-actions-title">Actions in the package</h2>
              <div class="table-scroll">
                <table class="case-table">
                  <caption class="visually-hidden">Actions in the package</caption>
                  <thead>
                    <tr>
                      <th scope="col">Action</th>
                      <th scope="col">Agent</th>
                      <th scope="col">Status</th>
                      <th scope="col">Created</th>
                      <th scope="col">Receipt</th>
                      <th scope="col">Liability</th>
                    </tr>
                  </thead>
                  <tbody>
                    {item.actions.map((action) => (
                      <tr key={action.action_uuid}>
                        <td data-label="Action" class="wrap">
                          <Link href={actionHref(action.action_uuid)}>{action.action_type}</Link>
                        </td>
                        <td data-label="Agent" class="wrap">
                          {action.agent_id ?? "—"}
                        </td>
                        <td data-label="Status">{statusLabel(action.status)}</td>
                        <td data-label="Created">
                          <When at={action.created_at} />
                        </td>
                        <td data-label="Receipt">{action.receipt === null ? "none" : <code class="hash">{action.receipt.receipt_uuid}</code>}</td>
                        <td data-label="Liability">
                          <Link href={chainHref(action.action_uuid)} aria-label={`Liability chain of ${action.action_type} ${short(action.action_uuid)}`}>
                            Chain
                          </Link>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </section>
          </>
        )}
      </LoadView>
    </LedgerPage>
  )
}

/** A `datetime-local` value as an ISO instant in the user's zone; undefined when empty or invalid. */
const instant = (local: string) => {
  if (local === "") return undefined
  const at = new Date(local)
  return Number.isNaN(at.getTime()) ? undefined : at.toISOString()
}

const TIME_TRAVEL_KEYS = ["at", "reason", "agent_id", "action_type", "status", "from", "to"] as const

/**
 * The organization's actions as they stood at a moment. The query is audited with its reason, so it
 * runs only when asked; the form's values go into the address (a link reopens the same query).
 */
export const TimeTravelPage = ({ search }: { search: string }) => {
  const { session, announce } = useApp()
  const query = queryOf(search)
  const [values, setValues] = useState<Record<string, string>>(() => Object.fromEntries(TIME_TRAVEL_KEYS.map((key) => [key, query[key] ?? ""])))
  const [record, setRecord] = useState<DiscoveryRecord | undefined>()
  const { busy, error, submit } = useSubmit()
  const results = useRef<HTMLElement>(null)
  const set = (key: string) => (event: Event) => {
    const value = (event.currentTarget as HTMLInputElement).value
    setValues((current) => ({ ...current, [key]: value }))
  }
  const run = async (event: Event) => {
    event.preventDefault()
    setQuery(search, values)
    let answer: DiscoveryRecord | undefined
    const ok = await submit(async () => {
      const pointInTime = instant(values.at ?? "")
      if (pointInTime === undefined) throw new Error("Choose the moment to look at.")
      answer = await timeTravel(session.token, {
        point_in_time: pointInTime,
        reason: values.reason ?? "",
        query: {
          agent_id: values.agent_id || null,
          action_type: values.action_type || null,
          status: (ActionStatuses as ReadonlyArray<string>).includes(values.status ?? "") ? (values.status as (typeof ActionStatuses)[number]) : null,
          date_from: values.from || null,
          date_to: values.to || null
        }
      })
    })
    if (ok && answer !== undefined) {
      setRecord(answer)
      announce(`${answer.result_count} actions as of that moment.`)
      setTimeout(() => results.current?.focus(), 0)
    }
  }
  return (
    <LedgerPage title="Time travel">
      <p class="hint">The organization's actions and their statuses as they stood at a past moment. Every query is recorded with its reason.</p>
      <form onSubmit={run} class="new-case">
        <div class="form-row">
          <div class="stack">
            <label for="tt-at">As of</label>
            <input id="tt-at" type="datetime-local" step={1} required value={values.at} onInput={set("at")} />
          </div>
          <div class="stack grow">
            <label for="tt-reason">Reason (recorded)</label>
            <input id="tt-reason" required maxLength={2000} value={values.reason} onInput={set("reason")} />
          </div>
        </div>
        <fieldset class="models-choice">
          <legend>Which actions (optional)</legend>
          <div class="form-row">
            <div class="stack">
              <label for="tt-agent">Agent id</label>
              <input id="tt-agent" maxLength={200} value={values.agent_id} onInput={set("agent_id")} />
            </div>
            <div class="stack">
              <label for="tt-type">Action type</label>
              <input id="tt-type" maxLength={200} value={values.action_type} onInput={set("action_type")} />
            </div>
            <div class="stack">
              <label for="tt-status">Status then</label>
              <select id="tt-status" value={values.status} onChange={set("status")}>
                <option value="">any</option>
                {ActionStatuses.map((status) => (
                  <option key={status} value={status}>
                    {statusLabel(status)}
                  </option>
                ))}
              </select>
            </div>
            <div class="stack">
              <label for="tt-from">Created from</label>
              <input id="tt-from" type="date" value={values.from} onInput={set("from")} />
            </div>
            <div class="stack">
              <label for="tt-to">Created to</label>
              <input id="tt-to" type="date" value={values.to} onInput={set("to")} />
            </div>
          </div>
        </fieldset>
        <FormFooter error={error} busy={busy} label="Look back" />
      </form>
      {record !== undefined && (
        <section class="ledger-section" aria-labelledby="tt-results-title" ref={results} tabIndex={-1}>
          <h2 id="tt-results-title">
            {record.result_count} action{record.result_count === 1 ? "" : "s"} as of <When at={record.point_in_time} />
          </h2>
          <p class="hint">
            Query {record.discovery_query_uuid} recorded <When at={record.queried_at} />; results hash <code class="hash">{record.results_hash}</code>
            {record.results_truncated ? " (list truncated)" : ""}.
          </p>
          {record.results.length === 0 ? (
            <Empty>No actions existed then that match.</Empty>
          ) : (
            <div class="table-scroll">
              <table class="case-table">
                <caption class="visually-hidden">Actions as of the chosen moment</caption>
                <thead>
                  <tr>
                    <th scope="col">Action</th>
                    <th scope="col">Agent</th>
                    <th scope="col">Status then</th>
                    <th scope="col">Since</th>
                    <th scope="col">Receipt then</th>
                  </tr>
                </thead>
                <tbody>
                  {record.results.map((result) => (
                    <tr key={result.action_uuid}>
                      <td data-label="Action" class="wrap">
                        <Link href={actionHref(result.action_uuid)}>{result.action_type}</Link>
                      </td>
                      <td data-label="Agent" class="wrap">
                        {result.agent_id ?? "—"}
                      </td>
                      <td data-label="Status then">{statusLabel(result.status)}</td>
                      <td data-label="Since">
                        <When at={result.status_since} />
                      </td>
                      <td data-label="Receipt then">{result.receipt_uuid === null ? "none yet" : <code class="hash">{result.receipt_uuid}</code>}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </section>
      )}
    </LedgerPage>
  )
}

/** Asks for an action id and opens its chain. */
export const ChainLookupPage = () => {
  const [actionUuid, setActionUuid] = useState("")
  return (
    <LedgerPage title="Liability chain">
      <p class="hint">Who answers for an action: the action, the action that started it, and so on up to the root.</p>
      <form
        class="filters"
        onSubmit={(event) => {
          event.preventDefault()
          if (actionUuid.trim() !== "") navigate(chainHref(actionUuid.trim()))
        }}
      >
        <div>
          <label for="chain-action">Action id</label>
          <input id="chain-action" required value={actionUuid} onInput={(event) => setActionUuid(event.currentTarget.value)} />
        </div>
        <button type="submit">Show chain</button>
      </form>
    </LedgerPage>
  )
}

export const ChainPage = ({ actionUuid }: { actionUuid: string }) => {
  const { session } = useApp()
  const [loaded, retry] = useLoad(() => liabilityChain(session.token, actionUuid), [session.token, actionUuid])
  if (isNotFound(loaded)) return <NotFound what="Action" back={`${BASE}/evidence/chain`} backLabel="Look up another action" />
  return (
    <LedgerPage title={`Liability chain of ${short(actionUuid)}`}>
      <LoadView loaded={loaded} retry={retry} what="the liability chain">
        {(chain) => (
          <>
            <p>
              {chain.total_hops} step{chain.total_hops === 1 ? "" : "s"} from the action to its root <code class="hash">{chain.root_action_id}</code>
              {chain.truncated ? " (cut short: the chain is longer)" : ""}.
            </p>
            <ol class="liability-chain" aria-label="Liability chain, from the action to its root">
              {chain.liability_chain.map((hop, index) => (
                <li key={`${hop.hop}-${hop.action_uuid}`} class="chain-box">
                  <p class="chain-role">{index === 0 ? "This action" : hop.parent_action_uuid === null ? "Root" : `Parent ${index}`}</p>
                  <p class="chain-type">
                    <Link href={actionHref(hop.action_uuid)}>{hop.action_type}</Link>
                  </p>
                  <dl class="facts">
                    <dt>Agent</dt>
                    <dd class="wrap">{hop.agent_id ?? "—"}</dd>
                    <dt>Model</dt>
                    <dd class="wrap">{hop.model_id ?? "—"}</dd>
                    <dt>Status</dt>
                    <dd>{statusLabel(hop.status)}</dd>
                    <dt>Authorized by</dt>
                    <dd class="wrap">{hop.authorized_by ?? "—"}</dd>
                    <dt>Created</dt>
                    <dd>
                      <When at={hop.created_at} />
                    </dd>
                  </dl>
                  {index < chain.liability_chain.length - 1 && <span class="visually-hidden">Started by:</span>}
                </li>
              ))}
            </ol>
          </>
        )}
      </LoadView>
    </LedgerPage>
  )
}
