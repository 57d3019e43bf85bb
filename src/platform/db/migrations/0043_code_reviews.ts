/**
 * Code review jobs (CONTRACT-sdk-beyond §7): GitHub deliveries seen (a redelivery is answered
 * `duplicate`), one row per review of a pull request's head (the durable job: its phase says
 * where a restarted process picks it up, its lease which process runs it now), and the
 * violations a review found. Reviews belong to the organization, not to its configuration: they
 * outlive a DELETE of the GitHub configuration, and go with the organization.
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`
    CREATE TABLE github_deliveries (
      org_uuid TEXT NOT NULL REFERENCES organizations (org_uuid) ON DELETE CASCADE,
      delivery_id TEXT NOT NULL,
      received_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      PRIMARY KEY (org_uuid, delivery_id)
    )`
  yield* sql`CREATE INDEX github_deliveries_received_idx ON github_deliveries (received_at)`
  yield* sql`
    CREATE TABLE code_reviews (
      review_uuid TEXT PRIMARY KEY,
      org_uuid TEXT NOT NULL REFERENCES organizations (org_uuid) ON DELETE CASCADE,
      repository TEXT NOT NULL,
      repository_key TEXT NOT NULL,
      pull_number BIGINT NOT NULL,
      head_sha TEXT NOT NULL,
      base_ref TEXT NOT NULL,
      head_ref TEXT NOT NULL,
      author TEXT NOT NULL,
      status TEXT NOT NULL DEFAULT 'queued',
      phase TEXT NOT NULL DEFAULT 'authorize',
      done BOOLEAN NOT NULL DEFAULT false,
      model_id TEXT,
      action_uuid TEXT,
      receipt_uuid TEXT,
      merge_action_uuid TEXT,
      merge_receipt_uuid TEXT,
      merged BOOLEAN NOT NULL DEFAULT false,
      auto_merged BOOLEAN NOT NULL DEFAULT false,
      merge_commit_sha TEXT,
      diff_sha256 TEXT,
      diff_bytes INTEGER,
      critical INTEGER,
      warning INTEGER,
      status_state TEXT,
      github_review_id BIGINT,
      failure_reason TEXT,
      lease_owner TEXT,
      lease_until TIMESTAMPTZ,
      run_after TIMESTAMPTZ NOT NULL DEFAULT now(),
      reviewed_at TIMESTAMPTZ,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX code_reviews_pull_idx ON code_reviews (org_uuid, repository_key, pull_number, created_at DESC)`
  yield* sql`CREATE INDEX code_reviews_work_idx ON code_reviews (run_after) WHERE NOT done`
  yield* sql`CREATE INDEX code_reviews_action_idx ON code_reviews (org_uuid, action_uuid)`
  yield* sql`CREATE INDEX code_reviews_merge_action_idx ON code_reviews (org_uuid, merge_action_uuid) WHERE merge_action_uuid IS NOT NULL`
  yield* sql`
    CREATE TABLE code_review_violations (
      violation_uuid TEXT PRIMARY KEY,
      review_uuid TEXT NOT NULL REFERENCES code_reviews (review_uuid) ON DELETE CASCADE,
      position INTEGER NOT NULL,
      file TEXT NOT NULL,
      line INTEGER,
      finding TEXT NOT NULL,
      category TEXT NOT NULL,
      severity TEXT NOT NULL,
      description TEXT NOT NULL,
      fix TEXT,
      blocks_merge BOOLEAN NOT NULL,
      on_diff_line BOOLEAN NOT NULL DEFAULT false,
      head_sha TEXT NOT NULL,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX code_review_violations_review_idx ON code_review_violations (review_uuid, position)`
})
