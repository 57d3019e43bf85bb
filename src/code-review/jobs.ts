/**
 * The review job (CONTRACT-sdk-beyond §7): authorize → diff → model review → commit status and
 * review → notarize → (auto-merge). Each step saves where the job goes on (`phase`), so a job a
 * crashed process left is taken over, once its lease runs out, at the step it had reached. Two
 * reviews run at a time per organization; one waiting for a human holds no slot and is looked at
 * every poll. A process that stops hands its leases back. A newer head of the pull request supersedes a review: its action is notarized
 * `failed` (`superseded`) and it posts nothing more.
 */

import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import canonicalize from "canonicalize"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import { SqlClient } from "effect/sql"
import type { Principal } from "../../protocol/auth.js"
import type { ActionsError } from "../actions/errors.js"
import { Actions } from "../actions/service.js"
import { consensusOf, type Vote } from "../cases/consensus.js"
import { Events } from "../events/service.js"
import { Flags } from "../flags/service.js"
import { ModelCalls } from "../models/calls.js"
import { Models } from "../models/service.js"
import { supervisedRound } from "../platform/background.js"
import { Config } from "../platform/config.js"
import { newId } from "../platform/ids.js"
import { logLine } from "../platform/log.js"
import { Outbound } from "../platform/outbound/index.js"
import { Secrets } from "../platform/secrets.js"
import { meterUsage } from "../platform/usage.js"
import { commentableLines } from "./diff.js"
import { type GithubClient, type GithubFailure, githubClient, truncate } from "./github.js"
import { type Finding, reviewDiff } from "./model-review.js"
import { makeReviewStore, type PullRequestHead, type ReviewPatch, type ReviewRow } from "./review-store.js"
import { AUTO_MERGE_FLAG, githubSecretAad } from "./service.js"
import { makeCodeReviewStore } from "./store.js"

export const REVIEW_AGENT = "aira-code-review"
export const REVIEW_ACTION = "code_review.github.review"
export const MERGE_ACTION = "code_review.github.merge"
/** Reviews running at once in one organization. */
const PER_ORG = 2
/** Jobs one process runs at once. */
const PER_PROCESS = 8
/** Inline comments in one review at most; the rest go into its body. */
const MAX_INLINE = 100
const MAX_REVIEW_BODY = 60_000
/** Reads of a pull request whose mergeability GitHub is still computing, before the merge is let go. */
const MERGEABLE_ATTEMPTS = 6
const MERGEABLE_RETRY_MS = 1_000

/** Who authorizes and notarizes a review: the code review agent of the organization. */
const reviewer = (orgUuid: string): Principal => ({
  kind: "api_key",
  orgUuid,
  userUuid: REVIEW_AGENT,
  email: REVIEW_AGENT,
  role: "owner",
  scopes: ["actions:write", "actions:read"],
  keyId: undefined
})

const jcs = (value: unknown) => canonicalize(value) as string

/** A step that ended the job early: the commit status says `description`, the action is `failed` with `reason`. */
class Stop {
  constructor(
    readonly reason: string,
    readonly description: string
  ) {}
}

const codeOf = (error: ActionsError) => (error.reason as { code?: string }).code ?? "UNKNOWN"
const detailsOf = (error: ActionsError) => ((error.reason as { details?: Record<string, unknown> | null }).details ?? {}) as Record<string, unknown>

export interface CodeReviewJobsService {
  /** Queues a review of the head (or answers the open one of that head); `duplicate` for a delivery seen before. */
  readonly enqueue: (deliveryId: string | null, head: PullRequestHead) => Effect.Effect<{ readonly duplicate: true } | { readonly duplicate: false; readonly reviewUuid: string }>
  /** One round of claiming and running work (the loop calls it every poll; tests may too). */
  readonly poll: Effect.Effect<number>
}

