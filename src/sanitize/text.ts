/**
 * The text engine shared by text, file and DICOM sanitizing: detect entities with the
 * policy pack's libraries, then redact, tokenize, block or flag. Pure and synchronous; every
 * detector is linear in the input, and nothing here logs content.
 */
import type { Detector } from "./detector.js"
import { forgetHealthScan } from "./health.js"
import { HEALTH_PII_DETECTORS, HEALTHCARE_DETECTORS } from "./healthcare.js"
import { forgetInjectionScan, INJECTION_DETECTORS } from "./injection.js"
import { CREDENTIAL_DETECTORS, PII_DETECTORS } from "./libraries.js"
import { forgetNamedEntities, NER_DETECTORS } from "./ner.js"
import { forgetTables } from "./tables.js"
import type { DetectedSpan, Library, SanitizeFinding, SanitizeMode, SanitizePolicy, Severity } from "./types.js"

export type { DetectedSpan, Library, SanitizeFinding, SanitizeMode, SanitizePolicy, Severity }

export interface TextSanitized {
  clean: string
  blocked: boolean
  findings: SanitizeFinding[]
  token_mapping: Record<string, string> | null
  spans: DetectedSpan[]
}

export const SANITIZE_POLICIES: ReadonlyArray<SanitizePolicy> = ["default", "hipaa", "pci", "legal"]
export const SANITIZE_MODES: ReadonlyArray<SanitizeMode> = ["redact", "tokenize", "block", "flag"]

/** Which libraries each policy pack runs (`pii` brings its NER part, `pii_ner`, with it). */
export const POLICY_LIBRARIES: Readonly<Record<SanitizePolicy, ReadonlyArray<Library>>> = {
  default: ["pii", "pii_ner", "credentials", "prompt_injection"],
  hipaa: ["pii", "pii_ner", "credentials", "prompt_injection", "healthcare"],
  pci: ["pii", "pii_ner", "credentials"],
  legal: ["pii", "pii_ner", "credentials"]
}

/** Dates are protected health information: under HIPAA they are replaced, elsewhere only reported. */
const SEVERITY_OVERRIDES: Readonly<Record<SanitizePolicy, Readonly<Record<string, Severity>>>> = {
  default: {},
  hipaa: { ner_date_time: "warning" },
  pci: {},
  legal: {}
}

const DETECTORS: Readonly<Record<Library, ReadonlyArray<Detector>>> = {
  // Health data about a person is personal data (GDPR art. 9): `pii` carries the person-health detectors too.
  pii: [...PII_DETECTORS, ...HEALTH_PII_DETECTORS],
  pii_ner: NER_DETECTORS,
  credentials: CREDENTIAL_DETECTORS,
  prompt_injection: INJECTION_DETECTORS,
  healthcare: HEALTHCARE_DETECTORS
}

/** Under a pack that runs `healthcare`, its own copies of the person-health detectors report them, once. */
const SKIPPED_WITH_HEALTHCARE: ReadonlySet<Detector> = new Set(HEALTH_PII_DETECTORS)
const detectorsOf = (policy: SanitizePolicy, library: Library): ReadonlyArray<Detector> =>
  library === "pii" && POLICY_LIBRARIES[policy].includes("healthcare") ? DETECTORS.pii.filter((d) => !SKIPPED_WITH_HEALTHCARE.has(d)) : DETECTORS[library]

/** Every entity type a pack can report, with its severity under that pack (documentation and tests). */
export const entityCatalogue = (
  policy: SanitizePolicy
): Array<{ entity_type: string; library: Library; severity: Severity; description: string }> => {
  const seen = new Map<string, { entity_type: string; library: Library; severity: Severity; description: string }>()
  for (const library of POLICY_LIBRARIES[policy]) {
    for (const d of detectorsOf(policy, library)) {
      if (!seen.has(d.entity_type)) {
        const severity = SEVERITY_OVERRIDES[policy][d.entity_type] ?? d.severity
        seen.set(d.entity_type, { entity_type: d.entity_type, library, severity, description: d.description })
      }
    }
  }
  return [...seen.values()]
}

