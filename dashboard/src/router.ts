/** Client-side routes under /dashboard (the gateway answers index.html for all of them). */
import { useEffect, useState } from "preact/hooks"
import { AREAS } from "./areas.tsx"

export const BASE = "/dashboard"

export type Route =
  | { readonly page: "inbox" }
  | { readonly page: "action"; readonly actionUuid: string }
  | { readonly page: "sign-in"; readonly next: string }
  | { readonly page: "sso-callback"; readonly code: string | null; readonly error: string | null }
  | { readonly page: "not-found" }
  | { readonly page: "actions"; readonly search: string }
  | { readonly page: "cases"; readonly search: string }
  | { readonly page: "case"; readonly caseId: string }
  | { readonly page: "keys" }
  | { readonly page: "team" }
  | { readonly page: "channels" }
  | { readonly page: "policies"; readonly search: string }
  | { readonly page: "policy"; readonly policyId: string }
  | { readonly page: "webhooks" }
  | { readonly page: "webhook"; readonly webhookId: string; readonly search: string }
  /** An area loaded on demand (dashboard/src/areas.tsx): the path's segments after /dashboard/. */
  | { readonly page: "area"; readonly path: ReadonlyArray<string>; readonly search: string }

/** Only a path of this app may follow sign-in: never another origin (`//evil`) or another part of the site. */
export const safeNext = (next: string | null): string =>
  next !== null && (next === BASE || next.startsWith(`${BASE}/`)) && !next.startsWith(`${BASE}/sign-in`) && !/[\\\s]/.test(next) ? next : BASE

export const parseRoute = (location: { readonly pathname: string; readonly search: string }): Route => {
  const path = location.pathname.replace(/\/+$/, "")
  if (path === BASE || path === `${BASE}/approvals`) return { page: "inbox" }
  if (path === `${BASE}/sign-in`) return { page: "sign-in", next: safeNext(new URLSearchParams(location.search).get("next")) }
  if (path === `${BASE}/sso/callback`) {
    const query = new URLSearchParams(location.search)
    return { page: "sso-callback", code: query.get("code"), error: query.get("error") }
  }
  const action = /^\/dashboard\/actions\/([^/]+)$/.exec(path)
  if (action !== null) return { page: "action", actionUuid: decodeURIComponent(action[1]!) }
  if (path === `${BASE}/actions`) return { page: "actions", search: location.search }
  if (path === `${BASE}/cases`) return { page: "cases", search: location.search }
  const kase = /^\/dashboard\/cases\/([^/]+)$/.exec(path)
  if (kase !== null) return { page: "case", caseId: decodeURIComponent(kase[1]!) }
  if (path === `${BASE}/keys`) return { page: "keys" }
  if (path === `${BASE}/team`) return { page: "team" }
  if (path === `${BASE}/channels`) return { page: "channels" }
  if (path === `${BASE}/policies`) return { page: "policies", search: location.search }
  const policy = /^\/dashboard\/policies\/([^/]+)$/.exec(path)
  if (policy !== null) return { page: "policy", policyId: decodeURIComponent(policy[1]!) }
  if (path === `${BASE}/webhooks`) return { page: "webhooks" }
  const webhook = /^\/dashboard\/webhooks\/([^/]+)$/.exec(path)
  if (webhook !== null) return { page: "webhook", webhookId: decodeURIComponent(webhook[1]!), search: location.search }
  if (path.startsWith(`${BASE}/`)) {
    const segments = path.slice(BASE.length + 1).split("/")
    if (Object.hasOwn(AREAS, segments[0]!)) {
      try {
        return { page: "area", path: segments.map((segment) => decodeURIComponent(segment)), search: location.search }
      } catch {
        return { page: "not-found" }
      }
    }
  }
  return { page: "not-found" }
}

export const currentPath = () => location.pathname + location.search

export const navigate = (path: string, replace = false) => {
  if (replace) history.replaceState(null, "", path)
  else history.pushState(null, "", path)
  dispatchEvent(new PopStateEvent("popstate"))
}

export const signInPath = (next: string) => `${BASE}/sign-in?next=${encodeURIComponent(next)}`

export const useRoute = (): Route => {
  const [route, setRoute] = useState(() => parseRoute(location))
  useEffect(() => {
    const update = () => setRoute(parseRoute(location))
    addEventListener("popstate", update)
    return () => removeEventListener("popstate", update)
  }, [])
  return route
}

/** Same-app links navigate without a reload; modified clicks (new tab) keep the browser's behaviour. */
export const onLinkClick = (event: MouseEvent) => {
  const anchor = event.currentTarget as HTMLAnchorElement
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
  event.preventDefault()
  navigate(anchor.pathname + anchor.search)
}
