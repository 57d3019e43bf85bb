/**
 * The independent sanitize corpus (test/corpus/*.jsonl, format in test/corpus/README.md): loading,
 * the held-out split, and scoring `sanitizeText` on it per labelled type. Used by the corpus test
 * (floors) and by `npm run bench:sanitize` (the figures).
 */
import { createHash } from "node:crypto"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { type SanitizePolicy, sanitizeText } from "../../src/sanitize/text.js"

export const LABEL_TYPES = [
  "person",
  "phone",
  "address",
  "email",
  "iban",
  "bank_account",
  "card",
  "ssn",
  "national_id",
  "dob",
  "mrn",
  "npi",
  "icd10",
  "diagnosis",
  "medication",
  "password",
  "aws_secret",
  "token",
  "ip_address"
] as const
export type LabelType = (typeof LABEL_TYPES)[number]

export const INJECTION_FAMILIES = ["instruction_override", "role_play", "data_exfiltration", "tool_abuse"] as const

export interface CorpusText {
  readonly id: string
  readonly kind: string
  readonly text: string
  readonly labels: ReadonlyArray<{ readonly type: LabelType; readonly value: string }>
  readonly injection: (typeof INJECTION_FAMILIES)[number] | null
  /** The file it came from (its writer). */
  readonly source: string
}

export const CORPUS_DIR = join(import.meta.dirname, "../corpus")

export const loadCorpus = (dir = CORPUS_DIR): Array<CorpusText> => {
  const out: Array<CorpusText> = []
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".jsonl")).sort()) {
    const lines = readFileSync(join(dir, file), "utf8").split("\n")
    lines.forEach((line, i) => {
      if (line.trim() === "") return
      const parsed = JSON.parse(line) as Omit<CorpusText, "source">
      out.push({ ...parsed, labels: parsed.labels ?? [], injection: parsed.injection ?? null, source: `${file}:${i + 1}` })
    })
  }
  return out
}

/**
 * About a tenth of the texts, chosen by a digest of their id (so adding texts never moves one
 * across), is held out: its figures are printed, its misses never are, and no rule is tuned on it.
 */
export const isHeldOut = (id: string): boolean => createHash("sha256").update(`sanitize-corpus:${id}`).digest()[0] < 26

/** Labels scored in a pack: medications are replaced by the hipaa pack only. */
export const scoredIn = (type: LabelType, policy: SanitizePolicy): boolean => type !== "medication" || policy === "hipaa"

const WORD = /[\p{L}\p{N}]/u

/** Every occurrence of `value` in `text` that is a whole token (not a piece of a longer word). */
export const occurrences = (text: string, value: string): Array<number> => {
  const found: Array<number> = []
  if (value.length === 0) return found
  for (let at = text.indexOf(value); at !== -1; at = text.indexOf(value, at + 1)) {
    const before = at === 0 || !WORD.test(text[at - 1]!) || !WORD.test(value[0]!)
    const end = at + value.length
    const after = end === text.length || !WORD.test(text[end]!) || !WORD.test(value[value.length - 1]!)
    if (before && after) found.push(at)
  }
  return found
}

export interface Tally {
  /** Labelled occurrences. */
  labels: number
  /** Occurrences a replaced span overlaps (the value does not survive intact). */
  found: number
  /** Occurrences replaced from first to last character. */
  covered: number
  /** Replaced spans of this type that overlap some label. */
  spansTrue: number
  /** Replaced spans of this type that overlap no label. */
  spansFalse: number
}

export interface CorpusScore {
  readonly texts: number
  readonly byLabel: Map<string, Tally>
  /** Precision by the engine's entity type. */
  readonly bySpanType: Map<string, Tally>
  readonly decoys: number
  readonly decoysChanged: number
  readonly injectionTexts: number
  readonly injectionFound: number
  readonly injectionFalse: number
  readonly misses: Array<string>
  readonly ms: Array<number>
}

const emptyTally = (): Tally => ({ labels: 0, found: 0, covered: 0, spansTrue: 0, spansFalse: 0 })

const tallyIn = (map: Map<string, Tally>, key: string): Tally => {
  let t = map.get(key)
  if (t === undefined) map.set(key, (t = emptyTally()))
  return t
}

