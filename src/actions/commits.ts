/**
 * The commit pipeline of actions: one per process, shared by every agent. Authorize hands it a new
 * action; an agent's actor hands it the transitions it linked onto its chain (receipts signed,
 * sequence and previous hash set from the head it keeps in memory). A single writer commits
 * whatever arrived while its last commit ran as ONE statement: set-based inserts of actions,
 * status history, receipts, outbox events; one guarded update of the finished actions, one of the
 * chain heads. Every guard (an action still in the state it was read in, a head still where its
 * actor left it, its agent not decommissioned) is checked in that statement: if one fails the
 * statement raises and nothing of the batch is kept (see 0032_commit_guard.ts), and the batch is
 * written again in halves until the stale unit is alone: it fails as a `Conflict` its actor
 * retries on the locked path.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import { eventRowsJson, type RecordedEvent } from "../events/service.js"
import { makeGroupCommit, type UnitFailure } from "../platform/db/group-commit.js"
import { record } from "../platform/metrics.js"
import { type MintedReceipt, ReceiptMinter, type SignedReceipt } from "../receipts/ports.js"
import type { NewAction } from "./agent-messages.js"

/** A new action row; a policy denial arrives finished, with its receipt. */
export interface InsertedAction {
  readonly row: NewAction
  readonly finished?: { readonly denial_reason: string; readonly receipt: MintedReceipt; readonly agent_sequence: number }
}

/** A terminal transition of an existing action, applied only if the action is still in `expected_status`. */
export interface FinishedAction {
  readonly org_uuid: string
  readonly action_uuid: string
  readonly expected_status: string
  readonly status: string
  readonly outcome: string | null
  readonly outcome_hash: string | null
  readonly output_scan_flags: ReadonlyArray<Record<string, unknown>> | null
  readonly receipt: MintedReceipt
  readonly agent_sequence: number
}

/** Where an agent's chain head moves, applied only if it is still at `expected_sequence`. */
export interface HeadMove {
  readonly org_uuid: string
  readonly agent_id: string
  readonly expected_sequence: number
  readonly last_sequence: number
  readonly last_payload_hash: string
}

export interface IdempotencyAnswer {
  readonly org_uuid: string
  readonly idempotency_key: string
  readonly status_code: number
  readonly response: Record<string, unknown>
}

/** Everything one request (authorize) or one actor's group of transitions commits, all or nothing. */
export interface CommitUnit {
  readonly inserted?: ReadonlyArray<InsertedAction>
  readonly finished?: ReadonlyArray<FinishedAction>
  readonly receipts?: ReadonlyArray<SignedReceipt>
  readonly head?: HeadMove
  /** Agents (registered ones) that must not be decommissioned when the unit commits; locked FOR SHARE until it does. */
  readonly liveAgents?: ReadonlyArray<{ readonly org_uuid: string; readonly agent_id: string }>
  readonly events?: ReadonlyArray<RecordedEvent>
  readonly idempotency?: ReadonlyArray<IdempotencyAnswer>
}

export class ActionCommits extends Context.Service<
  ActionCommits,
  {
    /** Queues the unit; succeeds once the batch holding it committed. */
    readonly commit: (unit: CommitUnit) => Effect.Effect<void, UnitFailure>
  }
>()("gateway/ActionCommits") {}

/** At most this many units, and about this many bytes of rows, go into one statement. */
export const MAX_BATCH_UNITS = 512
export const MAX_BATCH_BYTES = 4 * 1024 * 1024

/** Rows (actions inserted or finished) per committed statement: above 1 is the pipeline sharing commits. */
const batchRows = Metric.histogram("commit_batch_rows", {
  description: "Actions inserted or finished together in one commit of the pipeline",
  boundaries: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
})

/** How long each batch statement took, commit included. */
const batchMilliseconds = Metric.histogram("commit_batch_ms", {
  description: "Milliseconds from sending a batch statement of the commit pipeline to its commit",
  boundaries: [1, 2, 5, 10, 20, 50, 100, 200, 500]
})

/** Units a guard found stale (their actor runs them again on the locked path): a steady rise means reads racing writes. */
const conflicts = Metric.counter("commit_conflicts_total", {
  description: "Commit units refused by a guard of the batch statement because what they were checked against had changed"
})

