/**
 * Compliance reports: generated inside the request, signed and kept. A report reads the
 * organization's actions and receipts of its period (in keyset pages), prints a PDF through
 * `renderPdf` dated `generated_at`, stores the bytes, and signs the 12-key descriptor with the
 * receipt key (JCS, Ed25519, RFC 3161 over sha256 of the same bytes). Downloads answer the stored
 * bytes, so they never change; verify re-hashes them and runs the portable verifier.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql"
import type { Principal } from "../../protocol/auth.js"
import { type OffsetWindow, offsetListPage } from "../../protocol/common.js"
import {
  ANNEX_IV_SECTIONS,
  type AnnexIvDocumentation,
  type Art9Categories,
  type Art9Observation,
  type ComplianceReport,
  type CreateReportRequest,
  type ReportFramework,
  type ReportVerification
} from "../../protocol/compliance.js"
import { reportDescriptor, reportDescriptorBytes, verifyReportDescriptor } from "../../protocol/verifier/compliance.js"
import { DEFAULT_AGENT_ID } from "../actions/chain.js"
import { explanationPdfModel } from "../explanations/pdf.js"
import { Explanations } from "../explanations/service.js"
import { Config } from "../platform/config.js"
import { InvalidInput, type Issue } from "../platform/domain-error.js"
import { newUuid } from "../platform/ids.js"
import { parseInstant } from "../platform/instant.js"
import { type PdfJob, startPdfJob } from "../platform/pdf-thread.js"
import { Receipts } from "../receipts/service.js"
import { sha256Digest, sha256Tagged } from "../receipts/signing.js"
import { ART9_CATEGORIES, Art9Tally, art9Category } from "./art9.js"
import { type ComplianceError, ReportActionNotFound, ReportNotFound, ReportNotReady, refuse } from "./errors.js"
import { ANNEX_IV_TITLES, annexIvContent, art9Content, art12Content, headerBlock, type ReportContent, type ReportHeader, receiptRow } from "./pdf.js"
import { type ActionLine, makeComplianceStore, type ObservationRow, type ReceiptLine, type ReportRow, type Scope } from "./store.js"

const DAY_MS = 86_400_000
/** A period spans at most 366 days (CONTRACT, decided). */
const MAX_SPAN_MS = 366 * DAY_MS
/** Rows read per query while generating. */
const PAGE = 5_000
/** Observations the categories route answers at most. */
const MAX_OBSERVATIONS = 1_000

export const RETENTION_YEARS: Record<ReportFramework, number> = {
  eu_ai_act_art12: 6,
  eu_ai_act_art9: 6,
  eu_ai_act_art6: 6,
  eu_ai_act_annex_iv: 10
}

/** `at` plus whole calendar years, in UTC. */
export const addYears = (at: string, years: number): string => {
  const date = new Date(at)
  date.setUTCFullYear(date.getUTCFullYear() + years)
  return date.toISOString()
}

export interface ReportPeriod {
  readonly start: string | null
  readonly end: string | null
}

/**
 * The period of a request: both ends, or (art6 only) neither. A timestamp without an offset is
 * UTC; a date alone is that day's start (`period_start`) or its last millisecond (`period_end`).
 */
export const readPeriod = (request: Pick<CreateReportRequest, "framework" | "period_start" | "period_end">): { period: ReportPeriod; issues: Array<Issue> } => {
  const issues: Array<Issue> = []
  const needsPeriod = request.framework !== "eu_ai_act_art6"
  const start = request.period_start ?? null
  const end = request.period_end ?? null
  if (start === null && end === null && !needsPeriod) return { period: { start: null, end: null }, issues }
  const read = (field: "period_start" | "period_end", value: string | null) => {
    if (value === null) {
      issues.push({ path: field, message: needsPeriod ? `${field} is required for ${request.framework}` : `${field} is required when the other end of the period is given` })
      return undefined
    }
    const at = parseInstant(value.trim(), field === "period_end")
    if (at === undefined) issues.push({ path: field, message: "must be an ISO 8601 date or date-time" })
    return at
  }
  const from = read("period_start", start)
  const to = read("period_end", end)
  if (from !== undefined && to !== undefined) {
    if (to < from) issues.push({ path: "period_end", message: "must not be before period_start" })
    else if (to - from > MAX_SPAN_MS) issues.push({ path: "period_end", message: "a period spans at most 366 days" })
  }
  return {
    period: { start: from === undefined ? null : new Date(from).toISOString(), end: to === undefined ? null : new Date(to).toISOString() },
    issues
  }
}

