/** An action's receipt verified in this browser, its download for an auditor, and the import box. */
import { useEffect, useState } from "preact/hooks"
import { ApiError, exportReceipt } from "../api.ts"
import { useApp } from "../context.ts"
import { type Check, checkReceipt, findKey, keyIdOf, loadReceiptFile, type Outcome, parseReceiptFile, type ReceiptFile, type Verdict } from "../receipt.ts"
import { saveJson } from "../save.ts"

const OUTCOME_TEXT: Record<Outcome, string> = { passed: "passed", failed: "failed", "not-applicable": "not applicable", "not-checked": "not checked" }

const VERDICT_TEXT: Record<Verdict["overall"], string> = {
  valid: "Valid: every check passed in this browser.",
  invalid: "Invalid: at least one check failed.",
  incomplete: "Signature and hash valid; the chain link could not be checked."
}

export const Checks = ({ verdict, label }: { verdict: Verdict; label: string }) => (
  <div class="checks">
    <p class={`verdict verdict-${verdict.overall}`} role="status" aria-label={`${label} verdict`}>
      {VERDICT_TEXT[verdict.overall]}
    </p>
    <ul aria-label={label}>
      {verdict.checks.map((check: Check) => (
        <li key={check.name} class={`check check-${check.outcome}`}>
          <span class="check-name">{check.name}</span>: <span class="check-outcome">{OUTCOME_TEXT[check.outcome]}</span>
          <span class="check-detail">{check.detail}</span>
        </li>
      ))}
    </ul>
  </div>
)

/** The gateway's export (a superset of the file the import box reads): it carries the previous link and the TSA certificate. */
const download = async (token: string, receiptUuid: string) => {
  const { request_id: _requestId, ...file } = await exportReceipt(token, receiptUuid)
  saveJson(file, `receipt-${receiptUuid}.json`)
}

type Load =
  | { readonly state: "loading" }
  | { readonly state: "ready"; readonly file: ReceiptFile; readonly verdict: Verdict }
  | { readonly state: "failed"; readonly message: string }

export const ReceiptPanel = ({ receiptUuid, verifyUrl }: { receiptUuid: string; verifyUrl: string }) => {
  const { session } = useApp()
  const [load, setLoad] = useState<Load>({ state: "loading" })
  const [downloadError, setDownloadError] = useState<string | undefined>(undefined)
  const onDownload = () => {
    setDownloadError(undefined)
    download(session.token, receiptUuid).catch((cause) => {
      if (!(cause instanceof ApiError && cause.status === 401)) setDownloadError(cause instanceof Error ? cause.message : "The receipt could not be downloaded.")
    })
  }
  useEffect(() => {
    let current = true
    loadReceiptFile(session.token, receiptUuid).then(
      ({ file, previousMissing }) => current && setLoad({ state: "ready", file, verdict: checkReceipt(file, previousMissing) }),
      (cause) => {
        if (current && !(cause instanceof ApiError && cause.status === 401))
          setLoad({ state: "failed", message: cause instanceof Error ? cause.message : "The receipt could not be loaded." })
      }
    )
    return () => {
      current = false
    }
  }, [session.token, receiptUuid])

  return (
    <section aria-labelledby="receipt">
      <h2 id="receipt">Receipt</h2>
      {load.state === "loading" && <p role="status">Verifying the receipt…</p>}
      {load.state === "failed" && (
        <p role="alert" class="error">
          {load.message}
        </p>
      )}
      {load.state === "ready" && (
        <>
          <Checks verdict={load.verdict} label="Receipt checks" />
          <dl class="facts">
            <dt>Receipt</dt>
            <dd>
              <code class="hash">{load.file.receipt_uuid}</code>
            </dd>
            <dt>Sequence</dt>
            <dd>{String(load.file.signed_payload.agent_sequence)}</dd>
            <dt>Payload hash</dt>
            <dd>
              <code class="hash">{load.file.payload_hash}</code>
            </dd>
            <dt>Signature</dt>
            <dd>
              <code class="hash">{load.file.signature}</code>
            </dd>
            <dt>Key id</dt>
            <dd>
              <code class="hash">{load.file.public_key_id}</code>
            </dd>
            <dt>Timestamp token</dt>
            <dd>{load.file.timestamp_token === null ? "none" : `${load.file.timestamp_token.length} base64 characters`}</dd>
            <dt>Public verification</dt>
            <dd class="wrap">
              <a href={verifyUrl}>{verifyUrl}</a>
            </dd>
          </dl>
          <details>
            <summary>Signed payload</summary>
            <pre class="payload">{JSON.stringify(load.file.signed_payload, null, 2)}</pre>
          </details>
          <p>
            <button type="button" class="primary" onClick={onDownload}>
              Download receipt
            </button>
          </p>
          {downloadError !== undefined && (
            <p role="alert" class="error">
              {downloadError}
            </p>
          )}
        </>
      )}
      <ImportReceipt />
    </section>
  )
}

type Imported =
  | { readonly state: "idle" }
  | { readonly state: "checked"; readonly verdict: Verdict; readonly keyNote: string; readonly keyKnown: boolean }
  | { readonly state: "error"; readonly message: string }

/** Verifies a pasted receipt file; says whether its key is one this gateway publishes. */
export const ImportReceipt = () => {
  const [text, setText] = useState("")
  const [result, setResult] = useState<Imported>({ state: "idle" })
  const [busy, setBusy] = useState(false)
  const verify = async (event: Event) => {
    event.preventDefault()
    let file: ReceiptFile
    try {
      file = parseReceiptFile(text)
    } catch (cause) {
      setResult({ state: "error", message: cause instanceof Error ? cause.message : "This is not a receipt file." })
      return
    }
    setBusy(true)
    const verdict = checkReceipt(file, "the file holds no previous receipt")
    // The pasted key proves nothing by itself: compare it with the gateway's published one.
    const keyId = file.public_key === null ? undefined : keyIdOf(file.public_key)
    let keyNote = "The file's public key is not a valid Ed25519 key."
    let keyKnown = false
    if (keyId !== undefined) {
      const published = await findKey(keyId).catch(() => undefined)
      keyKnown = published != null && published.x === file.public_key?.x
      keyNote =
        published === undefined
          ? `The gateway's keys could not be read; key ${keyId} was not compared.`
          : keyKnown
            ? `Key ${keyId} is published by this gateway.`
            : `Key ${keyId} is not published by this gateway: trust it only if you know where it came from.`
    }
    setBusy(false)
    setResult({ state: "checked", verdict, keyNote, keyKnown })
  }
  return (
    <form class="import" onSubmit={verify} aria-labelledby="import-receipt">
      <h3 id="import-receipt">Import receipt</h3>
      <label for="receipt-json">Receipt JSON (as downloaded)</label>
      <textarea id="receipt-json" rows={6} spellcheck={false} value={text} onInput={(event) => setText(event.currentTarget.value)} />
      <button type="submit" disabled={busy || text.trim() === ""}>
        Verify
      </button>
      {result.state === "error" && (
        <p role="alert" class="error">
          {result.message}
        </p>
      )}
      {result.state === "checked" && (
        <>
          <Checks verdict={result.verdict} label="Imported receipt checks" />
          <p class={result.keyKnown ? "key-note" : "key-note key-unknown"}>{result.keyNote}</p>
        </>
      )}
    </form>
  )
}
