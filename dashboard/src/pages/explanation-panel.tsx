/**
 * An action's signed explanation (which policies decided what, who approved, the regulation it
 * answers), its envelope checked in this browser with the published keys, and its downloads: the
 * signed JSON for a regulator and the PDF to file.
 */
import { useEffect, useState } from "preact/hooks"
import { type ExplanationVerification, verifyExplanation } from "../../../protocol/verifier/index.ts"
import { ApiError, downloadBytes, explanationPdfPath, getExplanation, getJwks } from "../api.ts"
import { useApp } from "../context.ts"
import { localTime } from "../format.ts"
import { saveBlob, saveJson } from "../save.ts"
import type { Explanation } from "../types.ts"

type Load =
  | { readonly state: "loading" }
  | { readonly state: "ready"; readonly explanation: Explanation; readonly verification: ExplanationVerification }
  | { readonly state: "failed"; readonly message: string }

const message = (cause: unknown, fallback: string) => (cause instanceof Error ? cause.message : fallback)

const Verdict = ({ verification }: { verification: ExplanationVerification }) => (
  <p class={`verdict verdict-${verification.valid ? "valid" : "invalid"}`} role="status" aria-label="Explanation verdict">
    {verification.valid
      ? `Valid: the envelope's hash and signature check out in this browser with key ${verification.signing_key_id}.`
      : `Invalid: ${Object.entries(verification.checks)
          .filter(([, outcome]) => outcome !== true)
          .map(([name, outcome]) => `${name} (${outcome})`)
          .join(", ")}.`}
  </p>
)

const PolicyChain = ({ explanation }: { explanation: Explanation }) => (
  <table class="case-table" aria-label="Policy decisions">
    <thead>
      <tr>
        <th scope="col">#</th>
        <th scope="col">Policy</th>
        <th scope="col">Mode</th>
        <th scope="col">Decision</th>
        <th scope="col">Confidence</th>
        <th scope="col">Reasoning</th>
        <th scope="col">Evidence</th>
      </tr>
    </thead>
    <tbody>
      {explanation.policy_chain.map((entry) => (
        <tr key={entry.order}>
          <td>{entry.order}</td>
          <td>{entry.policy_name ?? "—"}</td>
          <td>{entry.mode ?? "—"}</td>
          <td>{entry.decision}</td>
          <td>{entry.confidence ?? "—"}</td>
          <td>
            {entry.reasoning ?? "—"}
            {entry.model_votes !== null && (
              <span class="models">{entry.model_votes.map((vote) => `${vote.model}: ${vote.decision}`).join(", ")}</span>
            )}
          </td>
          <td>{entry.evidence_quality}</td>
        </tr>
      ))}
    </tbody>
  </table>
)

const ApprovalChain = ({ explanation }: { explanation: Explanation }) =>
  explanation.approval_chain.length === 0 ? (
    <p>No human approval, denial or cosignature was recorded.</p>
  ) : (
    <ul aria-label="Human oversight">
      {explanation.approval_chain.map((entry) => (
        <li key={`${entry.kind}-${entry.at}-${entry.email ?? ""}`}>
          {entry.kind} by {entry.email ?? "nobody (expired)"} via {entry.channel} at <time dateTime={entry.at}>{localTime(entry.at)}</time>
          {entry.reason !== null && <> — {entry.reason}</>}
        </li>
      ))}
    </ul>
  )

export const ExplanationPanel = ({ actionUuid }: { actionUuid: string }) => {
  const { session } = useApp()
  const [load, setLoad] = useState<Load>({ state: "loading" })
  const [downloadError, setDownloadError] = useState<string | undefined>()

  useEffect(() => {
    let current = true
    Promise.all([getExplanation(session.token, actionUuid), getJwks()]).then(
      ([explanation, jwks]) => current && setLoad({ state: "ready", explanation, verification: verifyExplanation(explanation, jwks.keys) }),
      (cause) => {
        if (current && !(cause instanceof ApiError && cause.status === 401)) setLoad({ state: "failed", message: message(cause, "The explanation could not be loaded.") })
      }
    )
    return () => {
      current = false
    }
  }, [session.token, actionUuid])

  const downloadPdf = async () => {
    setDownloadError(undefined)
    try {
      saveBlob(await downloadBytes(session.token, explanationPdfPath(actionUuid)), `explanation-${actionUuid}.pdf`)
    } catch (cause) {
      if (!(cause instanceof ApiError && cause.status === 401)) setDownloadError(message(cause, "The PDF could not be downloaded."))
    }
  }

  return (
    <section class="explanation" aria-labelledby="explanation">
      <h2 id="explanation">Explanation</h2>
      {load.state === "loading" && <p role="status">Loading the explanation…</p>}
      {load.state === "failed" && (
        <p role="alert" class="error">
          {load.message}
        </p>
      )}
      {load.state === "ready" && (
        <>
          <Verdict verification={load.verification} />
          <h3>Policy decisions</h3>
          <PolicyChain explanation={load.explanation} />
          <h3>Human oversight</h3>
          <ApprovalChain explanation={load.explanation} />
          <dl class="facts">
            <dt>Regulation</dt>
            <dd>
              {load.explanation.regulation.instrument}, Articles {load.explanation.regulation.articles.join(", ")}
            </dd>
            <dt>Content hash</dt>
            <dd>
              <code class="hash">{load.explanation._envelope.content_hash}</code>
            </dd>
          </dl>
          <p>
            <button type="button" onClick={() => void downloadPdf()}>
              Download explanation (PDF)
            </button>{" "}
            <button type="button" onClick={() => saveJson(load.explanation, `explanation-${actionUuid}.json`)}>
              Download signed explanation (JSON)
            </button>
          </p>
          {downloadError !== undefined && (
            <p role="alert" class="error">
              {downloadError}
            </p>
          )}
        </>
      )}
    </section>
  )
}