const asReport = (row: ReportRow): ComplianceReport => ({
  id: row.report_uuid,
  report_uuid: row.report_uuid,
  framework: row.framework,
  status: row.status,
  org_uuid: row.org_uuid,
  period_start: row.period_start,
  period_end: row.period_end,
  action_uuid: row.action_uuid,
  agent_filter: row.agent_filter,
  receipt_count: row.receipt_count,
  pdf_size_bytes: row.pdf_size_bytes,
  content_hash: row.content_hash,
  signature: row.signature,
  signing_key_id: row.signing_key_id,
  timestamp_token: row.timestamp_token,
  timestamp_token_present: row.timestamp_token !== null,
  report_metadata: row.report_metadata,
  error_message: row.error_message,
  generated_at: row.generated_at,
  retain_until: row.retain_until,
  created_at: row.created_at
})

/** What generating a report produced, before it is rendered and signed. */
interface Generated {
  readonly content: ReportContent
  readonly metadata: Record<string, unknown>
  readonly receiptCount: number
  readonly observations: ReadonlyArray<Omit<ObservationRow, "last_report_id">>
}

/** A refusal the generator states in words; the report is kept as `failed` with it. */
class GenerationFailed extends Error {}

export const makeCompliance = Effect.gen(function* () {
  const store = yield* makeComplianceStore
  const receipts = yield* Receipts
  const explanations = yield* Explanations
  const config = yield* Config

  const found = (orgUuid: string, reportUuid: string) =>
    Effect.flatMap(store.reportById(orgUuid, reportUuid), (row) => (row === undefined ? refuse(ReportNotFound.of(reportUuid)) : Effect.succeed(row)))

  const ready = (orgUuid: string, reportUuid: string) =>
    Effect.flatMap(found(orgUuid, reportUuid), (row) =>
      row.status === "ready" ? Effect.succeed(row) : refuse(ReportNotReady.of(reportUuid, row.status))
    )

  /** Streams the period's actions through the Article 9 tally. */
  const tallyActions = (scope: Scope) =>
    Effect.gen(function* () {
      const tally = new Art9Tally(DEFAULT_AGENT_ID)
      let after: { created_at: string; action_uuid: string } | null = null
      for (;;) {
        const page: ReadonlyArray<ActionLine> = yield* store.actionPage(scope, after, PAGE)
        for (const action of page) tally.add(action)
        if (page.length < PAGE) return tally
        const last: ActionLine = page[page.length - 1]!
        after = { created_at: last.created_at, action_uuid: last.action_uuid }
      }
    })

  const art12 = (header: ReportHeader, scope: Scope, job: PdfJob) =>
    Effect.gen(function* () {
      const stats = yield* store.periodStats(scope)
      if (stats.receipt_count > config.complianceMaxReportReceipts) {
        return yield* Effect.fail(
          new GenerationFailed(
            `the period holds ${stats.receipt_count} receipts; one Article 12 report lists at most ${config.complianceMaxReportReceipts}: narrow the period or agent_filter`
          )
        )
      }
      const keys = new Map<string, number>()
      let timestamped = 0
      let receiptCount = 0
      let after: { created_at: string; receipt_uuid: string } | null = null
      for (;;) {
        const page: ReadonlyArray<ReceiptLine> = yield* store.receiptPage(scope, after, PAGE)
        // Each page's rows go to the PDF thread at once, grouped by agent: the gateway's heap holds one page.
        const groups = new Map<string, Array<Array<string>>>()
        for (const line of page) {
          const agent = line.agent_id ?? DEFAULT_AGENT_ID
          const rows = groups.get(agent)
          if (rows === undefined) groups.set(agent, [receiptRow(line)])
          else rows.push(receiptRow(line))
          keys.set(line.public_key_id, (keys.get(line.public_key_id) ?? 0) + 1)
          if (line.timestamp_token_present) timestamped++
          receiptCount++
        }
        if (groups.size > 0) job.addRows([...groups])
        if (page.length < PAGE) break
        const last: ReceiptLine = page[page.length - 1]!
        after = { created_at: last.created_at, receipt_uuid: last.receipt_uuid }
      }
      return {
        content: art12Content(header, stats, keys, timestamped, receiptCount),
        metadata: {
          article: "12",
          total_actions: stats.total_actions,
          distinct_agents: stats.distinct_agents,
          distinct_models: stats.distinct_models,
          status_breakdown: stats.status_breakdown
        },
        receiptCount,
        observations: []
      } satisfies Generated
    })

  const art9 = (header: ReportHeader, scope: Scope) =>
    Effect.gen(function* () {
      const tally = yield* tallyActions(scope)
      const stats = yield* store.periodStats(scope)
      const agents = tally.agentCounts()
      return {
        content: art9Content(header, tally.categories, agents, tally.total),
        metadata: { categories: tally.categories },
        receiptCount: stats.receipt_count,
        observations: agents
      } satisfies Generated
    })

  const annexIv = (header: ReportHeader, scope: Scope, documentation: AnnexIvDocumentation | null) =>
    Effect.gen(function* () {
      const stats = yield* store.periodStats(scope)
      const tally = yield* tallyActions(scope)
      const texts = ANNEX_IV_SECTIONS.map((key) => {
        const value = documentation?.[key]
        return typeof value === "string" && value.trim() !== "" ? value : null
      })
      return {
        content: annexIvContent(header, texts, { stats, categories: tally.categories }),
        metadata: {
          annex: "IV",
          article_reference: "11",
          sections: ANNEX_IV_SECTIONS.map((key, index) => ({ key, point: index + 1, title: ANNEX_IV_TITLES[index], provided: texts[index] !== null })),
          missing_sections: ANNEX_IV_SECTIONS.filter((_, index) => texts[index] === null),
          total_actions: stats.total_actions
        },
        receiptCount: stats.receipt_count,
        observations: []
      } satisfies Generated
    })

  /** Article 6: the signed explanation of one action, printed; its content_hash ties the report to the JSON. */
  const art6 = (header: ReportHeader, actionUuid: string) =>
    Effect.gen(function* () {
      // The explanations store reads through the ambient SqlClient.
      const explanation = yield* explanations.explain(header.org_uuid, actionUuid).pipe(Effect.provideService(SqlClient.SqlClient, store.sql))
      const printed = explanationPdfModel(explanation)
      return {
        content: { title: "EU AI Act - Explanation of an individual decision", subtitle: printed.subtitle ?? actionUuid, blocks: [headerBlock(header), ...printed.blocks] },
        metadata: { action_uuid: actionUuid, explanation_content_hash: explanation._envelope.content_hash },
        receiptCount: yield* store.receiptsOfAction(header.org_uuid, actionUuid),
        observations: []
      } satisfies Generated
    })

  const generate = (request: CreateReportRequest, header: ReportHeader, scope: Scope | null, job: PdfJob): Effect.Effect<Generated, unknown> => {
    switch (request.framework) {
      case "eu_ai_act_art12":
        return art12(header, scope!, job)
      case "eu_ai_act_art9":
        return art9(header, scope!)
      case "eu_ai_act_annex_iv":
        return annexIv(header, scope!, request.documentation ?? null)
      case "eu_ai_act_art6":
        return art6(header, request.action_uuid!)
    }
  }

  /** The failure's own words when it is a refusal we stated, else a generic sentence (the cause is logged). */
  const failureMessage = (cause: Cause.Cause<unknown>): string => {
    const error = Cause.squash(cause)
    return error instanceof GenerationFailed ? error.message : "the report could not be generated"
  }

  const create = Effect.fn("Compliance.create")(function* (principal: Principal, request: CreateReportRequest) {
    const org = principal.orgUuid
    const { period, issues } = readPeriod(request)
    const actionUuid = request.action_uuid ?? null
    if (request.framework === "eu_ai_act_art6" && (actionUuid === null || actionUuid.trim() === "")) {
      issues.push({ path: "action_uuid", message: "action_uuid is required for eu_ai_act_art6" })
    }
    if (issues.length > 0) return yield* refuse(InvalidInput.of(issues))
    if (request.framework === "eu_ai_act_art6" && !(yield* store.actionExists(org, actionUuid!))) {
      return yield* refuse(ReportActionNotFound.of(actionUuid!))
    }

    const reportUuid = newUuid()
    const createdAt = new Date(yield* Clock.currentTimeMillis).toISOString()
    const generatedAt = createdAt
    const years = RETENTION_YEARS[request.framework]
    const agentFilter = request.agent_filter === undefined || request.agent_filter === null ? null : [...new Set(request.agent_filter)]
    const header: ReportHeader = {
      report_uuid: reportUuid,
      org_uuid: org,
      framework: request.framework,
      period_start: period.start,
      period_end: period.end,
      agent_filter: agentFilter,
      generated_at: generatedAt,
      retain_until: addYears(generatedAt, years),
      retention_years: years
    }
    const scope: Scope | null = period.start === null ? null : { orgUuid: org, from: period.start, to: period.end!, agents: agentFilter }
    const base: ReportRow = {
      report_uuid: reportUuid,
      org_uuid: org,
      framework: request.framework,
      status: "failed",
      period_start: period.start,
      period_end: period.end,
      action_uuid: request.framework === "eu_ai_act_art6" ? actionUuid : null,
      agent_filter: agentFilter,
      receipt_count: 0,
      pdf_size_bytes: null,
      content_hash: null,
      signature: null,
      signing_key_id: null,
      timestamp_token: null,
      report_metadata: { retention_requirement_years: years },
      error_message: null,
      generated_at: null,
      retain_until: null,
      created_at: createdAt
    }

    const job = startPdfJob()
    const outcome = yield* Effect.exit(
      Effect.gen(function* () {
        const generated = yield* generate(request, header, scope, job)
        const bytes = yield* Effect.tryPromise(() =>
          job.render({ title: generated.content.title, subtitle: generated.content.subtitle, createdAt: new Date(generatedAt), documentId: reportUuid, blocks: generated.content.blocks })
        )
        return { generated, bytes }
      }).pipe(Effect.onExit((exit) => (Exit.isFailure(exit) ? Effect.sync(job.cancel) : Effect.void)))
    )
    if (Exit.isFailure(outcome)) {
      if (!(Cause.squash(outcome.cause) instanceof GenerationFailed)) yield* Effect.logError("compliance report generation failed", outcome.cause)
      const failed: ReportRow = { ...base, error_message: failureMessage(outcome.cause) }
      yield* store.insertReport(failed, null, [])
      return asReport(failed)
    }

    const { generated, bytes } = outcome.value
    const signer = yield* receipts.platformSigner
    const row: ReportRow = {
      ...base,
      status: "ready",
      receipt_count: generated.receiptCount,
      pdf_size_bytes: bytes.length,
      content_hash: sha256Tagged(bytes),
      signing_key_id: signer.publicKeyId,
      report_metadata: { retention_requirement_years: years, ...generated.metadata },
      generated_at: generatedAt,
      retain_until: header.retain_until
    }
    const descriptorBytes = reportDescriptorBytes(row as unknown as Record<string, unknown>)
    const signed: ReportRow = {
      ...row,
      signature: signer.sign(descriptorBytes),
      timestamp_token: yield* receipts.timestampDigest(sha256Digest(descriptorBytes))
    }
    const observations = generated.observations.map((observation) => ({ ...observation, last_report_id: reportUuid }))
    yield* store.insertReport(signed, bytes, observations)
    return asReport(signed)
  })

  return Compliance.of({
    create,

    list: Effect.fn("Compliance.list")(function* (principal: Principal, filter: ReportFilter, window: OffsetWindow) {
      const { rows, total } = yield* store.listReports(principal.orgUuid, filter, window.limit, window.offset)
      return offsetListPage(rows.map(asReport), window, total)
    }),

    get: Effect.fn("Compliance.get")(function* (principal: Principal, reportUuid: string) {
      return asReport(yield* found(principal.orgUuid, reportUuid))
    }),

    download: Effect.fn("Compliance.download")(function* (principal: Principal, reportUuid: string) {
      const row = yield* ready(principal.orgUuid, reportUuid)
      const bytes = yield* store.reportPdf(principal.orgUuid, reportUuid)
      if (bytes === undefined) return yield* Effect.die(new Error(`report ${reportUuid} is ready but has no stored PDF`))
      return { bytes, filename: `${row.framework}-${row.report_uuid}.pdf` }
    }),

    verify: Effect.fn("Compliance.verify")(function* (principal: Principal, reportUuid: string) {
      const row = yield* ready(principal.orgUuid, reportUuid)
      const bytes = yield* store.reportPdf(principal.orgUuid, reportUuid)
      const { keys } = yield* receipts.jwks
      const report = row as unknown as Record<string, unknown>
      const result = verifyReportDescriptor(
        { descriptor: report, signature: row.signature, signing_key_id: row.signing_key_id, timestamp_token: row.timestamp_token },
        keys,
        bytes ?? new Uint8Array()
      )
      return {
        report_uuid: row.report_uuid,
        valid: result.valid,
        checks: { content_hash_matches: "not checked", ...result.checks } as ReportVerification["checks"],
        descriptor: reportDescriptor(report)
      } satisfies ReportVerification
    }),

    art9Categories: Effect.fn("Compliance.art9Categories")(function* (principal: Principal, filter: ObservationFilter) {
      if (filter.category !== null && art9Category(filter.category) === undefined) {
        return yield* refuse(InvalidInput.one("query.category", `must be one of ${ART9_CATEGORIES.map((category) => category.key).join(", ")}`))
      }
      const observations: ReadonlyArray<Art9Observation> = yield* store.observations(principal.orgUuid, filter, MAX_OBSERVATIONS)
      return { categories: ART9_CATEGORIES.map((category) => ({ ...category })), observations }
    })
  })
})

