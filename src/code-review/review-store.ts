/**
 * SQL of the review jobs: deliveries seen, reviews (the durable job: `phase` is where it goes on,
 * `done` says whether anything is left to do, `lease_owner`/`lease_until` which process runs it
 * now) and their violations. A process claims work by taking leases; a lease not renewed (its
 * process crashed) expires and another process, or the restarted one, takes the job over.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { SqlClient } from "effect/sql"
import type { ReviewedPullRequest, Violation } from "../../protocol/code-review.js"
import { NullableTimestamp, Timestamp } from "../platform/columns.js"
import { sqlDefects } from "../platform/db/store.js"
import { newId } from "../platform/ids.js"
import type { CommentableLines } from "./diff.js"
import type { Finding } from "./model-review.js"

/** A stored finding, and whether an inline comment can point at its line. */
export interface StoredFinding extends Finding {
  readonly onDiffLine: boolean
}

/** Where a review goes on. */
export type Phase = "authorize" | "awaiting_approval" | "review" | "post" | "notarize" | "merge" | "awaiting_merge_approval" | "merging" | "end"

export const ReviewRow = Schema.Struct({
  review_uuid: Schema.String,
  org_uuid: Schema.String,
  repository: Schema.String,
  repository_key: Schema.String,
  pull_number: Schema.Number,
  head_sha: Schema.String,
  base_ref: Schema.String,
  head_ref: Schema.String,
  author: Schema.String,
  status: Schema.String,
  phase: Schema.String,
  done: Schema.Boolean,
  model_id: Schema.NullOr(Schema.String),
  action_uuid: Schema.NullOr(Schema.String),
  receipt_uuid: Schema.NullOr(Schema.String),
  merge_action_uuid: Schema.NullOr(Schema.String),
  merged: Schema.Boolean,
  auto_merged: Schema.Boolean,
  merge_commit_sha: Schema.NullOr(Schema.String),
  diff_sha256: Schema.NullOr(Schema.String),
  diff_bytes: Schema.NullOr(Schema.Number),
  critical: Schema.NullOr(Schema.Number),
  warning: Schema.NullOr(Schema.Number),
  status_state: Schema.NullOr(Schema.String),
  github_review_id: Schema.NullOr(Schema.String),
  failure_reason: Schema.NullOr(Schema.String),
  reviewed_at: NullableTimestamp,
  created_at: Timestamp
})
export type ReviewRow = typeof ReviewRow.Type

const COLUMNS = `review_uuid, org_uuid, repository, repository_key, pull_number::float8 AS pull_number, head_sha, base_ref, head_ref, author, status, phase, done,
  model_id, action_uuid, receipt_uuid, merge_action_uuid, merged, auto_merged, merge_commit_sha, diff_sha256, diff_bytes, critical, warning, status_state,
  github_review_id::text AS github_review_id, failure_reason, reviewed_at, created_at`

const ViolationRow = Schema.Struct({
  violation_uuid: Schema.String,
  review_uuid: Schema.String,
  file: Schema.String,
  line: Schema.NullOr(Schema.Number),
  finding: Schema.String,
  category: Schema.String,
  severity: Schema.String,
  description: Schema.String,
  fix: Schema.NullOr(Schema.String),
  blocks_merge: Schema.Boolean,
  head_sha: Schema.String,
  created_at: Timestamp
})

/** A pull request event the receiver accepted. */
export interface PullRequestHead {
  readonly orgUuid: string
  readonly repository: string
  readonly pullNumber: number
  readonly headSha: string
  readonly baseRef: string
  readonly headRef: string
  readonly author: string
}

/** Columns a job step may change. */
export type ReviewPatch = Partial<{
  status: string
  phase: Phase
  done: boolean
  model_id: string | null
  action_uuid: string
  receipt_uuid: string
  merge_action_uuid: string
  merged: boolean
  auto_merged: boolean
  merge_commit_sha: string
  diff_sha256: string
  diff_bytes: number
  critical: number
  warning: number
  status_state: string
  github_review_id: number
  failure_reason: string
  reviewed_at: Date
  run_after: Date
}>

