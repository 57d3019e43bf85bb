/** One policy: its settings, activate / deactivate / delete, a small edit form and a dry-run box. */
import { useCallback, useEffect, useRef, useState } from "preact/hooks"
import { ApiError } from "../api.ts"
import { PageHeading } from "../components.tsx"
import { ConfirmButton } from "../confirm.tsx"
import { useApp } from "../context.ts"
import { localTime } from "../format.ts"
import {
  DECISIONS,
  type DryRunResult,
  deletePolicy,
  dryRunPolicy,
  getPolicy,
  type Policy,
  refusalText,
  setPolicyActive,
  showConditionValue,
  updatePolicy
} from "../policies-api.ts"
import { BASE, navigate, onLinkClick } from "../router.ts"

type Load = { readonly state: "loading" } | { readonly state: "ready"; readonly policy: Policy } | { readonly state: "missing" } | { readonly state: "failed"; readonly message: string }

const BackLink = () => (
  <p>
    <a href={`${BASE}/policies`} onClick={onLinkClick}>
      All policies
    </a>
  </p>
)

const conditionsOf = (policy: Policy): ReadonlyArray<{ field: string; op: string; value: unknown }> =>
  Array.isArray(policy.conditions) ? (policy.conditions as ReadonlyArray<{ field: string; op: string; value: unknown }>) : []

export const PolicyPage = ({ policyId }: { policyId: string }) => {
  const { session, announce } = useApp()
  const [load, setLoad] = useState<Load>({ state: "loading" })
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | undefined>()

  const reload = useCallback(async () => {
    try {
      setLoad({ state: "ready", policy: await getPolicy(session.token, policyId) })
    } catch (cause) {
      if (cause instanceof ApiError && cause.status === 404) setLoad({ state: "missing" })
      else if (!(cause instanceof ApiError && cause.status === 401)) setLoad({ state: "failed", message: refusalText(cause, "policies") })
    }
  }, [session.token, policyId])

  useEffect(() => {
    void reload()
  }, [reload])

  const change = async (work: () => Promise<unknown>, done: string, then: () => Promise<void> | void = reload) => {
    setBusy(true)
    setError(undefined)
    try {
      await work()
      announce(done)
      await then()
    } catch (cause) {
      if (!(cause instanceof ApiError && cause.status === 401)) setError(refusalText(cause, "policies"))
    } finally {
      setBusy(false)
    }
  }

  if (load.state === "loading")
    return (
      <main>
        <p role="status">Loading…</p>
      </main>
    )
  if (load.state === "missing" || load.state === "failed")
    return (
      <main>
        <PageHeading>{load.state === "missing" ? "Policy not found" : "The policy could not be loaded"}</PageHeading>
        {load.state === "failed" && (
          <p role="alert" class="error">
            {load.message}
          </p>
        )}
        <BackLink />
      </main>
    )

  const { policy } = load
  const conditions = conditionsOf(policy)
  return (
    <main>
      <BackLink />
      <PageHeading>{policy.name}</PageHeading>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <span class={`status policy-${policy.status}`} data-policy-status={policy.status}>
            {policy.status}
          </span>
        </dd>
        <dt>Mode</dt>
        <dd>{policy.mode}</dd>
        <dt>Decision</dt>
        <dd>{policy.decision}</dd>
        <dt>Priority</dt>
        <dd>{policy.priority}</dd>
        {conditions.length > 0 && (
          <>
            <dt>Conditions</dt>
            <dd>
              <ul class="plain">
                {conditions.map((condition, index) => (
                  <li key={`${index}:${condition.field}`}>
                    <code class="wrap">
                      {condition.field} {condition.op} {showConditionValue(condition.value)}
                    </code>
                  </li>
                ))}
              </ul>
            </dd>
          </>
        )}
        {policy.ai_prompt !== null && (
          <>
            <dt>Policy text</dt>
            <dd class="pre">{policy.ai_prompt}</dd>
          </>
        )}
        {policy.ai_models !== null && policy.ai_models.length > 0 && (
          <>
            <dt>Models</dt>
            <dd class="wrap">{policy.ai_models.join(", ")}</dd>
          </>
        )}
        <dt>Evaluations</dt>
        <dd>{policy.evaluation_count}</dd>
        <dt>Created</dt>
        <dd>
          <time dateTime={policy.created_at}>{localTime(policy.created_at)}</time>
        </dd>
      </dl>
      <div class="actions-row">
        {policy.active ? (
          <button type="button" disabled={busy} onClick={() => change(() => setPolicyActive(session.token, policy.id, false), "Policy deactivated.")}>
            Deactivate
          </button>
        ) : (
          <button type="button" class="primary" disabled={busy} onClick={() => change(() => setPolicyActive(session.token, policy.id, true), "Policy activated.")}>
            Activate
          </button>
        )}
        <ConfirmButton
          label="Delete"
          question={`Delete the policy ${policy.name}?`}
          busy={busy}
          onConfirm={() =>
            change(
              () => deletePolicy(session.token, policy.id),
              "Policy deleted.",
              () => navigate(`${BASE}/policies`, true)
            )
          }
        />
      </div>
      {error !== undefined && (
        <p role="alert" class="error" id="policy-state-error">
          {error}
        </p>
      )}
      <EditPolicy key={policy.updated_at} policy={policy} onSaved={reload} />
      <DryRunBox policyId={policy.id} />
    </main>
  )
}