export interface ReportFilter {
  readonly framework: string | null
  readonly status: string | null
}

export interface ObservationFilter {
  readonly agent_id: string | null
  readonly category: string | null
}

export interface ComplianceService {
  /** Generates, signs and keeps a report; a generation failure is kept as a `failed` report, not refused. */
  readonly create: (principal: Principal, request: CreateReportRequest) => Effect.Effect<ComplianceReport, ComplianceError>
  readonly list: (principal: Principal, filter: ReportFilter, window: OffsetWindow) => Effect.Effect<ReturnType<typeof offsetListPage<ComplianceReport>>>
  readonly get: (principal: Principal, reportUuid: string) => Effect.Effect<ComplianceReport, ComplianceError>
  /** The stored bytes and the name the download carries. */
  readonly download: (principal: Principal, reportUuid: string) => Effect.Effect<{ readonly bytes: Uint8Array; readonly filename: string }, ComplianceError>
  readonly verify: (principal: Principal, reportUuid: string) => Effect.Effect<ReportVerification, ComplianceError>
  readonly art9Categories: (principal: Principal, filter: ObservationFilter) => Effect.Effect<Art9Categories, ComplianceError>
}

export class Compliance extends Context.Service<Compliance, ComplianceService>()("gateway/Compliance") {
  static readonly layer = Layer.effect(Compliance, makeCompliance)
}
