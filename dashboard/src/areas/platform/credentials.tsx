/**
 * Provider credentials: which providers the organization has its own account for (the API answers
 * only the slug, type, whether it is configured and the non-secret region or endpoint: never a
 * secret), a form that adds or replaces one provider's credentials with write-only secret fields
 * cleared after saving, and deleting one with a confirmation. The provider being edited is in the
 * URL (`?provider=cloud_a`).
 */
import { useEffect, useRef, useState } from "preact/hooks"
import { PageHeading } from "../../components.tsx"
import { ConfirmButton } from "../../confirm.tsx"
import { useApp } from "../../context.ts"
import { ErrorLine, LoadView, queryOf, setQuery, useLoad, useSubmit } from "../../kit.tsx"
import { deleteProvider, listProviders, type ProviderStatus, saveProvider } from "./api.ts"
import { yesNo } from "./shared.tsx"

interface Field {
  readonly name: string
  readonly label: string
  readonly secret: boolean
  readonly required: boolean
  readonly hint?: string
}

/** The credential fields of each type (spec 002 "Provider credentials"; src/provider-credentials/fields.ts). */
const FIELDS: Readonly<Record<string, ReadonlyArray<Field>>> = {
  api_key: [{ name: "api_key", label: "API key", secret: true, required: true }],
  cloud_a: [
    { name: "access_key_id", label: "Access key id", secret: true, required: true },
    { name: "secret_access_key", label: "Secret access key", secret: true, required: true },
    { name: "region", label: "Region", secret: false, required: false, hint: "Default us-east-1." }
  ],
  cloud_b: [
    { name: "endpoint", label: "Endpoint (HTTPS URL)", secret: false, required: true },
    { name: "api_key", label: "API key", secret: true, required: true },
    { name: "api_version", label: "API version", secret: false, required: false, hint: "Default 2025-04-01-preview." }
  ],
  cloud_c: [
    { name: "project_id", label: "Project id", secret: false, required: true },
    { name: "region", label: "Region", secret: false, required: false, hint: "Default us-central1." },
    {
      name: "service_account_json",
      label: "Service account key (JSON)",
      secret: true,
      required: false,
      hint: "Optional, for other than the default credentials: paste the key file's JSON."
    }
  ]
}

const PROVIDER_NAMES: Readonly<Record<string, string>> = {
  direct_a: "Direct provider A",
  direct_b: "Direct provider B",
  direct_c: "Direct provider C",
  cloud_a: "Cloud platform A (key pair)",
  cloud_b: "Cloud platform B (hosted endpoint)",
  cloud_c: "Cloud platform C (project)"
}

const nameOf = (slug: string) => PROVIDER_NAMES[slug] ?? slug

export const CredentialsSection = ({ search }: { search: string }) => {
  const { session } = useApp()
  const [loaded, reload] = useLoad(() => listProviders(session.token), [session.token])
  const chosen = queryOf(search).provider ?? ""
  return (
    <>
      <PageHeading>Provider credentials</PageHeading>
      <p class="hint">
        Calls to a configured provider go through your organization's own account. Secrets are stored encrypted and are never shown again, here or through the API. Changing them
        needs the owner or admin role.
      </p>
      <LoadView loaded={loaded} retry={reload} what="the provider credentials">
        {({ providers }) => (
          <>
            <ProviderTable providers={providers} search={search} onChanged={reload} />
            <CredentialForm providers={providers} chosen={chosen} search={search} onSaved={reload} />
          </>
        )}
      </LoadView>
    </>
  )
}

