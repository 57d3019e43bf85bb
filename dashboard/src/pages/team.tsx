/** The team: members and their roles, invites (the code shown once) and the default approvers. */
import { useCallback, useEffect, useRef, useState } from "preact/hooks"
import { ApiError } from "../api.ts"
import { PageHeading } from "../components.tsx"
import { useApp } from "../context.ts"
import { localTime } from "../format.ts"
import { EMAIL_PATTERN, getDefaultApprovers, type Invite, invite, listMembers, type Member, setDefaultApprovers, setRole } from "../settings-api.ts"
import { refusalText } from "./keys.tsx"

type Load<T> = { readonly state: "loading" } | { readonly state: "ready"; readonly value: T } | { readonly state: "failed"; readonly message: string }

export const TeamPage = () => {
  const { session } = useApp()
  const [members, setMembers] = useState<Load<ReadonlyArray<Member>>>({ state: "loading" })
  const reload = useCallback(async () => {
    try {
      setMembers({ state: "ready", value: (await listMembers(session.token)).data })
    } catch (cause) {
      if (!(cause instanceof ApiError && cause.status === 401)) setMembers({ state: "failed", message: refusalText(cause, "You may not list the members") })
    }
  }, [session.token])
  useEffect(() => {
    void reload()
  }, [reload])

  return (
    <main>
      <PageHeading>Team</PageHeading>
      <section aria-labelledby="members-title" class="new-case">
        <h2 id="members-title">Members</h2>
        {members.state === "loading" && <p role="status">Loading…</p>}
        {members.state === "failed" && (
          <p role="alert" class="error">
            {members.message}
          </p>
        )}
        {members.state === "ready" && (
          <table class="case-table">
            <caption class="visually-hidden">Members</caption>
            <thead>
              <tr>
                <th scope="col">E-mail</th>
                <th scope="col">Name</th>
                <th scope="col">Role</th>
                <th scope="col">Joined</th>
              </tr>
            </thead>
            <tbody>
              {members.value.map((member) => (
                <MemberRow key={member.user_uuid} member={member} onChanged={() => void reload()} />
              ))}
            </tbody>
          </table>
        )}
      </section>
      <InviteForm />
      <DefaultApprovers />
    </main>
  )
}

const MemberRow = ({ member, onChanged }: { member: Member; onChanged: () => void }) => {
  const { session, announce } = useApp()
  const [error, setError] = useState<string | undefined>()
  const canChange = member.role !== "owner" && session.role !== "member"
  const change = async (role: "admin" | "member") => {
    setError(undefined)
    try {
      await setRole(session.token, member.user_uuid, role)
      announce(`${member.email} is now ${role}.`)
      onChanged()
    } catch (cause) {
      setError(refusalText(cause, "You may not change roles"))
      // The select shows the choice: reload so it shows the role the member still has.
      onChanged()
    }
  }
  const selectId = `role-${member.user_uuid}`
  return (
    <tr data-member={member.email}>
      <td data-label="E-mail" class="wrap">
        {member.email}
      </td>
      <td data-label="Name">{member.name ?? "—"}</td>
      <td data-label="Role">
        {canChange ? (
          <>
            <label for={selectId} class="visually-hidden">
              Role of {member.email}
            </label>
            <select
              id={selectId}
              value={member.role}
              aria-describedby={error === undefined ? undefined : `${selectId}-error`}
              onChange={(event) => void change(event.currentTarget.value === "admin" ? "admin" : "member")}
            >
              <option value="admin">admin</option>
              <option value="member">member</option>
            </select>
          </>
        ) : (
          member.role
        )}
        {error !== undefined && (
          <p id={`${selectId}-error`} role="alert" class="error">
            {error}
          </p>
        )}
      </td>
      <td data-label="Joined">
        <time dateTime={member.created_at}>{localTime(member.created_at)}</time>
      </td>
    </tr>
  )
}

