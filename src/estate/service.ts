/**
 * Estate: wills, death certificates with the succession a will orders, and compliance snapshots.
 * Every lookup is scoped to the caller's organization, so another organization's agent is not
 * found. Succession builds on the agents area's records: a transfer to the successor is a
 * transfer receipt in `agent_transfers`, signed like the agents area's own (docs/decisions.md).
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import { SqlClient } from "effect/sql"
import type { Principal } from "../../protocol/auth.js"
import { listPage } from "../../protocol/common.js"
import {
  type ComplianceSnapshot,
  type ComplianceSnapshotRequest,
  type DeathCertificateAnswer,
  type DeathCertificateRequest,
  type Finding,
  type NotifyTarget,
  type SnapshotPage,
  SUCCESSION_POLICIES,
  type SuccessionPolicy,
  type WillAnswer,
  type WillRequest
} from "../../protocol/estate.js"
import { webhookUrlProblem } from "../approvers/url.js"
import { Flags } from "../flags/service.js"
import { auditActor } from "../platform/audit.js"
import { Config } from "../platform/config.js"
import { InvalidInput, type Issue } from "../platform/domain-error.js"
import { newId, newUuid } from "../platform/ids.js"
import { logLine } from "../platform/log.js"
import { Outbound } from "../platform/outbound/index.js"
import { Receipts } from "../receipts/service.js"
import {
  AlreadyDeceased,
  DeathCertificateNotFound,
  EmptyFindings,
  EstateAgentNotFound,
  type EstateError,
  InvalidSuccessionPolicy,
  NotDecommissioned,
  refuse,
  SuccessorNotFound,
  WillNotFound
} from "./errors.js"
import { normalizeFindings, overallStatusOf, requirementIssues } from "./findings.js"
import { makeNotifier } from "./notify.js"
import { type CertificateRow, makeEstateStore, type SnapshotRow, type WillRow } from "./store.js"

export interface AuditContext {
  readonly requestId: string | null
}

const DAY_MS = 86_400_000
/** How often the sweeper looks for agents whose retention ran out. */
const PURGE_SWEEP_MS = 60_000
const EMAIL = /^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+\.[^\s@<>(),;:"]+$/

/** Who did it, as estate records name them: the signed-in user's e-mail, or the API key's id. */
export const callerOf = (principal: Principal): string => (principal.kind === "jwt" ? principal.email : (principal.keyId ?? principal.email))

/** The counts a snapshot carries, computed from its findings (never taken from the caller). */
export const countFindings = (findings: ReadonlyArray<Pick<Finding, "status">>) => ({
  finding_count: findings.length,
  pass_count: findings.filter((finding) => finding.status === "pass").length,
  fail_count: findings.filter((finding) => finding.status === "fail").length,
  partial_count: findings.filter((finding) => finding.status === "partial").length
})

/** Plain strings are e-mail addresses (the published SDK's form). */
export const normalizeTargets = (entries: ReadonlyArray<string | NotifyTarget>): Array<NotifyTarget> =>
  entries.map((entry) => (typeof entry === "string" ? { type: "email" as const, target: entry } : { type: entry.type, target: entry.target }))

const isPolicy = (value: string): value is SuccessionPolicy => (SUCCESSION_POLICIES as ReadonlyArray<string>).includes(value)

const willView = (row: WillRow): WillAnswer => ({
  agent_slug: row.agent_slug,
  will: {
    successor_slug: row.successor_slug,
    succession_policy: row.succession_policy,
    data_retention_days: row.data_retention_days,
    notify_emails: row.notify,
    instructions: row.instructions,
    updated_at: row.updated_at
  }
})

const certificateView = (row: CertificateRow): DeathCertificateAnswer => ({
  agent_slug: row.agent_slug,
  death_certificate: { certificate_id: row.certificate_id, cause: row.cause, notes: row.notes, issued_at: row.issued_at, issued_by: row.issued_by },
  succession: {
    triggered: row.succession_triggered,
    successor_slug: row.successor_slug,
    succession_policy: row.succession_policy,
    transfer_receipt_id: row.transfer_receipt_id,
    purge_after: row.purge_after,
    purged_at: row.purged_at
  }
})

/** A snapshot request; `findingKeysAsSent` orders a findings map as the body sent it. */
export interface SnapshotInput extends ComplianceSnapshotRequest {
  readonly findingKeysAsSent?: ReadonlyArray<string> | undefined
}

const snapshotView = (row: SnapshotRow): ComplianceSnapshot => ({
  snapshot_uuid: row.snapshot_uuid,
  framework: row.framework,
  agent_slug: row.agent_slug,
  overall_status: row.overall_status,
  findings: row.findings,
  notes: row.notes,
  finding_count: row.finding_count,
  pass_count: row.pass_count,
  fail_count: row.fail_count,
  partial_count: row.partial_count,
  created_at: row.created_at,
  created_by: row.created_by,
  id: row.snapshot_uuid,
  status: row.overall_status,
  snapshot_at: row.created_at,
  agent_id: row.agent_slug,
  snapshot_hash: row.snapshot_hash,
  signature: row.signature,
  public_key_id: row.public_key_id,
  timestamp_token: row.timestamp_token
})

export const makeEstate = Effect.gen(function* () {
  const store = yield* makeEstateStore
  const receipts = yield* Receipts
  const flags = yield* Flags
  const config = yield* Config
  const scope = yield* Effect.scope
  const { policy } = yield* Outbound
  const notify = makeNotifier(config, policy, receipts.platformSigner.pipe(Effect.provideService(SqlClient.SqlClient, store.sql)))

  const audit = (principal: Principal, event: string, slug: string, context: AuditContext, details?: Record<string, unknown>) =>
    store.audit({ orgUuid: principal.orgUuid, actor: auditActor(principal), event, target: slug, details, requestId: context.requestId })

  const agentOf = Effect.fnUntraced(function* (principal: Principal, slug: string) {
    const row = yield* store.findAgent(principal.orgUuid, slug)
    if (row === undefined) return yield* refuse(EstateAgentNotFound.of(slug))
    return row
  })

  /** Every problem of the notification targets (e-mail form; URLs as the outbound client will accept them). */
  const targetIssues = Effect.fnUntraced(function* (targets: ReadonlyArray<NotifyTarget>) {
    const issues: Array<Issue> = []
    for (const [index, target] of targets.entries()) {
      const path = `notify_emails[${index}].target`
      if (target.type === "email") {
        if (!EMAIL.test(target.target)) issues.push({ path, message: "must be an e-mail address" })
        continue
      }
      const problem = yield* Effect.promise(() => webhookUrlProblem(target.target, policy))
      if (problem !== undefined) issues.push({ path, message: problem })
    }
    return issues
  })

  /** The successor a will names: another agent of the same organization, still active. */
  const successorOf = Effect.fnUntraced(function* (principal: Principal, slug: string, successor: string) {
    if (successor === slug) return yield* refuse(SuccessorNotFound.of(successor))
    const row = yield* store.findAgent(principal.orgUuid, successor)
    if (row === undefined) return yield* refuse(SuccessorNotFound.of(successor))
    if (row.status !== "active") return yield* refuse(InvalidInput.one("successor_slug", "is decommissioned; name an active agent"))
    return row
  })

  /** The succession receipt: the agents area's transfer receipt, dated at the certificate's issue. */
  const successionReceipt = (principal: Principal, slug: string, successor: string, certificateId: string, atMs: number) =>
    Effect.gen(function* () {
      const record = yield* receipts.signTransferReceipt(
        { kind: "agent_succession", agent_slug: slug, previous_owner: principal.orgUuid, new_owner: principal.orgUuid, successor_slug: successor, certificate_id: certificateId },
        atMs
      )
      yield* store.insertTransfer(record)
      return record
    })

  const announce = (principal: Principal, targets: ReadonlyArray<NotifyTarget>, answer: DeathCertificateAnswer, context: AuditContext) =>
    flags.isEnabled(principal.orgUuid, "slack_integration").pipe(
      Effect.flatMap((slackOn) => notify(targets, answer, slackOn)),
      Effect.flatMap((results) => audit(principal, "agent.death_notified", answer.agent_slug, context, { results })),
      Effect.catchCause((cause) => Effect.sync(() => logLine("error", "death notification failed", { cause: String(cause) }))),
      Effect.forkIn(scope),
      Effect.asVoid
    )

  /** Purges the agents whose `delete` retention ran out; how many. */
  const sweep = Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const due = yield* store.dueForPurge(new Date(now).toISOString())
    let purged = 0
    for (const certificate of due) if (yield* store.purge(certificate)) purged++
    return purged
  }).pipe(Effect.withSpan("Estate.sweep"))

  const putWill = Effect.fn("Estate.putWill")(function* (principal: Principal, slug: string, input: WillRequest, context: AuditContext) {
    yield* agentOf(principal, slug)
    // An executed will is history: it no longer changes.
    if (yield* store.anyCertificate(slug)) return yield* refuse(AlreadyDeceased.of(slug))
    if (!isPolicy(input.succession_policy)) return yield* refuse(InvalidSuccessionPolicy.of(input.succession_policy))
    const targets = normalizeTargets(input.notify_emails ?? [])
    const issues = yield* targetIssues(targets)
    const successor = input.successor_slug ?? null
    if (input.succession_policy === "transfer_to_successor" && successor === null)
      issues.push({ path: "successor_slug", message: "is required when succession_policy is transfer_to_successor" })
    if (issues.length > 0) return yield* refuse(new InvalidInput({ issues }))
    if (successor !== null) yield* successorOf(principal, slug, successor)
    const succession_policy: SuccessionPolicy = input.succession_policy
    // Written with the agent row locked, as a death certificate reads it: no will changes after death.
    const row = yield* store.sql
      .withTransaction(
        Effect.gen(function* () {
          if ((yield* store.lockAgent(principal.orgUuid, slug)) === undefined) return yield* refuse(EstateAgentNotFound.of(slug))
          if (yield* store.anyCertificate(slug)) return yield* refuse(AlreadyDeceased.of(slug))
          return yield* store.upsertWill({
            agent_slug: slug,
            org_uuid: principal.orgUuid,
            successor_slug: successor,
            succession_policy,
            data_retention_days: input.data_retention_days ?? null,
            notify: targets,
            instructions: input.instructions ?? null
          })
        })
      )
      .pipe(Effect.catchTag("SqlError", Effect.die))
    yield* audit(principal, "estate.will_updated", slug, context, { succession_policy: row.succession_policy, successor_slug: row.successor_slug })
    return willView(row)
  })

  const getWill = Effect.fn("Estate.getWill")(function* (principal: Principal, slug: string) {
    yield* agentOf(principal, slug)
    const row = yield* store.findWill(principal.orgUuid, slug)
    if (row === undefined) return yield* refuse(WillNotFound.of(slug))
    return willView(row)
  })

  /**
   * Issues the certificate and runs the will's succession in one transaction with the agent row
   * locked (a second certificate waits and then answers 409); notifications go out after commit.
   */
  const issueDeathCertificate = Effect.fn("Estate.issueDeathCertificate")(function* (
    principal: Principal,
    slug: string,
    input: DeathCertificateRequest,
    context: AuditContext
  ) {
    const cause = input.cause ?? input.reason
    if (cause === undefined) return yield* refuse(InvalidInput.one("cause", "is required"))
    const { row, will } = yield* store.sql
      .withTransaction(
        Effect.gen(function* () {
          const agent = yield* store.lockAgent(principal.orgUuid, slug)
          if (agent === undefined) return yield* refuse(EstateAgentNotFound.of(slug))
          if (yield* store.anyCertificate(slug)) return yield* refuse(AlreadyDeceased.of(slug))
          if (agent.status !== "decommissioned") return yield* refuse(NotDecommissioned.of(slug))
          const will = yield* store.findWill(principal.orgUuid, slug)
          const issuedAtMs = yield* Clock.currentTimeMillis
          const issuedAt = new Date(issuedAtMs).toISOString()
          const certificateId = newId("dc")
          let transferReceiptId: string | null = null
          let purgeAfter: string | null = null
          if (will?.succession_policy === "transfer_to_successor") {
            const successor = will.successor_slug ?? ""
            yield* successorOf(principal, slug, successor)
            const receipt = yield* successionReceipt(principal, slug, successor, certificateId, issuedAtMs)
            transferReceiptId = receipt.transfer_receipt_id
            yield* audit(principal, "agent.succeeded", slug, context, {
              successor_slug: successor,
              transfer_receipt_id: receipt.transfer_receipt_id,
              payload_hash: receipt.payload_hash
            })
          } else if (will?.succession_policy === "delete") {
            purgeAfter = new Date(issuedAtMs + (will.data_retention_days ?? 0) * DAY_MS).toISOString()
          }
          const row = yield* store.insertCertificate({
            certificate_id: certificateId,
            agent_slug: slug,
            org_uuid: principal.orgUuid,
            cause,
            notes: input.notes ?? null,
            issued_at: issuedAt,
            issued_by: callerOf(principal),
            succession_triggered: will !== undefined,
            successor_slug: will?.succession_policy === "transfer_to_successor" ? will.successor_slug : null,
            succession_policy: will?.succession_policy ?? null,
            transfer_receipt_id: transferReceiptId,
            purge_after: purgeAfter,
            purged_at: null
          })
          yield* audit(principal, "agent.death_certificate_issued", slug, context, { certificate_id: certificateId, cause, succession_policy: will?.succession_policy ?? null })
          return { row, will }
        })
      )
      .pipe(Effect.catchTag("SqlError", Effect.die))
    const answer = certificateView(row)
    if (will !== undefined && will.notify.length > 0) yield* announce(principal, will.notify, answer, context)
    return answer
  })

  const getDeathCertificate = Effect.fn("Estate.getDeathCertificate")(function* (principal: Principal, slug: string) {
    yield* agentOf(principal, slug)
    const row = yield* store.findCertificate(principal.orgUuid, slug)
    if (row === undefined) return yield* refuse(DeathCertificateNotFound.of(slug))
    return certificateView(row)
  })

  /**
   * Records a snapshot signed like a receipt: `snapshot_hash` is sha256 of the JCS of exactly the
   * content below, signed by the receipt key and timestamped (RFC 3161) over the same digest.
   */
  const createSnapshot = Effect.fn("Estate.createSnapshot")(function* (principal: Principal, input: SnapshotInput, context: AuditContext) {
    const findings = normalizeFindings(input.findings, input.findingKeysAsSent)
    if (findings.length === 0) return yield* refuse(new EmptyFindings({}))
    const issues = requirementIssues(input.findings)
    if (issues.length > 0) return yield* refuse(new InvalidInput({ issues }))
    yield* agentOf(principal, input.agent_slug)
    const content = {
      snapshot_uuid: newUuid(),
      framework: input.framework,
      agent_slug: input.agent_slug,
      overall_status: input.overall_status ?? overallStatusOf(findings),
      findings,
      notes: input.notes ?? null,
      ...countFindings(findings),
      created_at: new Date(yield* Clock.currentTimeMillis).toISOString(),
      created_by: callerOf(principal)
    }
    const seal = yield* receipts.signDocument(content)
    const row = yield* store.insertSnapshot({
      ...content,
      org_uuid: principal.orgUuid,
      snapshot_hash: seal.payload_hash,
      signature: seal.signature,
      public_key_id: seal.public_key_id,
      timestamp_token: seal.timestamp_token
    })
    yield* audit(principal, "estate.compliance_snapshot_recorded", input.agent_slug, context, { snapshot_uuid: row.snapshot_uuid, framework: row.framework })
    return snapshotView(row)
  })

  const listSnapshots = Effect.fn("Estate.listSnapshots")(function* (principal: Principal, query: SnapshotQuery) {
    if (query.agent_slug !== undefined) yield* agentOf(principal, query.agent_slug)
    const page = query.page ?? 1
    const perPage = query.per_page ?? 20
    const { rows, total } = yield* store.listSnapshots(principal.orgUuid, { framework: query.framework, agentSlug: query.agent_slug }, page, perPage)
    return listPage(rows.map(snapshotView), { page, perPage, total }, "snapshots")
  })

  return Estate.of({ sweep, putWill, getWill, issueDeathCertificate, getDeathCertificate, createSnapshot, listSnapshots })
})

