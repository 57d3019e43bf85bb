/** The shell: sign-in gate, header (connection state, sign-out), the page for the route, one live socket while signed in. */
import { useCallback, useEffect, useMemo, useRef, useState } from "preact/hooks"
import { setUnauthorizedHandler } from "./api.ts"
import { AREA_NAV, AreaPage } from "./areas.tsx"
import { App, type AppContext, type ChannelListener, type LiveListener } from "./context.ts"
import { connectLive, type LiveConnection, type LiveState } from "./live.ts"
import { ActionPage } from "./pages/action.tsx"
import { ActionsPage } from "./pages/actions.tsx"
import { CasePage } from "./pages/case.tsx"
import { CasesPage } from "./pages/cases.tsx"
import { ChannelsPage } from "./pages/channels.tsx"
import { Inbox } from "./pages/inbox.tsx"
import { KeysPage } from "./pages/keys.tsx"
import { PoliciesPage } from "./pages/policies.tsx"
import { PolicyPage } from "./pages/policy.tsx"
import { SignIn } from "./pages/sign-in.tsx"
import { SsoCallback } from "./pages/sso-callback.tsx"
import { TeamPage } from "./pages/team.tsx"
import { WebhookPage, WebhooksPage } from "./pages/webhooks.tsx"
import { BASE, currentPath, navigate, onLinkClick, type Route, signInPath, useRoute } from "./router.ts"
import { clearSession, loadSession, type Session } from "./session.ts"

const on =
  (...pages: ReadonlyArray<Route["page"]>) =>
  (route: Route) =>
    pages.includes(route.page)

/** The main menu: part 1's pages, then the areas loaded on demand. */
const menu: ReadonlyArray<{ readonly label: string; readonly href: string; readonly current: (route: Route) => boolean }> = [
  { label: "Approvals", href: BASE, current: on("inbox") },
  { label: "Actions", href: `${BASE}/actions`, current: on("actions", "action") },
  { label: "Cases", href: `${BASE}/cases`, current: on("cases", "case") },
  ...AREA_NAV.map((area) => ({
    label: area.label,
    href: `${BASE}/${area.href}`,
    current: (route: Route) => route.page === "area" && area.segments.includes(route.path[0] ?? "")
  })),
  { label: "Policies", href: `${BASE}/policies`, current: on("policies", "policy") },
  { label: "Webhooks", href: `${BASE}/webhooks`, current: on("webhooks", "webhook") },
  { label: "Keys", href: `${BASE}/keys`, current: on("keys") },
  { label: "Team", href: `${BASE}/team`, current: on("team") },
  { label: "Channels", href: `${BASE}/channels`, current: on("channels") }
]

const liveText = (live: LiveState) =>
  live.state === "live" ? "Live" : live.state === "connecting" ? "Connecting…" : `Offline, retrying in ${live.retryInSeconds} s`

