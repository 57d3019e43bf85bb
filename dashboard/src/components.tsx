/** Pieces shared by the inbox and the action page. */
import { useEffect, useRef, useState } from "preact/hooks"
import { ApiError, approve, deny, reviewAction } from "./api.ts"
import { useApp } from "./context.ts"
import { localTime, statusLabel, timeLeft } from "./format.ts"
import { onLinkClick } from "./router.ts"
import type { ActionDetail, ApprovalResult } from "./types.ts"

/** A page's h1, focused when the page opens so keyboard and screen-reader users start there. */
export const PageHeading = ({ children }: { children: preact.ComponentChildren }) => {
  const ref = useRef<HTMLHeadingElement>(null)
  useEffect(() => ref.current?.focus(), [])
  return (
    <h1 ref={ref} tabIndex={-1}>
      {children}
    </h1>
  )
}

/** The details the agent chose to store, read through the approvers-only review route. */
const StoredDetails = ({ actionUuid }: { actionUuid: string }) => {
  const { session } = useApp()
  const [text, setText] = useState<string | null | undefined>(undefined)
  const [problem, setProblem] = useState<string | undefined>()
  useEffect(() => {
    let current = true
    reviewAction(session.token, actionUuid).then(
      (review) => current && setText(review.details),
      (error: unknown) =>
        current && setProblem(error instanceof ApiError && error.status === 403 ? "stored encrypted; only this action's approvers read them" : "stored encrypted; could not be loaded")
    )
    return () => {
      current = false
    }
  }, [session.token, actionUuid])
  if (problem !== undefined) return <span>{problem}</span>
  if (text === undefined) return <span>loading…</span>
  return text === null ? <span>not stored (only the hash)</span> : <span class="pre">{text}</span>
}

const Hash = ({ value }: { value: string | null }) => (value === null ? <span>none</span> : <code class="hash">{value}</code>)

export const ActionFacts = ({ action, now }: { action: ActionDetail; now: number }) => (
  <dl class="facts">
    <dt>Action type</dt>
    <dd>{action.action_type}</dd>
    <dt>Agent</dt>
    <dd>{action.agent_id ?? "unknown"}</dd>
    <dt>Status</dt>
    <dd>
      <span class={`status status-${action.status}`}>{statusLabel(action.status)}</span>
    </dd>
    <dt>Requested</dt>
    <dd>
      <time dateTime={action.created_at}>{localTime(action.created_at)}</time>
    </dd>
    {action.status === "pending_approval" && (
      <>
        <dt>Time left</dt>
        <dd>
          <time dateTime={action.approval_expires_at ?? undefined}>{timeLeft(action.approval_expires_at, now)}</time>
        </dd>
      </>
    )}
    <dt>Details hash</dt>
    <dd>
      <Hash value={action.action_details_hash} />
    </dd>
    <dt>Instruction hash</dt>
    <dd>
      <Hash value={action.instruction_hash} />
    </dd>
    <dt>Details</dt>
    <dd>{action.details_storage_key === null ? "not stored (only the hash)" : <StoredDetails actionUuid={action.action_uuid} />}</dd>
    {action.policy_uuid !== null && (
      <>
        <dt>Policy</dt>
        <dd>
          <a href={`/dashboard/policies/${encodeURIComponent(action.policy_uuid)}`} onClick={onLinkClick}>
            {action.policy_uuid}
          </a>
        </dd>
      </>
    )}
    {action.model_id !== null && (
      <>
        <dt>Model</dt>
        <dd>{[action.model_id, action.model_version].filter(Boolean).join(" ")}</dd>
      </>
    )}
    {action.endpoint_url !== null && (
      <>
        <dt>Endpoint</dt>
        <dd class="wrap">{action.endpoint_url}</dd>
      </>
    )}
    <dt>Action id</dt>
    <dd>
      <code class="hash">{action.action_uuid}</code>
    </dd>
  </dl>
)

const refusal = (error: unknown): string => {
  if (!(error instanceof ApiError)) return "Something went wrong; try again."
  if (error.status === 403) return "You are not an approver of this action."
  if (error.status === 409 || error.status === 410) return "This action was already decided or has expired."
  return error.message
}

/** Approve, or deny with an optional reason. `onDecided` gets the result (or undefined when it was decided elsewhere). */
export const Decision = ({ action, onDecided }: { action: ActionDetail; onDecided: (result: ApprovalResult | undefined) => void }) => {
  const { session, announce } = useApp()
  const [reason, setReason] = useState("")
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | undefined>()
  const uuid = action.action_uuid
  const decide = async (decision: "approve" | "deny") => {
    setBusy(true)
    setError(undefined)
    try {
      const result = decision === "approve" ? await approve(session.token, uuid) : await deny(session.token, uuid, reason.trim())
      announce(`${action.action_type} ${decision === "approve" ? "approved" : "denied"}.`)
      onDecided(result)
    } catch (cause) {
      setError(refusal(cause))
      if (cause instanceof ApiError && cause.status === 409) onDecided(undefined)
    } finally {
      setBusy(false)
    }
  }
  return (
    <div class="decision">
      <div class="decision-approve">
        <button type="button" class="approve" disabled={busy} aria-describedby={`title-${uuid}`} onClick={() => decide("approve")}>
          Approve
        </button>
      </div>
      <div class="decision-deny">
        <label for={`reason-${uuid}`}>Reason for denying (optional)</label>
        <textarea id={`reason-${uuid}`} maxLength={2000} value={reason} onInput={(event) => setReason(event.currentTarget.value)} />
        <button type="button" class="deny" disabled={busy} aria-describedby={`title-${uuid}`} onClick={() => decide("deny")}>
          Deny
        </button>
      </div>
      {error !== undefined && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
    </div>
  )
}