const ProviderTable = ({ providers, search, onChanged }: { providers: ReadonlyArray<ProviderStatus>; search: string; onChanged: () => void }) => {
  const { session, announce } = useApp()
  const { busy, error, submit } = useSubmit()
  const [message, setMessage] = useState<string | undefined>()
  const messageRef = useRef<HTMLParagraphElement>(null)
  return (
    <section aria-labelledby="providers-title">
      <h2 id="providers-title">Providers</h2>
      <div class="table-scroll">
        <table class="case-table">
          <caption class="visually-hidden">Model providers and whether your organization's credentials are configured</caption>
          <thead>
            <tr>
              <th scope="col">Provider</th>
              <th scope="col">Type</th>
              <th scope="col">Configured</th>
              <th scope="col">Region</th>
              <th scope="col">Endpoint</th>
              <th scope="col">Change</th>
            </tr>
          </thead>
          <tbody>
            {providers.map((provider) => (
              <tr key={provider.slug} data-provider={provider.slug}>
                <td data-label="Provider">
                  {nameOf(provider.slug)} <code class="models">{provider.slug}</code>
                </td>
                <td data-label="Type">
                  <code>{provider.type}</code>
                </td>
                <td data-label="Configured">{yesNo(provider.configured)}</td>
                <td data-label="Region">{provider.region ?? "—"}</td>
                <td data-label="Endpoint" class="wrap">
                  {provider.endpoint ?? "—"}
                </td>
                <td data-label="Change">
                  <span class="actions-row">
                    <button
                      type="button"
                      aria-label={`${provider.configured ? "Replace" : "Add"} credentials for ${provider.slug}`}
                      onClick={() => {
                        setQuery(search, { provider: provider.slug })
                        // The form's first field, once the URL change drew it.
                        setTimeout(() => document.getElementById("credential-provider")?.focus(), 0)
                      }}
                    >
                      {provider.configured ? "Replace" : "Add"}
                    </button>
                    {provider.configured && (
                      <ConfirmButton
                        label="Delete"
                        question={`Delete the credentials for ${provider.slug}? Calls then use the service's key, or fail.`}
                        busy={busy}
                        onConfirm={() => {
                          setMessage(undefined)
                          void submit(() => deleteProvider(session.token, provider.slug)).then((ok) => {
                            if (!ok) return
                            setMessage(`Credentials for ${provider.slug} deleted.`)
                            announce(`Credentials for ${provider.slug} deleted.`)
                            onChanged()
                            messageRef.current?.focus()
                          })
                        }}
                      />
                    )}
                  </span>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <ErrorLine message={error} />
      <p role="status" tabIndex={-1} ref={messageRef}>
        {message ?? ""}
      </p>
    </section>
  )
}

const CredentialForm = ({ providers, chosen, search, onSaved }: { providers: ReadonlyArray<ProviderStatus>; chosen: string; search: string; onSaved: () => void }) => {
  const { session, announce } = useApp()
  const provider = providers.find((entry) => entry.slug === chosen) ?? providers[0]
  const fields = provider === undefined ? [] : (FIELDS[provider.type] ?? [])
  // Values live only in this form's state, never in the URL or storage; emptied after each save.
  const [values, setValues] = useState<Record<string, string>>({})
  const [missing, setMissing] = useState<string | undefined>()
  const [saved, setSaved] = useState<string | undefined>()
  const { busy, error, submit } = useSubmit()
  const savedRef = useRef<HTMLParagraphElement>(null)
  useEffect(() => {
    setValues({})
    setMissing(undefined)
  }, [provider?.slug])
  if (provider === undefined) return null
  const replacing = provider.configured
  return (
    <section aria-labelledby="credential-form-title" class="new-case platform-section">
      <h2 id="credential-form-title">Add or replace credentials</h2>
      <form
        class="settings-form"
        autocomplete="off"
        noValidate
        onSubmit={(event) => {
          event.preventDefault()
          setSaved(undefined)
          const entered = Object.fromEntries(Object.entries(values).filter(([, value]) => value.trim() !== ""))
          const absent = replacing ? [] : fields.filter((field) => field.required && entered[field.name] === undefined)
          if (absent.length > 0) {
            setMissing(`Fill in ${absent.map((field) => field.label).join(", ")}.`)
            document.getElementById(`credential-${absent[0]!.name}`)?.focus()
            return
          }
          if (Object.keys(entered).length === 0) {
            setMissing("Fill in at least one field: empty fields keep what is stored.")
            return
          }
          setMissing(undefined)
          void submit(() => saveProvider(session.token, provider.slug, entered)).then((ok) => {
            // The secrets leave the page whether or not the gateway took them.
            setValues({})
            if (!ok) return
            const message = `Credentials for ${provider.slug} saved.`
            setSaved(message)
            announce(message)
            onSaved()
            savedRef.current?.focus()
          })
        }}
      >
        <div class="stack">
          <label for="credential-provider">Provider</label>
          <select id="credential-provider" value={provider.slug} onChange={(event) => setQuery(search, { provider: event.currentTarget.value })}>
            {providers.map((entry) => (
              <option key={entry.slug} value={entry.slug}>
                {nameOf(entry.slug)} ({entry.slug}){entry.configured ? " — configured" : ""}
              </option>
            ))}
          </select>
        </div>
        {replacing && <p class="hint">Configured already: what you enter replaces the stored value; empty fields keep it.</p>}
        {fields.map((field) => {
          const id = `credential-${field.name}`
          const hintId = `${id}-hint`
          return (
            <div class="stack" key={`${provider.slug}-${field.name}`}>
              <label for={id}>
                {field.label}
                {field.required && !replacing ? " (required)" : ""}
              </label>
              <input
                id={id}
                class="secret-field"
                // A secret is typed blind and never read back.
                type={(field.secret ? "password" : "text") as "text"}
                autocomplete="off"
                spellcheck={false}
                value={values[field.name] ?? ""}
                aria-describedby={field.hint === undefined ? undefined : hintId}
                onInput={(event) => {
                  const value = event.currentTarget.value
                  setValues((current) => ({ ...current, [field.name]: value }))
                }}
              />
              {field.hint !== undefined && (
                <p id={hintId} class="hint">
                  {field.hint}
                </p>
              )}
            </div>
          )
        })}
        <ErrorLine message={missing ?? error} />
        <div class="actions-row">
          <button type="submit" class="primary" disabled={busy}>
            Save credentials
          </button>
        </div>
        <p role="status" tabIndex={-1} ref={savedRef}>
          {saved ?? ""}
        </p>
      </form>
    </section>
  )
}
