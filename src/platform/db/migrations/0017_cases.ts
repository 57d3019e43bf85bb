/**
 * Consensus cases. A row is written `running` before the models are asked (it holds the
 * idempotency key while the case is in flight) and completed with its results and signed receipt
 * in one UPDATE; a run that fails or dies releases the key. `review_status` tracks the human
 * review of cases that need one.
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`
    CREATE TABLE cases (
      case_id TEXT PRIMARY KEY,
      org_uuid TEXT NOT NULL,
      status TEXT NOT NULL,
      idempotency_key TEXT,
      request_hash TEXT NOT NULL,
      details_hash TEXT NOT NULL,
      details TEXT,
      context JSONB,
      models JSONB NOT NULL,
      review_threshold DOUBLE PRECISION NOT NULL,
      consensus JSONB,
      consensus_decision TEXT,
      disagreement DOUBLE PRECISION,
      case_results JSONB,
      receipt JSONB,
      signed_payload TEXT,
      latency_ms INTEGER,
      review_status TEXT,
      reviewed_by TEXT,
      reviewed_at TIMESTAMPTZ,
      review_reason TEXT,
      created_by TEXT,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      completed_at TIMESTAMPTZ
    )`
  yield* sql`CREATE UNIQUE INDEX cases_idempotency ON cases (org_uuid, idempotency_key) WHERE idempotency_key IS NOT NULL`
  yield* sql`CREATE INDEX cases_org_created ON cases (org_uuid, created_at DESC, case_id DESC)`
  yield* sql`CREATE INDEX cases_pending_review ON cases (org_uuid, created_at) WHERE review_status = 'pending'`
  yield* sql`CREATE INDEX cases_receipt ON cases ((receipt->>'receipt_uuid')) WHERE receipt IS NOT NULL`
})
