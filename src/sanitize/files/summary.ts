/** What every file type's pipeline answers, and how the findings of several texts (pages) combine. */
import type { SanitizeFinding, SanitizeMode, SanitizePolicy, TextSanitized, TokenBook } from "../text.js"
import type { Review } from "./ai-review.js"
import type { PixelRedaction } from "./image.js"
import type { Ocr } from "./ocr.js"

export interface DicomTagAction {
  readonly tag_name: string
  readonly tag_number: string
  readonly action: string
  readonly original_hash: string | null
}

export interface FileOptions {
  readonly policy: SanitizePolicy
  readonly mode: SanitizeMode
  readonly includePixelRedaction: boolean
  readonly ocr: Ocr
  /** The AI second pass (`ai_model`), when asked for. */
  readonly review?: Review | undefined
}

export interface FileSanitized {
  /** The cleaned file; null when nothing is handed back (block triggered, or flag). */
  readonly bytes: Uint8Array | null
  readonly blocked: boolean
  readonly findings: SanitizeFinding[]
  readonly tokenized_text: string | null
  readonly token_mapping: Record<string, string> | null
  readonly dicom_tag_actions: DicomTagAction[]
  readonly pixel_redactions: PixelRedaction[]
}

/** Findings of several texts (pages) as one list: counts of the same entity and action added up. */
export const mergeFindings = (lists: ReadonlyArray<ReadonlyArray<SanitizeFinding>>): SanitizeFinding[] => {
  const merged = new Map<string, SanitizeFinding>()
  for (const finding of lists.flat()) {
    const key = `${finding.entity_type}\u0000${finding.action_taken}\u0000${finding.library}\u0000${finding.source ?? ""}`
    const seen = merged.get(key)
    merged.set(key, seen === undefined ? { ...finding } : { ...seen, count: seen.count + finding.count })
  }
  return [...merged.values()]
}

/** Replaces in redact/tokenize; block and flag only look. */
export const changesContent = (mode: SanitizeMode) => mode === "redact" || mode === "tokenize"

/** What the whole file's texts say, once every page was scanned with one token book. */
export const summarize = (mode: SanitizeMode, results: ReadonlyArray<TextSanitized>, tokens: TokenBook) => {
  const findings = mergeFindings(results.map((result) => result.findings))
  const blocked = mode === "block" && results.some((result) => result.blocked || result.spans.length > 0)
  return {
    findings,
    blocked,
    tokenized_text: mode === "tokenize" ? results.map((result) => result.clean).join("\n\f\n") : null,
    token_mapping: mode === "tokenize" ? tokens.mapping() : null
  }
}

