/** The organization's webhooks: list, create (secret shown once), delete; and one webhook's deliveries. */
import { useCallback, useEffect, useRef, useState } from "preact/hooks"
import { ApiError } from "../api.ts"
import { PageHeading } from "../components.tsx"
import { ConfirmButton } from "../confirm.tsx"
import { useApp } from "../context.ts"
import { localTime } from "../format.ts"
import { pageOf, setQuery } from "../kit.tsx"
import { createWebhook, type DeliveryList, deleteWebhook, EVENTS, listDeliveries, listWebhooks, refusalText, type Webhook } from "../policies-api.ts"
import { BASE, onLinkClick } from "../router.ts"

type Load<T> = { readonly state: "loading" } | { readonly state: "ready"; readonly value: T } | { readonly state: "failed"; readonly message: string }

const webhookPath = (webhookId: string) => `${BASE}/webhooks/${encodeURIComponent(webhookId)}`
const quiet = (cause: unknown) => cause instanceof ApiError && cause.status === 401

export const WebhooksPage = () => {
  const { session, announce } = useApp()
  const [load, setLoad] = useState<Load<ReadonlyArray<Webhook>>>({ state: "loading" })
  const [created, setCreated] = useState<Webhook | undefined>()
  const [busy, setBusy] = useState<string | undefined>()
  const [error, setError] = useState<string | undefined>()

  const reload = useCallback(async () => {
    try {
      setLoad({ state: "ready", value: await listWebhooks(session.token) })
    } catch (cause) {
      if (!quiet(cause)) setLoad({ state: "failed", message: refusalText(cause, "webhooks") })
    }
  }, [session.token])

  useEffect(() => {
    void reload()
  }, [reload])

  const remove = async (webhook: Webhook) => {
    setBusy(webhook.id)
    setError(undefined)
    try {
      await deleteWebhook(session.token, webhook.id)
      announce(`Webhook ${webhook.url} deleted.`)
      if (created?.id === webhook.id) setCreated(undefined)
      await reload()
    } catch (cause) {
      if (!quiet(cause)) setError(refusalText(cause, "webhooks"))
    } finally {
      setBusy(undefined)
    }
  }

  return (
    <main>
      <PageHeading>Webhooks</PageHeading>
      <NewWebhookForm
        onCreated={(webhook) => {
          setCreated(webhook)
          void reload()
        }}
      />
      {created?.secret != null && <SecretOnce webhook={created} secret={created.secret} onDone={() => setCreated(undefined)} />}
      <section aria-labelledby="webhooks-title">
        <h2 id="webhooks-title">Endpoints</h2>
        {load.state === "loading" && <p role="status">Loading…</p>}
        {load.state === "failed" && (
          <p role="alert" class="error">
            {load.message}
          </p>
        )}
        {error !== undefined && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
        {load.state === "ready" && load.value.length === 0 && <p class="empty">No webhooks yet.</p>}
        {load.state === "ready" && load.value.length > 0 && (
          <ul class="cards">
            {load.value.map((webhook) => (
              <li class="card" key={webhook.id} data-webhook-id={webhook.id}>
                <p>
                  <a class="wrap" href={webhookPath(webhook.id)} onClick={onLinkClick}>
                    {webhook.url}
                  </a>
                </p>
                <p>
                  <span class={`status webhook-${webhook.status}`}>{webhook.status}</span> · events: {webhook.events.join(", ")} · created{" "}
                  <time dateTime={webhook.created_at}>{localTime(webhook.created_at)}</time>
                </p>
                <ConfirmButton label="Delete" question={`Delete the webhook ${webhook.url}?`} busy={busy === webhook.id} onConfirm={() => void remove(webhook)} />
              </li>
            ))}
          </ul>
        )}
      </section>
    </main>
  )
}

const SecretOnce = ({ webhook, secret, onDone }: { webhook: Webhook; secret: string; onDone: () => void }) => {
  const [copied, setCopied] = useState<string | undefined>()
  const heading = useRef<HTMLHeadingElement>(null)
  const field = useRef<HTMLInputElement>(null)
  useEffect(() => heading.current?.focus(), [])
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(secret)
      setCopied("Copied.")
    } catch {
      field.current?.select()
      setCopied("Copying is not allowed here: the secret is selected, copy it with your keyboard.")
    }
  }
  return (
    <section class="notice secret-once" aria-labelledby="secret-title">
      <h2 id="secret-title" tabIndex={-1} ref={heading}>
        Signing secret for {webhook.url}
      </h2>
      <p id="secret-warning">
        <strong>Copy it now: you will not see it again.</strong> Your endpoint uses it to verify each delivery's signature.
      </p>
      <div class="filters">
        <div>
          <label for="webhook-secret">Secret</label>
          <input id="webhook-secret" ref={field} readOnly value={secret} aria-describedby="secret-warning" class="hash secret-field" />
        </div>
        <button type="button" onClick={() => void copy()}>
          Copy secret
        </button>
        <button type="button" onClick={onDone}>
          I have saved it
        </button>
      </div>
      <p role="status">{copied}</p>
    </section>
  )
}

