/**
 * The sanitize playground. Text: the chosen policy pack and mode (in the URL) sent to the dry run
 * (`/api/v1/sanitize/test`, nothing recorded) or, when asked, the recorded run (`/api/v1/sanitize`,
 * audit log and signed receipt); the findings per type in a legend, the text with each finding
 * marked (`<mark>` with a class per type and its type in words), and the sanitized output.
 * The API answers findings without positions, so the page locates them with a tokenizing dry run
 * of the same text: its `<TYPE_NNN>` tokens stand exactly where the findings were, and their
 * originals are in `token_mapping`. Findings of severity info are never replaced, so they are
 * listed but not marked. File: uploaded to `/api/v1/sanitize/file` (its size checked first against
 * the 50 MB limit), the cleaned file fetched once with its one-time token, images shown before and
 * after (drawn on a canvas from the bytes: the CSP lets no blob: image in), and a download.
 */
import type { ComponentChildren } from "preact"
import { useEffect, useRef, useState } from "preact/hooks"
import { PageHeading } from "../../components.tsx"
import { useApp } from "../../context.ts"
import { ErrorLine, queryOf, setQuery, useSubmit } from "../../kit.tsx"
import { saveBlob } from "../../save.ts"
import {
  downloadSanitized, 
  MAX_SANITIZE_CHARS,
  MAX_UPLOAD_BYTES,
  SANITIZE_MODES,
  SANITIZE_POLICIES,
  type SanitizedFile,
  type SanitizeFinding,
  type SanitizeMode,
  type SanitizePolicy,
  type SanitizeResult,
  sanitizeFile,
  sanitizeText,
  UPLOAD_OVERHEAD_BYTES
} from "./api.ts"

const POLICY_LABELS: Readonly<Record<SanitizePolicy, string>> = {
  default: "Default (personal data, credentials, prompt injection)",
  hipaa: "HIPAA (default + health data)",
  pci: "PCI (personal data, credentials)",
  legal: "Legal (personal data, credentials)"
}

const MODE_LABELS: Readonly<Record<SanitizeMode, string>> = {
  redact: "Redact (replace with a marker)",
  tokenize: "Tokenize (reversible tokens)",
  block: "Block (refuse when anything is found)",
  flag: "Flag (report only)"
}

const MB = 1024 * 1024
const FILE_LIMIT = MAX_UPLOAD_BYTES - UPLOAD_OVERHEAD_BYTES

const TOKEN = /<([A-Z][A-Z0-9_]{0,63})_\d{3,9}>/g
const MARKER = /\[REDACTED_([A-Z0-9_]+)\]/g

/** A run of text, marked when it is a finding of `type`. */
interface Piece {
  readonly text: string
  readonly type?: string
}

/** The entity type a token's or marker's TYPE names (the findings' spelling when one matches). */
const typeNamer = (findings: ReadonlyArray<SanitizeFinding>) => (upper: string) =>
  findings.find((finding) => finding.entity_type.toUpperCase().replace(/[^A-Z0-9_]/g, "_") === upper)?.entity_type ?? upper.toLowerCase()

/** Splits `text` at each match of `pattern`, the match marked with the type its first group names. */
const splitMarked = (text: string, pattern: RegExp, typeOf: (upper: string) => string, originals?: Readonly<Record<string, string>>): Array<Piece> => {
  const pieces: Array<Piece> = []
  let at = 0
  for (const match of text.matchAll(new RegExp(pattern.source, "g"))) {
    const original = originals === undefined ? match[0] : originals[match[0]]
    if (original === undefined) continue
    if (match.index > at) pieces.push({ text: text.slice(at, match.index) })
    pieces.push({ text: original, type: typeOf(match[1]!) })
    at = match.index + match[0].length
  }
  if (at < text.length) pieces.push({ text: text.slice(at) })
  return pieces
}

/**
 * The input cut into pieces with its findings marked, from a tokenized run of it: the text
 * between tokens is the input's own, each token stands for its original. When that does not
 * rebuild the input exactly, each original is searched for instead.
 */
