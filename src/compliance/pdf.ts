/**
 * What each compliance report prints, as document models for `renderPdf`. Pure: the same data
 * gives the same model (and so the same bytes); the report's `generated_at` is its date.
 */
import type { PdfBlock } from "../platform/pdf.js"
import type { CollectedTables } from "../platform/pdf-thread.js"
import { decodeEvaluations, inferredDecision } from "../policies/recorded.js"
import { ART9_CATEGORIES, type Art9AgentCount, type Art9CategoryCount, art9Keywords } from "./art9.js"
import type { PeriodStats, ReceiptLine } from "./store.js"

/** What every report prints first. */
export interface ReportHeader {
  readonly report_uuid: string
  readonly org_uuid: string
  readonly framework: string
  readonly period_start: string | null
  readonly period_end: string | null
  readonly agent_filter: ReadonlyArray<string> | null
  readonly generated_at: string
  readonly retain_until: string
  readonly retention_years: number
}

export interface ReportContent {
  readonly title: string
  readonly subtitle: string
  /** `collected` stands for the rows streamed to the PDF thread while the period was read (Article 12). */
  readonly blocks: ReadonlyArray<PdfBlock | CollectedTables>
}

export const headerBlock = (header: ReportHeader): PdfBlock => ({
  kind: "fields",
  rows: [
    ["Report", header.report_uuid],
    ["Organization", header.org_uuid],
    ["Framework", header.framework],
    ["Period", header.period_start === null ? null : `${header.period_start} to ${header.period_end}`],
    ["Agents", header.agent_filter === null ? "all" : header.agent_filter.join(", ")],
    ["Generated at", header.generated_at],
    ["Retained until", `${header.retain_until} (${header.retention_years} years)`]
  ]
})

const signatureNote: PdfBlock = {
  kind: "paragraph",
  text:
    "This document's sha256 (content_hash) and size are part of the report descriptor, which the gateway signs with its Ed25519 receipt key and timestamps (RFC 3161). GET /api/v1/compliance/reports/{id}/verify, or `npm run verify` with the report object and the published JWKS, checks them offline."
}

const period = (header: ReportHeader) => (header.period_start === null ? "" : `${header.period_start} to ${header.period_end}`)

const breakdownTable = (breakdown: Record<string, number>): PdfBlock => ({
  kind: "table",
  columns: ["Action status", "Actions"],
  rows: Object.entries(breakdown).map(([status, n]) => [status, String(n)])
})

/** The policy decision a receipt's action records: denied by policy, through a human, or allowed. */
export const policyDecision = (line: ReceiptLine): string =>
  inferredDecision(line.action_status ?? "", line.approval_via !== null || line.approved_by !== null || line.action_status === "denied_by_human")

/**
 * The policy decisions of a receipt's action: each recorded evaluation that did not allow, and how
 * many allowed; for an action from before evaluations were recorded, the decision its status implies.
 */
export const policyLines = (line: ReceiptLine): Array<string> => {
  const recorded = decodeEvaluations(line.policy_evaluations)
  if (recorded === undefined) return [`policy decision: ${policyDecision(line)}${line.policy_uuid === null ? "" : ` (${line.policy_uuid})`}, inferred`]
  if (recorded.length === 0) return ["policy decisions: no policy evaluated"]
  const allowed = recorded.filter((evaluation) => evaluation.decision === "allow").length
  return [
    `policy decisions: ${recorded.length} evaluated, ${allowed} allow`,
    ...recorded
      .filter((evaluation) => evaluation.decision !== "allow")
      .map((evaluation) => `${evaluation.policy_name ?? evaluation.policy_uuid ?? "policy"}: ${evaluation.decision}${evaluation.mode === null ? "" : ` (${evaluation.mode})`}`)
  ]
}

/** One receipt as its table row (built while the period streams, so the lines themselves are not kept). */
export const receiptRow = (line: ReceiptLine): Array<string> => [
  [
    `receipt ${line.receipt_uuid} (${line.receipt_status})`,
    line.created_at,
    `action ${line.action_uuid}`,
    `type ${line.action_type ?? "—"}`,
    `model ${line.model_id ?? "—"} ${line.model_version ?? ""}`.trimEnd(),
    `agent version ${line.agent_version ?? "—"}`
  ].join("\n"),
  [
    ...policyLines(line),
    `approver: ${line.approved_by ?? "—"}${line.approval_via === null ? "" : ` via ${line.approval_via}`}`,
    ...(line.cosigners === null ? [] : [`cosigned by ${line.cosigners}`]),
    `payload_hash ${line.payload_hash}`,
    `signed by ${line.public_key_id}, timestamp ${line.timestamp_token_present ? "yes" : "no"}`
  ].join("\n")
]

/** Article 12: every receipt of the period, grouped by agent. */
export const art12Content = (
  header: ReportHeader,
  stats: PeriodStats,
  keys: ReadonlyMap<string, number>,
  timestamped: number,
  receiptCount: number
): ReportContent => ({
  title: "EU AI Act Article 12 - Record-keeping",
  subtitle: period(header),
  blocks: [
    headerBlock(header),
    {
      kind: "fields",
      rows: [
        ["Receipts", receiptCount],
        ["Actions", stats.total_actions],
        ["Distinct agents", stats.distinct_agents],
        ["Distinct models", stats.distinct_models]
      ]
    },
    breakdownTable(stats.status_breakdown),
    {
      kind: "collected",
      columns: ["Receipt and action", "Decision, approvers and signature evidence"],
      heading: { one: "Agent {key} - {n} receipt", many: "Agent {key} - {n} receipts" }
    },
    { kind: "heading", text: "Signature evidence" },
    {
      kind: "table",
      columns: ["Signing key (JWKS kid)", "Receipts"],
      rows: [...keys].map(([kid, n]) => [kid, String(n)])
    },
    { kind: "paragraph", text: `${timestamped} of ${receiptCount} receipts carry an RFC 3161 timestamp token.` },
    signatureNote
  ]
})

