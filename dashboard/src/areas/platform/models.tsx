/**
 * Models: the catalogue as the organization sees it (filters in the URL: provider, key source,
 * whether models disabled for cases are listed) and the organization's model preferences per
 * feature (cases, policy evaluation, sanitize, chat, code review), each saved on its own.
 */
import { useState } from "preact/hooks"
import { PageHeading } from "../../components.tsx"
import { useApp } from "../../context.ts"
import { Empty, ErrorLine, FilterSelect, FormFooter, LoadView, Pager, pageOf, queryOf, setQuery, useLoad, useSubmit } from "../../kit.tsx"

import {
  type CatalogueEntry,
  type CodeReview,
  catalogue,
  DISABLED_LISTS,
  type DisabledFeature,
  getChatAllowed,
  getChatDefault,
  getCodeReview,
  getDisabled,
  putChatAllowed,
  putChatDefault,
  putCodeReview,
  putDisabled
} from "./api.ts"
import { pageSlice, yesNo } from "./shared.tsx"

/** Whose key a catalogue entry would use, as the "Key" filter offers it. */
const KEY_SOURCES: Readonly<Record<string, string>> = { byok: "Your organization's key", platform: "The service's key", none: "No key configured" }

const SOURCES: Readonly<Record<string, string>> = { byok: "your organization's key", platform: "the service's key", none: "no key configured" }

const sourceOf = (model: CatalogueEntry) => model.credential_source ?? "none"

export const ModelsSection = ({ search }: { search: string }) => {
  const query = queryOf(search)
  return (
    <>
      <PageHeading>Models</PageHeading>
      <Catalogue search={search} query={query} />
      <Preferences query={query} search={search} />
    </>
  )
}

