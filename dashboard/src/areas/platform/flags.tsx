/**
 * Feature flags. The organization's view: every flag resolved for it, and (owner or admin) turning
 * one on or off for the organization. The platform administrators' view: the stored flags with
 * their global switch, rollout and organizations, created, changed and deleted through the
 * `X-Admin-Key` routes. That key is the platform operator's, not a dashboard credential: an owner
 * or admin who has it types it into a password field; it is held in this tab's memory for the
 * session only (never in storage or the URL, dropped on reload, sign-out or "Forget key").
 */
import { useRef, useState } from "preact/hooks"
import { PageHeading } from "../../components.tsx"
import { ConfirmButton } from "../../confirm.tsx"
import { useApp } from "../../context.ts"
import { localTime } from "../../format.ts"
import { Empty, ErrorLine, LoadView, Pager, pageOf, queryOf, setQuery, useLoad, useSubmit } from "../../kit.tsx"
import { adminCreateFlag, adminDeleteFlag, adminFlags, adminUpdateFlag, type FeatureFlag, resolvedFlags, toggleFlag } from "./api.ts"
import { listOf, pageSlice } from "./shared.tsx"

const FLAG_KEY = /^[a-z][a-z0-9_]{1,98}[a-z0-9]$/

/** The administration key of this tab, bound to the session that typed it (another sign-in drops it). */
let held: { readonly token: string; readonly key: string } | undefined

export const FlagsSection = ({ search }: { search: string }) => {
  const { session } = useApp()
  const mayAdminister = session.role === "owner" || session.role === "admin"
  return (
    <>
      <PageHeading>Feature flags</PageHeading>
      <OrgFlags search={search} mayToggle={mayAdminister} />
      {mayAdminister ? (
        <AdminFlags />
      ) : (
        <p class="hint platform-section">Platform administration of flags is open to owners and admins who hold the platform's administration key.</p>
      )}
    </>
  )
}

const OrgFlags = ({ search, mayToggle }: { search: string; mayToggle: boolean }) => {
  const { session, announce } = useApp()
  const [loaded, reload] = useLoad(() => resolvedFlags(session.token), [session.token])
  const { busy, error, submit } = useSubmit()
  const query = queryOf(search)
  const state = query.state ?? ""
  return (
    <section aria-labelledby="org-flags-title">
      <h2 id="org-flags-title">For your organization</h2>
      <div class="filters">
        <div>
          <label for="flags-state">Show</label>
          <select id="flags-state" value={state} onChange={(event) => setQuery(search, { state: event.currentTarget.value })}>
            <option value="">All flags</option>
            <option value="on">On</option>
            <option value="off">Off</option>
          </select>
        </div>
      </div>
      {!mayToggle && <p class="hint">Turning a flag on or off for the organization needs the owner or admin role.</p>}
      <LoadView loaded={loaded} retry={reload} what="the feature flags">
        {({ flags }) => {
          const entries = Object.entries(flags)
            .filter(([, on]) => state === "" || (state === "on") === on)
            .sort(([a], [b]) => a.localeCompare(b))
          const { items, pagination } = pageSlice(entries, pageOf(search))
          return items.length === 0 ? (
            <Empty>{Object.keys(flags).length === 0 ? "No feature flags are defined." : "No flags match."}</Empty>
          ) : (
            <>
              <table class="case-table">
                <caption class="visually-hidden">Feature flags resolved for your organization</caption>
                <thead>
                  <tr>
                    <th scope="col">Flag</th>
                    <th scope="col">State</th>
                    {mayToggle && <th scope="col">Change</th>}
                  </tr>
                </thead>
                <tbody>
                  {items.map(([key, on]) => (
                    <tr key={key} data-flag={key}>
                      <td data-label="Flag">
                        <code>{key}</code>
                      </td>
                      <td data-label="State">
                        <span class={on ? "flag-on" : "flag-off"}>{on ? "On" : "Off"}</span>
                      </td>
                      {mayToggle && (
                        <td data-label="Change">
                          <button
                            type="button"
                            disabled={busy}
                            aria-label={`Turn ${on ? "off" : "on"} ${key}`}
                            onClick={() =>
                              void submit(async () => {
                                const answer = await toggleFlag(session.token, key, !on)
                                announce(`${key} is now ${answer.enabled ? "on" : "off"} for your organization.`)
                                reload()
                              })
                            }
                          >
                            Turn {on ? "off" : "on"}
                          </button>
                        </td>
                      )}
                    </tr>
                  ))}
                </tbody>
              </table>
              <Pager pagination={pagination} search={search} label="Feature flags" />
            </>
          )
        }}
      </LoadView>
      <ErrorLine message={error} />
    </section>
  )
}