/** Scores one pack in redact mode, as a user calling `POST /api/v1/sanitize` with that pack would see it. */
export const scoreCorpus = (texts: ReadonlyArray<CorpusText>, policy: SanitizePolicy): CorpusScore => {
  const byLabel = new Map<string, Tally>()
  const bySpanType = new Map<string, Tally>()
  const misses: Array<string> = []
  const ms: Array<number> = []
  let decoys = 0
  let decoysChanged = 0
  let injectionTexts = 0
  let injectionFound = 0
  let injectionFalse = 0
  for (const t of texts) {
    const started = performance.now()
    const result = sanitizeText(t.text, { policy, mode: "redact" })
    ms.push(performance.now() - started)
    // Injection spans are scored per text below (a found attempt, or a false alarm), not against labels.
    const replaced = result.spans.filter((s) => s.replacement !== null && s.library !== "prompt_injection")
    const expected = t.labels.flatMap((label) =>
      occurrences(t.text, label.value).map((start) => ({ type: label.type, start, end: start + label.value.length, value: label.value }))
    )
    for (const e of expected) {
      if (!scoredIn(e.type, policy)) continue
      const tally = tallyIn(byLabel, e.type)
      tally.labels++
      const over = replaced.filter((s) => s.start < e.end && e.start < s.end)
      if (over.length > 0) tally.found++
      else misses.push(`${t.id} [${t.kind}] missed ${e.type} ${JSON.stringify(e.value)}`)
      let cursor = e.start
      for (const s of [...over].sort((a, b) => a.start - b.start)) if (s.start <= cursor) cursor = Math.max(cursor, s.end)
      if (over.length > 0 && cursor >= e.end) tally.covered++
    }
    for (const s of replaced) {
      const hit = expected.find((e) => s.start < e.end && e.start < s.end)
      const byType = tallyIn(bySpanType, s.entity_type)
      if (hit !== undefined) {
        byType.spansTrue++
        tallyIn(byLabel, hit.type).spansTrue++
      } else {
        byType.spansFalse++
        tallyIn(byLabel, `(${s.entity_type})`).spansFalse++
        misses.push(`${t.id} [${t.kind}] false ${s.entity_type} ${JSON.stringify(t.text.slice(s.start, s.end))}`)
      }
    }
    const injected = result.findings.some((f) => f.library === "prompt_injection")
    if (t.injection !== null) {
      injectionTexts++
      if (injected) injectionFound++
      else misses.push(`${t.id} [${t.kind}] missed injection (${t.injection})`)
    } else if (injected) {
      injectionFalse++
      misses.push(`${t.id} [${t.kind}] false injection`)
    }
    if (t.labels.length === 0 && t.injection === null) {
      decoys++
      if (result.clean !== t.text) decoysChanged++
    }
  }
  return { texts: texts.length, byLabel, bySpanType, decoys, decoysChanged, injectionTexts, injectionFound, injectionFalse, misses, ms }
}

export const ratio = (a: number, b: number): number => (b === 0 ? 1 : a / b)

export interface Summary {
  readonly recall: number
  readonly precision: number
  readonly recallByType: Record<string, number>
  readonly decoysChanged: number
  readonly injectionRecall: number
}

export const summarize = (score: CorpusScore): Summary => {
  let labels = 0
  let found = 0
  let spansTrue = 0
  let spansFalse = 0
  const recallByType: Record<string, number> = {}
  for (const [type, t] of score.byLabel) {
    labels += t.labels
    found += t.found
    spansTrue += t.spansTrue
    spansFalse += t.spansFalse
    if (t.labels > 0) recallByType[type] = ratio(t.found, t.labels)
  }
  return {
    recall: ratio(found, labels),
    precision: ratio(spansTrue, spansTrue + spansFalse),
    recallByType,
    decoysChanged: ratio(score.decoysChanged, score.decoys),
    injectionRecall: ratio(score.injectionFound, score.injectionTexts)
  }
}

const pct = (x: number): string => x.toFixed(3)

/** A table of recall and precision per labelled type, then the totals. */
export const formatScore = (title: string, score: CorpusScore): string => {
  const rows = [...score.byLabel.entries()].sort(([a], [b]) => a.localeCompare(b))
  const lines = [`${title}: ${score.texts} texts`, "type            labels  recall  covered  precision (spans true/false)"]
  for (const [type, t] of rows) {
    const recall = t.labels === 0 ? "     -" : pct(ratio(t.found, t.labels)).padStart(6)
    const covered = t.labels === 0 ? "      -" : pct(ratio(t.covered, t.labels)).padStart(7)
    lines.push(
      `${type.padEnd(15)} ${String(t.labels).padStart(6)}  ${recall}  ${covered}  ${pct(ratio(t.spansTrue, t.spansTrue + t.spansFalse))} (${t.spansTrue}/${t.spansFalse})`
    )
  }
  const s = summarize(score)
  const sorted = [...score.ms].sort((a, b) => a - b)
  lines.push(
    `overall recall ${pct(s.recall)}, precision ${pct(s.precision)}; decoy-only texts changed ${score.decoysChanged}/${score.decoys} (${(100 * s.decoysChanged).toFixed(1)} %); ` +
      `injection found in ${score.injectionFound}/${score.injectionTexts} texts, flagged in ${score.injectionFalse} others; ` +
      `p50 ${(sorted[Math.floor(sorted.length / 2)] ?? 0).toFixed(2)} ms per text`
  )
  return lines.join("\n")
}
