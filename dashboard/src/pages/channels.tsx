/**
 * Where approval requests are announced: e-mail recipients, Slack and Teams webhooks. A stored webhook
 * URL is never shown (the gateway answers it masked): the page says "configured" and offers to replace
 * or remove it; an empty field keeps it.
 */
import { useEffect, useState } from "preact/hooks"
import { ApiError } from "../api.ts"
import { PageHeading } from "../components.tsx"
import { useApp } from "../context.ts"
import { type ChatInput, EMAIL_PATTERN, getChannels, type NotificationChannels, putChannels } from "../settings-api.ts"
import { refusalText } from "./keys.tsx"

interface ChatDraft {
  readonly enabled: boolean
  readonly configured: boolean
  /** A new URL to store; "" keeps the stored one. */
  readonly url: string
  readonly remove: boolean
}

interface Draft {
  readonly emailEnabled: boolean
  readonly recipients: string
  readonly slack: ChatDraft
  readonly teams: ChatDraft
}

const chatDraft = (chat: { enabled: boolean; webhook_url: string | null }): ChatDraft => ({ enabled: chat.enabled, configured: chat.webhook_url !== null, url: "", remove: false })

const toDraft = (channels: NotificationChannels): Draft => ({
  emailEnabled: channels.email.enabled,
  recipients: channels.email.recipients.join("\n"),
  slack: chatDraft(channels.slack),
  teams: chatDraft(channels.teams)
})

const chatInput = (chat: ChatDraft): ChatInput =>
  chat.url.trim() !== "" ? { enabled: chat.enabled, webhook_url: chat.url.trim() } : chat.remove ? { enabled: chat.enabled, webhook_url: null } : { enabled: chat.enabled }

type FieldErrors = { readonly recipients?: string; readonly slack?: string; readonly teams?: string }