export const Root = () => {
  const route = useRoute()
  const [session, setSession] = useState<Session | undefined>(loadSession)
  const [notice, setNotice] = useState<string | undefined>()
  const [live, setLive] = useState<LiveState>({ state: "connecting" })
  const [announcement, setAnnouncement] = useState("")
  const listeners = useRef(new Set<LiveListener>())
  const connection = useRef<LiveConnection | undefined>(undefined)
  const channelListeners = useRef(new Map<string, Set<ChannelListener>>())

  const endSession = useCallback((message: string | undefined) => {
    clearSession()
    setSession(undefined)
    setNotice(message)
  }, [])

  /** To sign-in, then back here. The socket and a request may both see the 401: the first one keeps `next`. */
  const signInAgain = useCallback(
    (message: string) => {
      endSession(message)
      if (!location.pathname.startsWith(`${BASE}/sign-in`)) navigate(signInPath(currentPath()), true)
    },
    [endSession]
  )

  // A 401 anywhere: back to sign-in, then back to this page.
  useEffect(() => setUnauthorizedHandler(() => signInAgain("Your session has ended. Sign in again to continue.")), [signInAgain])

  useEffect(() => {
    if (session === undefined) return
    // The JWT's own expiry ends the session even in an idle tab.
    const expiry = setTimeout(() => signInAgain("Your session has expired. Sign in again to continue."), Math.max(0, Math.min(session.expiresAt - Date.now(), 2 ** 31 - 1)))
    const stop = connectLive(session.token, {
      onState: setLive,
      onEvent: (event) => {
        for (const listener of listeners.current) listener.onEvent?.(event)
      },
      onSubscribed: () => {
        for (const listener of listeners.current) listener.onSubscribed?.()
      },
      onUnauthorized: () => signInAgain("Your session has ended. Sign in again to continue."),
      onChannelEvent: (channel, data) => {
        for (const listener of channelListeners.current.get(channel) ?? []) listener.onEvent?.(data)
      },
      onChannelSubscribed: (channel) => {
        for (const listener of channelListeners.current.get(channel) ?? []) listener.onSubscribed?.()
      }
    })
    connection.current = stop
    for (const channel of channelListeners.current.keys()) stop.subscribe(channel)
    return () => {
      clearTimeout(expiry)
      connection.current = undefined
      stop()
    }
  }, [session, signInAgain])

  const listen = useCallback((listener: LiveListener) => {
    listeners.current.add(listener)
    return () => listeners.current.delete(listener)
  }, [])

  const announce = useCallback((message: string) => setAnnouncement(message), [])

  const watch = useCallback((channel: string, listener: ChannelListener) => {
    const map = channelListeners.current
    const set = map.get(channel) ?? new Set()
    if (set.size === 0) {
      map.set(channel, set)
      connection.current?.subscribe(channel)
    }
    set.add(listener)
    return () => {
      set.delete(listener)
      if (set.size === 0 && map.get(channel) === set) {
        map.delete(channel)
        connection.current?.unsubscribe(channel)
      }
    }
  }, [])

  // Signed out on a page that needs a session: to sign-in, remembering where the user was going.
  const mustSignIn = session === undefined && route.page !== "sign-in" && route.page !== "sso-callback"
  useEffect(() => {
    if (mustSignIn) navigate(signInPath(currentPath()), true)
  }, [mustSignIn])

  const context = useMemo<AppContext | undefined>(
    () => (session === undefined ? undefined : { session, live, listen, announce, watch }),
    [session, live, listen, announce, watch]
  )

  if (route.page === "sso-callback") {
    return (
      <SsoCallback
        code={route.code}
        error={route.error}
        onSignedIn={(signedIn) => {
          setNotice(undefined)
          setSession(signedIn)
        }}
      />
    )
  }

  if (route.page === "sign-in" || context === undefined) {
    return (
      <SignIn
        next={route.page === "sign-in" ? route.next : BASE}
        notice={notice}
        onSignedIn={(signedIn) => {
          setNotice(undefined)
          setSession(signedIn)
        }}
      />
    )
  }

  return (
    <App.Provider value={context}>
      <a class="skip" href="#content">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={BASE} onClick={onLinkClick}>
          Gateway dashboard
        </a>
        <nav aria-label="Main">
          {menu.map((item) => (
            <a key={item.href} href={item.href} onClick={onLinkClick} aria-current={item.current(route) ? "page" : undefined}>
              {item.label}
            </a>
          ))}
        </nav>
        <p class={`live live-${context.live.state}`} role="status" aria-label="Connection">
          {liveText(context.live)}
        </p>
        <p class="who">{context.session.email}</p>
        <button
          type="button"
          onClick={() => {
            endSession("You are signed out.")
            navigate(`${BASE}/sign-in`, true)
          }}
        >
          Sign out
        </button>
      </header>
      <div id="content">
        {route.page === "inbox" && <Inbox />}
        {route.page === "action" && <ActionPage key={route.actionUuid} actionUuid={route.actionUuid} />}
        {route.page === "actions" && <ActionsPage key={route.search} search={route.search} />}
        {route.page === "cases" && <CasesPage search={route.search} />}
        {route.page === "case" && <CasePage key={route.caseId} caseId={route.caseId} />}
        {route.page === "keys" && <KeysPage />}
        {route.page === "team" && <TeamPage />}
        {route.page === "channels" && <ChannelsPage />}
        {route.page === "policies" && <PoliciesPage search={route.search} />}
        {route.page === "policy" && <PolicyPage key={route.policyId} policyId={route.policyId} />}
        {route.page === "webhooks" && <WebhooksPage />}
        {route.page === "webhook" && <WebhookPage key={route.webhookId} webhookId={route.webhookId} search={route.search} />}
        {route.page === "area" && <AreaPage path={route.path} search={route.search} />}
        {route.page === "not-found" && (
          <main>
            <h1>Page not found</h1>
            <p>
              <a href={BASE} onClick={onLinkClick}>
                Go to pending approvals
              </a>
            </p>
          </main>
        )}
      </div>
      <p class="visually-hidden" aria-live="polite">
        {announcement}
      </p>
    </App.Provider>
  )
}
