/**
 * Personal approval grants, and the end of approval secrets anywhere else.
 *
 * Each approver of a pending action gets a grant: a code (stored only as a
 * keyed digest) and legacy tokens bound to the grant. The action row no longer
 * holds a code, and the approval secrets earlier versions wrote into
 * `action.approval_requested` events and webhook deliveries are scrubbed.
 *
 * Deleting an organization now removes every row that names it; rows left
 * behind by deletions before this version are removed here.
 */
import { migration } from "./migration.js"


export default migration(function* (sql) {
  yield* sql`
    CREATE TABLE approval_grants (
      grant_id TEXT PRIMARY KEY,
      org_uuid TEXT NOT NULL,
      action_uuid TEXT NOT NULL REFERENCES actions (action_uuid) ON DELETE CASCADE,
      approver_email TEXT NOT NULL,
      code_digest TEXT NOT NULL UNIQUE,
      expires_at TIMESTAMPTZ NOT NULL,
      used_at TIMESTAMPTZ,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      UNIQUE (action_uuid, approver_email)
    )`
  yield* sql`CREATE INDEX approval_grants_org_idx ON approval_grants (org_uuid)`

  // Codes of earlier versions were unkeyed digests on the action row: retired (the dashboard still approves).
  yield* sql`ALTER TABLE actions DROP COLUMN approval_code_hash, DROP COLUMN approval_code_used_at`

  // Keys earlier versions put in `action.approval_requested` data: the secrets, or links carrying them.
  yield* sql`
    UPDATE events SET data = data - ARRAY['approval_code', 'approve_url', 'deny_url', 'approval_url']
    WHERE type = 'action.approval_requested'`
  yield* sql`
    UPDATE webhook_deliveries
    SET payload = jsonb_set(
      payload - ARRAY['approval_code', 'approve_url', 'deny_url', 'approval_url'],
      '{data}',
      COALESCE(payload -> 'data', '{}'::jsonb) - ARRAY['approval_code', 'approve_url', 'deny_url', 'approval_url'])
    WHERE event = 'action.approval_requested'`

  // Rows of organizations deleted before deletion reached every table.
  const tables = yield* sql<{ table_name: string }>`
    SELECT c.table_name FROM information_schema.columns c
    JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
    WHERE c.table_schema = current_schema() AND c.column_name = 'org_uuid'
      AND t.table_type = 'BASE TABLE' AND c.table_name NOT IN ('organizations', 'audit_log')`
  for (const { table_name } of tables) {
    yield* sql`DELETE FROM ${sql(table_name)} WHERE org_uuid NOT IN (SELECT org_uuid FROM organizations)`
  }
  yield* sql`DELETE FROM notification_reads WHERE user_uuid NOT IN (SELECT user_uuid FROM users)`
  yield* sql`
    ALTER TABLE notification_reads
    ADD CONSTRAINT notification_reads_user_fk FOREIGN KEY (user_uuid) REFERENCES users (user_uuid) ON DELETE CASCADE`
})
