/**
 * Where single sign-on lands: the identity provider's redirect carries a one-time code, spent here
 * for a JWT (POST /api/v1/auth/sso/exchange); the session is then kept like a password sign-in.
 */
import { useEffect, useState } from "preact/hooks"
import { exchangeSsoCode, whoami } from "../api.ts"
import { PageHeading } from "../components.tsx"
import { BASE, navigate } from "../router.ts"
import { type Session, saveSession } from "../session.ts"

const REASONS: Record<string, string> = {
  org_not_found: "No organization uses single sign-on under that name.",
  sso_not_configured: "Single sign-on is not set up for this organization.",
  sso_validation_failed: "The identity provider's answer could not be verified.",
  sso_failed: "Single sign-on did not complete."
}

export const SsoCallback = ({ code, error, onSignedIn }: { code: string | null; error: string | null; onSignedIn: (session: Session) => void }) => {
  const [failure, setFailure] = useState<string | undefined>(error === null ? (code === null ? "The sign-in link has no code." : undefined) : (REASONS[error] ?? REASONS.sso_failed))

  useEffect(() => {
    // The code is single use: it leaves the address bar (and the history) before it is spent.
    history.replaceState(null, "", `${BASE}/sso/callback`)
    if (code === null || error !== null) return
    let cancelled = false
    ;(async () => {
      try {
        const exchanged = await exchangeSsoCode(code)
        const user = await whoami(exchanged.token)
        const session: Session = {
          token: exchanged.token,
          email: user.email,
          orgUuid: exchanged.org_uuid,
          role: user.role,
          expiresAt: Date.now() + exchanged.expires_in * 1000
        }
        if (cancelled) return
        saveSession(session)
        onSignedIn(session)
        navigate(BASE, true)
      } catch {
        if (!cancelled) setFailure("This sign-in link was already used or has expired.")
      }
    })()
    return () => {
      cancelled = true
    }
  }, [])

  return (
    <main class="narrow">
      <PageHeading>Single sign-on</PageHeading>
      {failure === undefined ? (
        <p role="status">Signing you in…</p>
      ) : (
        <>
          <p role="alert" class="error">
            {failure}
          </p>
          <p>
            <a href={`${BASE}/sign-in`}>Sign in again</a>
          </p>
        </>
      )}
    </main>
  )
}
