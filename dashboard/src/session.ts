/**
 * The signed-in user: the JWT from POST /api/v1/auth/login, kept in this tab's sessionStorage so a
 * reload keeps the user signed in, gone when the tab closes, never shared with other tabs and never
 * in localStorage (docs/decisions.md "Dashboard").
 */
import type { LoginResponse } from "./types.ts"

export interface Session {
  readonly token: string
  readonly email: string
  readonly orgUuid: string
  readonly role: LoginResponse["role"]
  /** Epoch milliseconds. */
  readonly expiresAt: number
}

const KEY = "gateway.dashboard.session"

export const sessionFrom = (email: string, login: LoginResponse): Session => ({
  token: login.token,
  email,
  orgUuid: login.org_uuid,
  role: login.role,
  expiresAt: Date.now() + login.expires_in * 1000
})

export const loadSession = (): Session | undefined => {
  try {
    const raw = sessionStorage.getItem(KEY)
    if (raw === null) return undefined
    const session = JSON.parse(raw) as Session
    if (typeof session.token !== "string" || !(session.expiresAt > Date.now())) {
      sessionStorage.removeItem(KEY)
      return undefined
    }
    return session
  } catch {
    return undefined
  }
}

export const saveSession = (session: Session) => sessionStorage.setItem(KEY, JSON.stringify(session))

export const clearSession = () => sessionStorage.removeItem(KEY)
