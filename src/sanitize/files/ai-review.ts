/**
 * The AI second pass for file text (the text route's pass, applied per image or page): the model
 * reads the text the rules already cleaned; what it names is applied to the cleaned text
 * (`applyAiItems`: findings marked `source: "ai"`, same markers and token book) and located in the
 * original text, so the same words are blacked out or redacted in the file. A model that fails
 * answers no items: the rule-based result stands.
 */
import { type AiItem, applyAiItems } from "../ai-pass.js"
import { type DetectedSpan, redactionMarker, type SanitizeMode, type TextSanitized, type TokenBook } from "../text.js"

/** Asks the model about one text; items whose text occurs in it. Never fails. */
export type Review = (text: string) => Promise<ReadonlyArray<AiItem>>

/** Every occurrence of each item in `original` that no rule span already covers. */
const aiSpans = (original: string, items: ReadonlyArray<AiItem>, ruled: ReadonlyArray<DetectedSpan>, mode: SanitizeMode, tokens: TokenBook): DetectedSpan[] => {
  const spans: DetectedSpan[] = []
  const taken = (start: number, end: number) => [...ruled, ...spans].some((span) => span.start < end && start < span.end)
  for (const item of [...items].sort((a, b) => b.text.length - a.text.length)) {
    for (let at = original.indexOf(item.text); at !== -1; at = original.indexOf(item.text, at + item.text.length)) {
      const end = at + item.text.length
      if (taken(at, end)) continue
      const replacement = mode === "tokenize" ? tokens.token(item.entity_type, item.text) : mode === "redact" ? redactionMarker(item.entity_type) : null
      spans.push({ start: at, end, entity_type: item.entity_type, severity: "warning", library: "pii", replacement })
    }
  }
  return spans
}

export const reviewed = async (original: string, ruled: TextSanitized, mode: SanitizeMode, tokens: TokenBook, review: Review | undefined): Promise<TextSanitized> => {
  // Blocked already: nothing left to find. Block mode otherwise reviews the untouched text.
  if (review === undefined || ruled.blocked || original.trim() === "") return ruled
  const seen = mode === "block" ? original : ruled.clean
  const items = await review(seen)
  if (items.length === 0) return ruled
  const applied = applyAiItems(seen, items, mode, tokens)
  if (applied.findings.length === 0) return ruled
  const blocked = mode === "block"
  return {
    clean: blocked ? "" : mode === "flag" ? ruled.clean : applied.clean,
    blocked,
    findings: [...ruled.findings, ...applied.findings],
    token_mapping: mode === "tokenize" ? tokens.mapping() : ruled.token_mapping,
    spans: [...ruled.spans, ...aiSpans(original, items, ruled.spans, mode, tokens)].sort((a, b) => a.start - b.start)
  }
}
