/**
 * Evidence and discovery: sealed evidence packages, the record of every point-in-time
 * (discovery) query, and the status history of actions that time travel answers from.
 *
 * `action_status_history` gets one row per status an action enters, written by the same
 * statement that changes the status (src/actions/store.ts). A status is entered at most once
 * (the lifecycle never returns to one), hence the key. Actions that existed before this
 * migration get their history reconstructed from what the row kept: the status they started in
 * at `created_at`, `approved` at `approved_at`, and the final status at its decision or receipt time.
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`
    CREATE TABLE action_status_history (
      org_uuid TEXT NOT NULL,
      action_uuid TEXT NOT NULL,
      status TEXT NOT NULL,
      changed_at TIMESTAMPTZ NOT NULL,
      PRIMARY KEY (action_uuid, status)
    )`
  yield* sql`CREATE INDEX action_status_history_org_idx ON action_status_history (org_uuid, changed_at)`
  yield* sql`
    INSERT INTO action_status_history (org_uuid, action_uuid, status, changed_at)
    SELECT org_uuid, action_uuid,
      CASE
        WHEN status IN ('authorized', 'pending_approval', 'denied_by_policy') THEN status
        WHEN status IN ('approved', 'denied_by_human') OR approved_at IS NOT NULL THEN 'pending_approval'
        ELSE 'authorized'
      END,
      created_at
    FROM actions
    UNION ALL
    SELECT org_uuid, action_uuid, 'approved', approved_at FROM actions
    WHERE approved_at IS NOT NULL AND status IN ('approved', 'notarized', 'failed')
    UNION ALL
    SELECT a.org_uuid, a.action_uuid, a.status,
      GREATEST(a.created_at, COALESCE(CASE WHEN a.status = 'denied_by_human' THEN a.approved_at END, r.created_at, a.updated_at))
    FROM actions a LEFT JOIN receipts r ON r.receipt_uuid = a.receipt_uuid
    WHERE a.status IN ('notarized', 'failed', 'denied_by_human')
    ON CONFLICT DO NOTHING`

  yield* sql`
    CREATE TABLE evidence_packages (
      package_uuid UUID PRIMARY KEY,
      org_uuid UUID NOT NULL,
      title TEXT NOT NULL,
      purpose TEXT,
      action_count INTEGER NOT NULL,
      signed_payload TEXT NOT NULL,
      package_hash TEXT NOT NULL,
      signature TEXT NOT NULL,
      public_key_id TEXT NOT NULL,
      timestamp_token TEXT,
      created_by TEXT NOT NULL,
      sealed_at TIMESTAMPTZ NOT NULL
    )`
  yield* sql`CREATE INDEX evidence_packages_org_idx ON evidence_packages (org_uuid, sealed_at DESC, package_uuid DESC)`

  yield* sql`
    CREATE TABLE discovery_queries (
      discovery_query_uuid UUID PRIMARY KEY,
      org_uuid UUID NOT NULL,
      point_in_time TIMESTAMPTZ NOT NULL,
      reason TEXT NOT NULL,
      query JSONB NOT NULL,
      result_count INTEGER NOT NULL,
      results JSONB NOT NULL,
      results_hash TEXT NOT NULL,
      queried_by TEXT NOT NULL,
      queried_at TIMESTAMPTZ NOT NULL
    )`
  yield* sql`CREATE INDEX discovery_queries_org_idx ON discovery_queries (org_uuid, queried_at DESC)`
})
