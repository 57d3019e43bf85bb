/**
 * SQL for cases. A run claims its row (`running`, holding the idempotency key) before any model
 * is asked; completing writes results, consensus and receipt in one UPDATE; a run that fails,
 * is cancelled or dies with its process leaves a `failed` row and releases the key.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient } from "effect/sql"
import { CaseReceipt, CaseResult, ConsensusView } from "../../protocol/cases.js"
import { eventRowsJson, type RecordedEvent } from "../events/service.js"
import { Count, Json, JsonObject, NullableJson, NullableTimestamp, Timestamp } from "../platform/columns.js"
import { jsonb } from "../platform/db/index.js"
import * as Rows from "../platform/db/rows.js"
import { sqlDefects } from "../platform/db/store.js"

export const CaseRow = Schema.Struct({
  case_id: Schema.String,
  org_uuid: Schema.String,
  status: Schema.Literals(["running", "complete", "failed"]),
  request_hash: Schema.String,
  details_hash: Schema.String,
  details: Schema.NullOr(Schema.String),
  context: Schema.NullOr(JsonObject),
  models: Json(Schema.Array(Schema.String)),
  consensus: NullableJson(ConsensusView),
  case_results: NullableJson(Schema.Array(CaseResult)),
  receipt: NullableJson(CaseReceipt),
  latency_ms: Schema.NullOr(Schema.Number),
  review_status: Schema.NullOr(Schema.Literals(["pending", "approved", "denied"])),
  reviewed_by: Schema.NullOr(Schema.String),
  reviewed_at: NullableTimestamp,
  review_reason: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  idempotent_at: NullableTimestamp
})
export type CaseRow = typeof CaseRow.Type

const COLUMNS = `case_id, org_uuid, status, request_hash, details_hash, details, context, models, consensus, case_results, receipt, latency_ms,
  review_status, reviewed_by, reviewed_at, review_reason, created_at, CASE WHEN idempotency_key IS NULL THEN NULL ELSE created_at END AS idempotent_at`

export interface Claim {
  readonly case_id: string
  readonly org_uuid: string
  readonly idempotency_key: string | null
  readonly request_hash: string
  readonly details_hash: string
  readonly details: string | null
  readonly context: Readonly<Record<string, unknown>> | null
  readonly models: ReadonlyArray<string>
  readonly review_threshold: number
  readonly created_by: string | null
  readonly created_at: string
}

export interface Completion {
  readonly consensus: Readonly<Record<string, unknown>>
  readonly consensus_decision: string
  readonly disagreement: number
  readonly case_results: ReadonlyArray<Readonly<Record<string, unknown>>>
  readonly receipt: Readonly<Record<string, unknown>>
  readonly latency_ms: number
  readonly review_status: "pending" | null
}

/** A running row older than this belongs to a run that died (the longest model timeout is 120 s). */
export const STALE_RUN_SECONDS = 300
/** Idempotency keys are kept this long (CONTRACT: 24 h). */
export const IDEMPOTENCY_HOURS = 24