const locate = (input: string, tokenized: SanitizeResult): Array<Piece> => {
  const typeOf = typeNamer(tokenized.findings)
  const mapping = tokenized.token_mapping ?? {}
  const pieces = splitMarked(tokenized.clean, TOKEN, typeOf, mapping)
  if (pieces.map((piece) => piece.text).join("") === input) return pieces
  const hits: Array<{ start: number; end: number; type: string }> = []
  const originals = Object.entries(mapping).sort(([, a], [, b]) => b.length - a.length)
  for (const [token, original] of originals) {
    if (original === "") continue
    const type = typeOf(/^<([A-Z][A-Z0-9_]*)_\d+>$/.exec(token)?.[1] ?? "FINDING")
    for (let from = input.indexOf(original); from !== -1; from = input.indexOf(original, from + original.length)) {
      const end = from + original.length
      if (!hits.some((hit) => from < hit.end && end > hit.start)) hits.push({ start: from, end, type })
    }
  }
  hits.sort((a, b) => a.start - b.start)
  const out: Array<Piece> = []
  let at = 0
  for (const hit of hits) {
    if (hit.start > at) out.push({ text: input.slice(at, hit.start) })
    out.push({ text: input.slice(hit.start, hit.end), type: hit.type })
    at = hit.end
  }
  if (at < input.length) out.push({ text: input.slice(at) })
  return out
}

const slug = (type: string) => type.toLowerCase().replace(/[^a-z0-9]+/g, "-")

/** A labelled box of text that scrolls; it takes focus so the keyboard can scroll it. */
const TextBox = ({ label, children }: { label: string; children: ComponentChildren }) => (
  // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard to scroll it
  <section class="pre sanitize-text" aria-label={label} tabIndex={0}>
    {children}
  </section>
)

/** Marked text: each finding a `<mark>` with a class per type, its type said in words (title and hidden text). */
const Marked = ({ pieces, colours, label }: { pieces: ReadonlyArray<Piece>; colours: ReadonlyMap<string, number>; label: string }) => (
  <TextBox label={label}>
    {pieces.map((piece, index) =>
      piece.type === undefined ? (
        piece.text
      ) : (
        <mark
          key={index}
          class={`finding finding-${slug(piece.type)} finding-c${(colours.get(piece.type) ?? 0) % 8}`}
          title={piece.type}
          data-type={piece.type}
        >
          <span class="visually-hidden">[{piece.type}: </span>
          {piece.text}
          <span class="visually-hidden">]</span>
        </mark>
      )
    )}
  </TextBox>
)

/** The colour index of each type: the findings' order, then any other marked type. */
const coloursOf = (findings: ReadonlyArray<SanitizeFinding>, pieces: ReadonlyArray<Piece>) => {
  const colours = new Map<string, number>()
  for (const type of [...findings.map((finding) => finding.entity_type), ...pieces.flatMap((piece) => (piece.type === undefined ? [] : [piece.type]))]) {
    if (!colours.has(type)) colours.set(type, colours.size)
  }
  return colours
}

const FindingsLegend = ({ findings, colours, marked }: { findings: ReadonlyArray<SanitizeFinding>; colours: ReadonlyMap<string, number>; marked: ReadonlySet<string> }) => (
  <div class="table-scroll">
    <table class="case-table findings-legend">
      <caption>Findings by type (the legend of the marks)</caption>
      <thead>
        <tr>
          <th scope="col">Type</th>
          <th scope="col">Count</th>
          <th scope="col">Severity</th>
          <th scope="col">Action</th>
          <th scope="col">Scanner</th>
          <th scope="col">What it is</th>
        </tr>
      </thead>
      <tbody>
        {findings.map((finding) => (
          <tr key={`${finding.entity_type}-${finding.source ?? "rules"}`} data-finding={finding.entity_type}>
            <td data-label="Type">
              <mark class={`finding finding-${slug(finding.entity_type)} finding-c${(colours.get(finding.entity_type) ?? 0) % 8}`}>{finding.entity_type}</mark>
              {!marked.has(finding.entity_type) && <span class="hint"> (not marked{finding.severity === "info" ? ": reported, never replaced" : ""})</span>}
            </td>
            <td data-label="Count">{finding.count}</td>
            <td data-label="Severity">{finding.severity}</td>
            <td data-label="Action">{finding.action_taken}</td>
            <td data-label="Scanner">
              {finding.library}
              {finding.source === "ai" ? " (AI review)" : ""}
            </td>
            <td data-label="What it is">{finding.description}</td>
          </tr>
        ))}
      </tbody>
    </table>
  </div>
)