/** Deliveries are remembered this long (GitHub redelivers within days). */
const DELIVERY_RETENTION = "30 days"

export const makeReviewStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const one = (rows: ReadonlyArray<unknown>) => (rows.length === 0 ? undefined : Schema.decodeUnknownSync(ReviewRow)(rows[0]))

  const selectReview = (reviewUuid: string) => Effect.map(sql.unsafe(`SELECT ${COLUMNS} FROM code_reviews WHERE review_uuid = $1`, [reviewUuid]), one)

  /**
   * Records the delivery and queues a review of the head, in one transaction: a delivery seen
   * before is `duplicate`; a review of the same head still queued or running is answered as it
   * is; other open reviews of the pull request are superseded (one with an action stays to do:
   * its action is notarized `failed`).
   */
  const enqueue = (deliveryId: string | null, head: PullRequestHead) =>
    sql.withTransaction(
      Effect.gen(function* () {
        if (deliveryId !== null) {
          const fresh = yield* sql`INSERT INTO github_deliveries (org_uuid, delivery_id) VALUES (${head.orgUuid}, ${deliveryId})
                                   ON CONFLICT DO NOTHING RETURNING delivery_id`
          if (fresh.length === 0) return { duplicate: true as const }
        }
        const key = head.repository.toLowerCase()
        const open = yield* sql<{ review_uuid: string; head_sha: string }>`
          SELECT review_uuid, head_sha FROM code_reviews
          WHERE org_uuid = ${head.orgUuid} AND repository_key = ${key} AND pull_number = ${head.pullNumber} AND status IN ('queued', 'running')
          FOR UPDATE`
        const same = open.find((row) => row.head_sha === head.headSha)
        if (same !== undefined) return { duplicate: false as const, reviewUuid: same.review_uuid }
        if (open.length > 0) {
          yield* sql`UPDATE code_reviews SET status = 'superseded', failure_reason = 'superseded', done = (action_uuid IS NULL), run_after = now(), updated_at = now()
                     WHERE review_uuid IN ${sql.in(open.map((row) => row.review_uuid))}`
        }
        const reviewUuid = newId("crv")
        yield* sql`INSERT INTO code_reviews (review_uuid, org_uuid, repository, repository_key, pull_number, head_sha, base_ref, head_ref, author)
                   VALUES (${reviewUuid}, ${head.orgUuid}, ${head.repository}, ${key}, ${head.pullNumber}, ${head.headSha}, ${head.baseRef}, ${head.headRef}, ${head.author})`
        return { duplicate: false as const, reviewUuid }
      })
    )

  /**
   * Leases up to `max` jobs with work to do for `owner`: at most `perOrg` running at once in an
   * organization (a job waiting for a human does not count, and is only looked at).
   */
  const claim = (owner: string, leaseMs: number, perOrg: number, max: number) =>
    sql.withTransaction(
      Effect.gen(function* () {
        const candidates = yield* sql<{ review_uuid: string; org_uuid: string; phase: string; status: string }>`
          SELECT review_uuid, org_uuid, phase, status FROM code_reviews
          WHERE NOT done AND run_after <= now() AND (lease_until IS NULL OR lease_until < now())
          ORDER BY created_at LIMIT ${max * 4} FOR UPDATE SKIP LOCKED`
        if (candidates.length === 0) return []
        const orgs = [...new Set(candidates.map((row) => row.org_uuid))]
        const busyRows = yield* sql<{ org_uuid: string; n: number }>`
          SELECT org_uuid, count(*)::int AS n FROM code_reviews
          WHERE NOT done AND lease_until >= now() AND phase NOT IN ('awaiting_approval', 'awaiting_merge_approval') AND org_uuid IN ${sql.in(orgs)}
          GROUP BY org_uuid`
        const busy = new Map(busyRows.map((row) => [row.org_uuid, Number(row.n)]))
        const chosen: Array<string> = []
        for (const row of candidates) {
          if (chosen.length >= max) break
          const waiting = row.phase === "awaiting_approval" || row.phase === "awaiting_merge_approval" || row.status === "superseded"
          if (!waiting) {
            const n = busy.get(row.org_uuid) ?? 0
            if (n >= perOrg) continue
            busy.set(row.org_uuid, n + 1)
          }
          chosen.push(row.review_uuid)
        }
        if (chosen.length === 0) return []
        const rows = yield* sql.unsafe(
          `UPDATE code_reviews SET lease_owner = $1, lease_until = now() + ($2::int * interval '1 millisecond'),
             status = CASE WHEN status = 'queued' THEN 'running' ELSE status END, updated_at = now()
           WHERE review_uuid = ANY($3::text[]) RETURNING ${COLUMNS}`,
          [owner, leaseMs, chosen]
        )
        return rows.map((row) => Schema.decodeUnknownSync(ReviewRow)(row))
      })
    )

  return sqlDefects({
    enqueue,
    claim,
    review: selectReview,
    /** Keeps the lease of `owner`'s running jobs. */
    renew: (owner: string, reviewUuids: ReadonlyArray<string>, leaseMs: number) =>
      reviewUuids.length === 0
        ? Effect.void
        : Effect.asVoid(sql.unsafe(`UPDATE code_reviews SET lease_until = now() + ($2::int * interval '1 millisecond') WHERE lease_owner = $1 AND review_uuid = ANY($3::text[])`, [
            owner,
            leaseMs,
            [...reviewUuids]
          ])),
    /** Writes a step's result; false when the job is no longer `owner`'s (its lease was taken over). */
    save: (owner: string, reviewUuid: string, patch: ReviewPatch) =>
      Effect.map(
        sql`UPDATE code_reviews SET ${sql.update(patch as Record<string, unknown>)}, updated_at = now() WHERE review_uuid = ${reviewUuid} AND lease_owner = ${owner} AND status <> 'superseded' RETURNING review_uuid`,
        (rows) => rows.length > 0
      ),
    /** Closes a superseded review (its open actions were notarized `failed`). */
    finishSuperseded: (owner: string, reviewUuid: string, receiptUuid: string | null) =>
      Effect.asVoid(sql`UPDATE code_reviews SET done = true, phase = 'end', receipt_uuid = COALESCE(${receiptUuid}, receipt_uuid), updated_at = now()
                        WHERE review_uuid = ${reviewUuid} AND lease_owner = ${owner} AND status = 'superseded'`),
    /** Hands back every lease of `owner` (a process stopping). */
    releaseAll: (owner: string) => Effect.asVoid(sql`UPDATE code_reviews SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = ${owner} AND NOT done`),
    /** Lets the job go until `runAfter` (a wait for a human, or a retry). */
    release: (owner: string, reviewUuid: string, runAfter: Date) =>
      Effect.asVoid(sql`UPDATE code_reviews SET lease_owner = NULL, lease_until = NULL, run_after = ${runAfter} WHERE review_uuid = ${reviewUuid} AND lease_owner = ${owner}`),
    /**
     * The review's findings replace any stored before (a step re-run after a crash); each says
     * whether its line is one the diff shows (an inline comment can point there).
     */
    saveViolations: (reviewUuid: string, headSha: string, findings: ReadonlyArray<Finding>, lines: CommentableLines) =>
      sql.withTransaction(
        Effect.gen(function* () {
          yield* sql`DELETE FROM code_review_violations WHERE review_uuid = ${reviewUuid}`
          if (findings.length === 0) return
          const rows = findings.map((finding, position) => ({
            violation_uuid: newId("vio"),
            review_uuid: reviewUuid,
            position,
            file: finding.file,
            line: finding.line,
            finding: finding.finding,
            category: finding.category,
            severity: finding.severity,
            description: finding.description,
            fix: finding.fix,
            blocks_merge: finding.blocksMerge,
            on_diff_line: finding.line !== null && lines.get(finding.file)?.has(finding.line) === true,
            head_sha: headSha
          }))
          yield* sql`INSERT INTO code_review_violations ${sql.insert(rows as unknown as readonly [Record<string, unknown>, ...Array<Record<string, unknown>>])}`
        })
      ),
    findings: (reviewUuid: string) =>
      Effect.map(
        sql<{
          file: string
          line: number | null
          finding: string
          category: string
          severity: string
          description: string
          fix: string | null
          blocks_merge: boolean
          on_diff_line: boolean
        }>`
          SELECT file, line, finding, category, severity, description, fix, blocks_merge, on_diff_line FROM code_review_violations WHERE review_uuid = ${reviewUuid} ORDER BY position`,
        (rows) =>
          rows.map(
            (row): StoredFinding => ({
              onDiffLine: row.on_diff_line,
              file: row.file,
              line: row.line,
              finding: row.finding,
              category: row.category as Finding["category"],
              severity: row.severity as Finding["severity"],
              description: row.description,
              fix: row.fix,
              blocksMerge: row.blocks_merge
            })
          )
      ),
    /** The latest review of the pull request in the organization, and a page of its violations. */
    latest: (orgUuid: string, fullName: string, pullNumber: number, window: { readonly limit: number; readonly offset: number }) =>
      Effect.gen(function* () {
        const review = one(
          yield* sql.unsafe(
            `SELECT ${COLUMNS} FROM code_reviews WHERE org_uuid = $1 AND repository_key = $2 AND pull_number = $3 ORDER BY created_at DESC, review_uuid DESC LIMIT 1`,
            [orgUuid, fullName.toLowerCase(), pullNumber]
          )
        )
        if (review === undefined) return undefined
        const total = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM code_review_violations WHERE review_uuid = ${review.review_uuid}`
        const rows = yield* sql`SELECT violation_uuid, review_uuid, file, line, finding, category, severity, description, fix, blocks_merge, head_sha, created_at
                                FROM code_review_violations WHERE review_uuid = ${review.review_uuid} ORDER BY position LIMIT ${window.limit} OFFSET ${window.offset}`
        const violations = rows.map((row): Violation => {
          const v = Schema.decodeUnknownSync(ViolationRow)(row)
          return {
            id: v.violation_uuid,
            file: v.file,
            line: v.line,
            finding: v.finding,
            category: v.category as Violation["category"],
            severity: v.severity as Violation["severity"],
            description: v.description,
            fix: v.fix,
            blocks_merge: v.blocks_merge,
            head_sha: v.head_sha,
            review_uuid: v.review_uuid,
            created_at: v.created_at
          }
        })
        const pullRequest: ReviewedPullRequest = {
          repository: review.repository,
          pull_number: review.pull_number,
          head_sha: review.head_sha,
          status: review.status as ReviewedPullRequest["status"],
          reviewed_at: review.reviewed_at,
          action_uuid: review.action_uuid,
          receipt_uuid: review.receipt_uuid,
          merged: review.merged,
          auto_merged: review.auto_merged
        }
        return { pullRequest, violations, total: Number(total[0]?.n ?? 0) }
      }),
    /** The review an action (its review or its merge) belongs to, in the organization. */
    byAction: (orgUuid: string, actionUuid: string) =>
      Effect.map(
        sql.unsafe(`SELECT ${COLUMNS} FROM code_reviews WHERE org_uuid = $1 AND (action_uuid = $2 OR merge_action_uuid = $2) LIMIT 1`, [orgUuid, actionUuid]),
        one
      ),
    /** Forgets deliveries past their retention. */
    pruneDeliveries: Effect.asVoid(sql.unsafe(`DELETE FROM github_deliveries WHERE received_at < now() - interval '${DELIVERY_RETENTION}'`))
  })
})

export type ReviewStore = Effect.Success<typeof makeReviewStore>