export const makeCodeReviewJobs = Effect.gen(function* () {
  const config = yield* Config
  const actions = yield* Actions
  const calls = yield* ModelCalls
  const models = yield* Models
  const flags = yield* Flags
  const events = yield* Events
  const { envelope } = yield* Secrets
  const policy = (yield* Outbound).policy
  const store = yield* makeReviewStore
  const sql = yield* SqlClient.SqlClient
  /** Metering and the outbox write with the service's own connection pool. */
  const withSql = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.provideService(effect, SqlClient.SqlClient, sql)
  const configs = yield* makeCodeReviewStore
  const ca = config.outboundCaFile === undefined ? undefined : readFileSync(config.outboundCaFile)
  const owner = newId("crw")
  // Jobs run in the service's scope: stopping the service interrupts them (their leases run out, another process goes on).
  const scope = yield* Effect.scope
  const running = new Set<string>()

  /** The organization's GitHub access and merge settings; `undefined` client without a token. */
  const githubOf = Effect.fnUntraced(function* (orgUuid: string) {
    const row = yield* configs.config(orgUuid)
    const token = row?.api_token_sealed == null ? undefined : envelope.openText(row.api_token_sealed, githubSecretAad(orgUuid, "api_token"))
    const client: GithubClient | undefined =
      token === undefined ? undefined : githubClient({ apiBaseUrl: row?.api_base_url ?? config.githubApiUrl, token, policy, ca })
    return { client, autoMerge: row?.auto_merge }
  })

  const requireClient = (client: GithubClient | undefined) =>
    client === undefined ? Effect.fail(new Stop("no GitHub API token configured", "No GitHub API token is configured")) : Effect.succeed(client)

  const targetUrl = (actionUuid: string | null) => (actionUuid === null ? `${config.baseUrl}/dashboard` : `${config.baseUrl}/dashboard/actions/${actionUuid}`)

  /** Saves a step; a job superseded meanwhile (or taken over) answers false and goes no further. */
  const save = (job: ReviewRow, patch: ReviewPatch) => store.save(owner, job.review_uuid, patch)

  /** Notarizes; a notarization a crash interrupted is found as it was recorded. */
  const notarize = Effect.fnUntraced(function* (orgUuid: string, actionUuid: string, outcome: "completed" | "failed", details: unknown) {
    const principal = reviewer(orgUuid)
    return yield* actions.notarize(principal, actionUuid, { outcome, outcome_details: jcs(details) }, { skipOutputScan: true }).pipe(
      Effect.map((answer) => (answer as { receipt_uuid?: string }).receipt_uuid ?? null),
      Effect.catch((error) =>
        Effect.map(
          Effect.orElseSucceed(actions.get(principal, actionUuid), () => undefined),
          (detail) => {
            if (detail?.receipt == null) logLine("warn", "code review action not notarized", { action_uuid: actionUuid, code: codeOf(error) })
            return detail?.receipt?.receipt_uuid ?? null
          }
        )
      )
    )
  })

  /** An action still open (authorized or approved) is notarized `failed` with `reason`. */
  const closeOpen = Effect.fnUntraced(function* (orgUuid: string, actionUuid: string | null, reason: string) {
    if (actionUuid === null) return null
    const detail = yield* Effect.orElseSucceed(actions.get(reviewer(orgUuid), actionUuid), () => undefined)
    if (detail === undefined || (detail.status !== "authorized" && detail.status !== "approved")) return detail?.receipt?.receipt_uuid ?? null
    return yield* notarize(orgUuid, actionUuid, "failed", { reason })
  })

  /** A superseded review: its open actions fail, nothing more is posted. */
  const closeSuperseded = Effect.fnUntraced(function* (job: ReviewRow) {
    const receipt = yield* closeOpen(job.org_uuid, job.action_uuid, "superseded")
    yield* closeOpen(job.org_uuid, job.merge_action_uuid, "superseded")
    yield* store.finishSuperseded(owner, job.review_uuid, receipt)
  })

  /** Ends the review as failed: commit status `error`, the action `failed`. */
  const failReview = Effect.fnUntraced(function* (job: ReviewRow, stop: Stop) {
    logLine("warn", "code review failed", { review_uuid: job.review_uuid, repository: job.repository, pull_number: job.pull_number, reason: stop.reason })
    const { client } = yield* githubOf(job.org_uuid)
    if (client !== undefined) {
      yield* client.status(job.repository, job.head_sha, { state: "error", description: stop.description, targetUrl: targetUrl(job.action_uuid) }).pipe(
        Effect.catch((failure) => Effect.sync(() => logLine("warn", "code review status not posted", { review_uuid: job.review_uuid, message: failure.message })))
      )
    }
    const receipt = yield* closeOpen(job.org_uuid, job.action_uuid, stop.reason)
    yield* save(job, {
      status: "failed",
      failure_reason: truncate(stop.reason, 1_000),
      status_state: "error",
      phase: "end",
      done: true,
      ...(receipt === null ? {} : { receipt_uuid: receipt })
    })
  })

  const authorize = Effect.fnUntraced(function* (job: ReviewRow) {
    const model = (yield* models.codeReview(reviewer(job.org_uuid))).default_model
    const answer = yield* actions
      .authorize(reviewer(job.org_uuid), {
        action_type: REVIEW_ACTION,
        agent_id: REVIEW_AGENT,
        model_id: model,
        details: jcs({ repository: job.repository, pull_number: job.pull_number, head_sha: job.head_sha, base_ref: job.base_ref }),
        context: { repository: job.repository, pull_number: job.pull_number, author: job.author, base_ref: job.base_ref, head_ref: job.head_ref }
      })
      .pipe(Effect.result)
    if (answer._tag === "Failure") {
      const error = answer.failure
      const actionUuid = typeof detailsOf(error).action_uuid === "string" ? (detailsOf(error).action_uuid as string) : null
      if (actionUuid !== null) yield* save(job, { action_uuid: actionUuid })
      const description = codeOf(error) === "POLICY_DENIED" ? "Denied by policy" : `Not authorized: ${codeOf(error)}`
      return yield* Effect.fail(new Stop(`not authorized: ${codeOf(error)}`, description))
    }
    const { action_uuid: actionUuid, status } = answer.success as { action_uuid: string; status: string }
    const waiting = status === "pending_approval"
    return { actionUuid, model, waiting }
  })

  /** The action's decision once a human has had it: `approved`, still `pending`, or anything else (denied, expired). */
  const decision = Effect.fnUntraced(function* (orgUuid: string, actionUuid: string) {
    const detail = yield* actions.get(reviewer(orgUuid), actionUuid).pipe(Effect.orElseSucceed(() => undefined))
    if (detail === undefined) return "gone" as const
    if (detail.status === "approved" || detail.status === "authorized") return "approved" as const
    if (detail.status === "pending_approval") return "pending" as const
    return "refused" as const
  })

  const review = Effect.fnUntraced(function* (job: ReviewRow) {
    if (job.model_id === null) return yield* Effect.fail(new Stop("no code review model", "No code review model is configured (default_model)"))
    const client = yield* requireClient((yield* githubOf(job.org_uuid)).client)
    const diff = yield* client.diff(job.repository, job.pull_number).pipe(
      Effect.mapError((failure) =>
        failure.kind === "too_large" ? new Stop("diff too large", "Not reviewed: the diff is larger than 1 MiB") : new Stop(failure.message, "GitHub failed: the diff could not be read")
      )
    )
    const text = diff.toString("utf8")
    const findings = yield* reviewDiff(calls, {
      orgUuid: job.org_uuid,
      model: job.model_id,
      repository: job.repository,
      pullNumber: job.pull_number,
      diff: text,
      timeoutMs: config.codeReviewTimeoutMs
    }).pipe(Effect.mapError((failure) => new Stop(typeof failure === "string" ? failure : `the model failed: ${failure.message}`, "The review model failed")))
    yield* store.saveViolations(job.review_uuid, job.head_sha, findings, commentableLines(text))
    const critical = findings.filter((finding) => finding.severity === "critical").length
    return {
      diff_sha256: createHash("sha256").update(diff).digest("hex"),
      diff_bytes: diff.byteLength,
      critical,
      warning: findings.length - critical
    }
  })

  const commentOf = (finding: Finding) =>
    [`**${finding.severity === "critical" ? "Critical" : "Warning"} (${finding.category}): ${finding.finding}**`, finding.description, finding.fix === null ? "" : `Fix: ${finding.fix}`]
      .filter((part) => part !== "")
      .join("\n\n")

  /** Commit status and one review: inline comments on diff lines, the others in its body. */
  const post = Effect.fnUntraced(function* (job: ReviewRow) {
    const client = yield* requireClient((yield* githubOf(job.org_uuid)).client)
    const findings = yield* store.findings(job.review_uuid)
    const critical = findings.filter((finding) => finding.severity === "critical").length
    const warning = findings.length - critical
    const state = critical > 0 ? "failure" : "success"
    const description =
      findings.length === 0 ? "No violations found" : `${critical} critical, ${warning} warning${warning === 1 ? "" : "s"}${critical > 0 ? ": merge blocked" : ""}`
    yield* client.status(job.repository, job.head_sha, { state, description, targetUrl: targetUrl(job.action_uuid) })
    const inline = findings.filter((finding) => finding.onDiffLine).slice(0, MAX_INLINE)
    const elsewhere = findings.filter((finding) => !inline.includes(finding))
    const body = [
      `Aira code review of ${job.head_sha.slice(0, 12)}: ${description}.`,
      ...elsewhere.map((finding) => `- ${finding.file}${finding.line === null ? "" : `:${finding.line}`}: ${commentOf(finding).replace(/\n\n/g, " ")}`)
    ].join("\n")
    const reviewId = yield* client.review(job.repository, job.pull_number, {
      commitId: job.head_sha,
      event: critical > 0 ? "REQUEST_CHANGES" : "COMMENT",
      body: truncate(body, MAX_REVIEW_BODY),
      comments: inline.map((finding) => ({ path: finding.file, line: finding.line as number, body: commentOf(finding) }))
    })
    return { state, reviewId }
  })

  /** Whether this review may merge: flag and settings on, nothing critical, the pull request clean at the reviewed head, and the vote. */
  const mayMerge = Effect.fnUntraced(function* (job: ReviewRow) {
    const { client, autoMerge } = yield* githubOf(job.org_uuid)
    if (client === undefined || autoMerge?.enabled !== true || (job.critical ?? 0) > 0) return undefined
    if (!(yield* flags.isEnabled(job.org_uuid, AUTO_MERGE_FLAG))) return undefined
    // GitHub computes mergeability after a push: `unknown` (or none) means "ask again shortly".
    let pull = yield* client.pull(job.repository, job.pull_number).pipe(Effect.orElseSucceed(() => undefined))
    for (let attempt = 1; attempt < MERGEABLE_ATTEMPTS && pull !== undefined && (pull.mergeableState === null || pull.mergeableState === "unknown"); attempt++) {
      yield* Effect.sleep(MERGEABLE_RETRY_MS)
      pull = yield* client.pull(job.repository, job.pull_number).pipe(Effect.orElseSucceed(() => undefined))
    }
    if (pull === undefined || pull.draft || pull.merged || pull.mergeableState !== "clean" || pull.headSha !== job.head_sha) return undefined
    if (autoMerge.mode === "vote") {
      const findings = yield* store.findings(job.review_uuid)
      const prompt = [
        `Pull request #${job.pull_number} of ${job.repository} (head ${job.head_sha}, into ${job.base_ref}) was reviewed.`,
        findings.length === 0 ? "The review found no violations." : `The review found ${findings.length} warnings:`,
        ...findings.slice(0, 50).map((finding) => `- ${finding.category}: ${finding.finding} (${finding.file})`),
        "Should it be merged automatically? APPROVE to merge, DENY to keep it open, REVIEW to leave it to a human."
      ].join("\n")
      const votes = yield* Effect.forEach(
        autoMerge.vote_models ?? [],
        (model) =>
          calls
            .ask({ orgUuid: job.org_uuid, model, system: "You decide whether a reviewed pull request may be merged without a human.", prompt, timeoutMs: config.codeReviewTimeoutMs })
            .pipe(Effect.result),
        { concurrency: "unbounded" }
      )
      // A model that failed blocks the merge.
      if (votes.length === 0 || votes.some((vote) => vote._tag === "Failure")) return undefined
      const consensus = consensusOf(votes.map((vote) => (vote as { success: Vote }).success))
      if (consensus.decision !== "APPROVE") return undefined
    }
    return { mergeMethod: autoMerge.merge_method ?? "squash" }
  })

  const authorizeMerge = Effect.fnUntraced(function* (job: ReviewRow, mergeMethod: string) {
    const answer = yield* actions
      .authorize(reviewer(job.org_uuid), {
        action_type: MERGE_ACTION,
        agent_id: REVIEW_AGENT,
        model_id: job.model_id,
        details: jcs({ repository: job.repository, pull_number: job.pull_number, head_sha: job.head_sha, merge_method: mergeMethod, review_action_uuid: job.action_uuid }),
        context: { repository: job.repository, pull_number: job.pull_number, author: job.author, base_ref: job.base_ref, head_ref: job.head_ref, merge_method: mergeMethod }
      })
      .pipe(Effect.result)
    if (answer._tag === "Failure") return undefined
    const { action_uuid: actionUuid, status } = answer.success as { action_uuid: string; status: string }
    return { actionUuid, waiting: status === "pending_approval" }
  })

  const merge = Effect.fnUntraced(function* (job: ReviewRow) {
    const actionUuid = job.merge_action_uuid as string
    const { client, autoMerge } = yield* githubOf(job.org_uuid)
    const mergeMethod = autoMerge?.merge_method ?? "squash"
    if (client === undefined) {
      yield* notarize(job.org_uuid, actionUuid, "failed", { reason: "no GitHub API token configured" })
      return
    }
    const merged = yield* client.merge(job.repository, job.pull_number, mergeMethod, job.head_sha).pipe(Effect.result)
    if (merged._tag === "Failure") {
      const failure = merged.failure
      yield* notarize(job.org_uuid, actionUuid, "failed", { reason: failure.message, status: failure.status })
      return
    }
    const mergeSha = merged.success
    const receipt = yield* notarize(job.org_uuid, actionUuid, "completed", {
      repository: job.repository,
      pull_number: job.pull_number,
      head_sha: job.head_sha,
      merge_method: mergeMethod,
      merge_commit_sha: mergeSha
    })
    yield* save(job, { merged: true, auto_merged: true, merge_commit_sha: mergeSha })
    yield* withSql(events.record([
      {
        orgUuid: job.org_uuid,
        type: "action.auto_merged",
        data: {
          action_uuid: actionUuid,
          review_action_uuid: job.action_uuid,
          repository: job.repository,
          pull_number: job.pull_number,
          head_sha: job.head_sha,
          merge_method: mergeMethod,
          merge_commit_sha: mergeSha,
          receipt_uuid: receipt
        }
      }
    ]))
    yield* withSql(meterUsage(job.org_uuid, "auto_merge", job.repository))
  })

  const waitAgain = (job: ReviewRow) => store.release(owner, job.review_uuid, new Date(Date.now() + config.codeReviewPollMs))

  /** Runs the job from its phase until it ends or waits; every step saved before the next. */
  const run = (start: ReviewRow): Effect.Effect<void, Stop | GithubFailure> =>
    Effect.gen(function* () {
      let job = start
      const step = Effect.fnUntraced(function* (patch: ReviewPatch) {
        if (!(yield* save(job, patch))) return false
        job = { ...job, ...(patch as Partial<ReviewRow>) }
        return true
      })
      for (;;) {
        switch (job.phase) {
          case "authorize": {
            const { actionUuid, model, waiting } = yield* authorize(job)
            if (!(yield* step({ action_uuid: actionUuid, model_id: model, phase: waiting ? "awaiting_approval" : "review" }))) return
            if (waiting) return yield* waitAgain(job)
            break
          }
          case "awaiting_approval": {
            const decided = yield* decision(job.org_uuid, job.action_uuid as string)
            if (decided === "pending") return yield* waitAgain(job)
            if (decided !== "approved") return yield* Effect.fail(new Stop("not approved", "Not approved by a human"))
            if (!(yield* step({ phase: "review" }))) return
            break
          }
          case "review": {
            if (!(yield* step({ ...(yield* review(job)), phase: "post" }))) return
            break
          }
          case "post": {
            const posted = yield* post(job).pipe(
              Effect.mapError((failure) => (failure instanceof Stop ? failure : new Stop(failure.message, "GitHub failed: the review could not be posted")))
            )
            if (!(yield* step({ status_state: posted.state, github_review_id: posted.reviewId, phase: "notarize" }))) return
            break
          }
          case "notarize": {
            const receipt = yield* notarize(job.org_uuid, job.action_uuid as string, "completed", {
              diff_sha256: job.diff_sha256,
              diff_bytes: job.diff_bytes,
              critical: job.critical,
              warning: job.warning,
              model_id: job.model_id,
              status_state: job.status_state,
              review_id: job.github_review_id === null ? null : Number(job.github_review_id)
            })
            yield* withSql(meterUsage(job.org_uuid, "code_review", job.repository))
            if (!(yield* step({ status: "completed", reviewed_at: new Date(), phase: "merge", ...(receipt === null ? {} : { receipt_uuid: receipt }) }))) return
            break
          }
          case "merge": {
            const allowed = yield* mayMerge(job)
            const authorized = allowed === undefined ? undefined : yield* authorizeMerge(job, allowed.mergeMethod)
            if (authorized === undefined) return yield* step({ phase: "end", done: true }).pipe(Effect.asVoid)
            if (!(yield* step({ merge_action_uuid: authorized.actionUuid, phase: authorized.waiting ? "awaiting_merge_approval" : "merging" }))) return
            if (authorized.waiting) return yield* waitAgain(job)
            break
          }
          case "awaiting_merge_approval": {
            const decided = yield* decision(job.org_uuid, job.merge_action_uuid as string)
            if (decided === "pending") return yield* waitAgain(job)
            if (!(yield* step(decided === "approved" ? { phase: "merging" } : { phase: "end", done: true }))) return
            break
          }
          case "merging": {
            yield* merge(job)
            return yield* step({ phase: "end", done: true }).pipe(Effect.asVoid)
          }
          default:
            return yield* step({ done: true }).pipe(Effect.asVoid)
        }
      }
    })

  const runJob = (job: ReviewRow) =>
    Effect.gen(function* () {
      if (job.status === "superseded") return yield* closeSuperseded(job)
      const result = yield* Effect.result(run(job))
      if (result._tag === "Failure") {
        const failure = result.failure
        const stop = failure instanceof Stop ? failure : new Stop(failure.message, "GitHub failed")
        // A job superseded while it ran is closed as superseded, not failed.
        const now = yield* store.review(job.review_uuid)
        if (now?.status === "superseded") return yield* closeSuperseded(now)
        if (now !== undefined && (now.phase === "merge" || now.phase === "merging" || now.phase === "awaiting_merge_approval")) {
          // The review is done: a merge that could not go ahead leaves it completed.
          yield* closeOpen(now.org_uuid, now.merge_action_uuid, stop.reason)
          return yield* store.save(owner, now.review_uuid, { phase: "end", done: true })
        }
        yield* failReview(now ?? job, stop)
        return
      }
      const now = yield* store.review(job.review_uuid)
      if (now?.status === "superseded" && !now.done) yield* closeSuperseded(now)
    }).pipe(
      Effect.catchCause((cause) => Effect.sync(() => logLine("error", "code review job failed", { review_uuid: job.review_uuid, cause: String(cause) }))),
      Effect.ensuring(Effect.sync(() => running.delete(job.review_uuid)))
    )

  const poll = Effect.gen(function* () {
    const room = PER_PROCESS - running.size
    if (room <= 0) return 0
    const claimed = yield* store.claim(owner, config.codeReviewLeaseMs, PER_ORG, room)
    for (const job of claimed) {
      running.add(job.review_uuid)
      yield* Effect.forkIn(runJob(job), scope)
    }
    return claimed.length
  })

  const enqueue = (deliveryId: string | null, head: PullRequestHead) => store.enqueue(deliveryId, head)

  return {
    service: { enqueue, poll } satisfies CodeReviewJobsService,
    renew: Effect.suspend(() => store.renew(owner, [...running], config.codeReviewLeaseMs)),
    releaseAll: store.releaseAll(owner),
    prune: store.pruneDeliveries
  }
})

