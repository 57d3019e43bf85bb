/** The organization's policies (filtered by mode and status, paged) and a form that creates one. */
import { useCallback, useEffect, useRef, useState } from "preact/hooks"
import { ApiError } from "../api.ts"
import { listModels, type ModelEntry } from "../cases-api.ts"
import { PageHeading } from "../components.tsx"
import { useApp } from "../context.ts"
import { localTime } from "../format.ts"
import { FilterSelect, pageOf, queryOf, setQuery } from "../kit.tsx"
import {
  createPolicy,
  DECISIONS,
  FIELDS,
  listPolicies,
  MODES,
  type NewPolicy,
  OPS,
  POLICY_STATUSES,
  type PolicyList,
  parseConditionValue,
  refusalText,
  SCAN_LIBRARIES
} from "../policies-api.ts"
import { BASE, navigate, onLinkClick } from "../router.ts"

const PER_PAGE = 20

type Load = { readonly state: "loading" } | { readonly state: "ready"; readonly list: PolicyList } | { readonly state: "failed"; readonly message: string }

export const policyPath = (policyId: string) => `${BASE}/policies/${encodeURIComponent(policyId)}`

export const PoliciesPage = ({ search }: { search: string }) => {
  const { session } = useApp()
  // Filters and the page number live in the URL (deep links, reload, back); a filter change goes to page 1.
  const query = queryOf(search)
  const mode = query.mode ?? ""
  const status = query.status ?? ""
  const page = pageOf(search)
  const setMode = (next: string) => setQuery(search, { mode: next })
  const setStatus = (next: string) => setQuery(search, { status: next })
  const setPage = (next: number) => setQuery(search, { page: next === 1 ? undefined : String(next) })
  const [load, setLoad] = useState<Load>({ state: "loading" })

  const reload = useCallback(async () => {
    try {
      setLoad({ state: "ready", list: await listPolicies(session.token, { mode, status }, page, PER_PAGE) })
    } catch (cause) {
      if (!(cause instanceof ApiError && cause.status === 401)) setLoad({ state: "failed", message: refusalText(cause, "policies") })
    }
  }, [session.token, mode, status, page])

  useEffect(() => {
    void reload()
  }, [reload])

  const list = load.state === "ready" ? load.list : undefined
  return (
    <main>
      <PageHeading>Policies</PageHeading>
      <NewPolicyForm />
      <section aria-labelledby="policies-title">
        <h2 id="policies-title">Policies</h2>
        <form class="filters" aria-label="Filter policies" onSubmit={(event) => event.preventDefault()}>
          <FilterSelect id="policy-filter-mode" label="Mode" value={mode} choices={MODES} onChange={setMode} />
          <FilterSelect id="policy-filter-status" label="Status" value={status} choices={POLICY_STATUSES} onChange={setStatus} />
        </form>
        {load.state === "loading" && <p role="status">Loading…</p>}
        {load.state === "failed" && (
          <p role="alert" class="error">
            {load.message}
          </p>
        )}
        {list !== undefined && list.policies.length === 0 && <p class="empty">No policies match.</p>}
        {list !== undefined && list.policies.length > 0 && (
          <>
            <div class="table-scroll">
              <table class="actions">
                <caption class="visually-hidden">Policies, highest priority first</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Mode</th>
                    <th scope="col">Decision</th>
                    <th scope="col">Priority</th>
                    <th scope="col">Status</th>
                    <th scope="col">Created</th>
                  </tr>
                </thead>
                <tbody>
                  {list.policies.map((policy) => (
                    <tr key={policy.id} data-policy-id={policy.id}>
                      <td>
                        <a href={policyPath(policy.id)} onClick={onLinkClick}>
                          {policy.name}
                        </a>
                      </td>
                      <td>{policy.mode}</td>
                      <td>{policy.decision}</td>
                      <td>{policy.priority}</td>
                      <td>
                        <span class={`status policy-${policy.status}`}>{policy.status}</span>
                      </td>
                      <td>
                        <time dateTime={policy.created_at}>{localTime(policy.created_at)}</time>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <nav class="pager" aria-label="Pages of policies">
              <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>
                Previous
              </button>
              <span>
                Page {list.pagination.page} of {Math.max(1, Math.ceil(list.pagination.total / PER_PAGE))}
              </span>
              <button type="button" disabled={!list.pagination.has_more} onClick={() => setPage(page + 1)}>
                Next
              </button>
            </nav>
          </>
        )}
      </section>
    </main>
  )
}

interface Row {
  readonly key: number
  readonly field: string
  readonly op: string
  readonly value: string
}

let rowKey = 0
const newRow = (): Row => ({ key: ++rowKey, field: "action_type", op: "eq", value: "" })

const NewPolicyForm = () => {
  const { session, announce } = useApp()
  const [name, setName] = useState("")
  const [mode, setMode] = useState<string>("rules")
  const [decision, setDecision] = useState<string>("deny")
  const [priority, setPriority] = useState("0")
  const [rows, setRows] = useState<ReadonlyArray<Row>>(() => [newRow()])
  const [prompt, setPrompt] = useState("")
  const [models, setModels] = useState<ReadonlyArray<ModelEntry> | undefined>()
  const [modelsError, setModelsError] = useState<string | undefined>()
  const [chosen, setChosen] = useState<ReadonlyArray<string>>([])
  const [libraries, setLibraries] = useState<ReadonlyArray<string>>(SCAN_LIBRARIES)
  const [activate, setActivate] = useState(false)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | undefined>()
  const errorRef = useRef<HTMLParagraphElement>(null)
  const needsModels = mode === "ai" || mode === "consensus"

  useEffect(() => {
    if (!needsModels || models !== undefined) return
    listModels(session.token).then(
      (entries) => setModels(entries.filter((entry) => entry.available && entry.disabled !== true)),
      (cause) => setModelsError(refusalText(cause, "policies"))
    )
  }, [needsModels, models, session.token])

  useEffect(() => {
    if (error !== undefined) errorRef.current?.focus()
  }, [error])

  const update = (key: number, change: Partial<Row>) => setRows((list) => list.map((row) => (row.key === key ? { ...row, ...change } : row)))
  const toggle = (list: ReadonlyArray<string>, item: string, on: boolean) => (on ? [...list.filter((entry) => entry !== item), item] : list.filter((entry) => entry !== item))

  const submit = async (event: Event) => {
    event.preventDefault()
    if (busy) return
    if (name.trim() === "") return setError("Give the policy a name.")
    const rank = Number(priority)
    if (priority.trim() === "" || !Number.isInteger(rank)) return setError("Priority is a whole number (higher runs first).")
    const body: NewPolicy = {
      name: name.trim(),
      mode,
      decision,
      priority: rank,
      ...(mode === "rules" ? { conditions: rows.map((row) => ({ field: row.field, op: row.op, value: parseConditionValue(row.value) })) } : {}),
      ...(needsModels ? { ai_prompt: prompt, ai_models: chosen } : {}),
      ...(mode === "content_scan" ? { scan_config: { libraries } } : {})
    }
    setBusy(true)
    setError(undefined)
    try {
      const created = await createPolicy(session.token, activate ? { ...body, activate: true } : body)
      announce(`Policy ${created.name} created.`)
      navigate(policyPath(created.id))
    } catch (cause) {
      if (!(cause instanceof ApiError && cause.status === 401)) setError(refusalText(cause, "policies"))
    } finally {
      setBusy(false)
    }
  }

  return (
    <section aria-labelledby="new-policy-title" class="new-case">
      <h2 id="new-policy-title">New policy</h2>
      <form onSubmit={submit} noValidate>
        <div class="stack">
          <label for="policy-name">Name</label>
          <input
            id="policy-name"
            required
            maxLength={200}
            value={name}
            aria-invalid={error !== undefined}
            aria-describedby={error === undefined ? undefined : "new-policy-error"}
            onInput={(event) => setName(event.currentTarget.value)}
          />
        </div>
        <div class="filters">
          <div>
            <label for="policy-mode">Mode</label>
            <select id="policy-mode" value={mode} onChange={(event) => setMode(event.currentTarget.value)}>
              {MODES.map((value) => (
                <option key={value} value={value}>
                  {value}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label for="policy-decision">Decision</label>
            <select id="policy-decision" value={decision} onChange={(event) => setDecision(event.currentTarget.value)}>
              {DECISIONS.map((value) => (
                <option key={value} value={value}>
                  {value}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label for="policy-priority">Priority</label>
            <input id="policy-priority" type="number" step="1" inputMode="numeric" value={priority} onInput={(event) => setPriority(event.currentTarget.value)} />
          </div>
        </div>
        {mode === "rules" && (
          <fieldset class="conditions">
            <legend>Conditions (all must hold)</legend>
            <p id="condition-hint" class="hint">
              Values like <code>5</code>, <code>true</code> or <code>["a","b"]</code> are read as JSON; anything else is text.
            </p>
            {rows.map((row, index) => (
              <fieldset class="condition" key={row.key}>
<legend class="visually-hidden">Condition {index + 1}</legend>
                <div>
                  <label for={`cond-field-${row.key}`}>Field</label>
                  <input id={`cond-field-${row.key}`} list="condition-fields" value={row.field} onInput={(event) => update(row.key, { field: event.currentTarget.value })} />
                </div>
                <div>
                  <label for={`cond-op-${row.key}`}>Operator</label>
                  <select id={`cond-op-${row.key}`} value={row.op} onChange={(event) => update(row.key, { op: event.currentTarget.value })}>
                    {OPS.map((op) => (
                      <option key={op} value={op}>
                        {op}
                      </option>
                    ))}
                  </select>
                </div>
                <div>
                  <label for={`cond-value-${row.key}`}>Value</label>
                  <input id={`cond-value-${row.key}`} aria-describedby="condition-hint" value={row.value} onInput={(event) => update(row.key, { value: event.currentTarget.value })} />
                </div>
                <button type="button" aria-label={`Remove condition ${index + 1}`} onClick={() => setRows((list) => list.filter((entry) => entry.key !== row.key))}>
                  Remove
                </button>
              </fieldset>
            ))}
            <datalist id="condition-fields">
              {FIELDS.map((field) => (
                <option key={field} value={field} />
              ))}
            </datalist>
            <button type="button" onClick={() => setRows((list) => [...list, newRow()])}>
              Add condition
            </button>
          </fieldset>
        )}
        {needsModels && (
          <>
            <div class="stack">
              <label for="policy-prompt">Policy text</label>
              <textarea id="policy-prompt" maxLength={20_000} value={prompt} onInput={(event) => setPrompt(event.currentTarget.value)} />
            </div>
            <fieldset class="models-choice">
              <legend>Models</legend>
              {models === undefined && modelsError === undefined && <p role="status">Loading models…</p>}
              {modelsError !== undefined && (
                <p role="alert" class="error">
                  {modelsError}
                </p>
              )}
              {models?.length === 0 && <p class="empty">No models are available to this organization.</p>}
              {models?.map((model) => (
                <label key={model.model_id} class="check">
                  <input type="checkbox" checked={chosen.includes(model.model_id)} onChange={(event) => setChosen(toggle(chosen, model.model_id, event.currentTarget.checked))} />
                  <span>
                    {model.display_name} <code class="wrap">{model.model_id}</code>
                  </span>
                </label>
              ))}
            </fieldset>
          </>
        )}
        {mode === "content_scan" && (
          <fieldset class="models-choice">
            <legend>Libraries</legend>
            {SCAN_LIBRARIES.map((library) => (
              <label key={library} class="check">
                <input type="checkbox" checked={libraries.includes(library)} onChange={(event) => setLibraries(toggle(libraries, library, event.currentTarget.checked))} />
                <span>{library}</span>
              </label>
            ))}
          </fieldset>
        )}
        <label class="check">
          <input type="checkbox" checked={activate} onChange={(event) => setActivate(event.currentTarget.checked)} />
          <span>Activate now (otherwise it starts as a draft)</span>
        </label>
        {error !== undefined && (
          <p role="alert" class="error" id="new-policy-error" tabIndex={-1} ref={errorRef}>
            {error}
          </p>
        )}
        <div class="actions-row">
          <button type="submit" class="primary" disabled={busy}>
            Create policy
          </button>
        </div>
      </form>
    </section>
  )
}
