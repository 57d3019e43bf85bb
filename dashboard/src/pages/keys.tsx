/** API keys: the list, a form that creates one (its full key shown once) and revoking with a confirmation. */
import { useCallback, useEffect, useRef, useState } from "preact/hooks"
import { ApiError } from "../api.ts"
import { PageHeading } from "../components.tsx"
import { useApp } from "../context.ts"
import { localTime } from "../format.ts"
import { type CreatedKey, createKey, type KeyInfo, listKeys, revokeKey, SCOPE_AREAS } from "../settings-api.ts"

/** An API refusal in words; a 403 says what the role or key lacks. */
export const refusalText = (cause: unknown, forbidden: string): string => {
  if (cause instanceof ApiError && cause.status === 403) return `${forbidden} (${cause.message})`
  return cause instanceof Error ? cause.message : "Something went wrong; try again."
}

const ALL_SCOPES = ["*", ...SCOPE_AREAS.flatMap((area) => [`${area}:read`, `${area}:write`])]

type Load = { readonly state: "loading" } | { readonly state: "ready"; readonly keys: ReadonlyArray<KeyInfo> } | { readonly state: "failed"; readonly message: string }

export const KeysPage = () => {
  const { session } = useApp()
  const [load, setLoad] = useState<Load>({ state: "loading" })
  const reload = useCallback(async () => {
    try {
      setLoad({ state: "ready", keys: (await listKeys(session.token)).data })
    } catch (cause) {
      if (!(cause instanceof ApiError && cause.status === 401)) setLoad({ state: "failed", message: refusalText(cause, "You may not list API keys") })
    }
  }, [session.token])
  useEffect(() => {
    void reload()
  }, [reload])

  return (
    <main>
      <PageHeading>API keys</PageHeading>
      <NewKeyForm onCreated={() => void reload()} />
      <section aria-labelledby="keys-title">
        <h2 id="keys-title">Keys</h2>
        {load.state === "loading" && <p role="status">Loading…</p>}
        {load.state === "failed" && (
          <p role="alert" class="error">
            {load.message}
          </p>
        )}
        {load.state === "ready" && load.keys.length === 0 && <p class="empty">No API keys.</p>}
        {load.state === "ready" && load.keys.length > 0 && (
          <table class="case-table">
            <caption class="visually-hidden">API keys</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Prefix</th>
                <th scope="col">Scopes</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Expires</th>
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              {load.keys.map((key) => (
                <KeyRow key={key.id} item={key} onRevoked={() => void reload()} />
              ))}
            </tbody>
          </table>
        )}
      </section>
    </main>
  )
}

