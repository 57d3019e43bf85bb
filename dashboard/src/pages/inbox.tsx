/** Pending approvals of the organization, kept current by the `notifications` channel. */
import { useCallback, useEffect, useState } from "preact/hooks"
import { ApiError, getAction, pendingNotifications } from "../api.ts"
import { ActionFacts, Decision, PageHeading } from "../components.tsx"
import { useApp, useLive, useNow } from "../context.ts"
import { localTime } from "../format.ts"
import { BASE, onLinkClick } from "../router.ts"
import type { ActionDetail, NotificationItem } from "../types.ts"

type Load = { readonly state: "loading" } | { readonly state: "ready" } | { readonly state: "failed"; readonly message: string }

export const Inbox = () => {
  const { session, announce } = useApp()
  const now = useNow()
  const [items, setItems] = useState<ReadonlyArray<ActionDetail>>([])
  const [load, setLoad] = useState<Load>({ state: "loading" })
  // Cases flagged for human review: shown as their notification items, decided on the case page.
  const [reviews, setReviews] = useState<ReadonlyArray<NotificationItem>>([])

  const remove = useCallback((actionUuid: string) => setItems((list) => list.filter((item) => item.action_uuid !== actionUuid)), [])

  /** Adds (or refreshes) one action, if it is still pending. */
  const upsert = useCallback((action: ActionDetail) => {
    setItems((list) => {
      const others = list.filter((item) => item.action_uuid !== action.action_uuid)
      if (action.status !== "pending_approval") return others
      return [action, ...others].sort((a, b) => b.created_at.localeCompare(a.created_at))
    })
  }, [])

  const reload = useCallback(async () => {
    try {
      const pending = await pendingNotifications(session.token)
      setReviews(pending.items.filter((item) => item.type === "case_review"))
      const ids = pending.items.filter((item) => item.type === "action_approval").map((item) => item.id)
      const actions = await Promise.all(ids.map((id) => getAction(session.token, id).catch(() => undefined)))
      setItems(actions.filter((action): action is ActionDetail => action?.status === "pending_approval"))
      setLoad({ state: "ready" })
    } catch (cause) {
      if (!(cause instanceof ApiError && cause.status === 401)) setLoad({ state: "failed", message: cause instanceof Error ? cause.message : "Loading failed." })
    }
  }, [session.token])

  useEffect(() => {
    void reload()
  }, [reload])

  useLive({
    onSubscribed: () => void reload(),
    onEvent: (event) => {
      if (event.notification_type === "case_review") {
        if (event.type === "notification.resolved") setReviews((list) => list.filter((item) => item.notification_key !== event.notification_key))
        else {
          void reload()
          announce("New case review request.")
        }
        return
      }
      if (event.notification_type !== "action_approval") return
      if (event.type === "notification.resolved") {
        setItems((list) => {
          const gone = list.find((item) => item.action_uuid === event.id)
          if (gone !== undefined) announce(`${gone.action_type} was ${event.status === "approved" ? "approved" : "resolved"} and left the inbox.`)
          return list.filter((item) => item.action_uuid !== event.id)
        })
      } else {
        getAction(session.token, event.id).then(
          (action) => {
            upsert(action)
            announce(`New approval request: ${action.action_type}.`)
          },
          () => undefined
        )
      }
    }
  })

  return (
    <main>
      <PageHeading>Pending approvals</PageHeading>
      {load.state === "loading" && <p role="status">Loading…</p>}
      {load.state === "failed" && (
        <p role="alert" class="error">
          {load.message}{" "}
          <button type="button" onClick={() => void reload()}>
            Retry
          </button>
        </p>
      )}
      {load.state === "ready" && items.length === 0 && reviews.length === 0 && <p class="empty">Nothing is waiting for a decision.</p>}
      <ul class="cards" aria-label="Pending approvals">
        {items.map((action) => (
          <li key={action.action_uuid}>
            <article class="card" aria-labelledby={`title-${action.action_uuid}`} data-action-uuid={action.action_uuid}>
              <h2 id={`title-${action.action_uuid}`}>
                <a href={`${BASE}/actions/${encodeURIComponent(action.action_uuid)}`} onClick={onLinkClick}>
                  {action.action_type}
                </a>
              </h2>
              <ActionFacts action={action} now={now} />
              <Decision action={action} onDecided={() => remove(action.action_uuid)} />
            </article>
          </li>
        ))}
      </ul>
      {reviews.length > 0 && (
        <section aria-labelledby="case-reviews-title" class="case-reviews">
          <h2 id="case-reviews-title">Case reviews</h2>
          <ul class="cards" aria-label="Case reviews">
            {reviews.map((item) => (
              <li key={item.notification_key}>
                <article class="card" aria-labelledby={`review-${item.id}`} data-case-id={item.id}>
                  <h3 id={`review-${item.id}`}>
                    <a href={item.href} onClick={onLinkClick}>
                      {item.title}
                    </a>
                  </h3>
                  <p>{item.description}</p>
                  {item.created_at !== null && (
                    <p class="empty">
                      <time dateTime={item.created_at}>{localTime(item.created_at)}</time>
                    </p>
                  )}
                </article>
              </li>
            ))}
          </ul>
        </section>
      )}
    </main>
  )
}