export const makeCasesStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const columns = sql.literal(COLUMNS)

  const byId = Rows.findOneOption({
    Request: Schema.Struct({ orgUuid: Schema.String, caseId: Schema.String }),
    Result: CaseRow,
    execute: ({ orgUuid, caseId }) => sql`SELECT ${columns} FROM cases WHERE org_uuid = ${orgUuid} AND case_id = ${caseId}`
  })
  const byKey = Rows.findOneOption({
    Request: Schema.Struct({ orgUuid: Schema.String, key: Schema.String }),
    Result: CaseRow,
    execute: ({ orgUuid, key }) => sql`SELECT ${columns} FROM cases WHERE org_uuid = ${orgUuid} AND idempotency_key = ${key}`
  })
  const page = Rows.findAll({
    Request: Schema.Struct({ orgUuid: Schema.String, limit: Schema.Number, offset: Schema.Number }),
    Result: CaseRow,
    execute: ({ orgUuid, limit, offset }) =>
      sql`SELECT ${columns} FROM cases WHERE org_uuid = ${orgUuid} AND status <> 'running' ORDER BY created_at DESC, case_id DESC LIMIT ${limit} OFFSET ${offset}`
  })
  const pendingReview = Rows.findAll({
    Request: Schema.Struct({ orgUuid: Schema.String, limit: Schema.Number }),
    Result: CaseRow,
    execute: ({ orgUuid, limit }) => sql`SELECT ${columns} FROM cases WHERE org_uuid = ${orgUuid} AND review_status = 'pending' ORDER BY created_at DESC LIMIT ${limit}`
  })

  const finished = Rows.findOne({
    Request: Schema.String,
    Result: Schema.Struct({ n: Count }),
    execute: (orgUuid) => sql`SELECT count(*) AS n FROM cases WHERE org_uuid = ${orgUuid} AND status <> 'running'`
  })
  const monthRuns = Rows.findOne({
    Request: Schema.String,
    Result: Schema.Struct({ n: Count }),
    execute: (orgUuid) => sql`SELECT count(*) AS n FROM cases WHERE org_uuid = ${orgUuid} AND status <> 'failed'
                               AND created_at >= date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`
  })
  const organization = Rows.findOneOption({
    Request: Schema.String,
    Result: Schema.Struct({ plan: Schema.String, default_approvers: Json(Schema.Array(Schema.String)) }),
    execute: (orgUuid) => sql`SELECT plan, default_approvers FROM organizations WHERE org_uuid = ${orgUuid}`
  })
  const withReceipt = Rows.findOneOption({
    Request: Schema.String,
    Result: Schema.Struct({ org_uuid: Schema.String }),
    execute: (caseId) => sql`SELECT org_uuid FROM cases WHERE case_id = ${caseId} AND receipt IS NOT NULL`
  })

  return sqlDefects({
    sql,
    byId: (orgUuid: string, caseId: string) => Effect.map(byId({ orgUuid, caseId }), Option.getOrUndefined),
    page: (orgUuid: string, limit: number, offset: number) => page({ orgUuid, limit, offset }),
    // COUNT(*) always answers one row.
    count: (orgUuid: string) => Effect.map(Effect.orDie(finished(orgUuid)), (row) => row.n),
    /** Cases run this calendar month (UTC), for the plan quota. */
    runsThisMonth: (orgUuid: string) => Effect.map(Effect.orDie(monthRuns(orgUuid)), (row) => row.n),
    pendingReview: (orgUuid: string, limit: number) => pendingReview({ orgUuid, limit }),
    /** The organization's plan and default approvers (undefined when it is gone). */
    organization: (orgUuid: string) => Effect.map(organization(orgUuid), Option.getOrUndefined),
    /** The organization of a case that has a receipt, for the public verification. */
    receiptOrg: (caseId: string) => Effect.map(withReceipt(caseId), (row) => (Option.isSome(row) ? row.value.org_uuid : undefined)),

    /**
     * Claims the case. With an idempotency key already held, answers the holder instead (after
     * releasing it when it expired or its run died, and retrying once).
     */
    claim: (claim: Claim) =>
      Effect.gen(function* () {
        // One statement that also turns off waiting for its own commit's fsync (set_config is
        // transaction-local, and the statement is its transaction).
        const insert = sql`INSERT INTO cases (case_id, org_uuid, status, idempotency_key, request_hash, details_hash, details, context, models, review_threshold, created_by, created_at)
                           SELECT ${claim.case_id}, ${claim.org_uuid}, 'running', ${claim.idempotency_key}, ${claim.request_hash}, ${claim.details_hash},
                                  ${claim.details}, ${claim.context === null ? null : jsonb(claim.context)}, ${jsonb(claim.models)}, ${claim.review_threshold}, ${claim.created_by}, ${claim.created_at}
                           FROM (SELECT set_config('synchronous_commit', 'off', true)) AS async_commit
                           ON CONFLICT (org_uuid, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
                           RETURNING case_id`
        // The claim need not wait for its fsync: lost in a database crash it only frees the key, and
        // the completing statement (durable, and checked) finds no row, so the case is never answered.
        const claimed = (yield* insert).length > 0
        if (claimed || claim.idempotency_key === null) return undefined
        const key = claim.idempotency_key
        yield* sql`UPDATE cases SET idempotency_key = NULL,
                     status = CASE WHEN status = 'running' THEN 'failed' ELSE status END
                   WHERE org_uuid = ${claim.org_uuid} AND idempotency_key = ${key}
                     AND (created_at < now() - make_interval(hours => ${IDEMPOTENCY_HOURS})
                          OR (status = 'running' AND created_at < now() - make_interval(secs => ${STALE_RUN_SECONDS})))`
        if ((yield* insert).length > 0) return undefined
        return Option.getOrUndefined(yield* byKey({ orgUuid: claim.org_uuid, key }))
      }),

    /** Completes the case and writes its events to the outbox in one statement (one round trip, one commit). */
    complete: (orgUuid: string, caseId: string, completion: Completion, events: ReadonlyArray<RecordedEvent>) =>
      sql`WITH done AS (
            UPDATE cases SET status = 'complete', consensus = ${jsonb(completion.consensus)}, consensus_decision = ${completion.consensus_decision},
              disagreement = ${completion.disagreement}, case_results = ${jsonb(completion.case_results)}, receipt = ${jsonb(completion.receipt)},
              latency_ms = ${completion.latency_ms}, review_status = ${completion.review_status}, completed_at = now()
            WHERE org_uuid = ${orgUuid} AND case_id = ${caseId} AND status = 'running'
            RETURNING case_id)
          INSERT INTO events (event_id, org_uuid, type, data, created_at)
          SELECT event_id, org_uuid, type, data, created_at
          FROM jsonb_to_recordset(${eventRowsJson(events)}) AS r(event_id text, org_uuid text, type text, data jsonb, created_at timestamptz)
          WHERE EXISTS (SELECT 1 FROM done)
          RETURNING event_id`.pipe(
        // Nothing written means the claim is gone (its run was failed meanwhile): never answer a case that is not stored.
        Effect.flatMap((rows) => (rows.length > 0 ? Effect.void : Effect.die(new Error(`case ${caseId} was no longer running when it completed`))))
      ),

    /** The run failed or was cancelled: keep the row as `failed`, free the key for a retry. */
    fail: (orgUuid: string, caseId: string, results: ReadonlyArray<Readonly<Record<string, unknown>>> | null, latencyMs: number) =>
      sql`UPDATE cases SET status = 'failed', idempotency_key = NULL, case_results = ${results === null ? null : jsonb(results)}, latency_ms = ${latencyMs}, completed_at = now()
          WHERE org_uuid = ${orgUuid} AND case_id = ${caseId} AND status = 'running'`.pipe(Effect.asVoid),

    /**
     * At start-up: runs that were under way when a process died are failed and their keys freed.
     * `all` when this is the only process (memory cluster mode): every running row is then dead;
     * with several runners only rows older than any run can last.
     */
    failStale: (all: boolean) =>
      sql`UPDATE cases SET status = 'failed', idempotency_key = NULL, completed_at = now()
          WHERE status = 'running' ${all ? sql`` : sql`AND created_at < now() - make_interval(secs => ${STALE_RUN_SECONDS})`}`.pipe(Effect.asVoid),

    /** A pending review becomes approved or denied once; answers the row after, or undefined when it was not pending. */
    resolve: (orgUuid: string, caseId: string, status: "approved" | "denied", by: string, reason: string | null) =>
      Effect.map(
        sql`UPDATE cases SET review_status = ${status}, reviewed_by = ${by}, reviewed_at = now(), review_reason = ${reason}
            WHERE org_uuid = ${orgUuid} AND case_id = ${caseId} AND review_status = 'pending'
            RETURNING case_id`,
        (rows) => rows.length > 0
      )
  })
})