export interface SnapshotQuery {
  readonly page?: number
  readonly per_page?: number
  readonly framework?: string
  readonly agent_slug?: string
}

export interface EstateService {
  /** Purges the agents whose `delete` retention ran out; how many. */
  readonly sweep: Effect.Effect<number>
  readonly putWill: (principal: Principal, slug: string, input: WillRequest, context: AuditContext) => Effect.Effect<WillAnswer, EstateError>
  readonly getWill: (principal: Principal, slug: string) => Effect.Effect<WillAnswer, EstateError>
  readonly issueDeathCertificate: (
    principal: Principal,
    slug: string,
    input: DeathCertificateRequest,
    context: AuditContext
  ) => Effect.Effect<DeathCertificateAnswer, EstateError>
  readonly getDeathCertificate: (principal: Principal, slug: string) => Effect.Effect<DeathCertificateAnswer, EstateError>
  readonly createSnapshot: (principal: Principal, input: SnapshotInput, context: AuditContext) => Effect.Effect<ComplianceSnapshot, EstateError>
  readonly listSnapshots: (principal: Principal, query: SnapshotQuery) => Effect.Effect<SnapshotPage, EstateError>
}

export class Estate extends Context.Service<Estate, EstateService>()("gateway/Estate") {
  /** The service, plus the sweeper that purges `delete`d agents once their retention ran out. */
  static readonly layer = Layer.effect(Estate)(
    Effect.gen(function* () {
      const estate = yield* makeEstate
      const sweep = estate.sweep.pipe(Effect.catchCause((cause) => Effect.sync(() => logLine("error", "estate purge sweep failed", { cause: String(cause) }))))
      yield* Effect.forkScoped(Effect.repeat(sweep, Schedule.spaced(PURGE_SWEEP_MS)))
      return estate
    })
  )
}