/** Article 9: the actions of the period sorted into the Annex III categories. */
export const art9Content = (header: ReportHeader, categories: Record<string, Art9CategoryCount>, agents: ReadonlyArray<Art9AgentCount>, total: number): ReportContent => ({
  title: "EU AI Act Article 9 - Risk register",
  subtitle: period(header),
  blocks: [
    headerBlock(header),
    { kind: "fields", rows: [["Actions classified", total]] },
    { kind: "heading", text: "Annex III categories" },
    {
      kind: "table",
      columns: ["Category", "Actions", "Sample actions"],
      rows: ART9_CATEGORIES.map((category) => {
        const counted = categories[category.key]!
        const point = category.annex_iii_point === null ? "not in Annex III" : `Annex III point ${category.annex_iii_point}`
        return [`${category.title}\n${category.key}\n${point}, ${category.risk_level} risk`, String(counted.count), counted.sample_action_uuids.join("\n")]
      })
    },
    { kind: "heading", text: "Observations by agent" },
    {
      kind: "table",
      columns: ["Agent", "Category and actions", "First and last seen"],
      rows: agents.map((row) => [row.agent_id, `${row.category} (${row.risk_level})\n${row.action_count} action${row.action_count === 1 ? "" : "s"}`, `${row.first_seen_at}\n${row.last_seen_at}`])
    },
    { kind: "heading", text: "How actions are classified" },
    {
      kind: "paragraph",
      text: "The lower-cased action_type is split into tokens on every non-alphanumeric character; the first category in Annex III order with a keyword equal to a token wins, else other. An authorize context.art9_category naming a category overrides the result."
    },
    {
      kind: "table",
      columns: ["Category", "Keywords"],
      rows: ART9_CATEGORIES.filter((category) => category.key !== "other").map((category) => [category.key, art9Keywords(category.key).join(", ")])
    },
    signatureNote
  ]
})

export const ANNEX_IV_TITLES = [
  "General description of the AI system",
  "Detailed description of the elements of the AI system and of the process for its development",
  "Monitoring, functioning and control of the AI system",
  "Appropriateness of the performance metrics",
  "Risk management system (Article 9)",
  "Relevant changes made through the lifecycle",
  "Harmonised standards and other specifications applied",
  "EU declaration of conformity",
  "Post-market monitoring system"
] as const

/** Facts the gateway recorded for one Annex IV point (none for the points only the provider knows). */
export interface AnnexIvFacts {
  readonly stats: PeriodStats
  readonly categories: Record<string, Art9CategoryCount>
}

const recorded = (point: number, facts: AnnexIvFacts): Array<PdfBlock> => {
  const { stats } = facts
  const label: PdfBlock = { kind: "paragraph", text: "Recorded by the gateway in the period:" }
  switch (point) {
    case 2:
      return [label, { kind: "table", columns: ["Model", "Version", "Actions"], rows: stats.models.map((m) => [m.model_id, m.model_version ?? "", String(m.actions)]) }]
    case 3:
      return [label, breakdownTable(stats.status_breakdown)]
    case 4: {
      const failed = stats.status_breakdown.failed ?? 0
      const finished = failed + (stats.status_breakdown.notarized ?? 0)
      return [
        label,
        {
          kind: "fields",
          rows: [
            ["Actions", stats.total_actions],
            ["Notarized outcomes failed", finished === 0 ? null : `${failed} of ${finished}`],
            ["Distinct agents", stats.distinct_agents],
            ["Distinct models", stats.distinct_models]
          ]
        }
      ]
    }
    case 5:
      return [
        label,
        {
          kind: "table",
          columns: ["Annex III category", "Risk", "Actions"],
          rows: ART9_CATEGORIES.map((category) => [category.key, category.risk_level, String(facts.categories[category.key]?.count ?? 0)])
        }
      ]
    case 6:
      return [label, { kind: "table", columns: ["Agent", "Version", "Actions"], rows: stats.agents.map((a) => [a.agent_id, a.agent_version ?? "", String(a.actions)]) }]
    case 9:
      return [
        label,
        {
          kind: "fields",
          rows: [
            ["Signed receipts", stats.receipt_count],
            ["Signing keys", stats.signing_keys.join(", ")]
          ]
        }
      ]
    default:
      return []
  }
}

/** Annex IV points 1-9: the provider's text where given, else "not provided", and what the gateway recorded. */
export const annexIvContent = (header: ReportHeader, documentation: ReadonlyArray<string | null>, facts: AnnexIvFacts): ReportContent => ({
  title: "EU AI Act Annex IV - Technical documentation",
  subtitle: period(header),
  blocks: [
    headerBlock(header),
    ...ANNEX_IV_TITLES.flatMap((title, index): Array<PdfBlock> => [
      { kind: "heading", text: `${index + 1}. ${title}` },
      { kind: "paragraph", text: documentation[index] ?? "not provided" },
      ...recorded(index + 1, facts)
    ]),
    signatureNote
  ]
})