const AdminFlags = () => {
  const { session } = useApp()
  const [key, setKey] = useState<string | undefined>(() => (held?.token === session.token ? held.key : undefined))
  const [draft, setDraft] = useState("")
  const fieldRef = useRef<HTMLInputElement>(null)
  const use = (value: string | undefined) => {
    held = value === undefined ? undefined : { token: session.token, key: value }
    setKey(value)
  }
  return (
    <section aria-labelledby="admin-flags-title" class="platform-section">
      <h2 id="admin-flags-title" tabIndex={-1}>
        Platform administration
      </h2>
      {key === undefined ? (
        <form
          class="settings-form"
          autocomplete="off"
          onSubmit={(event) => {
            event.preventDefault()
            if (draft.trim() === "") {
              fieldRef.current?.focus()
              return
            }
            use(draft.trim())
            setDraft("")
          }}
        >
          <p class="hint" id="admin-key-hint">
            These routes need the platform's administration key (the <code>X-Admin-Key</code> header), not your sign-in. It is kept in this tab's memory until you reload, sign out or forget
            it; it is never stored.
          </p>
          <div class="stack">
            <label for="admin-key">Administration key</label>
            <input
              id="admin-key"
              ref={fieldRef}
              class="secret-field"
              type="password"
              autocomplete="off"
              value={draft}
              aria-describedby="admin-key-hint"
              onInput={(event) => setDraft(event.currentTarget.value)}
            />
          </div>
          <div class="actions-row">
            <button type="submit" class="primary">
              Use key
            </button>
          </div>
        </form>
      ) : (
        <AdminFlagList adminKey={key} onForget={() => use(undefined)} />
      )}
    </section>
  )
}

const AdminFlagList = ({ adminKey, onForget }: { adminKey: string; onForget: () => void }) => {
  const { session } = useApp()
  const [loaded, reload] = useLoad(() => adminFlags(adminKey), [adminKey])
  return (
    <>
      <div class="actions-row">
        <button type="button" onClick={onForget}>
          Forget key
        </button>
      </div>
      <LoadView loaded={loaded} retry={reload} what="the stored flags">
        {(flags) =>
          flags.length === 0 ? (
            <Empty>No flags are stored.</Empty>
          ) : (
            <ul class="plain flag-list">
              {flags.map((flag) => (
                <AdminFlagItem key={flag.key} flag={flag} adminKey={adminKey} orgUuid={session.orgUuid} onChanged={reload} />
              ))}
            </ul>
          )
        }
      </LoadView>
      <NewFlagForm adminKey={adminKey} onCreated={reload} />
    </>
  )
}

const AdminFlagItem = ({ flag, adminKey, orgUuid, onChanged }: { flag: FeatureFlag; adminKey: string; orgUuid: string; onChanged: () => void }) => {
  const { announce } = useApp()
  const [editing, setEditing] = useState(false)
  const { busy, error, submit } = useSubmit()
  const editRef = useRef<HTMLButtonElement>(null)
  const included = flag.enabled_org_ids.includes(orgUuid)
  return (
    <li class="flag-item" data-admin-flag={flag.key}>
      <h3>
        <code>{flag.key}</code>
      </h3>
      {flag.description !== null && <p>{flag.description}</p>}
      <dl class="facts">
        <dt>On globally</dt>
        <dd>{flag.enabled_global ? `yes, for ${flag.rollout_percentage}% of organizations` : "no"}</dd>
        <dt>Organizations</dt>
        <dd class="wrap">
          {flag.enabled_org_ids.length === 0 ? "none" : `${flag.enabled_org_ids.length}${included ? " (yours included)" : ""}`}
        </dd>
        <dt>Updated</dt>
        <dd>
          <time dateTime={flag.updated_at}>{localTime(flag.updated_at)}</time>
        </dd>
      </dl>
      {editing ? (
        <FlagEditor
          flag={flag}
          busy={busy}
          onCancel={() => {
            setEditing(false)
            setTimeout(() => editRef.current?.focus(), 0)
          }}
          onSave={(changes) =>
            void submit(async () => {
              await adminUpdateFlag(adminKey, flag.key, changes)
              announce(`Flag ${flag.key} saved.`)
              setEditing(false)
              onChanged()
              setTimeout(() => editRef.current?.focus(), 0)
            })
          }
        />
      ) : (
        <div class="actions-row">
          <button type="button" ref={editRef} aria-label={`Change ${flag.key}`} onClick={() => setEditing(true)}>
            Change
          </button>
          <ConfirmButton
            label="Delete"
            question={`Delete the flag ${flag.key} for every organization?`}
            busy={busy}
            onConfirm={() =>
              void submit(async () => {
                await adminDeleteFlag(adminKey, flag.key)
                announce(`Flag ${flag.key} deleted.`)
                onChanged()
                document.getElementById("admin-flags-title")?.focus()
              })
            }
          />
        </div>
      )}
      <ErrorLine message={error} />
    </li>
  )
}