const NewWebhookForm = ({ onCreated }: { onCreated: (webhook: Webhook) => void }) => {
  const { session, announce } = useApp()
  const [url, setUrl] = useState("")
  const [all, setAll] = useState(true)
  const [events, setEvents] = useState<ReadonlyArray<string>>([])
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | undefined>()
  const errorRef = useRef<HTMLParagraphElement>(null)
  useEffect(() => {
    if (error !== undefined) errorRef.current?.focus()
  }, [error])

  const submit = async (event: Event) => {
    event.preventDefault()
    if (busy) return
    let parsed: URL | undefined
    try {
      parsed = new URL(url.trim())
    } catch {
      parsed = undefined
    }
    if (parsed === undefined || parsed.protocol !== "https:") return setError("Enter an HTTPS URL, like https://hooks.example.com/gateway.")
    if (!all && events.length === 0) return setError("Choose at least one event, or All events.")
    setBusy(true)
    setError(undefined)
    try {
      const webhook = await createWebhook(session.token, { url: url.trim(), ...(all ? {} : { events }) })
      announce("Webhook created. Copy its secret now.")
      setUrl("")
      setEvents([])
      setAll(true)
      onCreated(webhook)
    } catch (cause) {
      if (!quiet(cause)) setError(refusalText(cause, "webhooks"))
    } finally {
      setBusy(false)
    }
  }

  return (
    <section aria-labelledby="new-webhook-title" class="new-case">
      <h2 id="new-webhook-title">New webhook</h2>
      <form onSubmit={submit} noValidate>
        <div class="stack">
          <label for="webhook-url">HTTPS URL</label>
          <input
            id="webhook-url"
            type="url"
            inputMode="url"
            maxLength={2048}
            value={url}
            aria-invalid={error !== undefined}
            aria-describedby={error === undefined ? undefined : "new-webhook-error"}
            onInput={(event) => setUrl(event.currentTarget.value)}
          />
        </div>
        <fieldset class="models-choice">
          <legend>Events</legend>
          <label class="check">
            <input type="checkbox" checked={all} onChange={(event) => setAll(event.currentTarget.checked)} />
            <span>All events</span>
          </label>
          {!all &&
            EVENTS.map((name) => (
              <label key={name} class="check">
                <input
                  type="checkbox"
                  checked={events.includes(name)}
                  onChange={(event) => {
                    const on = event.currentTarget.checked
                    setEvents((list) => (on ? [...list.filter((entry) => entry !== name), name] : list.filter((entry) => entry !== name)))
                  }}
                />
                <code>{name}</code>
              </label>
            ))}
        </fieldset>
        {error !== undefined && (
          <p role="alert" class="error" id="new-webhook-error" tabIndex={-1} ref={errorRef}>
            {error}
          </p>
        )}
        <div class="actions-row">
          <button type="submit" class="primary" disabled={busy}>
            Create webhook
          </button>
        </div>
      </form>
    </section>
  )
}

const PER_PAGE = 25

export const WebhookPage = ({ webhookId, search }: { webhookId: string; search: string }) => {
  const { session } = useApp()
  // The deliveries' page number lives in the URL (deep links, reload, back).
  const page = pageOf(search)
  const setPage = (next: number) => setQuery(search, { page: next === 1 ? undefined : String(next) })
  const [webhook, setWebhook] = useState<Webhook | undefined>()
  const [load, setLoad] = useState<Load<DeliveryList> | { readonly state: "missing" }>({ state: "loading" })

  useEffect(() => {
    let current = true
    listWebhooks(session.token).then(
      (list) => current && setWebhook(list.find((entry) => entry.id === webhookId)),
      () => undefined
    )
    return () => {
      current = false
    }
  }, [session.token, webhookId])

  useEffect(() => {
    let current = true
    listDeliveries(session.token, webhookId, page, PER_PAGE).then(
      (value) => current && setLoad({ state: "ready", value }),
      (cause) => {
        if (!current || quiet(cause)) return
        setLoad(cause instanceof ApiError && cause.status === 404 ? { state: "missing" } : { state: "failed", message: refusalText(cause, "webhooks") })
      }
    )
    return () => {
      current = false
    }
  }, [session.token, webhookId, page])

  const back = (
    <p>
      <a href={`${BASE}/webhooks`} onClick={onLinkClick}>
        All webhooks
      </a>
    </p>
  )
  if (load.state === "loading")
    return (
      <main>
        <p role="status">Loading…</p>
      </main>
    )
  if (load.state === "missing")
    return (
      <main>
        <PageHeading>Webhook not found</PageHeading>
        {back}
      </main>
    )
  return (
    <main>
      {back}
      <PageHeading>Deliveries</PageHeading>
      {webhook !== undefined && (
        <p class="wrap">
          To <code>{webhook.url}</code> ({webhook.status})
        </p>
      )}
      {load.state === "failed" && (
        <p role="alert" class="error">
          {load.message}
        </p>
      )}
      {load.state === "ready" && load.value.data.length === 0 && <p class="empty">No deliveries yet.</p>}
      {load.state === "ready" && load.value.data.length > 0 && (
        <>
          <div class="table-scroll">
            <table class="actions">
              <caption class="visually-hidden">Deliveries, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Event</th>
                  <th scope="col">Status</th>
                  <th scope="col">Status code</th>
                  <th scope="col">Attempt</th>
                  <th scope="col">Delivered</th>
                </tr>
              </thead>
              <tbody>
                {load.value.data.map((delivery) => (
                  <tr key={delivery.id}>
                    <td>{delivery.event}</td>
                    <td>{delivery.status}</td>
                    <td>{delivery.status_code ?? "—"}</td>
                    <td>{delivery.attempt}</td>
                    <td>{delivery.delivered_at === null ? "—" : <time dateTime={delivery.delivered_at}>{localTime(delivery.delivered_at)}</time>}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <nav class="pager" aria-label="Pages of deliveries">
            <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>
              Previous
            </button>
            <span>Page {load.value.pagination.page}</span>
            <button type="button" disabled={!load.value.pagination.has_more} onClick={() => setPage(page + 1)}>
              Next
            </button>
          </nav>
        </>
      )}
    </main>
  )
}