const none: ReadonlyArray<never> = []

/** An action row as JSON for `jsonb_populate_recordset(NULL::actions, …)`; the recorded policy evaluations are JSON text already. */
const actionJson = (inserted: InsertedAction): string => {
  const { policy_evaluations, ...row } = inserted.row
  const finished = inserted.finished
  const receipt = finished === undefined ? undefined : summaryOf(finished.receipt)
  const columns = JSON.stringify({
    ...row,
    legal_hold: false,
    updated_at: row.created_at,
    ...(finished === undefined
      ? {}
      : {
          denial_reason: finished.denial_reason,
          receipt_uuid: finished.receipt.receipt_uuid,
          receipt_payload_hash: finished.receipt.payload_hash,
          receipt,
          agent_sequence: finished.agent_sequence
        })
  })
  return `${columns.slice(0, -1)},"policy_evaluations":${policy_evaluations ?? "null"}}`
}

/** The receipt summary kept on the action row (the signed payload lives in `receipts`). */
const summaryOf = (receipt: MintedReceipt) => {
  const { signed_payload: _signed, ...summary } = receipt
  return summary
}

const finishedJson = (finished: FinishedAction) => ({
  org_uuid: finished.org_uuid,
  action_uuid: finished.action_uuid,
  expected_status: finished.expected_status,
  status: finished.status,
  outcome: finished.outcome,
  outcome_hash: finished.outcome_hash,
  output_scan_flags: finished.output_scan_flags,
  receipt_uuid: finished.receipt.receipt_uuid,
  receipt_payload_hash: finished.receipt.payload_hash,
  receipt: summaryOf(finished.receipt),
  agent_sequence: finished.agent_sequence
})

const rowsOf = (unit: CommitUnit) => (unit.inserted?.length ?? 0) + (unit.finished?.length ?? 0)

/** The replay contexts a unit inserts (up to 32 KiB each), so such rows count their size towards a batch's bytes. */
const replayBytesOf = (unit: CommitUnit) => {
  let bytes = 0
  for (const inserted of unit.inserted ?? none) if (inserted.row.sdk !== null) bytes += JSON.stringify(inserted.row.sdk).length
  return bytes
}

const isConflict = (error: SqlError) => error.reason._tag === "SerializationError" || error.reason._tag === "DeadlockError"

