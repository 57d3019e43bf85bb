import { useState } from "preact/hooks"
import { ApiError, login } from "../api.ts"
import { PageHeading } from "../components.tsx"
import { navigate } from "../router.ts"
import { type Session, saveSession, sessionFrom } from "../session.ts"

export const SignIn = ({ next, notice, onSignedIn }: { next: string; notice: string | undefined; onSignedIn: (session: Session) => void }) => {
  const [email, setEmail] = useState("")
  const [password, setPassword] = useState("")
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | undefined>()

  const submit = async (event: SubmitEvent) => {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    try {
      const session = sessionFrom(email.trim(), await login(email.trim(), password))
      saveSession(session)
      onSignedIn(session)
      navigate(next, true)
    } catch (cause) {
      setError(cause instanceof ApiError && cause.status === 401 ? "Wrong e-mail or password." : cause instanceof Error ? cause.message : "Sign-in failed.")
      setBusy(false)
    }
  }

  return (
    <main class="narrow">
      <PageHeading>Sign in</PageHeading>
      {notice !== undefined && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <form onSubmit={submit} class="stack">
        <label for="email">E-mail</label>
        <input id="email" type="email" autoComplete="username" required value={email} onInput={(event) => setEmail(event.currentTarget.value)} />
        <label for="password">Password</label>
        <input
          id="password"
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onInput={(event) => setPassword(event.currentTarget.value)}
        />
        <button type="submit" class="primary" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
        {error !== undefined && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
      </form>
    </main>
  )
}