const KeyRow = ({ item, onRevoked }: { item: KeyInfo; onRevoked: () => void }) => {
  const { session, announce } = useApp()
  const [confirming, setConfirming] = useState(false)
  const [error, setError] = useState<string | undefined>()
  const confirmRef = useRef<HTMLButtonElement>(null)
  const revokeRef = useRef<HTMLButtonElement>(null)
  useEffect(() => {
    if (confirming) confirmRef.current?.focus()
  }, [confirming])
  const revoke = async () => {
    setError(undefined)
    try {
      await revokeKey(session.token, item.id)
      announce(`Key ${item.name} revoked.`)
      onRevoked()
    } catch (cause) {
      setError(refusalText(cause, "You may not revoke this key"))
    }
  }
  return (
    <tr data-key-id={item.id}>
      <td data-label="Name" class="wrap">
        {item.name}
      </td>
      <td data-label="Prefix">
        <code class="wrap">{item.key_prefix}</code>
      </td>
      <td data-label="Scopes" class="wrap">
        {item.scopes.join(", ")}
      </td>
      <td data-label="Created">
        <time dateTime={item.created_at}>{localTime(item.created_at)}</time>
      </td>
      <td data-label="Last used">{item.last_used_at === null ? "never" : localTime(item.last_used_at)}</td>
      <td data-label="Expires">{item.expires_at === null ? "never" : localTime(item.expires_at)}</td>
      <td data-label="Status">
        {item.revoked_at !== null ? (
          <span class="error">revoked {localTime(item.revoked_at)}</span>
        ) : confirming ? (
          <span class="confirm">
            <span id={`revoke-q-${item.id}`}>Revoke {item.name}? Agents using it stop working.</span>{" "}
            <button type="button" class="deny" ref={confirmRef} aria-describedby={`revoke-q-${item.id}`} onClick={() => void revoke()}>
              Yes, revoke
            </button>{" "}
            <button
              type="button"
              onClick={() => {
                setConfirming(false)
                setTimeout(() => revokeRef.current?.focus(), 0)
              }}
            >
              Keep
            </button>
          </span>
        ) : (
          <>
            active{" "}
            <button type="button" ref={revokeRef} aria-label={`Revoke ${item.name}`} onClick={() => setConfirming(true)}>
              Revoke
            </button>
          </>
        )}
        {error !== undefined && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
      </td>
    </tr>
  )
}

const NewKeyForm = ({ onCreated }: { onCreated: () => void }) => {
  const { session, announce } = useApp()
  const [name, setName] = useState("")
  const [scopes, setScopes] = useState<ReadonlyArray<string>>([])
  const [expires, setExpires] = useState("")
  const [nameError, setNameError] = useState<string | undefined>()
  const [expiresError, setExpiresError] = useState<string | undefined>()
  const expiresRef = useRef<HTMLInputElement>(null)
  const [error, setError] = useState<string | undefined>()
  const [busy, setBusy] = useState(false)
  const [created, setCreated] = useState<CreatedKey | undefined>()
  const [copied, setCopied] = useState(false)
  const nameRef = useRef<HTMLInputElement>(null)
  const createdRef = useRef<HTMLElement>(null)
  useEffect(() => {
    if (created !== undefined) createdRef.current?.focus()
  }, [created])

  const submit = async (event: Event) => {
    event.preventDefault()
    const trimmed = name.trim()
    if (trimmed.length < 1 || trimmed.length > 100) {
      setNameError("Give the key a name of 1 to 100 characters.")
      nameRef.current?.focus()
      return
    }
    setNameError(undefined)
    // The end of the chosen day, in the user's time zone.
    const expiresAt = expires === "" ? undefined : new Date(`${expires}T23:59:59`)
    if (expiresAt !== undefined && !(expiresAt.getTime() > Date.now())) {
      setExpiresError("Choose a day from today on, or leave it empty for a key that does not expire.")
      expiresRef.current?.focus()
      return
    }
    setExpiresError(undefined)
    setError(undefined)
    setBusy(true)
    try {
      const key = await createKey(session.token, { name: trimmed, scopes: scopes.length === 0 ? ["*"] : scopes, ...(expiresAt === undefined ? {} : { expires_at: expiresAt.toISOString() }) })
      setCreated(key)
      setCopied(false)
      setName("")
      setScopes([])
      setExpires("")
      announce(`Key ${key.name} created.`)
      onCreated()
    } catch (cause) {
      setError(refusalText(cause, "You may not create API keys"))
    } finally {
      setBusy(false)
    }
  }

  const copy = async () => {
    if (created === undefined) return
    try {
      await navigator.clipboard.writeText(created.key)
      setCopied(true)
    } catch {
      setError("Copying was refused by the browser: select the key and copy it by hand.")
    }
  }

  return (
    <section aria-labelledby="new-key-title" class="new-case">
      <h2 id="new-key-title">New API key</h2>
      {created !== undefined && (
        <section class="new-key" aria-labelledby="created-title" tabIndex={-1} ref={createdRef}>
          <h3 id="created-title">Key {created.name} created</h3>
          <p>
            <strong>Copy it now: you will not see it again.</strong>
          </p>
          <p>
            <code class="wrap" data-new-key>
              {created.key}
            </code>
          </p>
          <div class="actions-row">
            <button type="button" onClick={() => void copy()}>
              Copy key
            </button>
            <button type="button" onClick={() => setCreated(undefined)}>
              Done
            </button>
          </div>
          <p role="status">{copied ? "Copied." : ""}</p>
        </section>
      )}
      <form onSubmit={submit} noValidate>
        <div class="stack">
          <label for="key-name">Name</label>
          <input
            id="key-name"
            ref={nameRef}
            maxLength={100}
            value={name}
            aria-invalid={nameError !== undefined}
            aria-describedby={nameError === undefined ? undefined : "key-name-error"}
            onInput={(event) => setName(event.currentTarget.value)}
          />
          {nameError !== undefined && (
            <p id="key-name-error" class="error">
              {nameError}
            </p>
          )}
        </div>
        <fieldset class="models-choice scopes">
          <legend>Scopes (none chosen: * = all your role allows)</legend>
          {ALL_SCOPES.map((scope) => (
            <label key={scope} class="check">
              <input
                type="checkbox"
                checked={scopes.includes(scope)}
                onChange={(event) => {
                  const on = event.currentTarget.checked
                  setScopes((list) => (on ? [...list, scope] : list.filter((entry) => entry !== scope)))
                }}
              />
              <code>{scope}</code>
            </label>
          ))}
        </fieldset>
        <div class="stack">
          <label for="key-expires">Expires on (optional)</label>
          <input
            id="key-expires"
            type="date"
            class="short"
            ref={expiresRef}
            value={expires}
            aria-invalid={expiresError !== undefined}
            aria-describedby={expiresError === undefined ? undefined : "key-expires-error"}
            onInput={(event) => setExpires(event.currentTarget.value)}
          />
          {expiresError !== undefined && (
            <p id="key-expires-error" class="error">
              {expiresError}
            </p>
          )}
        </div>
        {error !== undefined && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
        <div class="actions-row">
          <button type="submit" class="primary" disabled={busy}>
            Create key
          </button>
        </div>
      </form>
    </section>
  )
}