const InviteForm = () => {
  const { session, announce } = useApp()
  const [email, setEmail] = useState("")
  const [role, setRoleChoice] = useState<"admin" | "member">("member")
  const [emailError, setEmailError] = useState<string | undefined>()
  const [error, setError] = useState<string | undefined>()
  const [busy, setBusy] = useState(false)
  const [sent, setSent] = useState<Invite | undefined>()
  const emailRef = useRef<HTMLInputElement>(null)
  const sentRef = useRef<HTMLElement>(null)
  useEffect(() => {
    if (sent !== undefined) sentRef.current?.focus()
  }, [sent])

  const submit = async (event: Event) => {
    event.preventDefault()
    const address = email.trim()
    if (!EMAIL_PATTERN.test(address)) {
      setEmailError("Enter an e-mail address.")
      emailRef.current?.focus()
      return
    }
    setEmailError(undefined)
    setError(undefined)
    setBusy(true)
    try {
      const result = await invite(session.token, address, role)
      setSent(result)
      setEmail("")
      announce(`Invite for ${result.email} created.`)
    } catch (cause) {
      setError(refusalText(cause, "Only an owner or admin can invite"))
    } finally {
      setBusy(false)
    }
  }

  return (
    <section aria-labelledby="invite-title" class="new-case">
      <h2 id="invite-title">Invite a member</h2>
      {sent !== undefined && (
        <section class="new-key" aria-labelledby="invite-done-title" tabIndex={-1} ref={sentRef}>
          <h3 id="invite-done-title">
            Invite for {sent.email} ({sent.role})
          </h3>
          <p>
            Send them this code; they register with it before {localTime(sent.expires_at)}. <strong>You will not see it again.</strong>
          </p>
          <p>
            <code class="wrap" data-invite-code>
              {sent.invite_code}
            </code>
          </p>
        </section>
      )}
      <form onSubmit={submit} noValidate>
        <div class="stack">
          <label for="invite-email">E-mail</label>
          <input
            id="invite-email"
            type="email"
            ref={emailRef}
            value={email}
            aria-invalid={emailError !== undefined}
            aria-describedby={emailError === undefined ? undefined : "invite-email-error"}
            onInput={(event) => setEmail(event.currentTarget.value)}
          />
          {emailError !== undefined && (
            <p id="invite-email-error" class="error">
              {emailError}
            </p>
          )}
        </div>
        <div class="stack">
          <label for="invite-role">Role</label>
          <select id="invite-role" class="short" value={role} onChange={(event) => setRoleChoice(event.currentTarget.value === "admin" ? "admin" : "member")}>
            <option value="member">member</option>
            <option value="admin">admin</option>
          </select>
        </div>
        {error !== undefined && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
        <div class="actions-row">
          <button type="submit" class="primary" disabled={busy}>
            Invite
          </button>
        </div>
      </form>
    </section>
  )
}

const DefaultApprovers = () => {
  const { session, announce } = useApp()
  const [emails, setEmails] = useState<ReadonlyArray<string> | undefined>()
  const [draft, setDraft] = useState("")
  const [draftError, setDraftError] = useState<string | undefined>()
  const [error, setError] = useState<string | undefined>()
  const [saved, setSaved] = useState("")
  const [busy, setBusy] = useState(false)
  const draftRef = useRef<HTMLInputElement>(null)
  useEffect(() => {
    getDefaultApprovers(session.token).then(
      (answer) => setEmails(answer.emails),
      (cause) => {
        if (!(cause instanceof ApiError && cause.status === 401)) setError(refusalText(cause, "You may not read the default approvers"))
      }
    )
  }, [session.token])

  const add = () => {
    const address = draft.trim()
    if (!EMAIL_PATTERN.test(address)) {
      setDraftError("Enter an e-mail address.")
      draftRef.current?.focus()
      return
    }
    setDraftError(undefined)
    setSaved("")
    setEmails((list) => (list?.includes(address) ? list : [...(list ?? []), address]))
    setDraft("")
    draftRef.current?.focus()
  }

  const save = async () => {
    if (emails === undefined) return
    setError(undefined)
    setBusy(true)
    try {
      const answer = await setDefaultApprovers(session.token, emails)
      setEmails(answer.emails)
      setSaved("Default approvers saved.")
      announce("Default approvers saved.")
    } catch (cause) {
      setError(refusalText(cause, "Only an owner or admin can set the default approvers"))
    } finally {
      setBusy(false)
    }
  }

  return (
    <section aria-labelledby="approvers-title" class="new-case">
      <h2 id="approvers-title">Default approvers</h2>
      <p class="hint">Who approves an action that names no approvers of its own; with none set, the admins and the owner do. Admins and the owner may always approve.</p>
      {emails === undefined && error === undefined && <p role="status">Loading…</p>}
      {emails !== undefined && (
        <>
          {emails.length === 0 ? (
            <p class="empty">No default approvers.</p>
          ) : (
            <ul class="email-list" aria-label="Default approvers">
              {emails.map((address) => (
                <li key={address}>
                  <span class="wrap">{address}</span>{" "}
                  <button
                    type="button"
                    aria-label={`Remove ${address}`}
                    onClick={() => {
                      setSaved("")
                      setEmails((list) => list?.filter((entry) => entry !== address))
                      draftRef.current?.focus()
                    }}
                  >
                    Remove
                  </button>
                </li>
              ))}
            </ul>
          )}
          <form
            onSubmit={(event) => {
              event.preventDefault()
              add()
            }}
            noValidate
          >
            <div class="stack">
              <label for="approver-email">Approver e-mail</label>
              <input
                id="approver-email"
                type="email"
                ref={draftRef}
                value={draft}
                aria-invalid={draftError !== undefined}
                aria-describedby={draftError === undefined ? undefined : "approver-email-error"}
                onInput={(event) => setDraft(event.currentTarget.value)}
              />
              {draftError !== undefined && (
                <p id="approver-email-error" class="error">
                  {draftError}
                </p>
              )}
            </div>
            <div class="actions-row">
              <button type="submit">Add approver</button>
              <button type="button" class="primary" disabled={busy} onClick={() => void save()}>
                Save approvers
              </button>
            </div>
          </form>
        </>
      )}
      {error !== undefined && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <p role="status">{saved}</p>
    </section>
  )
}