export const makeActionCommits = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const minter = yield* ReceiptMinter

  const write = (units: ReadonlyArray<CommitUnit>) => {
    const inserted = units.flatMap((unit) => unit.inserted ?? none)
    const finished = units.flatMap((unit) => unit.finished ?? none)
    const heads = units.flatMap((unit) => (unit.head === undefined ? none : [unit.head]))
    const liveAgents = units.flatMap((unit) => unit.liveAgents ?? none)
    const events = units.flatMap((unit) => unit.events ?? none)
    const idempotency = units.flatMap((unit) => unit.idempotency ?? none)
    // Each updated or locked table is reached through its primary key with "= ANY (ARRAY(…))" over the
    // batch's keys: an index condition the planner takes whatever its statistics say. Joined to the JSON
    // rows alone, a cached plan made while a table was small kept scanning it whole as it grew (seen:
    // 14 ms of a 26 ms batch on 18k actions).
    return sql`WITH changes AS MATERIALIZED (
        SELECT * FROM jsonb_to_recordset(${JSON.stringify(finished.map(finishedJson))}::jsonb) AS f(org_uuid text, action_uuid text,
          expected_status text, status text, outcome text, outcome_hash text, output_scan_flags jsonb, receipt_uuid text,
          receipt_payload_hash text, receipt jsonb, agent_sequence bigint)
      ), moves AS MATERIALIZED (
        SELECT * FROM jsonb_to_recordset(${JSON.stringify(heads)}::jsonb)
          AS h(org_uuid text, agent_id text, expected_sequence bigint, last_sequence bigint, last_payload_hash text)
      ), checked_agents AS MATERIALIZED (
        SELECT * FROM jsonb_to_recordset(${JSON.stringify(liveAgents)}::jsonb) AS l(org_uuid text, agent_id text)
      ), answers AS MATERIALIZED (
        SELECT * FROM jsonb_to_recordset(${JSON.stringify(idempotency)}::jsonb)
          AS i(org_uuid text, idempotency_key text, status_code integer, response jsonb)
      ), new_actions AS (
        INSERT INTO actions SELECT * FROM jsonb_populate_recordset(NULL::actions, ${`[${inserted.map(actionJson).join(",")}]`}::jsonb)
        RETURNING org_uuid, action_uuid, status, created_at
      ), finished AS (
        UPDATE actions a SET status = f.status, outcome = f.outcome, outcome_hash = f.outcome_hash, output_scan_flags = f.output_scan_flags,
          receipt_uuid = f.receipt_uuid, receipt_payload_hash = f.receipt_payload_hash, receipt = f.receipt,
          agent_sequence = f.agent_sequence, updated_at = now()
        FROM changes f
        WHERE a.action_uuid = ANY (ARRAY(SELECT action_uuid FROM changes)) AND a.action_uuid = f.action_uuid
          AND a.org_uuid = f.org_uuid AND a.status = f.expected_status
        RETURNING a.org_uuid, a.action_uuid, a.status, a.updated_at
      ), history AS (
        INSERT INTO action_status_history (org_uuid, action_uuid, status, changed_at)
        SELECT org_uuid, action_uuid, status, created_at FROM new_actions
        UNION ALL SELECT org_uuid, action_uuid, status, updated_at FROM finished
        ON CONFLICT (action_uuid, status) DO NOTHING
      ), stored AS (
        ${minter.insertionOfAll(units.flatMap((unit) => unit.receipts ?? none))}
      ), heads AS (
        UPDATE agent_chains c SET last_sequence = h.last_sequence, last_payload_hash = h.last_payload_hash, updated_at = now()
        FROM moves h
        WHERE c.org_uuid = ANY (ARRAY(SELECT org_uuid FROM moves)) AND c.agent_id = ANY (ARRAY(SELECT agent_id FROM moves))
          AND c.org_uuid = h.org_uuid AND c.agent_id = h.agent_id AND c.last_sequence = h.expected_sequence
        RETURNING 1
      ), live AS (
        SELECT g.status FROM agents g JOIN checked_agents l ON g.org_uuid = l.org_uuid AND g.agent_slug = l.agent_id
        WHERE g.agent_slug = ANY (ARRAY(SELECT agent_id FROM checked_agents))
        FOR SHARE OF g
      ), answered AS (
        UPDATE idempotency_keys k SET status_code = i.status_code, response = i.response, completed_at = now()
        FROM answers i
        WHERE k.org_uuid = ANY (ARRAY(SELECT org_uuid FROM answers)) AND k.idempotency_key = ANY (ARRAY(SELECT idempotency_key FROM answers))
          AND k.org_uuid = i.org_uuid AND k.idempotency_key = i.idempotency_key
      ), recorded AS (
        INSERT INTO events (event_id, org_uuid, type, data, created_at)
        SELECT event_id, org_uuid, type, data, created_at
        FROM jsonb_to_recordset(${eventRowsJson(events)})
          AS r(event_id text, org_uuid text, type text, data jsonb, created_at timestamptz)
      )
      SELECT commit_guard(
        (SELECT count(*) FROM finished) = ${finished.length}
        AND (SELECT count(*) FROM heads) = ${heads.length}
        AND NOT EXISTS (SELECT 1 FROM live WHERE status = 'decommissioned')
      )`
  }

  const pipeline = yield* makeGroupCommit<CommitUnit, SqlError>({
    write: (units) => Effect.asVoid(write(units)),
    isConflict,
    sizeOf: (unit) => 2048 * rowsOf(unit) + 512 + replayBytesOf(unit),
    maxUnits: MAX_BATCH_UNITS,
    maxBytes: MAX_BATCH_BYTES,
    committed: (units, ms) => {
      record(batchRows, units.reduce((rows, unit) => rows + rowsOf(unit), 0))
      record(batchMilliseconds, ms)
    }
  })
  return ActionCommits.of({
    commit: (unit) =>
      Effect.tapError(pipeline.submit(unit), (failure) => Effect.sync(() => (failure._tag === "Conflict" ? record(conflicts, 1) : undefined)))
  })
})

/** The process's pipeline; needs SqlClient and ReceiptMinter. */
export const actionCommitsLayer = Layer.effect(ActionCommits)(makeActionCommits)