export const ChannelsPage = () => {
  const { session, announce } = useApp()
  const [draft, setDraft] = useState<Draft | undefined>()
  const [loadError, setLoadError] = useState<string | undefined>()
  const [errors, setErrors] = useState<FieldErrors>({})
  const [error, setError] = useState<string | undefined>()
  const [saved, setSaved] = useState("")
  const [busy, setBusy] = useState(false)

  useEffect(() => {
    getChannels(session.token).then(
      (channels) => setDraft(toDraft(channels)),
      (cause) => {
        if (!(cause instanceof ApiError && cause.status === 401)) setLoadError(refusalText(cause, "Only an owner or admin can see the notification channels"))
      }
    )
  }, [session.token])

  const submit = async (event: Event) => {
    event.preventDefault()
    if (draft === undefined) return
    const recipients = draft.recipients
      .split(/[\s,;]+/)
      .map((entry) => entry.trim())
      .filter((entry) => entry !== "")
    const found: { recipients?: string; slack?: string; teams?: string } = {}
    const bad = recipients.filter((entry) => !EMAIL_PATTERN.test(entry))
    if (bad.length > 0) found.recipients = `Not e-mail addresses: ${bad.join(", ")}`
    else if (recipients.length > 100) found.recipients = "At most 100 recipients."
    for (const chat of ["slack", "teams"] as const) {
      const url = draft[chat].url.trim()
      if (url !== "" && (!/^https?:\/\/\S+$/.test(url) || url.length > 2048)) found[chat] = "Enter the webhook URL, starting https:// (at most 2048 characters)."
      else if (draft[chat].enabled && url === "" && (!draft[chat].configured || draft[chat].remove)) found[chat] = "Enabled needs a webhook URL."
    }
    setErrors(found)
    setSaved("")
    const first = Object.keys(found)[0]
    if (first !== undefined) {
      document.getElementById(`channel-${first}`)?.focus()
      return
    }
    setError(undefined)
    setBusy(true)
    try {
      const answer = await putChannels(session.token, {
        email: { enabled: draft.emailEnabled, recipients },
        slack: chatInput(draft.slack),
        teams: chatInput(draft.teams)
      })
      setDraft(toDraft(answer))
      setSaved("Notification channels saved.")
      announce("Notification channels saved.")
    } catch (cause) {
      setError(refusalText(cause, "Only an owner or admin can change the notification channels"))
    } finally {
      setBusy(false)
    }
  }

  const setChat = (chat: "slack" | "teams", change: Partial<ChatDraft>) => setDraft((current) => (current === undefined ? current : { ...current, [chat]: { ...current[chat], ...change } }))

  return (
    <main>
      <PageHeading>Notification channels</PageHeading>
      <p class="hint">Where approval requests are announced. Messages only notify; approving happens in the dashboard.</p>
      {draft === undefined && loadError === undefined && <p role="status">Loading…</p>}
      {loadError !== undefined && (
        <p role="alert" class="error">
          {loadError}
        </p>
      )}
      {draft !== undefined && (
        <form onSubmit={submit} noValidate class="settings-form">
          <fieldset class="models-choice">
            <legend>E-mail</legend>
            <label class="check">
              <input type="checkbox" checked={draft.emailEnabled} onChange={(event) => setDraft({ ...draft, emailEnabled: event.currentTarget.checked })} />
              <span>Send approval requests by e-mail</span>
            </label>
            <div class="stack">
              <label for="channel-recipients">Recipients (one per line)</label>
              <textarea
                id="channel-recipients"
                value={draft.recipients}
                aria-invalid={errors.recipients !== undefined}
                aria-describedby={errors.recipients === undefined ? "recipients-hint" : "recipients-hint recipients-error"}
                onInput={(event) => setDraft({ ...draft, recipients: event.currentTarget.value })}
              />
              <small id="recipients-hint" class="hint">
                Each action's approvers are always e-mailed; these addresses also get a notice.
              </small>
              {errors.recipients !== undefined && (
                <p id="recipients-error" class="error">
                  {errors.recipients}
                </p>
              )}
            </div>
          </fieldset>
          {(["slack", "teams"] as const).map((chat) => {
            const value = draft[chat]
            const title = chat === "slack" ? "Slack" : "Microsoft Teams"
            const fieldError = errors[chat]
            return (
              <fieldset key={chat} class="models-choice">
                <legend>{title}</legend>
                <label class="check">
                  <input type="checkbox" checked={value.enabled} onChange={(event) => setChat(chat, { enabled: event.currentTarget.checked })} />
                  <span>Post approval requests to {title}</span>
                </label>
                <p data-webhook-state={chat}>Webhook: {value.configured && !value.remove ? "configured" : "not configured"}</p>
                <div class="stack">
                  <label for={`channel-${chat}`}>{value.configured ? "New webhook URL (empty keeps the stored one)" : "Webhook URL"}</label>
                  <input
                    id={`channel-${chat}`}
                    type="url"
                    autoComplete="off"
                    value={value.url}
                    aria-invalid={fieldError !== undefined}
                    aria-describedby={fieldError === undefined ? undefined : `${chat}-error`}
                    onInput={(event) => setChat(chat, { url: event.currentTarget.value })}
                  />
                  {fieldError !== undefined && (
                    <p id={`${chat}-error`} class="error">
                      {fieldError}
                    </p>
                  )}
                </div>
                {value.configured && (
                  <label class="check">
                    <input type="checkbox" checked={value.remove} onChange={(event) => setChat(chat, { remove: event.currentTarget.checked })} />
                    <span>Remove the stored webhook</span>
                  </label>
                )}
              </fieldset>
            )
          })}
          {error !== undefined && (
            <p role="alert" class="error">
              {error}
            </p>
          )}
          <div class="actions-row">
            <button type="submit" class="primary" disabled={busy}>
              Save channels
            </button>
          </div>
          <p role="status">{saved}</p>
        </form>
      )}
    </main>
  )
}