export class CodeReviewJobs extends Context.Service<CodeReviewJobs, CodeReviewJobsService>()("gateway/CodeReviewJobs") {
  /** The jobs, their poll loop (which resumes what a crashed process left), lease renewal and delivery pruning. */
  static readonly layer = Layer.effect(CodeReviewJobs)(
    Effect.gen(function* () {
      const jobs = yield* makeCodeReviewJobs
      const { codeReviewPollMs, codeReviewLeaseMs } = yield* Config
      // Registered before anything is forked, so it runs last: the jobs are interrupted first, then their
      // leases handed back, and the next process resumes them at once instead of after a lease.
      yield* Effect.addFinalizer(() => supervisedRound("code review lease release", jobs.releaseAll, undefined))
      yield* Effect.forkScoped(Effect.repeat(supervisedRound("code review poll", jobs.service.poll, 0), Schedule.spaced(codeReviewPollMs)))
      yield* Effect.forkScoped(Effect.repeat(supervisedRound("code review lease", jobs.renew, undefined), Schedule.spaced(Math.max(50, Math.floor(codeReviewLeaseMs / 3)))))
      yield* Effect.forkScoped(Effect.repeat(supervisedRound("code review deliveries prune", jobs.prune, undefined), Schedule.spaced(3_600_000)))
      return jobs.service
    })
  )
}
