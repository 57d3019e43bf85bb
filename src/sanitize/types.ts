/** The vocabulary of sanitizing, shared by the engine and its detectors (text.ts re-exports it). */

export type SanitizePolicy = "default" | "hipaa" | "pci" | "legal"
export type SanitizeMode = "redact" | "tokenize" | "block" | "flag"
export type Severity = "critical" | "warning" | "info"
export type Library = "pii" | "credentials" | "prompt_injection" | "pii_ner" | "healthcare"

export interface SanitizeFinding {
  entity_type: string
  severity: Severity
  action_taken: "redacted" | "tokenized" | "blocked" | "flagged"
  library: Library
  description: string
  count: number
  source?: "rules" | "ai"
}

/** One detected entity in the input text (UTF-16 offsets), and what replaced it (null: kept). */
export interface DetectedSpan {
  start: number
  end: number
  entity_type: string
  severity: Severity
  library: Library
  replacement: string | null
}
