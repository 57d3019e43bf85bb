/**
 * The ICT third-party register (DORA Art. 28): the list (criticality and active filters in the URL),
 * adding an entry, and an entry's page with its edit form (only changed fields are sent; an emptied
 * optional field is cleared). There is no delete: an entry is retired (inactive), after a confirmation.
 */
import { useEffect, useRef, useState } from "preact/hooks"
import { PageHeading } from "../../components.tsx"
import { ConfirmButton } from "../../confirm.tsx"
import { useApp } from "../../context.ts"
import { localTime } from "../../format.ts"
import { Empty, ErrorLine, FilterSelect, FormFooter, Link, LoadView, Pager, PER_PAGE, pageOf, queryOf, setQuery, useLoad, useSubmit } from "../../kit.tsx"
import { BASE, navigate } from "../../router.ts"
import { CRITICALITIES, type CreateThirdParty, createThirdParty, getThirdParty, listOf, listThirdParties, SERVICE_TYPES, type ThirdParty, updateThirdParty, words } from "./api.ts"
import { ComplianceTabs, DetailHeading, doraProblem, Field, typed } from "./parts.tsx"

export const ThirdPartyList = ({ search }: { search: string }) => {
  const { session } = useApp()
  const query = queryOf(search)
  const page = pageOf(search)
  const [criticality, setCriticality] = useState(query.criticality ?? "")
  const [active, setActive] = useState(query.is_active ?? "")
  useEffect(() => {
    setCriticality(query.criticality ?? "")
    setActive(query.is_active ?? "")
  }, [query.criticality, query.is_active])
  const [loaded, reload] = useLoad(
    () =>
      listThirdParties(session.token, { criticality: query.criticality, is_active: query.is_active }, page, PER_PAGE).catch((cause) => {
        throw new Error(doraProblem(cause))
      }),
    [session.token, query.criticality, query.is_active, page]
  )
  return (
    <main class="compliance">
      <ComplianceTabs />
      <PageHeading>ICT third parties</PageHeading>
      <p>
        <Link href="third-parties/new" class="button-link">
          Add a third party
        </Link>
      </p>
      <form
        class="filters"
        aria-label="Filter third parties"
        onSubmit={(event) => {
          event.preventDefault()
          setQuery(search, { criticality, is_active: active })
        }}
      >
        <FilterSelect id="party-criticality" label="Criticality" value={criticality} choices={CRITICALITIES} onChange={setCriticality} text={words} />
        <div>
          <label for="party-active">Active</label>
          <select id="party-active" value={active} onChange={typed(setActive)}>
            <option value="">All</option>
            <option value="true">Active</option>
            <option value="false">Retired</option>
          </select>
        </div>
        <button type="submit">Filter</button>
      </form>
      <LoadView loaded={loaded} retry={reload} what="third parties">
        {(list) =>
          list.data.length === 0 ? (
            <Empty>No third parties match.</Empty>
          ) : (
            <>
              <div class="table-scroll">
                <table class="case-table">
                  <caption class="visually-hidden">ICT third parties</caption>
                  <thead>
                    <tr>
                      <th scope="col">Vendor</th>
                      <th scope="col">Service type</th>
                      <th scope="col">Criticality</th>
                      <th scope="col">Contract ends</th>
                      <th scope="col">Active</th>
                      <th scope="col">Warnings</th>
                    </tr>
                  </thead>
                  <tbody>
                    {list.data.map((party) => (
                      <tr key={party.uuid}>
                        <td class="wrap">
                          <Link href={`third-parties/${encodeURIComponent(party.uuid)}`}>{party.vendor_name}</Link>
                        </td>
                        <td>{words(party.service_type)}</td>
                        <td>{words(party.criticality)}</td>
                        <td>{party.contract_end_date ?? "—"}</td>
                        <td>{party.is_active ? "active" : "retired"}</td>
                        <td>{party.warnings.length === 0 ? "—" : `${party.warnings.length} (no exit strategy)`}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <Pager pagination={list.pagination} search={search} label="Third parties" />
            </>
          )
        }
      </LoadView>
    </main>
  )
}

/** The form's text fields, as typed. */
interface Draft {
  vendor_name: string
  service_description: string
  service_type: string
  criticality: string
  contract_start_date: string
  contract_end_date: string
  exit_strategy_summary: string
  subcontractors: string
  data_categories: string
  jurisdiction: string
}

const draftOf = (party: ThirdParty | undefined): Draft => ({
  vendor_name: party?.vendor_name ?? "",
  service_description: party?.service_description ?? "",
  service_type: party?.service_type ?? "saas",
  criticality: party?.criticality ?? "non_critical",
  contract_start_date: party?.contract_start_date ?? "",
  contract_end_date: party?.contract_end_date ?? "",
  exit_strategy_summary: party?.exit_strategy_summary ?? "",
  subcontractors: party?.subcontractors.join(", ") ?? "",
  data_categories: party?.data_categories.join(", ") ?? "",
  jurisdiction: party?.jurisdiction ?? ""
})

/** The register entry's fields, for creating (all) or editing (prefilled). */
const PartyFields = ({ draft, set, prefix }: { draft: Draft; set: (change: Partial<Draft>) => void; prefix: string }) => {
  const input = (key: keyof Draft) => (event: Event) => set({ [key]: (event.currentTarget as HTMLInputElement).value })
  return (
    <>
      <Field id={`${prefix}-vendor`} label="Vendor name">
        <input id={`${prefix}-vendor`} required maxLength={200} value={draft.vendor_name} onInput={input("vendor_name")} />
      </Field>
      <Field id={`${prefix}-description`} label="Service description">
        <textarea id={`${prefix}-description`} required rows={2} maxLength={2000} value={draft.service_description} onInput={input("service_description")} />
      </Field>
      <div class="compliance-pair">
        <Field id={`${prefix}-type`} label="Service type">
          <select id={`${prefix}-type`} value={draft.service_type} onChange={input("service_type")}>
            {[...new Set([...SERVICE_TYPES, draft.service_type])].map((key) => (
              <option key={key} value={key}>
                {words(key)}
              </option>
            ))}
          </select>
        </Field>
        <Field id={`${prefix}-criticality`} label="Criticality">
          <select id={`${prefix}-criticality`} value={draft.criticality} onChange={input("criticality")}>
            {CRITICALITIES.map((key) => (
              <option key={key} value={key}>
                {words(key)}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <div class="compliance-pair">
        <Field id={`${prefix}-start`} label="Contract start (optional)">
          <input id={`${prefix}-start`} type="date" value={draft.contract_start_date} onInput={input("contract_start_date")} />
        </Field>
        <Field id={`${prefix}-end`} label="Contract end (optional)">
          <input id={`${prefix}-end`} type="date" value={draft.contract_end_date} onInput={input("contract_end_date")} />
        </Field>
      </div>
      <Field id={`${prefix}-exit`} label="Exit strategy (optional)" hint="Art. 28(8): expected for critical services.">
        <textarea id={`${prefix}-exit`} rows={2} maxLength={10_000} value={draft.exit_strategy_summary} aria-describedby={`${prefix}-exit-hint`} onInput={input("exit_strategy_summary")} />
      </Field>
      <Field id={`${prefix}-subcontractors`} label="Subcontractors (optional)" hint="Separated by commas.">
        <input id={`${prefix}-subcontractors`} value={draft.subcontractors} aria-describedby={`${prefix}-subcontractors-hint`} onInput={input("subcontractors")} />
      </Field>
      <Field id={`${prefix}-data`} label="Data categories (optional)" hint="Separated by commas.">
        <input id={`${prefix}-data`} value={draft.data_categories} aria-describedby={`${prefix}-data-hint`} onInput={input("data_categories")} />
      </Field>
      <Field id={`${prefix}-jurisdiction`} label="Jurisdiction (optional)">
        <input id={`${prefix}-jurisdiction`} maxLength={64} value={draft.jurisdiction} onInput={input("jurisdiction")} />
      </Field>
    </>
  )
}

const optional = (text: string): string | null => (text.trim() === "" ? null : text.trim())

export const NewThirdParty = () => {
  const { session, announce } = useApp()
  const [draft, setDraft] = useState<Draft>(() => draftOf(undefined))
  const { busy, error, submit, setError } = useSubmit()
  const onSubmit = async (event: Event) => {
    event.preventDefault()
    if (draft.vendor_name.trim() === "" || draft.service_description.trim() === "") return setError("Give the vendor's name and the service it provides.")
    const body: CreateThirdParty = {
      vendor_name: draft.vendor_name.trim(),
      service_description: draft.service_description.trim(),
      service_type: draft.service_type,
      criticality: draft.criticality as CreateThirdParty["criticality"],
      contract_start_date: optional(draft.contract_start_date),
      contract_end_date: optional(draft.contract_end_date),
      exit_strategy_summary: optional(draft.exit_strategy_summary),
      subcontractors: listOf(draft.subcontractors),
      data_categories: listOf(draft.data_categories),
      jurisdiction: optional(draft.jurisdiction)
    }
    let created: ThirdParty | undefined
    if (
      await submit(async () => {
        created = await createThirdParty(session.token, body)
      })
    ) {
      announce(`${created!.vendor_name} added to the register.`)
      navigate(`${BASE}/third-parties/${encodeURIComponent(created!.uuid)}`)
    }
  }
  return (
    <main class="compliance">
      <ComplianceTabs />
      <PageHeading>Add an ICT third party</PageHeading>
      <p>
        <Link href="third-parties">Back to third parties</Link>
      </p>
      <section class="new-case" aria-label="New third party">
        <form onSubmit={onSubmit} noValidate>
          <PartyFields draft={draft} set={(change) => setDraft((current) => ({ ...current, ...change }))} prefix="new-party" />
          <ErrorLine message={error} />
          <div>
            <button type="submit" class="primary" disabled={busy}>
              {busy ? "Adding…" : "Add third party"}
            </button>
          </div>
        </form>
      </section>
    </main>
  )
}

const LIST_KEYS = new Set(["subcontractors", "data_categories"])
const OPTIONAL_KEYS = new Set(["contract_start_date", "contract_end_date", "exit_strategy_summary", "jurisdiction"])

export const ThirdPartyDetail = ({ partyId }: { partyId: string }) => {
  const { session, announce } = useApp()
  const [loaded, reload] = useLoad(() => getThirdParty(session.token, partyId), [session.token, partyId])
  const [editing, setEditing] = useState(false)
  const { busy, error, submit } = useSubmit()
  const editRef = useRef<HTMLButtonElement>(null)
  const retire = async (party: ThirdParty, active: boolean) => {
    if (await submit(() => updateThirdParty(session.token, party.uuid, { is_active: active }))) {
      announce(active ? `${party.vendor_name} is active again.` : `${party.vendor_name} retired.`)
      await reload()
    }
  }
  return (
    <main class="compliance">
      <ComplianceTabs />
      <DetailHeading loaded={loaded} what="Third party" title={(value) => value.vendor_name} />
      <p>
        <Link href="third-parties">Back to third parties</Link>
      </p>
      <LoadView loaded={loaded} retry={reload} what="the third party">
        {(party) => (
          <>
            {party.warnings.length > 0 && (
              <ul class="notice compliance-warnings" aria-label="Warnings">
                {party.warnings.map((warning) => (
                  <li key={warning}>{warning}</li>
                ))}
              </ul>
            )}
            {editing ? (
              <EditParty
                party={party}
                onDone={async () => {
                  setEditing(false)
                  announce("Changes saved.")
                  await reload()
                  editRef.current?.focus()
                }}
                onCancel={() => {
                  setEditing(false)
                  setTimeout(() => editRef.current?.focus(), 0)
                }}
              />
            ) : (
              <>
                <dl class="facts">
                  <dt>Service</dt>
                  <dd class="pre">{party.service_description}</dd>
                  <dt>Service type</dt>
                  <dd>{words(party.service_type)}</dd>
                  <dt>Criticality</dt>
                  <dd>{words(party.criticality)}</dd>
                  <dt>Status</dt>
                  <dd data-party-active={String(party.is_active)}>{party.is_active ? "active" : "retired"}</dd>
                  <dt>Contract</dt>
                  <dd>
                    {party.contract_start_date ?? "—"} to {party.contract_end_date ?? "—"}
                  </dd>
                  <dt>Exit strategy</dt>
                  <dd class="pre">{party.exit_strategy_summary ?? "none recorded"}</dd>
                  <dt>Subcontractors</dt>
                  <dd class="wrap">{party.subcontractors.join(", ") || "—"}</dd>
                  <dt>Data categories</dt>
                  <dd class="wrap">{party.data_categories.join(", ") || "—"}</dd>
                  <dt>Jurisdiction</dt>
                  <dd>{party.jurisdiction ?? "—"}</dd>
                  <dt>Added</dt>
                  <dd>{localTime(party.created_at)}</dd>
                  <dt>Updated</dt>
                  <dd>{localTime(party.updated_at)}</dd>
                  <dt>Id</dt>
                  <dd>
                    <code class="hash">{party.uuid}</code>
                  </dd>
                </dl>
                <div class="actions-row">
                  <button type="button" ref={editRef} onClick={() => setEditing(true)}>
                    Edit
                  </button>
                  {party.is_active ? (
                    <ConfirmButton label="Retire" question={`Retire ${party.vendor_name}? It stays in the register as inactive.`} busy={busy} onConfirm={() => void retire(party, false)} />
                  ) : (
                    <button type="button" disabled={busy} onClick={() => void retire(party, true)}>
                      Make active again
                    </button>
                  )}
                </div>
                <ErrorLine message={error} />
              </>
            )}
          </>
        )}
      </LoadView>
    </main>
  )
}

const EditParty = ({ party, onDone, onCancel }: { party: ThirdParty; onDone: () => void; onCancel: () => void }) => {
  const { session } = useApp()
  const original = draftOf(party)
  const [draft, setDraft] = useState<Draft>(original)
  const { busy, error, submit, setError } = useSubmit()
  const formRef = useRef<HTMLFormElement>(null)
  useEffect(() => formRef.current?.querySelector<HTMLElement>("input, textarea, select")?.focus(), [])
  const onSubmit = async (event: Event) => {
    event.preventDefault()
    if (draft.vendor_name.trim() === "" || draft.service_description.trim() === "") return setError("The vendor's name and the service cannot be empty.")
    // Only what changed is sent; an emptied optional field is sent as null (cleared).
    const patch: Record<string, unknown> = {}
    for (const key of Object.keys(draft) as Array<keyof Draft>) {
      if (draft[key] === original[key]) continue
      if (LIST_KEYS.has(key)) patch[key] = listOf(draft[key])
      else if (OPTIONAL_KEYS.has(key)) patch[key] = optional(draft[key])
      else patch[key] = draft[key].trim()
    }
    if (Object.keys(patch).length === 0) return onCancel()
    if (await submit(() => updateThirdParty(session.token, party.uuid, patch))) onDone()
  }
  return (
    <form ref={formRef} class="compliance-form" onSubmit={onSubmit} noValidate aria-labelledby="edit-party-title">
      <h2 id="edit-party-title">Edit {party.vendor_name}</h2>
      <PartyFields draft={draft} set={(change) => setDraft((current) => ({ ...current, ...change }))} prefix="edit-party" />
      <FormFooter error={error} busy={busy} label={busy ? "Saving…" : "Save changes"}>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </FormFooter>
    </form>
  )
}