const Catalogue = ({ search, query }: { search: string; query: Record<string, string> }) => {
  const { session } = useApp()
  const includeDisabled = query.disabled === "shown"
  const [loaded, retry] = useLoad(() => catalogue(session.token, includeDisabled), [session.token, includeDisabled])
  const provider = query.provider ?? ""
  const source = query.key ?? ""
  return (
    <section aria-labelledby="catalogue-title">
      <h2 id="catalogue-title">Catalogue</h2>
      <LoadView loaded={loaded} retry={retry} what="the model catalogue">
        {(models) => {
          const providers = [...new Set(models.map((model) => model.provider))].sort()
          const shown = models.filter((model) => (provider === "" || model.provider === provider) && (source === "" || sourceOf(model) === source))
          const { items, pagination } = pageSlice(shown, pageOf(search))
          return (
            <>
              <form class="filters" aria-label="Catalogue filters" onSubmit={(event) => event.preventDefault()}>
                <div>
                  <label for="catalogue-provider">Provider</label>
                  <select id="catalogue-provider" value={provider} onChange={(event) => setQuery(search, { provider: event.currentTarget.value })}>
                    <option value="">All providers</option>
                    {providers.map((name) => (
                      <option key={name} value={name}>
                        {name}
                      </option>
                    ))}
                    {provider !== "" && !providers.includes(provider) && <option value={provider}>{provider}</option>}
                  </select>
                </div>
                <FilterSelect
                  id="catalogue-key"
                  label="Key"
                  value={source}
                  choices={Object.keys(KEY_SOURCES)}
                  onChange={(value) => setQuery(search, { key: value })}
                  text={(choice) => KEY_SOURCES[choice] ?? choice}
                />
                <label class="check">
                  <input type="checkbox" checked={includeDisabled} onChange={(event) => setQuery(search, { disabled: event.currentTarget.checked ? "shown" : undefined })} />
                  Also list models disabled for cases
                </label>
              </form>
              {items.length === 0 ? (
                <Empty>No models match these filters.</Empty>
              ) : (
                <div class="table-scroll">
                  <table class="case-table" data-testid="catalogue">
                    <caption class="visually-hidden">Model catalogue</caption>
                    <thead>
                      <tr>
                        <th scope="col">Model</th>
                        <th scope="col">Provider</th>
                        <th scope="col">Available</th>
                        <th scope="col">Max output tokens</th>
                        <th scope="col">Key</th>
                        {includeDisabled && <th scope="col">Disabled for cases</th>}
                      </tr>
                    </thead>
                    <tbody>
                      {items.map((model) => (
                        <tr key={model.model_id} data-model-id={model.model_id}>
                          <td data-label="Model">
                            {model.display_name}
                            <code class="models">{model.model_id}</code>
                          </td>
                          <td data-label="Provider">{model.provider}</td>
                          <td data-label="Available">{yesNo(model.available)}</td>
                          <td data-label="Max output tokens">{model.max_tokens === null ? "unknown" : model.max_tokens.toLocaleString()}</td>
                          <td data-label="Key">{SOURCES[sourceOf(model)]}</td>
                          {includeDisabled && <td data-label="Disabled for cases">{yesNo(model.disabled === true)}</td>}
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              )}
              <Pager pagination={pagination} search={search} label="Catalogue" />
            </>
          )
        }}
      </LoadView>
    </section>
  )
}

const FEATURES: ReadonlyArray<{ value: string; label: string }> = [
  ...Object.entries(DISABLED_LISTS).map(([value, { label }]) => ({ value, label })),
  { value: "chat", label: "Chat" },
  { value: "code-review", label: "Code review" }
]

const Preferences = ({ query, search }: { query: Record<string, string>; search: string }) => {
  const { session } = useApp()
  const feature = FEATURES.some((entry) => entry.value === query.feature) ? query.feature! : "cases"
  // Every model, those disabled included: the lists below name them all.
  const [models, retry] = useLoad(() => catalogue(session.token, true), [session.token])
  return (
    <section aria-labelledby="preferences-title" class="platform-section">
      <h2 id="preferences-title">Model preferences</h2>
      <div class="filters">
        <div>
          <label for="preferences-feature">Feature</label>
          <select id="preferences-feature" value={feature} onChange={(event) => setQuery(search, { feature: event.currentTarget.value === "cases" ? undefined : event.currentTarget.value }, true)}>
            {FEATURES.map((entry) => (
              <option key={entry.value} value={entry.value}>
                {entry.label}
              </option>
            ))}
          </select>
        </div>
      </div>
      <LoadView loaded={models} retry={retry} what="the models">
        {(all) =>
          feature === "chat" ? (
            <ChatPreferences models={all} />
          ) : feature === "code-review" ? (
            <CodeReviewPreferences models={all} />
          ) : (
            <DisabledPreferences key={feature} feature={feature as DisabledFeature} models={all} />
          )
        }
      </LoadView>
    </section>
  )
}

/** Checkboxes, one per model, for the ids in `chosen`. */
const ModelChecks = ({
  legend,
  models,
  chosen,
  onChange,
  name
}: {
  legend: string
  models: ReadonlyArray<CatalogueEntry>
  chosen: ReadonlySet<string>
  onChange: (next: Set<string>) => void
  name: string
}) => (
  <fieldset class="models-choice model-checks">
    <legend>{legend}</legend>
    {models.map((model) => (
      <label key={model.model_id} class="check">
        <input
          type="checkbox"
          name={name}
          value={model.model_id}
          checked={chosen.has(model.model_id)}
          onChange={(event) => {
            const next = new Set(chosen)
            if (event.currentTarget.checked) next.add(model.model_id)
            else next.delete(model.model_id)
            onChange(next)
          }}
        />
        <span>
          {model.display_name} <code>{model.model_id}</code>
        </span>
      </label>
    ))}
  </fieldset>
)

const DisabledPreferences = ({ feature, models }: { feature: DisabledFeature; models: ReadonlyArray<CatalogueEntry> }) => {
  const { session, announce } = useApp()
  const [loaded, retry] = useLoad(() => getDisabled(session.token, feature), [session.token, feature])
  const label = DISABLED_LISTS[feature].label
  return (
    <LoadView loaded={loaded} retry={retry} what={`the models of ${label.toLowerCase()}`}>
      {(value) => (
        <EnabledForm
          label={label}
          models={models}
          disabled={value.disabled_models}
          save={async (disabled) => {
            await putDisabled(session.token, feature, disabled)
            announce(`Models for ${label.toLowerCase()} saved.`)
          }}
        />
      )}
    </LoadView>
  )
}

const EnabledForm = ({
  label,
  models,
  disabled,
  save
}: {
  label: string
  models: ReadonlyArray<CatalogueEntry>
  disabled: ReadonlyArray<string>
  save: (disabled: Array<string>) => Promise<void>
}) => {
  const [enabled, setEnabled] = useState<ReadonlySet<string>>(() => new Set(models.filter((model) => !disabled.includes(model.model_id)).map((model) => model.model_id)))
  const { busy, error, submit } = useSubmit()
  const [saved, setSaved] = useState<string | undefined>()
  return (
    <form
      class="settings-form"
      onSubmit={(event) => {
        event.preventDefault()
        setSaved(undefined)
        void submit(() => save(models.filter((model) => !enabled.has(model.model_id)).map((model) => model.model_id))).then((ok) => ok && setSaved("Saved."))
      }}
    >
      <ModelChecks legend={`Models enabled for ${label.toLowerCase()}`} models={models} chosen={enabled} onChange={setEnabled} name="enabled" />
      <FormFooter error={error} busy={busy} label={<>Save {label.toLowerCase()} models</>}>
        <span role="status">{saved ?? ""}</span>
      </FormFooter>
    </form>
  )
}

const ModelSelect = ({
  id,
  label,
  value,
  models,
  none,
  onChange
}: {
  id: string
  label: string
  value: string
  models: ReadonlyArray<CatalogueEntry>
  none: string
  onChange: (value: string) => void
}) => (
  <div class="stack">
    <label for={id}>{label}</label>
    <select id={id} value={value} onChange={(event) => onChange(event.currentTarget.value)}>
      <option value="">{none}</option>
      {models.map((model) => (
        <option key={model.model_id} value={model.model_id}>
          {model.display_name} ({model.model_id})
        </option>
      ))}
      {value !== "" && !models.some((model) => model.model_id === value) && <option value={value}>{value}</option>}
    </select>
  </div>
)

const ChatPreferences = ({ models }: { models: ReadonlyArray<CatalogueEntry> }) => {
  const { session, announce } = useApp()
  const [loaded, retry] = useLoad(() => Promise.all([getChatAllowed(session.token), getChatDefault(session.token)]), [session.token])
  return (
    <LoadView loaded={loaded} retry={retry} what="the chat preferences">
      {([allowed, fallback]) => (
        <ChatForm
          models={models}
          allowed={allowed.chat_allowed_models}
          chatDefault={fallback.chat_default_model}
          onSaved={announce}
        />
      )}
    </LoadView>
  )
}

const ChatForm = ({
  models,
  allowed,
  chatDefault,
  onSaved
}: {
  models: ReadonlyArray<CatalogueEntry>
  allowed: ReadonlyArray<string> | null
  chatDefault: string | null
  onSaved: (what: string) => void
}) => {
  const { session } = useApp()
  const [restricted, setRestricted] = useState(allowed !== null && allowed.length > 0)
  const [chosen, setChosen] = useState<ReadonlySet<string>>(() => new Set(allowed ?? []))
  const [fallback, setFallback] = useState(chatDefault ?? "")
  const allowedSubmit = useSubmit()
  const defaultSubmit = useSubmit()
  return (
    <div class="settings-form">
      <form
        onSubmit={(event) => {
          event.preventDefault()
          const list = restricted ? models.filter((model) => chosen.has(model.model_id)).map((model) => model.model_id) : null
          void allowedSubmit.submit(() => putChatAllowed(session.token, list)).then((ok) => ok && onSaved("Chat models saved."))
        }}
      >
        <fieldset class="models-choice">
          <legend>Models chat may use</legend>
          <label class="check">
            <input type="radio" name="chat-scope" checked={!restricted} onChange={() => setRestricted(false)} />
            Every enabled model
          </label>
          <label class="check">
            <input type="radio" name="chat-scope" checked={restricted} onChange={() => setRestricted(true)} />
            Only the models chosen below
          </label>
        </fieldset>
        {restricted && <ModelChecks legend="Models allowed in chat" models={models} chosen={chosen} onChange={setChosen} name="chat-allowed" />}
        <ErrorLine message={allowedSubmit.error} />
        <div class="actions-row">
          <button type="submit" class="primary" disabled={allowedSubmit.busy}>
            Save chat models
          </button>
        </div>
      </form>
      <form
        onSubmit={(event) => {
          event.preventDefault()
          if (fallback === "") {
            defaultSubmit.setError("Choose a model: the gateway keeps a default once one is set.")
            return
          }
          void defaultSubmit.submit(() => putChatDefault(session.token, fallback)).then((ok) => ok && onSaved("Chat default saved."))
        }}
      >
        <ModelSelect id="chat-default" label="Default chat model" value={fallback} models={models} none="None chosen" onChange={setFallback} />
        <ErrorLine message={defaultSubmit.error} />
        <div class="actions-row">
          <button type="submit" class="primary" disabled={defaultSubmit.busy}>
            Save default chat model
          </button>
        </div>
      </form>
    </div>
  )
}

const CodeReviewPreferences = ({ models }: { models: ReadonlyArray<CatalogueEntry> }) => {
  const { session, announce } = useApp()
  const [loaded, retry] = useLoad(() => getCodeReview(session.token), [session.token])
  return (
    <LoadView loaded={loaded} retry={retry} what="the code review preferences">
      {(value) => (
        <CodeReviewForm
          models={models}
          value={value}
          onSaved={() => announce("Code review models saved.")}
        />
      )}
    </LoadView>
  )
}

const CodeReviewForm = ({ models, value, onSaved }: { models: ReadonlyArray<CatalogueEntry>; value: CodeReview; onSaved: () => void }) => {
  const { session } = useApp()
  const [fallback, setFallback] = useState(value.default_model ?? "")
  const [enabled, setEnabled] = useState<ReadonlySet<string>>(() => new Set(models.filter((model) => !value.disabled_models.includes(model.model_id)).map((model) => model.model_id)))
  const { busy, error, submit } = useSubmit()
  return (
    <form
      class="settings-form"
      onSubmit={(event) => {
        event.preventDefault()
        const disabled = models.filter((model) => !enabled.has(model.model_id)).map((model) => model.model_id)
        void submit(() => putCodeReview(session.token, { default_model: fallback === "" ? null : fallback, disabled_models: disabled })).then((ok) => ok && onSaved())
      }}
    >
      <p class="hint">Changing these needs the owner or admin role.</p>
      <ModelSelect id="code-review-default" label="Default model of the code review agent" value={fallback} models={models} none="The service's default" onChange={setFallback} />
      <ModelChecks legend="Models enabled for code review" models={models} chosen={enabled} onChange={setEnabled} name="code-review-enabled" />
      <FormFooter error={error} busy={busy} label="Save code review models" />
    </form>
  )
}