const EditPolicy = ({ policy, onSaved }: { policy: Policy; onSaved: () => Promise<void> }) => {
  const { session, announce } = useApp()
  const [name, setName] = useState(policy.name)
  const [priority, setPriority] = useState(String(policy.priority))
  const [decision, setDecision] = useState(policy.decision)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | undefined>()
  const errorRef = useRef<HTMLParagraphElement>(null)
  useEffect(() => {
    if (error !== undefined) errorRef.current?.focus()
  }, [error])

  const submit = async (event: Event) => {
    event.preventDefault()
    const rank = Number(priority)
    if (name.trim() === "") return setError("Give the policy a name.")
    if (priority.trim() === "" || !Number.isInteger(rank)) return setError("Priority is a whole number (higher runs first).")
    setBusy(true)
    setError(undefined)
    try {
      await updatePolicy(session.token, policy.id, { name: name.trim(), priority: rank, decision })
      announce("Policy saved.")
      await onSaved()
    } catch (cause) {
      if (!(cause instanceof ApiError && cause.status === 401)) setError(refusalText(cause, "policies"))
    } finally {
      setBusy(false)
    }
  }

  return (
    <section aria-labelledby="edit-policy-title" class="new-case">
      <h2 id="edit-policy-title">Edit</h2>
      <form onSubmit={submit} noValidate class="filters">
        <div>
          <label for="edit-name">Name</label>
          <input id="edit-name" maxLength={200} value={name} aria-invalid={error !== undefined} aria-describedby={error === undefined ? undefined : "edit-policy-error"} onInput={(event) => setName(event.currentTarget.value)} />
        </div>
        <div>
          <label for="edit-priority">Priority</label>
          <input id="edit-priority" type="number" step="1" value={priority} onInput={(event) => setPriority(event.currentTarget.value)} />
        </div>
        <div>
          <label for="edit-decision">Decision</label>
          <select id="edit-decision" value={decision} onChange={(event) => setDecision(event.currentTarget.value)}>
            {DECISIONS.map((value) => (
              <option key={value} value={value}>
                {value}
              </option>
            ))}
          </select>
        </div>
        <button type="submit" disabled={busy}>
          Save
        </button>
      </form>
      {error !== undefined && (
        <p role="alert" class="error" id="edit-policy-error" tabIndex={-1} ref={errorRef}>
          {error}
        </p>
      )}
    </section>
  )
}

const DryRunBox = ({ policyId }: { policyId: string }) => {
  const { session } = useApp()
  const [actionType, setActionType] = useState("")
  const [details, setDetails] = useState("")
  const [agentId, setAgentId] = useState("")
  const [modelId, setModelId] = useState("")
  const [busy, setBusy] = useState(false)
  const [result, setResult] = useState<DryRunResult | undefined>()
  const [error, setError] = useState<string | undefined>()

  const submit = async (event: Event) => {
    event.preventDefault()
    if (actionType.trim() === "") return setError("Enter an action type.")
    setBusy(true)
    setError(undefined)
    setResult(undefined)
    try {
      setResult(
        await dryRunPolicy(session.token, policyId, {
          action_type: actionType.trim(),
          details,
          ...(agentId.trim() === "" ? {} : { agent_id: agentId.trim() }),
          ...(modelId.trim() === "" ? {} : { model_id: modelId.trim() })
        })
      )
    } catch (cause) {
      if (!(cause instanceof ApiError && cause.status === 401)) setError(refusalText(cause, "policies"))
    } finally {
      setBusy(false)
    }
  }

  return (
    <section aria-labelledby="dry-run-title" class="new-case">
      <h2 id="dry-run-title">Dry run</h2>
      <p class="hint">Evaluates this policy alone against a sample action. Nothing is stored.</p>
      <form onSubmit={submit} noValidate>
        <div class="filters">
          <div>
            <label for="dry-action-type">Action type</label>
            <input
              id="dry-action-type"
              maxLength={200}
              value={actionType}
              aria-invalid={error !== undefined}
              aria-describedby={error === undefined ? undefined : "dry-run-error"}
              onInput={(event) => setActionType(event.currentTarget.value)}
            />
          </div>
          <div>
            <label for="dry-agent">Agent id (optional)</label>
            <input id="dry-agent" maxLength={200} value={agentId} onInput={(event) => setAgentId(event.currentTarget.value)} />
          </div>
          <div>
            <label for="dry-model">Model id (optional)</label>
            <input id="dry-model" maxLength={200} value={modelId} onInput={(event) => setModelId(event.currentTarget.value)} />
          </div>
        </div>
        <div class="stack">
          <label for="dry-details">Details</label>
          <textarea id="dry-details" maxLength={100_000} value={details} onInput={(event) => setDetails(event.currentTarget.value)} />
        </div>
        <div class="actions-row">
          <button type="submit" class="primary" disabled={busy}>
            Run dry run
          </button>
        </div>
      </form>
      {error !== undefined && (
        <p role="alert" class="error" id="dry-run-error">
          {error}
        </p>
      )}
      <div aria-live="polite">
        {result !== undefined && (
          <dl class="facts dry-run-result">
            <dt>Decision</dt>
            <dd>
              <strong class={`verdict dry-${result.decision}`} data-decision={result.decision}>
                {result.decision}
              </strong>
            </dd>
            <dt>Reasoning</dt>
            <dd class="pre">{result.reasoning}</dd>
            <dt>Confidence</dt>
            <dd>{Math.round(result.confidence * 100)} %</dd>
            {result.model_votes != null && result.model_votes.length > 0 && (
              <>
                <dt>Model votes</dt>
                <dd>
                  <ul class="plain">
                    {result.model_votes.map((vote) => (
                      <li key={vote.model}>
                        <code class="wrap">{vote.model}</code>: {vote.decision} ({Math.round(vote.confidence * 100)} %)
                      </li>
                    ))}
                  </ul>
                </dd>
              </>
            )}
          </dl>
        )}
      </div>
    </section>
  )
}