interface FlagChanges {
  readonly description: string | null
  readonly enabled_global: boolean
  readonly rollout_percentage: number
  readonly enabled_org_ids: ReadonlyArray<string>
}

/** The fields of a flag; `onSave` gets them checked. */
const FlagFields = ({
  prefix,
  initial,
  busy,
  submitLabel,
  onSave,
  onCancel,
  withKey
}: {
  prefix: string
  initial: FlagChanges
  busy: boolean
  submitLabel: string
  onSave: (changes: FlagChanges, key: string) => Promise<boolean> | undefined
  onCancel?: () => void
  withKey?: boolean
}) => {
  const [key, setKey] = useState("")
  const [description, setDescription] = useState(initial.description ?? "")
  const [global, setGlobal] = useState(initial.enabled_global)
  const [rollout, setRollout] = useState(String(initial.rollout_percentage))
  const [orgs, setOrgs] = useState(initial.enabled_org_ids.join("\n"))
  const [problem, setProblem] = useState<string | undefined>()
  return (
    <form
      class="settings-form"
      noValidate
      onSubmit={(event) => {
        event.preventDefault()
        if (withKey === true && !FLAG_KEY.test(key.trim())) {
          setProblem("The key is 3 to 100 characters: a lowercase letter, then lowercase letters, digits or _, ending in a letter or digit.")
          document.getElementById(`${prefix}-key`)?.focus()
          return
        }
        const percent = Number(rollout)
        if (!(Number.isInteger(percent) && percent >= 0 && percent <= 100)) {
          setProblem("The rollout is a whole percentage from 0 to 100.")
          document.getElementById(`${prefix}-rollout`)?.focus()
          return
        }
        setProblem(undefined)
        const done = onSave({ description: description.trim() === "" ? null : description.trim(), enabled_global: global, rollout_percentage: percent, enabled_org_ids: listOf(orgs) }, key.trim())
        void done?.then((ok) => {
          if (ok && withKey === true) {
            setKey("")
            setDescription("")
          }
        })
      }}
    >
      {withKey === true && (
        <div class="stack">
          <label for={`${prefix}-key`}>Key</label>
          <input id={`${prefix}-key`} maxLength={100} value={key} spellcheck={false} onInput={(event) => setKey(event.currentTarget.value)} />
        </div>
      )}
      <div class="stack">
        <label for={`${prefix}-description`}>Description (optional)</label>
        <input id={`${prefix}-description`} maxLength={2000} value={description} onInput={(event) => setDescription(event.currentTarget.value)} />
      </div>
      <label class="check">
        <input type="checkbox" checked={global} onChange={(event) => setGlobal(event.currentTarget.checked)} />
        On globally (for the rollout's share of organizations)
      </label>
      <div class="stack">
        <label for={`${prefix}-rollout`}>Rollout percentage</label>
        <input id={`${prefix}-rollout`} class="short" inputMode="numeric" value={rollout} onInput={(event) => setRollout(event.currentTarget.value)} />
      </div>
      <div class="stack">
        <label for={`${prefix}-orgs`}>Organizations always on (ids, one per line)</label>
        <textarea id={`${prefix}-orgs`} rows={3} spellcheck={false} value={orgs} onInput={(event) => setOrgs(event.currentTarget.value)} />
      </div>
      <ErrorLine message={problem} />
      <div class="actions-row">
        <button type="submit" class="primary" disabled={busy}>
          {submitLabel}
        </button>
        {onCancel !== undefined && (
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  )
}

const FlagEditor = ({ flag, busy, onSave, onCancel }: { flag: FeatureFlag; busy: boolean; onSave: (changes: FlagChanges) => void; onCancel: () => void }) => (
  <FlagFields
    prefix={`edit-${flag.key}`}
    initial={flag}
    busy={busy}
    submitLabel="Save flag"
    onSave={(changes) => {
      onSave(changes)
      return undefined
    }}
    onCancel={onCancel}
  />
)

const NewFlagForm = ({ adminKey, onCreated }: { adminKey: string; onCreated: () => void }) => {
  const { announce } = useApp()
  const { busy, error, submit } = useSubmit()
  return (
    <section aria-labelledby="new-flag-title" class="new-case platform-section">
      <h3 id="new-flag-title">New flag</h3>
      <FlagFields
        prefix="new-flag"
        withKey
        initial={{ description: null, enabled_global: false, rollout_percentage: 100, enabled_org_ids: [] }}
        busy={busy}
        submitLabel="Create flag"
        onSave={(changes, key) =>
          submit(async () => {
            const created = await adminCreateFlag(adminKey, { key, ...changes })
            announce(`Flag ${created.key} created.`)
            onCreated()
          })
        }
      />
      <ErrorLine message={error} />
    </section>
  )
}