const countText = (findings: ReadonlyArray<SanitizeFinding>) => {
  const total = findings.reduce((sum, finding) => sum + finding.count, 0)
  return `${total} finding${total === 1 ? "" : "s"}`
}

const policyOf = (value: string | undefined): SanitizePolicy => (SANITIZE_POLICIES.includes(value as SanitizePolicy) ? (value as SanitizePolicy) : "default")
const modeOf = (value: string | undefined): SanitizeMode => (SANITIZE_MODES.includes(value as SanitizeMode) ? (value as SanitizeMode) : "redact")

export const SanitizeSection = ({ search }: { search: string }) => {
  const query = queryOf(search)
  const policy = policyOf(query.policy)
  const mode = modeOf(query.mode)
  return (
    <>
      <PageHeading>Sanitize</PageHeading>
      <p class="hint">Find personal data, credentials, prompt injections and health data in a text or a file, and see what the gateway would hand on.</p>
      <section aria-labelledby="sanitize-options-title">
        <h2 id="sanitize-options-title">Options</h2>
        <div class="filters">
          <div>
            <label for="sanitize-policy">Policy pack</label>
            <select id="sanitize-policy" value={policy} onChange={(event) => setQuery(search, { policy: event.currentTarget.value === "default" ? undefined : event.currentTarget.value })}>
              {SANITIZE_POLICIES.map((value) => (
                <option key={value} value={value}>
                  {POLICY_LABELS[value]}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label for="sanitize-mode">Mode</label>
            <select id="sanitize-mode" value={mode} onChange={(event) => setQuery(search, { mode: event.currentTarget.value === "redact" ? undefined : event.currentTarget.value })}>
              {SANITIZE_MODES.map((value) => (
                <option key={value} value={value}>
                  {MODE_LABELS[value]}
                </option>
              ))}
            </select>
          </div>
        </div>
      </section>
      <TextPlayground policy={policy} mode={mode} />
      <FilePlayground policy={policy} mode={mode} />
    </>
  )
}

interface TextOutcome {
  readonly input: string
  readonly result: SanitizeResult
  readonly located: ReadonlyArray<Piece>
}

const TextPlayground = ({ policy, mode }: { policy: SanitizePolicy; mode: SanitizeMode }) => {
  const { session, announce } = useApp()
  const [content, setContent] = useState("")
  const [record, setRecord] = useState(false)
  const [problem, setProblem] = useState<string | undefined>()
  const [outcome, setOutcome] = useState<TextOutcome | undefined>()
  const { busy, error, submit } = useSubmit()
  const resultRef = useRef<HTMLElement>(null)
  useEffect(() => {
    if (outcome !== undefined) resultRef.current?.focus()
  }, [outcome])
  return (
    <section aria-labelledby="sanitize-text-title" class="platform-section">
      <h2 id="sanitize-text-title">Text</h2>
      <form
        class="settings-form"
        noValidate
        onSubmit={(event) => {
          event.preventDefault()
          if (content.trim() === "") {
            setProblem("Enter some text to sanitize.")
            document.getElementById("sanitize-content")?.focus()
            return
          }
          if (content.length > MAX_SANITIZE_CHARS) {
            setProblem(`The text is longer than the ${MAX_SANITIZE_CHARS.toLocaleString()} characters the gateway takes.`)
            return
          }
          setProblem(undefined)
          const input = content
          void submit(async () => {
            const main = sanitizeText(session.token, { content: input, policy, mode }, record)
            // Where the findings are: a tokenizing dry run (reused when the run itself tokenized).
            const locating = mode === "tokenize" ? main : sanitizeText(session.token, { content: input, policy, mode: "tokenize" }, false)
            const [result, tokenized] = await Promise.all([main, locating])
            setOutcome({ input, result, located: locate(input, tokenized) })
            const total = result.findings.reduce((sum, finding) => sum + finding.count, 0)
            announce(result.blocked ? "Blocked: sensitive content was found." : `${total} finding${total === 1 ? "" : "s"}.`)
          })
        }}
      >
        <div class="stack">
          <label for="sanitize-content">Text to sanitize</label>
          <textarea
            id="sanitize-content"
            rows={6}
            maxLength={MAX_SANITIZE_CHARS}
            value={content}
            aria-describedby="sanitize-content-hint"
            onInput={(event) => setContent(event.currentTarget.value)}
          />
          <p id="sanitize-content-hint" class="hint">
            {content.length.toLocaleString()} of at most {MAX_SANITIZE_CHARS.toLocaleString()} characters.
          </p>
        </div>
        <label class="check">
          <input type="checkbox" checked={record} onChange={(event) => setRecord(event.currentTarget.checked)} />
          Record this run (audit log and a signed receipt); otherwise a dry run that records nothing
        </label>
        <ErrorLine message={problem ?? error} />
        <div class="actions-row">
          <button type="submit" class="primary" disabled={busy}>
            Sanitize text
          </button>
          {busy && (
            <span role="status" class="loading">
              Scanning…
            </span>
          )}
        </div>
      </form>
      {outcome !== undefined && (
        <section aria-labelledby="sanitize-result-title" class="sanitize-result" tabIndex={-1} ref={resultRef}>
          <TextResult outcome={outcome} />
        </section>
      )}
    </section>
  )
}

const TextResult = ({ outcome }: { outcome: TextOutcome }) => {
  const { result, located, input } = outcome
  const typeOf = typeNamer(result.findings)
  const output: ReadonlyArray<Piece> =
    result.mode === "flag"
      ? result.clean === input
        ? located
        : [{ text: result.clean }]
      : result.mode === "tokenize"
        ? splitMarked(result.clean, TOKEN, typeOf)
        : splitMarked(result.clean, MARKER, typeOf)
  const colours = coloursOf(result.findings, [...located, ...output])
  const marked = new Set(located.flatMap((piece) => (piece.type === undefined ? [] : [piece.type])))
  const total = result.findings.reduce((sum, finding) => sum + finding.count, 0)
  return (
    <>
      <h3 id="sanitize-result-title">Result</h3>
      <p data-blocked={String(result.blocked)}>
        {result.blocked ? <strong>Blocked: sensitive content was found, nothing is handed on.</strong> : `${total} finding${total === 1 ? "" : "s"}`} · mode {result.mode} · policy{" "}
        {result.policy}
        {result.receipt !== undefined && (
          <>
            {" "}
            · receipt <code>{result.receipt.receipt_uuid}</code>
          </>
        )}
      </p>
      {result.warnings.map((warning) => (
        <p key={warning} class="notice">
          {warning}
        </p>
      ))}
      {result.findings.length === 0 ? <p class="empty">Nothing sensitive was found.</p> : <FindingsLegend findings={result.findings} colours={colours} marked={marked} />}
      <h4>Your text, findings marked</h4>
      <Marked pieces={located} colours={colours} label="Your text with the findings marked" />
      <h4>Sanitized output</h4>
      {result.blocked ? <p class="empty">No output: the text was blocked.</p> : <Marked pieces={output} colours={colours} label="Sanitized output" />}
      {result.token_mapping !== null && result.mode === "tokenize" && (
        <details>
          <summary>Token mapping (to restore the originals)</summary>
          <table class="case-table">
            <caption class="visually-hidden">Tokens and the originals they stand for</caption>
            <thead>
              <tr>
                <th scope="col">Token</th>
                <th scope="col">Original</th>
              </tr>
            </thead>
            <tbody>
              {Object.entries(result.token_mapping).map(([token, original]) => (
                <tr key={token}>
                  <td data-label="Token">
                    <code>{token}</code>
                  </td>
                  <td data-label="Original" class="wrap">
                    {original}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      )}
    </>
  )
}

/** Image types the browser decodes itself (TIFF, PDF and DICOM get no picture). */
const PICTURED = new Set(["png", "jpeg", "gif", "bmp"])

/** An image drawn from its bytes onto a canvas (no URL, so the page's CSP has nothing to refuse). */
const Picture = ({ blob, label }: { blob: Blob; label: string }) => {
  const ref = useRef<HTMLCanvasElement>(null)
  const [failed, setFailed] = useState(false)
  useEffect(() => {
    let current = true
    createImageBitmap(blob).then(
      (bitmap) => {
        const canvas = ref.current
        if (!current || canvas === null) return
        canvas.width = bitmap.width
        canvas.height = bitmap.height
        canvas.getContext("2d")?.drawImage(bitmap, 0, 0)
        bitmap.close()
      },
      () => current && setFailed(true)
    )
    return () => {
      current = false
    }
  }, [blob])
  return failed ? <p class="hint">This image cannot be shown here.</p> : <canvas ref={ref} class="sanitize-picture" role="img" aria-label={label} />
}

const sizeText = (bytes: number) => (bytes >= MB ? `${(bytes / MB).toFixed(1)} MB` : `${Math.max(1, Math.round(bytes / 1024))} KB`)

interface FileOutcome {
  readonly file: File
  readonly result: SanitizedFile
  readonly cleaned?: { readonly blob: Blob; readonly filename: string }
  readonly downloadProblem?: string
}

const FilePlayground = ({ policy, mode }: { policy: SanitizePolicy; mode: SanitizeMode }) => {
  const { session, announce } = useApp()
  const [file, setFile] = useState<File | undefined>()
  const [pixels, setPixels] = useState(false)
  const [problem, setProblem] = useState<string | undefined>()
  const [outcome, setOutcome] = useState<FileOutcome | undefined>()
  const { busy, error, submit } = useSubmit()
  const resultRef = useRef<HTMLElement>(null)
  const inputRef = useRef<HTMLInputElement>(null)
  useEffect(() => {
    if (outcome !== undefined) resultRef.current?.focus()
  }, [outcome])
  return (
    <section aria-labelledby="sanitize-file-title" class="platform-section">
      <h2 id="sanitize-file-title">File</h2>
      <form
        class="settings-form"
        noValidate
        onSubmit={(event) => {
          event.preventDefault()
          if (file === undefined) {
            setProblem("Choose a file.")
            inputRef.current?.focus()
            return
          }
          if (file.size > FILE_LIMIT) {
            setProblem(`${file.name} is ${sizeText(file.size)}: the gateway takes files up to 50 MB.`)
            inputRef.current?.focus()
            return
          }
          if (file.size === 0) {
            setProblem(`${file.name} is empty.`)
            inputRef.current?.focus()
            return
          }
          setProblem(undefined)
          const chosen = file
          void submit(async () => {
            const result = await sanitizeFile(session.token, chosen, { policy, mode, pixels })
            let cleaned: FileOutcome["cleaned"]
            let downloadProblem: string | undefined
            if (result.download_token !== null) {
              // The token is single use: the cleaned file is fetched once and kept here for the preview and the download.
              try {
                const answer = await downloadSanitized(result.download_token)
                cleaned = { blob: answer.blob, filename: answer.filename ?? `sanitized_${chosen.name}` }
              } catch (cause) {
                downloadProblem = cause instanceof Error ? cause.message : "The cleaned file could not be fetched."
              }
            }
            setOutcome({ file: chosen, result, cleaned, downloadProblem })
            announce(result.blocked ? `${chosen.name} was blocked.` : `${chosen.name} sanitized.`)
          })
        }}
      >
        <div class="stack">
          <label for="sanitize-file">File (JPEG, PNG, GIF, BMP, TIFF, PDF or DICOM; up to 50 MB)</label>
          <input
            id="sanitize-file"
            ref={inputRef}
            type="file"
            accept=".jpg,.jpeg,.png,.gif,.bmp,.tif,.tiff,.pdf,.dcm,image/*,application/pdf,application/dicom"
            aria-describedby="sanitize-file-hint"
            onChange={(event) => {
              setFile(event.currentTarget.files?.[0])
              setProblem(undefined)
            }}
          />
          <p id="sanitize-file-hint" class="hint">
            The type is read from the file's first bytes, not its name. Files over 50 MB are refused before they are sent.
          </p>
        </div>
        <label class="check">
          <input type="checkbox" checked={pixels} onChange={(event) => setPixels(event.currentTarget.checked)} />
          Also black out text found in the pixels (images and DICOM)
        </label>
        <ErrorLine message={problem ?? error} />
        <div class="actions-row">
          <button type="submit" class="primary" disabled={busy}>
            Sanitize file
          </button>
          {busy && (
            <span role="status" class="loading">
              Reading the file…
            </span>
          )}
        </div>
      </form>
      {outcome !== undefined && (
        <section aria-labelledby="sanitize-file-result-title" class="sanitize-result" tabIndex={-1} ref={resultRef}>
          <FileResult outcome={outcome} />
        </section>
      )}
    </section>
  )
}

const Side = ({ title, children }: { title: string; children: ComponentChildren }) => (
  <figure class="sanitize-side">
    <figcaption>{title}</figcaption>
    {children}
  </figure>
)

const FileResult = ({ outcome }: { outcome: FileOutcome }) => {
  const { file, result, cleaned, downloadProblem } = outcome
  const colours = coloursOf(result.findings, [])
  const pictured = PICTURED.has(result.file_type)
  return (
    <>
      <h3 id="sanitize-file-result-title">Result for {result.original_filename}</h3>
      <p data-file-blocked={String(result.blocked)}>
        {result.blocked ? <strong>Blocked: sensitive content was found, no cleaned file.</strong> : countText(result.findings)} ·
        type {result.file_type} · mode {result.mode} · policy {result.policy}
      </p>
      {result.findings.length === 0 ? (
        <p class="empty">Nothing sensitive was found.</p>
      ) : (
        <FindingsLegend findings={result.findings} colours={colours} marked={new Set(result.findings.map((finding) => finding.entity_type))} />
      )}
      <div class="sanitize-before-after">
        <Side title={`Before: ${file.name} (${sizeText(file.size)})`}>
          {pictured ? <Picture blob={file} label={`The original ${file.name}`} /> : <p class="hint">No preview for {result.file_type.toUpperCase()} files.</p>}
        </Side>
        <Side title={cleaned === undefined ? "After" : `After: ${cleaned.filename} (${sizeText(cleaned.blob.size)})`}>
          {cleaned === undefined ? (
            <p class="hint">{downloadProblem ?? (result.blocked ? "Nothing: the file was blocked." : result.mode === "flag" ? "Flag mode reports only; no cleaned file." : "No cleaned file.")}</p>
          ) : pictured ? (
            <Picture blob={cleaned.blob} label={`The sanitized ${file.name}`} />
          ) : (
            <p class="hint">No preview for {result.file_type.toUpperCase()} files; download it below.</p>
          )}
        </Side>
      </div>
      {cleaned !== undefined && (
        <div class="actions-row">
          <button type="button" class="primary" onClick={() => saveBlob(cleaned.blob, cleaned.filename)}>
            Download sanitized file
          </button>
        </div>
      )}
      {result.tokenized_text !== null && (
        <>
          <h4>Text of the file, tokenized</h4>
          <TextBox label="Text of the file, tokenized">{result.tokenized_text}</TextBox>
        </>
      )}
      {result.pixel_redactions.length > 0 && (
        <>
          <h4>Blacked-out text in the pixels</h4>
          <ul>
            {result.pixel_redactions.map((redaction, index) => (
              <li key={index}>
                {redaction.text_found === "" ? "(text)" : redaction.text_found} at {redaction.bounding_box.join(", ")} (confidence {Math.round(redaction.confidence <= 1 ? redaction.confidence * 100 : redaction.confidence)}%)
              </li>
            ))}
          </ul>
        </>
      )}
      {result.dicom_tag_actions.length > 0 && (
        <div class="table-scroll">
          <table class="case-table">
            <caption>DICOM tags</caption>
            <thead>
              <tr>
                <th scope="col">Tag</th>
                <th scope="col">Number</th>
                <th scope="col">Action</th>
              </tr>
            </thead>
            <tbody>
              {result.dicom_tag_actions.map((tag) => (
                <tr key={tag.tag_number}>
                  <td data-label="Tag">{tag.tag_name}</td>
                  <td data-label="Number">
                    <code>{tag.tag_number}</code>
                  </td>
                  <td data-label="Action">{tag.action}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  )
}