export const redactionMarker = (entityType: string): string => `[REDACTED_${entityType.toUpperCase()}]`

/** Token shape `<TYPE_NNN>`; TYPE is the entity type in capitals. */
export const TOKEN_PATTERN = /<[A-Z][A-Z0-9_]{0,63}_\d{3,9}>/g

/** Tokens stable within one request: the same original gets the same `<TYPE_NNN>` in every text sanitized with this book. */
export class TokenBook {
  private readonly byOriginal = new Map<string, string>()
  private readonly originals = new Map<string, string>()
  private readonly counters = new Map<string, number>()
  private readonly reserved = new Set<string>()

  /** Token-shaped strings already in an input: never minted, so detokenizing cannot touch them. */
  reserve(text: string): void {
    if (!text.includes("<")) return
    for (const match of text.matchAll(TOKEN_PATTERN)) this.reserved.add(match[0])
  }

  token(entityType: string, original: string): string {
    const key = `${entityType}\u0000${original}`
    const known = this.byOriginal.get(key)
    if (known !== undefined) return known
    const type = entityType.toUpperCase().replace(/[^A-Z0-9_]/g, "_")
    let n = this.counters.get(type) ?? 0
    let token: string
    do {
      n++
      token = `<${type}_${String(n).padStart(3, "0")}>`
    } while (this.reserved.has(token))
    this.counters.set(type, n)
    this.byOriginal.set(key, token)
    this.originals.set(token, original)
    return token
  }

  mapping(): Record<string, string> | null {
    if (this.originals.size === 0) return null
    return Object.fromEntries(this.originals)
  }
}

interface Candidate {
  start: number
  end: number
  entity_type: string
  severity: Severity
  library: Library
  description: string
}

const RANK: Readonly<Record<Severity, number>> = { info: 0, warning: 1, critical: 2 }

/** Every hit of the policy's detectors, in the order found. */
export const detect = (content: string, policy: SanitizePolicy): Array<Candidate> => {
  const out: Array<Candidate> = []
  if (content.length === 0) return out
  for (const library of POLICY_LIBRARIES[policy]) {
    for (const d of detectorsOf(policy, library)) {
      const severity = SEVERITY_OVERRIDES[policy][d.entity_type] ?? d.severity
      d.run(content, (start, end) => {
        out.push({ start, end, entity_type: d.entity_type, severity, library: d.library, description: d.description })
        return true
      })
    }
  }
  forgetNamedEntities()
  forgetInjectionScan()
  forgetHealthScan()
  forgetTables()
  return out
}

/**
 * Non-overlapping spans: replaceable (critical/warning) hits that overlap or touch merge into
 * one region labelled by the most severe, then longest, hit, so no fragment of a secret
 * survives between two markers; info hits are kept only where nothing is replaced.
 */
export const resolveSpans = (candidates: ReadonlyArray<Candidate>): Array<Candidate> => {
  const replaceable = candidates.filter((c) => c.severity !== "info").sort((a, b) => a.start - b.start || b.end - a.end)
  const regions: Array<Candidate & { bestLength: number }> = []
  for (const c of replaceable) {
    const last = regions[regions.length - 1]
    if (last !== undefined && c.start <= last.end) {
      if (c.end > last.end) last.end = c.end
      const better = RANK[c.severity] > RANK[last.severity] || (c.severity === last.severity && c.end - c.start > last.bestLength)
      if (better) Object.assign(last, { entity_type: c.entity_type, severity: c.severity, library: c.library, description: c.description, bestLength: c.end - c.start })
    } else {
      regions.push({ ...c, bestLength: c.end - c.start })
    }
  }
  const info = candidates.filter((c) => c.severity === "info").sort((a, b) => a.start - b.start || b.end - a.end)
  const kept: Array<Candidate> = []
  let r = 0
  let lastInfoEnd = -1
  for (const c of info) {
    while (r < regions.length && regions[r].end <= c.start) r++
    const overlapsRegion = r < regions.length && regions[r].start < c.end
    if (overlapsRegion || c.start < lastInfoEnd) continue
    kept.push(c)
    lastInfoEnd = c.end
  }
  const spans: Array<Candidate> = regions.map(({ bestLength: _, ...c }) => c)
  return spans.concat(kept).sort((a, b) => a.start - b.start)
}

