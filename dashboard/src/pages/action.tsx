/** One action (the `review_url` of approval notifications): its facts, receipt, signed explanation, and the decision while it is pending. */
import { useCallback, useEffect, useState } from "preact/hooks"
import { ApiError, getAction } from "../api.ts"
import { ActionFacts, Decision, PageHeading } from "../components.tsx"
import { useApp, useLive, useNow } from "../context.ts"
import { localTime } from "../format.ts"
import { BASE, onLinkClick } from "../router.ts"
import type { ActionDetail } from "../types.ts"
import { CodeReviewPanel, isCodeReviewAction } from "./code-review-panel.tsx"
import { ExplanationPanel } from "./explanation-panel.tsx"
import { ReceiptPanel } from "./receipt-panel.tsx"

const HashText = ({ value }: { value: string | null }) => (value === null ? <span>not sent</span> : <code class="hash">{value}</code>)

const JsonText = ({ value }: { value: Readonly<Record<string, unknown>> | null }) =>
  value === null ? <span>not sent</span> : <pre class="payload">{JSON.stringify(value, null, 2)}</pre>

/** What the agent's SDK sent for an external replay tool, and the hash every receipt of the action commits to. */
const ReplayContextPanel = ({ action }: { action: ActionDetail }) => (
  <section aria-labelledby="replay-context">
    <h2 id="replay-context">Replay context</h2>
    <dl class="facts" aria-label="Replay context fields">
      <dt>System prompt hash</dt>
      <dd>
        <HashText value={action.system_prompt_hash} />
      </dd>
      <dt>Tool inputs hash</dt>
      <dd>
        <HashText value={action.tool_inputs_hash} />
      </dd>
      <dt>Model parameters</dt>
      <dd>
        <JsonText value={action.model_params} />
      </dd>
      <dt>Execution environment</dt>
      <dd>
        <JsonText value={action.execution_env} />
      </dd>
      <dt>Replay context hash</dt>
      <dd>
        <HashText value={action.replay_context_hash} />
      </dd>
    </dl>
  </section>
)

type Load =
  | { readonly state: "loading" }
  | { readonly state: "ready"; readonly action: ActionDetail }
  | { readonly state: "missing" }
  | { readonly state: "failed"; readonly message: string }

export const ActionPage = ({ actionUuid }: { actionUuid: string }) => {
  const { session } = useApp()
  const now = useNow()
  const [load, setLoad] = useState<Load>({ state: "loading" })

  const reload = useCallback(async () => {
    try {
      setLoad({ state: "ready", action: await getAction(session.token, actionUuid) })
    } catch (cause) {
      if (cause instanceof ApiError && cause.status === 404) setLoad({ state: "missing" })
      else if (!(cause instanceof ApiError && cause.status === 401)) setLoad({ state: "failed", message: cause instanceof Error ? cause.message : "Loading failed." })
    }
  }, [session.token, actionUuid])

  useEffect(() => {
    void reload()
  }, [reload])

  useLive({
    onSubscribed: () => void reload(),
    onEvent: (event) => {
      if (event.id === actionUuid) void reload()
    }
  })

  // A pending action came from the inbox; any other from the actions list.
  const pending = load.state === "ready" && load.action.status === "pending_approval"
  const back = (
    <p>
      <a href={pending ? BASE : `${BASE}/actions`} onClick={onLinkClick}>
        {pending ? "← Pending approvals" : "← All actions"}
      </a>
    </p>
  )
  if (load.state === "loading") return <main>{back}<p role="status">Loading…</p></main>
  if (load.state === "missing")
    return (
      <main>
        {back}
        <PageHeading>Action not found</PageHeading>
        <p>No action of your organization has this id.</p>
      </main>
    )
  if (load.state === "failed")
    return (
      <main>
        {back}
        <PageHeading>Action</PageHeading>
        <p role="alert" class="error">
          {load.message}
        </p>
      </main>
    )
  const { action } = load
  return (
    <main>
      {back}
      <PageHeading>
        <span id={`title-${action.action_uuid}`}>{action.action_type}</span>
      </PageHeading>
      <ActionFacts action={action} now={now} />
      {action.status === "pending_approval" && <Decision action={action} onDecided={() => void reload()} />}
      {action.approved_by !== null && (
        <p>
          Decided by {action.approved_by} at <time dateTime={action.approved_at ?? undefined}>{localTime(action.approved_at)}</time>.
        </p>
      )}
      {action.denial_reason !== null && <p>Reason: {action.denial_reason}</p>}
      {isCodeReviewAction(action.action_type) && <CodeReviewPanel key={`${action.action_uuid}-${action.status}`} token={session.token} actionUuid={action.action_uuid} />}
      {action.replay_context_hash !== null && <ReplayContextPanel action={action} />}
      {action.receipt !== null && <ReceiptPanel key={action.receipt.receipt_uuid} receiptUuid={action.receipt.receipt_uuid} verifyUrl={action.receipt.verify_url} />}
      <ExplanationPanel key={`${action.action_uuid}-${action.status}`} actionUuid={action.action_uuid} />
    </main>
  )
}