/** Groups spans into findings, one per entity type (and source), in order of first appearance. */
export const findingsOf = (
  spans: ReadonlyArray<Omit<Candidate, "start" | "end">>,
  actionFor: (severity: Severity) => SanitizeFinding["action_taken"],
  source: "rules" | "ai" = "rules"
): Array<SanitizeFinding> => {
  const byType = new Map<string, SanitizeFinding>()
  for (const s of spans) {
    const found = byType.get(s.entity_type)
    if (found !== undefined) found.count++
    else
      byType.set(s.entity_type, {
        entity_type: s.entity_type,
        severity: s.severity,
        action_taken: actionFor(s.severity),
        library: s.library,
        description: s.description,
        count: 1,
        source
      })
  }
  return [...byType.values()]
}

export const actionFor =
  (mode: SanitizeMode) =>
  (severity: Severity): SanitizeFinding["action_taken"] => {
    if (mode === "block") return "blocked"
    if (mode === "flag" || severity === "info") return "flagged"
    return mode === "tokenize" ? "tokenized" : "redacted"
  }

/** Applies resolved spans: replaces critical/warning ones (redact/tokenize), keeps the rest. */
export const applySpans = (
  content: string,
  spans: ReadonlyArray<Candidate>,
  mode: SanitizeMode,
  tokens: TokenBook
): { clean: string; detected: Array<DetectedSpan> } => {
  const replacing = mode === "redact" || mode === "tokenize"
  const detected: Array<DetectedSpan> = []
  const parts: Array<string> = []
  let cursor = 0
  for (const s of spans) {
    let replacement: string | null = null
    if (replacing && s.severity !== "info") {
      const original = content.slice(s.start, s.end)
      replacement = mode === "tokenize" ? tokens.token(s.entity_type, original) : redactionMarker(s.entity_type)
      parts.push(content.slice(cursor, s.start), replacement)
      cursor = s.end
    }
    detected.push({ start: s.start, end: s.end, entity_type: s.entity_type, severity: s.severity, library: s.library, replacement })
  }
  parts.push(content.slice(cursor))
  return { clean: cursor === 0 ? content : parts.join(""), detected }
}

/** Pure, synchronous, linear time; never logs content. */
export const sanitizeText = (
  content: string,
  options: { policy: SanitizePolicy; mode: SanitizeMode; tokens?: TokenBook }
): TextSanitized => {
  const tokens = options.tokens ?? new TokenBook()
  if (options.mode === "tokenize") tokens.reserve(content)
  const spans = resolveSpans(detect(content, options.policy))
  const findings = findingsOf(spans, actionFor(options.mode))
  if (options.mode === "block") {
    const blocked = spans.length > 0
    const detected = spans.map((s): DetectedSpan => ({ start: s.start, end: s.end, entity_type: s.entity_type, severity: s.severity, library: s.library, replacement: null }))
    return { clean: blocked ? "" : content, blocked, findings, token_mapping: null, spans: detected }
  }
  const { clean, detected } = applySpans(content, spans, options.mode, tokens)
  return { clean, blocked: false, findings, token_mapping: options.mode === "tokenize" ? (tokens.mapping() ?? {}) : null, spans: detected }
}

/** Replaces the mapping's tokens in `content` by their originals; anything else stays as it is. */
export const detokenize = (content: string, mapping: Readonly<Record<string, string>>): string => {
  if (!content.includes("<")) return content
  return content.replace(TOKEN_PATTERN, (token) => (Object.hasOwn(mapping, token) ? mapping[token] : token))
}
